// CovarianceStage: folding blocks into the covariance estimate and emitting it.
#include "eigstream/streaming/covariance_stage.hpp"

#include "eigstream/error.hpp"
#include "stage_backend.hpp"

#include <algorithm>
#include <utility>

#if defined(EIGSTREAM_HAVE_CUDA)
#include "gpu_covariance.hpp"
#else
namespace eigstream::streaming {
class GpuCovariance {};  // CPU-only builds never make one
}  // namespace eigstream::streaming
#endif

namespace eigstream::streaming {

CovarianceStage::CovarianceStage(std::string name, CovarianceStageConfig config)
    : Transform<Block, CovarianceItem>(std::move(name)), config_(config), estimate_(config.covariance) {
  const std::string where = "streaming: covariance stage '" + this->name() + "': ";
  if (config_.hop == 0) throw Error(ErrorCode::invalid_argument, where + "hop is 0");
  if (config_.keep_samples && config_.block_samples == 0)
    throw Error(ErrorCode::invalid_argument, where + "keep_samples needs block_samples > 0");
}

CovarianceStage::~CovarianceStage() = default;

void CovarianceStage::configure(StageContext& context) {
  const std::string where = "streaming: covariance stage '" + name() + "': ";
  backend_ = resolve_stage_backend(where, config_.backend);
#if defined(EIGSTREAM_HAVE_CUDA)
  if (backend_ == Backend::cuda) gpu_ = std::make_unique<GpuCovariance>(config_.covariance);
#endif
  const std::size_t items = config_.pool_items > 0 ? config_.pool_items : context.items_in_flight();
  pool_ = &context.make_pool<CovarianceItem>(items, std::size_t(estimate_.channels()),
                                             config_.keep_samples ? config_.block_samples : 0);
}

void CovarianceStage::process(Handle<Block> block) {
  if (index_t(block->channels()) != estimate_.channels())
    throw Error(ErrorCode::invalid_input, "streaming: covariance stage '" + name() + "': block " +
                                              std::to_string(block->stamp.sequence) + " has " +
                                              std::to_string(block->channels()) + " channels, not " +
                                              std::to_string(estimate_.channels()));
  if (config_.keep_samples && block->samples > config_.block_samples)
    throw Error(ErrorCode::invalid_input, "streaming: covariance stage '" + name() + "': block " +
                                              std::to_string(block->stamp.sequence) + " has " +
                                              std::to_string(block->samples) + " samples, more than block_samples " +
                                              std::to_string(config_.block_samples));
  if (block->samples == 0) return;  // nothing to estimate from (an empty last block)
  const MatrixView<const sample_t> samples{block->data(), index_t(block->channels()), index_t(block->samples),
                                           index_t(block->channels())};
  const bool valid = block_is_finite(*block);
  if (!valid) count_malformed();
  bool emits = !valid;
  if (valid && ++since_emitted_ >= config_.hop) {
    since_emitted_ = 0;
    emits = true;
  }
#if defined(EIGSTREAM_HAVE_CUDA)
  if (gpu_) {
    // This block's work is queued on the GPU, then the block before is finished and emitted: the CPU
    // side of one block overlaps the GPU side of the other.
    InFlight next;
    next.slot = next_slot_;
    next_slot_ ^= 1;
    next.gpu_work = valid;
    next.read = valid && emits;
    if (valid) gpu_->update(samples.data, std::size_t(samples.cols));
    if (emits) next.item = item_for(*block, valid);
    if (valid) gpu_->request(next.slot, next.read);
    next.block = std::move(block);
    finish_in_flight();
    in_flight_ = std::move(next);
    return;
  }
#endif
  if (valid) estimate_.update(samples);
  if (!emits) return;
  Handle<CovarianceItem> item = item_for(*block, valid);
  if (valid) {
    const index_t n = estimate_.channels();
    estimate_.covariance({item->matrix.data(), n, n, n});
    keep_samples(*block, *item);
  }
  block.reset();
  emit(std::move(item));
}

void CovarianceStage::flush() { finish_in_flight(); }

Handle<CovarianceItem> CovarianceStage::item_for(const Block& block, bool valid) {
  Handle<CovarianceItem> item = pool_->acquire();
  item->stamp = block.stamp;
  item->first_sample = block.first_sample;
  item->end_sample = block.first_sample + block.samples;
#if defined(EIGSTREAM_HAVE_CUDA)
  item->blocks = std::uint64_t(gpu_ ? gpu_->blocks() : estimate_.blocks());
  item->effective_snapshots = gpu_ ? gpu_->effective_snapshots() : estimate_.effective_snapshots();
#else
  item->blocks = std::uint64_t(estimate_.blocks());
  item->effective_snapshots = estimate_.effective_snapshots();
#endif
  item->snapshots = 0;
  if (!valid) item->stamp.flags |= item_skipped;
  return item;
}

void CovarianceStage::keep_samples(const Block& block, CovarianceItem& item) const {
  if (!config_.keep_samples) return;
  std::copy_n(block.data(), block.samples * block.channels(), item.samples.data());
  item.snapshots = block.samples;
}

void CovarianceStage::finish_in_flight() {
#if defined(EIGSTREAM_HAVE_CUDA)
  if (!in_flight_.block) return;
  InFlight done = std::move(in_flight_);
  in_flight_ = {};
  if (done.gpu_work) {
    std::complex<float>* out = done.read ? done.item->matrix.data() : nullptr;
    gpu_->complete(done.slot, out);
    const DeviceTime time = gpu_->take_device_time();
    count_device_time(time.kernel_seconds, time.copy_seconds);
    if (out) {  // loading on the output, as Covariance::covariance does
      const index_t n = estimate_.channels();
      double trace = 0;
      for (index_t i = 0; i < n; ++i) trace += out[i + i * n].real();
      const float delta = float(config_.covariance.loading.amount(trace, n));
      for (index_t i = 0; i < n; ++i) out[i + i * n] += delta;
      keep_samples(*done.block, *done.item);
    }
  }
  done.block.reset();
  if (done.item) emit(std::move(done.item));
#endif
}

}  // namespace eigstream::streaming
