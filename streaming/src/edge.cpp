// The parts of an edge that do not depend on its item type.
#include "eigstream/streaming/edge.hpp"

#include "eigstream/error.hpp"

namespace eigstream::streaming {

EdgeBase::EdgeBase(const EdgeOptions& options) : options_(options) {
  if (options.capacity == 0) throw Error(ErrorCode::invalid_argument, "streaming: an edge needs a capacity of at least 1");
}

}  // namespace eigstream::streaming
