// DecomposeStage: the warm-started EVD of each covariance, on the CPU or in groups on the GPU.
#include "eigstream/streaming/decompose_stage.hpp"

#include "eigstream/error.hpp"
#include "eigstream/evd.hpp"
#include "eigstream/svd.hpp"
#include "stage_backend.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#if defined(EIGSTREAM_HAVE_CUDA)
#include "eigstream/cuda.hpp"
#include "gpu_evd_group.hpp"
#include "persistent_evd_stream.hpp"
#else
namespace eigstream::streaming {
class GpuEvdGroup {};  // CPU-only builds never make these
class PersistentEvdStream {};
}  // namespace eigstream::streaming
#endif

namespace eigstream::streaming {
namespace {

constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

}  // namespace

DecomposeStage::DecomposeStage(std::string name, DecomposeStageConfig config)
    : Transform<CovarianceItem, DecompositionItem>(std::move(name)), config_(config) {
  if (config_.channels == 0)
    throw Error(ErrorCode::invalid_argument, "streaming: decompose stage '" + this->name() + "': channels is 0");
  if (config_.group == 0)
    throw Error(ErrorCode::invalid_argument, "streaming: decompose stage '" + this->name() + "': group is 0");
  if (config_.subbands == 0)
    throw Error(ErrorCode::invalid_argument, "streaming: decompose stage '" + this->name() + "': subbands is 0");
  if (config_.method == DecomposeMethod::block_svd && config_.block_samples == 0)
    throw Error(ErrorCode::invalid_argument, "streaming: decompose stage '" + this->name() +
                                                 "': block_svd needs block_samples, the longest block");
  config_.options.sort = Sort::descending;
  config_.options.flag_invalid = true;
  config_.options.throw_on_not_converged = false;
  config_.options.reorthonormalise = true;  // every warm-started result (the persistent items' default too)
}

DecomposeStage::~DecomposeStage() = default;

void DecomposeStage::configure(StageContext& context) {
  backend_ = resolve_stage_backend("streaming: decompose stage '" + name() + "': ", config_.options.backend);
  config_.options.backend = Backend::cpu;  // the CPU path's solver, when it runs
  std::size_t items = config_.pool_items > 0 ? config_.pool_items : context.items_in_flight();
#if defined(EIGSTREAM_HAVE_CUDA)
  if (backend_ == Backend::cuda) {
    if (index_t(config_.channels) > cuda::max_evd_size())
      throw Error(ErrorCode::cuda, "streaming: decompose stage '" + name() + "': the GPU kernel takes up to " +
                                       std::to_string(cuda::max_evd_size()) + " channels, not " +
                                       std::to_string(config_.channels) + "; use backend cpu");
    const bool svd = config_.method == DecomposeMethod::block_svd;
    if (svd && index_t(config_.block_samples) > cuda::max_svd_rows())
      throw Error(ErrorCode::cuda, "streaming: decompose stage '" + name() + "': the GPU SVD takes blocks of up to " +
                                       std::to_string(cuda::max_svd_rows()) + " snapshots, not " +
                                       std::to_string(config_.block_samples) + "; use backend cpu");
    gpu_solver_ = config_.gpu_solver != GpuSolver::automatic ? config_.gpu_solver
                  : svd                                    ? GpuSolver::batched
                                                           : GpuSolver::persistent;
    if (gpu_solver_ == GpuSolver::persistent) {
      if (svd)
        throw Error(ErrorCode::invalid_argument, "streaming: decompose stage '" + name() +
                                                     "': the persistent solver decomposes covariances, not blocks "
                                                     "(block_svd): use gpu_solver batched or automatic");
      persistent_ = std::make_unique<PersistentEvdStream>(config_.channels, config_.group, config_.options);
    } else {
      gpu_ = std::make_unique<GpuEvdGroup>(config_.channels, config_.group, config_.options,
                                           svd ? config_.block_samples : 0, config_.subbands,
                                           context.gpu_timeline());
      pending_.reserve(config_.group);
      pending_slots_.reserve(config_.group);
      last_good_.reserve(config_.subbands);
    }
    items += config_.group;  // a group waits here while the items in flight downstream are held
  }
#endif
  if (backend_ == Backend::cpu || persistent_) {
    warm_.resize(config_.subbands * config_.channels * config_.channels);
    have_warm_.assign(config_.subbands, 0);
  }
  if (backend_ == Backend::cpu) singular_values_.resize(config_.channels);
  pool_ = &context.make_pool<DecompositionItem>(items, config_.channels, config_.block_samples);
}

Handle<DecompositionItem> DecomposeStage::item_for(const CovarianceItem& covariance) {
  if (covariance.channels != config_.channels)
    throw Error(ErrorCode::invalid_input, "streaming: decompose stage '" + name() + "': covariance of block " +
                                              std::to_string(covariance.stamp.sequence) + " has " +
                                              std::to_string(covariance.channels) + " channels, not " +
                                              std::to_string(config_.channels));
  if (covariance.snapshots > config_.block_samples)
    throw Error(ErrorCode::invalid_input, "streaming: decompose stage '" + name() + "': block " +
                                              std::to_string(covariance.stamp.sequence) + " brings " +
                                              std::to_string(covariance.snapshots) +
                                              " samples, more than block_samples " +
                                              std::to_string(config_.block_samples));
  if (covariance.subband >= config_.subbands)
    throw Error(ErrorCode::invalid_input, "streaming: decompose stage '" + name() + "': block " +
                                              std::to_string(covariance.stamp.sequence) + " comes as subband " +
                                              std::to_string(covariance.subband) + " of " +
                                              std::to_string(config_.subbands) + " (set subbands as the covariance stage does)");
  Handle<DecompositionItem> item = acquire(*pool_);
  item->stamp = covariance.stamp;
  item->subband = covariance.subband;
  item->info = {};
  item->warm_started = false;
  item->first_sample = covariance.first_sample;
  item->end_sample = covariance.end_sample;
  item->effective_snapshots = covariance.effective_snapshots;
  item->snapshots = covariance.snapshots;
  std::copy_n(covariance.samples.data(), covariance.snapshots * covariance.channels, item->samples.data());
  return item;
}

bool DecomposeStage::usable(const CovarianceItem& covariance) {
  if (covariance.skipped()) return false;
  if (config_.method != DecomposeMethod::block_svd) return true;
  if (covariance.snapshots == 0)
    throw Error(ErrorCode::invalid_input, "streaming: decompose stage '" + name() + "': block " +
                                              std::to_string(covariance.stamp.sequence) +
                                              " carries no samples for block_svd (set CovarianceStageConfig::keep_samples)");
  return covariance.snapshots >= config_.channels;
}

void DecomposeStage::solve_on_cpu(const CovarianceItem& covariance, DecompositionItem& item) {
  const index_t n = index_t(config_.channels);
  const MatrixView<std::complex<float>> vectors{item.vectors.data(), n, n, n};
  item.warm_started = config_.warm_start && have_warm_[covariance.subband];
  const MatrixView<const std::complex<float>> warm = item.warm_started
                                                         ? MatrixView<const std::complex<float>>{subband_warm_start(covariance.subband), n, n, n}
                                                         : MatrixView<const std::complex<float>>{};
  if (config_.method == DecomposeMethod::block_svd) {
    // X (channels x L) = U S W^H: U is the warm-started side (m < n), W is not needed.
    item.info = svd(covariance.block(), singular_values_.data(), vectors, {}, config_.options, warm);
    const float snapshots = float(covariance.snapshots);
    for (index_t i = 0; i < n; ++i) item.values[std::size_t(i)] = singular_values_[std::size_t(i)] * singular_values_[std::size_t(i)] / snapshots;
  } else {
    item.info = evd(covariance.covariance(), item.values.data(), vectors, config_.options, warm);
  }
  settle_result(item);
}

void DecomposeStage::settle_result(DecompositionItem& item) {
  if (item.info.invalid_input || !item.info.converged) {
    item.stamp.flags |= item_skipped;
    count_malformed();
  } else if (config_.warm_start) {
    std::copy(item.vectors.begin(), item.vectors.end(), subband_warm_start(item.subband));
    have_warm_[item.subband] = 1;
  }
}

void DecomposeStage::process(Handle<CovarianceItem> covariance) {
  // Persistent: at most `group` items held here, skipped ones included, so the pool (items in flight
  // downstream + group) never runs dry while this thread holds items back.
  while (persistent_ && in_flight_.size() >= config_.group) emit_solved(true);
  Handle<DecompositionItem> item = item_for(*covariance);
  const bool use = usable(*covariance);
  if (!use && !covariance->skipped()) {  // a block_svd block shorter than the channels
    item->stamp.flags |= item_skipped;
    count_malformed();
  }
  if (backend_ == Backend::cpu) {
    if (use) solve_on_cpu(*covariance, *item);
    covariance.reset();
    emit(std::move(item));
    return;
  }
#if defined(EIGSTREAM_HAVE_CUDA)
  if (persistent_) {
    if (use) {  // fewer than `group` held, so a slot is free
      const bool warm = config_.warm_start && have_warm_[covariance->subband];
      item->warm_started = warm;
      persistent_->submit(covariance->matrix.data(), warm ? subband_warm_start(covariance->subband) : nullptr);
    }
    covariance.reset();
    in_flight_.push_back({std::move(item), use});
    emit_solved(false);
    return;
  }
  const bool svd = config_.method == DecomposeMethod::block_svd;
  // One launch solves blocks of one length: a block of another starts a new group.
  if (use && svd && covariance->snapshots != pending_snapshots_) {
    if (!pending_.empty()) solve_group();
    pending_snapshots_ = covariance->snapshots;
  }
  std::size_t slot = kNoSlot;
  if (use) {
    slot = std::size_t(std::count_if(pending_slots_.begin(), pending_slots_.end(), [](std::size_t s) { return s != kNoSlot; }));
    if (svd)
      std::copy_n(covariance->samples.data(), covariance->snapshots * config_.channels, gpu_->matrix(slot));
    else
      std::copy(covariance->matrix.begin(), covariance->matrix.end(), gpu_->matrix(slot));
    gpu_->set_subband(slot, covariance->subband);
  }
  covariance.reset();
  pending_.push_back(std::move(item));
  pending_slots_.push_back(slot);
  if (pending_.size() == gpu_->group()) solve_group();
#endif
}

void DecomposeStage::flush() {
  if (!pending_.empty()) solve_group();
  while (!in_flight_.empty()) emit_solved(true);
}

void DecomposeStage::emit_solved(bool wait) {
#if defined(EIGSTREAM_HAVE_CUDA)
  while (!in_flight_.empty()) {
    InFlight& front = in_flight_.front();
    if (front.submitted) {
      if (!wait && !persistent_->oldest_done()) return;
      const PersistentEvdStream::Result result = persistent_->collect();
      DecompositionItem& item = *front.item;
      item.info = result.info;
      std::copy_n(result.values, config_.channels, item.values.begin());
      std::copy_n(result.vectors, item.vectors.size(), item.vectors.begin());
      settle_result(item);
      wait = false;
    }
    Handle<DecompositionItem> item = std::move(front.item);
    in_flight_.pop_front();
    emit(std::move(item));
  }
#else
  (void)wait;
#endif
}

void DecomposeStage::solve_group() {
#if defined(EIGSTREAM_HAVE_CUDA)
  const std::size_t n = config_.channels;
  const std::size_t count =
      std::size_t(std::count_if(pending_slots_.begin(), pending_slots_.end(), [](std::size_t s) { return s != kNoSlot; }));
  // Warm-started when every subband in the group has a warm start (after the first groups, always).
  bool warm = config_.warm_start;
  for (std::size_t i = 0; i < pending_.size() && warm; ++i)
    if (pending_slots_[i] != kNoSlot) warm = gpu_->has_warm_start(pending_[i]->subband);
  const bool svd = config_.method == DecomposeMethod::block_svd;
  if (count > 0) {
    if (svd)
      gpu_->solve_block_svd(count, pending_snapshots_, warm);
    else
      gpu_->solve(count, warm);
    const DeviceTime time = gpu_->take_device_time();
    count_device_time(time.kernel_seconds, time.copy_seconds);
  }
  last_good_.assign(config_.subbands, kNoSlot);  // per subband
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const std::size_t slot = pending_slots_[i];
    DecompositionItem& item = *pending_[i];
    if (slot == kNoSlot) continue;  // flagged item_skipped by the covariance stage
    item.info = gpu_->info(slot);
    item.warm_started = warm;
    if (svd)
      std::transform(gpu_->values(slot), gpu_->values(slot) + n, item.values.begin(),
                     [&](float s) { return s * s / float(pending_snapshots_); });
    else
      std::copy_n(gpu_->values(slot), n, item.values.begin());
    std::copy_n(gpu_->vectors(slot), n * n, item.vectors.begin());
    if (item.info.invalid_input || !item.info.converged) {
      item.stamp.flags |= item_skipped;
      count_malformed();
    } else {
      last_good_[item.subband] = slot;
    }
  }
  if (config_.warm_start)
    for (const std::size_t slot : last_good_)
      if (slot != kNoSlot) gpu_->keep_as_warm_start(slot);
  for (auto& item : pending_) emit(std::move(item));
  pending_.clear();
  pending_slots_.clear();
#endif
}

}  // namespace eigstream::streaming
