// KltStage: choosing the components and transforming each block.
#include "eigstream/streaming/klt_stage.hpp"

#include "eigstream/error.hpp"

#include <algorithm>
#include <utility>

namespace eigstream::streaming {

KltStage::KltStage(std::string name, KltStageConfig config)
    : Transform<DecompositionItem, KltItem>(std::move(name)), config_(config) {
  const std::string where = "streaming: KLT stage '" + this->name() + "': ";
  if (config_.channels == 0) throw Error(ErrorCode::invalid_argument, where + "channels is 0");
  if (config_.block_samples == 0) throw Error(ErrorCode::invalid_argument, where + "block_samples is 0");
  if (config_.rule.count > index_t(config_.channels))
    throw Error(ErrorCode::invalid_argument, where + "keeps " + std::to_string(config_.rule.count) +
                                                 " components of " + std::to_string(config_.channels) + " channels");
}

void KltStage::configure(StageContext& context) {
  const std::size_t items = config_.pool_items > 0 ? config_.pool_items : context.items_in_flight();
  pool_ = &context.make_pool<KltItem>(items, config_.channels, config_.block_samples);
}

void KltStage::process(Handle<DecompositionItem> decomposition) {
  const auto where = [&] {  // for messages only: no string is made per block
    return "streaming: KLT stage '" + name() + "': block " + std::to_string(decomposition->stamp.sequence);
  };
  if (decomposition->channels != config_.channels)
    throw Error(ErrorCode::invalid_input, where() + " has " + std::to_string(decomposition->channels) +
                                              " channels, not " + std::to_string(config_.channels));
  if (!decomposition->skipped() && decomposition->snapshots == 0)
    throw Error(ErrorCode::invalid_input, where() + " carries no samples (set CovarianceStageConfig::keep_samples "
                                                  "and DecomposeStageConfig::block_samples)");
  if (decomposition->snapshots > config_.block_samples)
    throw Error(ErrorCode::invalid_input, where() + " has " + std::to_string(decomposition->snapshots) +
                                              " samples, more than block_samples " +
                                              std::to_string(config_.block_samples));
  Handle<KltItem> item = acquire(*pool_);
  item->stamp = decomposition->stamp;
  item->subband = decomposition->subband;
  item->first_sample = decomposition->first_sample;
  item->end_sample = decomposition->end_sample;
  item->components = 0;
  item->snapshots = 0;
  if (!decomposition->skipped()) {
    const index_t n = index_t(config_.channels);
    const index_t k = choose_components(decomposition->values.data(), n, config_.rule);
    const index_t snapshots = index_t(decomposition->snapshots);
    item->components = std::size_t(k);
    item->snapshots = decomposition->snapshots;
    std::copy_n(decomposition->vectors.data(), n * k, item->basis_storage.data());
    klt_coefficients<float>(item->basis(), decomposition->block(),
                            MatrixView<std::complex<float>>{item->coefficient_storage.data(), k, snapshots, k});
  }
  decomposition.reset();
  emit(std::move(item));
}

}  // namespace eigstream::streaming
