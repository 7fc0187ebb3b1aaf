// HostBuffer: pinned memory from cudaHostAlloc in CUDA builds, else (or when that fails) memory
// aligned to 64 bytes.
#include "eigstream/streaming/host_memory.hpp"

#include "eigstream/error.hpp"

#include <cstdlib>
#include <string>

#ifdef EIGSTREAM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace eigstream::streaming {

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
#ifdef EIGSTREAM_HAVE_CUDA
  if (cudaHostAlloc(&data_, bytes, cudaHostAllocDefault) == cudaSuccess) {
    pinned_ = true;
    return;
  }
  cudaGetLastError();  // no GPU or driver here: ordinary memory serves the CPU stages
  data_ = nullptr;
#endif
  constexpr std::size_t alignment = 64;
  data_ = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  if (!data_)
    throw Error(ErrorCode::io, "streaming: could not allocate " + std::to_string(bytes) + " bytes of host memory");
}

HostBuffer::~HostBuffer() {
#ifdef EIGSTREAM_HAVE_CUDA
  if (pinned_) {
    cudaFreeHost(data_);
    return;
  }
#endif
  std::free(data_);
}

}  // namespace eigstream::streaming
