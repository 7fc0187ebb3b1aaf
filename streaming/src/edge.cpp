// The parts of an edge that do not depend on its item type.
#include "eigstream/streaming/edge.hpp"

#include "eigstream/error.hpp"

namespace eigstream::streaming {

const char* to_string(FullPolicy policy) noexcept {
  switch (policy) {
    case FullPolicy::block: return "block";
    case FullPolicy::drop_oldest: return "drop_oldest";
    case FullPolicy::drop_newest: return "drop_newest";
  }
  return "unknown";
}

EdgeBase::EdgeBase(const EdgeOptions& options) : options_(options) {
  if (options.capacity == 0) throw Error(ErrorCode::invalid_argument, "streaming: an edge needs a capacity of at least 1");
}

}  // namespace eigstream::streaming
