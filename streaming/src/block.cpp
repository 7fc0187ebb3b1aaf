// Block: storage for capacity samples of all channels, allocated once.
#include "eigstream/streaming/block.hpp"

#include "eigstream/covariance.hpp"
#include "eigstream/error.hpp"

#include <string>

namespace eigstream::streaming {

Block::Block(std::size_t channels, std::size_t capacity)
    : channels_(channels), capacity_(capacity), storage_(channels * capacity * sizeof(sample_t)),
      data_(static_cast<sample_t*>(storage_.data())) {
  if (channels == 0 || capacity == 0)
    throw Error(ErrorCode::invalid_argument, "streaming: a block needs at least one channel and one sample (got " +
                                                 std::to_string(channels) + " channels, " +
                                                 std::to_string(capacity) + " samples)");
}

bool block_is_finite(const Block& block) {
  if (block.stamp.flags & block_finite_checked) return (block.stamp.flags & block_non_finite) == 0;
  return !find_non_finite({block.data(), index_t(block.channels()), index_t(block.samples), index_t(block.channels())}).found;
}

}  // namespace eigstream::streaming
