// BeamformStage: eigen-beamforming, MVDR and MUSIC on each decomposition, the beam powers on the CPU
// or in groups on the GPU.
#include "eigstream/streaming/beamform_stage.hpp"

#include "eigstream/error.hpp"
#include "stage_backend.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#if defined(EIGSTREAM_HAVE_CUDA)
#include "eigstream/cuda.hpp"
#include "gpu_beam_power.hpp"
#else
namespace eigstream::streaming {
class GpuBeamPower {};  // CPU-only builds never make one
}  // namespace eigstream::streaming
#endif

namespace eigstream::streaming {
namespace {

constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

}  // namespace

BeamformStage::BeamformStage(std::string name, BeamformStageConfig config)
    : Transform<DecompositionItem, BeamformItem>(std::move(name)),
      config_(config),
      beamformer_(config_.geometry, config_.angles_deg),
      mvdr_weights_(std::size_t(beamformer_.elements())),
      music_weights_(std::size_t(beamformer_.elements())) {
  if (config_.sources >= std::size_t(beamformer_.elements()))
    throw Error(ErrorCode::invalid_argument, "streaming: beamform stage '" + this->name() + "': " +
                                                 std::to_string(config_.sources) + " sources need more than " +
                                                 std::to_string(beamformer_.elements()) + " elements");
  if (config_.group == 0)
    throw Error(ErrorCode::invalid_argument, "streaming: beamform stage '" + this->name() + "': group is 0");
}

BeamformStage::~BeamformStage() = default;

void BeamformStage::configure(StageContext& context) {
  const std::string where = "streaming: beamform stage '" + name() + "': ";
  backend_ = resolve_stage_backend(where, config_.backend);
  std::size_t items = config_.pool_items > 0 ? config_.pool_items : context.items_in_flight();
#if defined(EIGSTREAM_HAVE_CUDA)
  if (backend_ == Backend::cuda) {
    if (beamformer_.elements() > cuda::max_beam_power_elements())
      throw Error(ErrorCode::cuda, where + "the GPU kernel takes up to " + std::to_string(cuda::max_beam_power_elements()) +
                                       " elements, not " + std::to_string(beamformer_.elements()) + "; use backend cpu");
    gpu_ = std::make_unique<GpuBeamPower>(beamformer_, config_.group, context.gpu_timeline());
    items += config_.group;  // a group waits here while the items in flight downstream are held
    pending_.reserve(config_.group);
    pending_slots_.reserve(config_.group);
  }
#endif
  pool_ = &context.make_pool<BeamformItem>(items, std::size_t(beamformer_.elements()), config_.angles_deg.size());
}

bool BeamformStage::prepare(EvdView<float> evd, double effective_snapshots, BeamformItem& item, float* mvdr_weights,
                            float* music_weights) {
  const index_t n = beamformer_.elements();
  try {
    beamformer_.eigen_weights(evd, item.eigen_weights.data());
    if (config_.mvdr) beamformer_.mvdr_power_weights(evd, config_.mvdr_loading, mvdr_weights);
    if (config_.music) {
      item.sources = config_.sources > 0 ? config_.sources : std::size_t(mdl_sources(evd.values, n, effective_snapshots));
      if (item.sources > 0)
        beamformer_.music_power_weights(evd, index_t(item.sources), music_weights);
      else
        std::fill_n(music_weights, n, 0.0f);  // no spectrum: the powers computed from these go unused
    }
    return true;
  } catch (const Error& e) {
    // A covariance of fewer snapshots than elements (a short last block, without loading) has
    // eigenvalues that are not > 0, which MDL and unloaded MVDR refuse: the block is flagged and
    // counted, and the stream goes on.
    if (e.code() != ErrorCode::invalid_input) throw;
    item.stamp.flags |= item_skipped;
    item.sources = 0;
    count_malformed();
    return false;
  }
}

void BeamformStage::process(Handle<DecompositionItem> decomposition) {
  const index_t n = beamformer_.elements();
  if (index_t(decomposition->channels) != n)
    throw Error(ErrorCode::invalid_input, "streaming: beamform stage '" + name() + "': block " +
                                              std::to_string(decomposition->stamp.sequence) + " has " +
                                              std::to_string(decomposition->channels) + " channels for " +
                                              std::to_string(n) + " elements");
  Handle<BeamformItem> item = acquire(*pool_);
  item->stamp = decomposition->stamp;
  item->subband = decomposition->subband;
  item->first_sample = decomposition->first_sample;
  item->end_sample = decomposition->end_sample;
  item->sources = 0;
  item->doas = 0;
  item->info = decomposition->info;

  if (backend_ == Backend::cpu) {
    const EvdView<float> evd{decomposition->values.data(), decomposition->eigenvectors()};
    if (!decomposition->skipped() &&
        prepare(evd, decomposition->effective_snapshots, *item, mvdr_weights_.data(), music_weights_.data())) {
      if (config_.mvdr) beamformer_.beam_power(evd, mvdr_weights_.data(), item->mvdr_power.data());
      if (item->sources > 0) {
        beamformer_.beam_power(evd, music_weights_.data(), item->music_spectrum.data());
        item->doas = std::size_t(
            beamformer_.music_doa(evd, index_t(item->sources), item->music_spectrum.data(), item->doa_storage.data()));
      }
    }
    decomposition.reset();
    emit(std::move(item));
    return;
  }
#if defined(EIGSTREAM_HAVE_CUDA)
  // The decomposition is copied into the group's staging and released at once.
  std::size_t slot = kNoSlot;
  if (!decomposition->skipped()) {
    std::copy(decomposition->values.begin(), decomposition->values.end(), gpu_->values(slots_used_));
    std::copy(decomposition->vectors.begin(), decomposition->vectors.end(), gpu_->vectors(slots_used_));
    if (prepare(gpu_->evd(slots_used_), decomposition->effective_snapshots, *item, gpu_->mvdr_weights(slots_used_),
                gpu_->music_weights(slots_used_)))
      slot = slots_used_++;
  }
  decomposition.reset();
  pending_.push_back(std::move(item));
  pending_slots_.push_back(slot);
  if (pending_.size() == gpu_->group()) finish_group();
#endif
}

void BeamformStage::flush() {
  if (!pending_.empty()) finish_group();
}

void BeamformStage::finish_group() {
#if defined(EIGSTREAM_HAVE_CUDA)
  const bool music = config_.music && std::any_of(pending_.begin(), pending_.end(),
                                                  [](const Handle<BeamformItem>& item) { return item->sources > 0; });
  if (slots_used_ > 0 && (config_.mvdr || music)) {
    gpu_->compute(slots_used_, config_.mvdr, music);
    const DeviceTime time = gpu_->take_device_time();
    count_device_time(time.kernel_seconds, time.copy_seconds);
  }
  const std::size_t angles = config_.angles_deg.size();
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const std::size_t slot = pending_slots_[i];
    BeamformItem& item = *pending_[i];
    if (slot == kNoSlot) continue;  // flagged item_skipped
    if (config_.mvdr) std::copy_n(gpu_->mvdr_power(slot), angles, item.mvdr_power.begin());
    if (item.sources > 0) {
      std::copy_n(gpu_->music_spectrum(slot), angles, item.music_spectrum.begin());
      item.doas = std::size_t(
          beamformer_.music_doa(gpu_->evd(slot), index_t(item.sources), item.music_spectrum.data(), item.doa_storage.data()));
    }
  }
  for (auto& item : pending_) emit(std::move(item));
  pending_.clear();
  pending_slots_.clear();
  slots_used_ = 0;
#endif
}

}  // namespace eigstream::streaming
