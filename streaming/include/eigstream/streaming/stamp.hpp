// Stamp: what every item moving through the streaming runtime carries, whatever it holds (a block of
// samples, a covariance matrix, eigenvalues). An item type for Pool, Edge and the stages is any
// type with a public `Stamp stamp` member and a `std::size_t bytes() const` (its payload size).
#pragma once

#include <cstdint>

namespace eigstream::streaming {

struct Stamp {
  std::uint64_t sequence = 0;       // numbered by the source, from 0, one per item it emits
  std::int64_t source_time_ns = 0;  // steady_clock time the source emitted it (latency origin)
  std::uint32_t flags = 0;          // item-type specific (for blocks: BlockFlag)
};

}  // namespace eigstream::streaming
