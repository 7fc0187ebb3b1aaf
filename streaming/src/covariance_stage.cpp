// CovarianceStage: folding blocks into the covariance estimate and emitting it.
#include "eigstream/streaming/covariance_stage.hpp"

#include "eigstream/error.hpp"

#include <algorithm>
#include <utility>

namespace eigstream::streaming {

CovarianceStage::CovarianceStage(std::string name, CovarianceStageConfig config)
    : Transform<Block, CovarianceItem>(std::move(name)), config_(config), estimate_(config.covariance) {
  const std::string where = "streaming: covariance stage '" + this->name() + "': ";
  if (config_.hop == 0) throw Error(ErrorCode::invalid_argument, where + "hop is 0");
  if (config_.keep_samples && config_.block_samples == 0)
    throw Error(ErrorCode::invalid_argument, where + "keep_samples needs block_samples > 0");
}

void CovarianceStage::configure(StageContext& context) {
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
  const bool valid = !find_non_finite(samples).found;
  if (valid) {
    estimate_.update(samples);
    if (++since_emitted_ < config_.hop) return;
    since_emitted_ = 0;
  } else {
    count_malformed();
  }

  Handle<CovarianceItem> item = pool_->acquire();
  item->stamp = block->stamp;
  item->first_sample = block->first_sample;
  item->end_sample = block->first_sample + block->samples;
  item->blocks = std::uint64_t(estimate_.blocks());
  item->effective_snapshots = estimate_.effective_snapshots();
  item->snapshots = 0;
  if (!valid) {
    item->stamp.flags |= item_skipped;
  } else {
    const index_t n = estimate_.channels();
    estimate_.covariance({item->matrix.data(), n, n, n});
    if (config_.keep_samples) {
      std::copy_n(block->data(), block->samples * block->channels(), item->samples.data());
      item->snapshots = block->samples;
    }
  }
  block.reset();
  emit(std::move(item));
}

}  // namespace eigstream::streaming
