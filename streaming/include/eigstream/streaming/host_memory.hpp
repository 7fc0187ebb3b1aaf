// HostBuffer: host memory for sample blocks, allocated once. In CUDA builds it is pinned
// (cudaHostAlloc) so blocks can be copied to the GPU asynchronously; where that fails (no GPU or no
// driver) and in CPU-only builds it is ordinary memory aligned to 64 bytes.
#pragma once

#include <cstddef>

namespace eigstream::streaming {

class HostBuffer {
 public:
  explicit HostBuffer(std::size_t bytes);  // throws eigstream::Error (io) when memory runs out
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  bool pinned() const noexcept { return pinned_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;
};

}  // namespace eigstream::streaming
