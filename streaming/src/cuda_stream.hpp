// CudaStream: a non-blocking CUDA stream owned by a GPU stage (CUDA builds only). A stage declares it
// before the device memory it frees in the stream's order, so that the stream is destroyed last.
#pragma once

#include <cuda_runtime_api.h>

#include "eigstream/detail/device_array.hpp"

namespace eigstream::streaming {

class CudaStream {
 public:
  explicit CudaStream(const char* owner) {
    detail::check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), owner);
  }
  ~CudaStream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace eigstream::streaming
