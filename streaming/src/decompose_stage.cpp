// DecomposeStage: the warm-started CPU EVD of each covariance.
#include "eigstream/streaming/decompose_stage.hpp"

#include "eigstream/error.hpp"
#include "eigstream/evd.hpp"

#include <algorithm>
#include <utility>

namespace eigstream::streaming {

DecomposeStage::DecomposeStage(std::string name, DecomposeStageConfig config)
    : Transform<CovarianceItem, DecompositionItem>(std::move(name)), config_(config) {
  if (config_.channels == 0)
    throw Error(ErrorCode::invalid_argument, "streaming: decompose stage '" + this->name() + "': channels is 0");
  config_.options.backend = Backend::cpu;
  config_.options.sort = Sort::descending;
  config_.options.flag_invalid = true;
  config_.options.throw_on_not_converged = false;
  warm_.resize(config_.channels * config_.channels);
}

void DecomposeStage::configure(StageContext& context) {
  const std::size_t items = config_.pool_items > 0 ? config_.pool_items : context.items_in_flight();
  pool_ = &context.make_pool<DecompositionItem>(items, config_.channels, config_.block_samples);
}

void DecomposeStage::process(Handle<CovarianceItem> covariance) {
  if (covariance->channels != config_.channels)
    throw Error(ErrorCode::invalid_input, "streaming: decompose stage '" + name() + "': covariance of block " +
                                              std::to_string(covariance->stamp.sequence) + " has " +
                                              std::to_string(covariance->channels) + " channels, not " +
                                              std::to_string(config_.channels));
  if (covariance->snapshots > config_.block_samples)
    throw Error(ErrorCode::invalid_input, "streaming: decompose stage '" + name() + "': block " +
                                              std::to_string(covariance->stamp.sequence) + " brings " +
                                              std::to_string(covariance->snapshots) +
                                              " samples, more than block_samples " +
                                              std::to_string(config_.block_samples));
  Handle<DecompositionItem> item = pool_->acquire();
  item->stamp = covariance->stamp;
  item->info = {};
  item->warm_started = false;
  item->first_sample = covariance->first_sample;
  item->end_sample = covariance->end_sample;
  item->effective_snapshots = covariance->effective_snapshots;
  item->snapshots = covariance->snapshots;
  std::copy_n(covariance->samples.data(), covariance->snapshots * covariance->channels, item->samples.data());
  if (!covariance->skipped()) {
    const index_t n = index_t(config_.channels);
    const MatrixView<std::complex<float>> vectors{item->vectors.data(), n, n, n};
    item->warm_started = config_.warm_start && have_warm_;
    const MatrixView<const std::complex<float>> warm =
        item->warm_started ? MatrixView<const std::complex<float>>{warm_.data(), n, n, n}
                           : MatrixView<const std::complex<float>>{};
    item->info = evd(covariance->covariance(), item->values.data(), vectors, config_.options, warm);
    if (item->info.invalid_input || !item->info.converged) {
      item->stamp.flags |= item_skipped;
      count_malformed();
    } else if (config_.warm_start) {
      std::copy(item->vectors.begin(), item->vectors.end(), warm_.begin());
      have_warm_ = true;
    }
  }
  covariance.reset();
  emit(std::move(item));
}

}  // namespace eigstream::streaming
