#include "eigstream/error.hpp"

namespace eigstream {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::invalid_input: return "invalid_input";
    case ErrorCode::not_converged: return "not_converged";
    case ErrorCode::cuda: return "cuda";
    case ErrorCode::io: return "io";
  }
  return "unknown";
}

}  // namespace eigstream
