// BeamformStage: eigen-beamforming, MVDR and MUSIC on each decomposition.
#include "eigstream/streaming/beamform_stage.hpp"

#include "eigstream/error.hpp"

#include <utility>

namespace eigstream::streaming {

BeamformStage::BeamformStage(std::string name, BeamformStageConfig config)
    : Transform<DecompositionItem, BeamformItem>(std::move(name)),
      config_(config),
      beamformer_(config_.geometry, config_.angles_deg) {
  if (config_.sources >= std::size_t(beamformer_.elements()))
    throw Error(ErrorCode::invalid_argument, "streaming: beamform stage '" + this->name() + "': " +
                                                 std::to_string(config_.sources) + " sources need more than " +
                                                 std::to_string(beamformer_.elements()) + " elements");
}

void BeamformStage::configure(StageContext& context) {
  const std::size_t items = config_.pool_items > 0 ? config_.pool_items : context.items_in_flight();
  pool_ = &context.make_pool<BeamformItem>(items, std::size_t(beamformer_.elements()), config_.angles_deg.size());
}

void BeamformStage::process(Handle<DecompositionItem> decomposition) {
  const index_t n = beamformer_.elements();
  if (index_t(decomposition->channels) != n)
    throw Error(ErrorCode::invalid_input, "streaming: beamform stage '" + name() + "': block " +
                                              std::to_string(decomposition->stamp.sequence) + " has " +
                                              std::to_string(decomposition->channels) + " channels for " +
                                              std::to_string(n) + " elements");
  Handle<BeamformItem> item = pool_->acquire();
  item->stamp = decomposition->stamp;
  item->first_sample = decomposition->first_sample;
  item->end_sample = decomposition->end_sample;
  item->sources = 0;
  item->doas = 0;
  item->info = decomposition->info;
  if (!decomposition->skipped()) {
    const EvdView<float> evd{decomposition->values.data(), decomposition->eigenvectors()};
    try {
      beamformer_.eigen_weights(evd, item->eigen_weights.data());
      if (config_.mvdr) beamformer_.mvdr_power(evd, config_.mvdr_loading, item->mvdr_power.data());
      if (config_.music) {
        item->sources = config_.sources > 0
                            ? config_.sources
                            : std::size_t(mdl_sources(evd.values, n, decomposition->effective_snapshots));
        if (item->sources > 0) {
          beamformer_.music_spectrum(evd, index_t(item->sources), item->music_spectrum.data());
          item->doas = std::size_t(beamformer_.music_doa(evd, index_t(item->sources), item->doa_storage.data()));
        }
      }
    } catch (const Error& e) {
      // A covariance of fewer snapshots than elements (a short last block, without loading) has
      // eigenvalues that are not > 0, which MDL and unloaded MVDR refuse: the block is flagged and
      // counted, and the stream goes on.
      if (e.code() != ErrorCode::invalid_input) throw;
      item->stamp.flags |= item_skipped;
      item->sources = 0;
      item->doas = 0;
      count_malformed();
    }
  }
  decomposition.reset();
  emit(std::move(item));
}

}  // namespace eigstream::streaming
