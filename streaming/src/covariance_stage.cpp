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
    : Transform<Block, CovarianceItem>(std::move(name)), config_(config),
      channels_(std::size_t(config.covariance.channels)) {
  const std::string where = "streaming: covariance stage '" + this->name() + "': ";
  if (config_.hop == 0) throw Error(ErrorCode::invalid_argument, where + "hop is 0");
  if (config_.subbands == 0) throw Error(ErrorCode::invalid_argument, where + "subbands is 0");
  if (config_.keep_samples && config_.block_samples == 0)
    throw Error(ErrorCode::invalid_argument, where + "keep_samples needs block_samples > 0");
  if (config_.gpu_blocks_in_flight == 0) throw Error(ErrorCode::invalid_argument, where + "gpu_blocks_in_flight is 0");
  estimates_.reserve(config_.subbands);
  for (std::size_t s = 0; s < config_.subbands; ++s) estimates_.emplace_back(config_.covariance);  // checks the config
  items_.reserve(config_.subbands);
}

CovarianceStage::~CovarianceStage() = default;

void CovarianceStage::configure(StageContext& context) {
  const std::string where = "streaming: covariance stage '" + name() + "': ";
  backend_ = resolve_stage_backend(where, config_.backend);
#if defined(EIGSTREAM_HAVE_CUDA)
  if (backend_ == Backend::cuda) {
    gpu_ = std::make_unique<GpuCovariance>(config_.covariance, config_.subbands, config_.gpu_blocks_in_flight,
                                           context.gpu_timeline());
    in_flight_.resize(config_.gpu_blocks_in_flight);
    for (InFlight& slot : in_flight_) slot.items.reserve(config_.subbands);
  }
#endif
  // Downstream holds items_in_flight() (or pool_items); the stage itself holds the subbands' items
  // of the block it fills, and on the GPU those of the blocks in flight.
  const std::size_t items = (config_.pool_items > 0 ? config_.pool_items : context.items_in_flight()) +
                            (gpu_ ? config_.gpu_blocks_in_flight : 1) * config_.subbands;
  pool_ = &context.make_pool<CovarianceItem>(items, channels_, config_.keep_samples ? config_.block_samples : 0);
}

void CovarianceStage::process(Handle<Block> block) {
  if (block->channels() != channels_ * config_.subbands)
    throw Error(ErrorCode::invalid_input, "streaming: covariance stage '" + name() + "': block " +
                                              std::to_string(block->stamp.sequence) + " has " +
                                              std::to_string(block->channels()) + " channels, not " +
                                              std::to_string(channels_ * config_.subbands) +
                                              (config_.subbands > 1 ? " (" + std::to_string(config_.subbands) +
                                                                          " subbands of " + std::to_string(channels_) + ")"
                                                                    : std::string()));
  if (config_.keep_samples && block->samples > config_.block_samples)
    throw Error(ErrorCode::invalid_input, "streaming: covariance stage '" + name() + "': block " +
                                              std::to_string(block->stamp.sequence) + " has " +
                                              std::to_string(block->samples) + " samples, more than block_samples " +
                                              std::to_string(config_.block_samples));
  if (block->samples == 0) return;  // nothing to estimate from (an empty last block)
  const bool valid = block_is_finite(*block);
  if (!valid) count_malformed();
  bool emits = !valid;
  if (valid && ++since_emitted_ >= config_.hop) {
    since_emitted_ = 0;
    emits = true;
  }
#if defined(EIGSTREAM_HAVE_CUDA)
  if (gpu_) {
    // This block's work is queued on the GPU; when that fills the ring, the oldest block is finished
    // and emitted: the CPU side of one block overlaps the GPU side of the others.
    const std::size_t depth = in_flight_.size();
    InFlight& next = in_flight_[queued_ % depth];  // empty: finish_oldest() left it so
    next.slot = queued_ % depth;
    ++queued_;
    next.gpu_work = valid;
    next.read = valid && emits;
    // The request right after the update (the read is timed from the products' end), the items
    // after both (their bookkeeping counts this block; acquiring them may wait).
    if (valid) gpu_->update(block->data(), block->samples);
    if (valid) gpu_->request(next.slot, next.read);
    if (emits) items_for(*block, valid, next.items);
    next.block = std::move(block);
    if (queued_ - finished_ == depth) finish_oldest();
    return;
  }
#endif
  const index_t n = index_t(channels_), ld = index_t(block->channels());
  if (valid)
    for (std::size_t s = 0; s < config_.subbands; ++s)
      estimates_[s].update({block->data() + s * channels_, n, index_t(block->samples), ld});
  if (!emits) return;
  items_for(*block, valid, items_);
  if (valid)
    for (auto& item : items_) {
      estimates_[item->subband].covariance({item->matrix.data(), n, n, n});
      keep_samples(*block, *item);
    }
  block.reset();
  for (auto& item : items_) emit(std::move(item));
  items_.clear();
}

void CovarianceStage::flush() {
  while (finished_ < queued_) finish_oldest();
}

void CovarianceStage::items_for(const Block& block, bool valid, std::vector<Handle<CovarianceItem>>& items) {
  // Every subband's estimate has had the same blocks: the bookkeeping of subband 0 is everyone's.
#if defined(EIGSTREAM_HAVE_CUDA)
  const auto blocks = std::uint64_t(gpu_ ? gpu_->blocks() : estimates_[0].blocks());
  const double effective = gpu_ ? gpu_->effective_snapshots() : estimates_[0].effective_snapshots();
#else
  const auto blocks = std::uint64_t(estimates_[0].blocks());
  const double effective = estimates_[0].effective_snapshots();
#endif
  items.clear();
  for (std::size_t s = 0; s < config_.subbands; ++s) {
    Handle<CovarianceItem> item = acquire(*pool_);
    item->stamp = block.stamp;
    item->subband = s;
    item->first_sample = block.first_sample;
    item->end_sample = block.first_sample + block.samples;
    item->blocks = blocks;
    item->effective_snapshots = effective;
    item->snapshots = 0;
    if (!valid) item->stamp.flags |= item_skipped;
    items.push_back(std::move(item));
  }
}

void CovarianceStage::keep_samples(const Block& block, CovarianceItem& item) const {
  if (!config_.keep_samples) return;
  const std::size_t stride = block.channels();
  const sample_t* from = block.data() + item.subband * channels_;
  for (std::size_t t = 0; t < block.samples; ++t)
    std::copy_n(from + t * stride, channels_, item.samples.data() + t * channels_);
  item.snapshots = block.samples;
}

void CovarianceStage::finish_oldest() {
#if defined(EIGSTREAM_HAVE_CUDA)
  InFlight& done = in_flight_[finished_ % in_flight_.size()];
  ++finished_;
  if (done.gpu_work) {
    gpu_->complete(done.slot);
    const DeviceTime time = gpu_->take_device_time();
    count_device_time(time.kernel_seconds, time.copy_seconds);
    if (done.read) {
      const index_t n = index_t(channels_);
      for (auto& item : done.items) {
        std::complex<float>* out = item->matrix.data();
        gpu_->read(done.slot, item->subband, out);
        // Loading on the output, as Covariance::covariance does.
        double trace = 0;
        for (index_t i = 0; i < n; ++i) trace += out[i + i * n].real();
        const float delta = float(config_.covariance.loading.amount(trace, n));
        for (index_t i = 0; i < n; ++i) out[i + i * n] += delta;
        keep_samples(*done.block, *item);
      }
    }
  }
  done.block.reset();
  for (auto& item : done.items) emit(std::move(item));
  done.items.clear();
#endif
}

}  // namespace eigstream::streaming
