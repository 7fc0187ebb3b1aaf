// ReaderSource: forming fixed-size blocks from whatever chunks a SampleReader returns.
#include "eigstream/streaming/reader_source.hpp"

#include "eigstream/covariance.hpp"
#include "eigstream/error.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace eigstream::streaming {

ReaderSource::ReaderSource(std::string name, std::unique_ptr<SampleReader> reader, ReaderSourceOptions options)
    : Source<Block>(std::move(name)), reader_(std::move(reader)), options_(options) {
  if (!reader_) throw Error(ErrorCode::invalid_argument, "streaming: source '" + this->name() + "' has no reader");
}

void ReaderSource::configure(StageContext& context) {
  const std::string where = "streaming: source '" + name() + "': ";
  channels_ = reader_->channels();
  if (channels_ == 0) throw Error(ErrorCode::invalid_argument, where + "the reader has no channels");
  if (options_.samples_per_block == 0) throw Error(ErrorCode::invalid_argument, where + "samples_per_block is 0");
  const std::size_t blocks = options_.pool_blocks > 0 ? options_.pool_blocks : context.items_in_flight();
  if (blocks < 3)
    throw Error(ErrorCode::invalid_argument, where + "pool_blocks must be at least 3 (a gap can need two at once "
                                                     "while the stage downstream holds one, as the GPU covariance stage does)");
  pool_ = &context.make_pool<Block>(blocks, channels_, options_.samples_per_block);
}

Handle<Block> ReaderSource::new_block(std::uint64_t lost_before) {
  Handle<Block> block = acquire(*pool_);
  next_sample_ += lost_before;
  block->stamp.flags = block_finite_checked | (lost_before > 0 ? std::uint32_t{block_gap} : 0u);
  block->samples = 0;
  block->first_sample = next_sample_;
  block->lost_before = lost_before;
  return block;
}

bool ReaderSource::process() {
  if (!filling_) filling_ = new_block(0);
  const std::size_t block_samples = options_.samples_per_block;
  while (!ended_ && filling_->samples < block_samples) {
    Block& block = *filling_;
    const std::size_t room = block_samples - block.samples;
    sample_t* at = block.data() + block.samples * channels_;
    const ReadResult got = reader_->read(at, room);
    if (got.samples > room)
      throw Error(ErrorCode::invalid_input, "streaming: source '" + name() + "': the reader returned " +
                                                std::to_string(got.samples) + " samples when asked for at most " +
                                                std::to_string(room));
    ended_ = got.end;
    // Checked now, while the samples are in this core's cache (block_finite_checked).
    const bool non_finite =
        find_non_finite({at, index_t(channels_), index_t(got.samples), index_t(channels_)}).found;
    if (got.lost_before > 0 && block.samples > 0) {
      // The gap ends this block; the samples after it begin the next one.
      Handle<Block> next = new_block(got.lost_before);
      std::copy_n(at, got.samples * channels_, next->data());
      next->samples = got.samples;
      if (non_finite) next->stamp.flags |= block_non_finite;
      next_sample_ += got.samples;
      block.stamp.flags |= block_partial;
      emit(std::exchange(filling_, std::move(next)));
      return true;
    }
    if (got.lost_before > 0) {
      next_sample_ += got.lost_before;
      block.first_sample = next_sample_;
      block.lost_before += got.lost_before;
      block.stamp.flags |= block_gap;
    }
    if (non_finite) block.stamp.flags |= block_non_finite;
    block.samples += got.samples;
    next_sample_ += got.samples;
  }
  if (filling_->samples == block_samples) {
    emit(std::move(filling_));
    return !ended_;
  }
  // The input ended inside a block: what it holds is the last, partial block.
  if (filling_->samples > 0) {
    filling_->stamp.flags |= block_partial;
    emit(std::move(filling_));
  }
  filling_.reset();
  return false;
}

void ReaderSource::cancel() { reader_->cancel(); }

void ReaderSource::add_counters(StageStats& stats) const {
  const ReaderCounters counters = reader_->counters();
  stats.lost_samples += counters.lost_samples;
  stats.resyncs += counters.resyncs;
  stats.late += counters.late;
  stats.broken_connections += counters.broken_connections;
  stats.malformed += counters.malformed;
}

}  // namespace eigstream::streaming
