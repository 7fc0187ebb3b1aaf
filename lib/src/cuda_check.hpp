// Turns a failed CUDA runtime call into eigstream::Error(cuda) naming what was being done.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "eigstream/error.hpp"

namespace eigstream::detail {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(ErrorCode::cuda, std::string(what) + ": " + cudaGetErrorString(status));
}

}  // namespace eigstream::detail
