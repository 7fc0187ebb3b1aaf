// eigstream::Error: the one exception type of the library, with a code saying what kind of fault.
#pragma once

#include <stdexcept>
#include <string>

namespace eigstream {

enum class ErrorCode {
  invalid_argument,  // the call itself is wrong: sizes, leading dimensions, strides, options
  invalid_input,     // the data is wrong: NaN/Inf entries, a non-Hermitian matrix, a bad warm start
  not_converged,     // only when Options::throw_on_not_converged asks for it
  cuda,              // no GPU, or a CUDA call failed
  io,                // a file could not be read or written, or is malformed
};

const char* to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace eigstream
