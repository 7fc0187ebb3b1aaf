// Device memory owned by one call of the GPU path (cuda_evd.cpp, cuda_svd.cpp) or by one streaming
// stage, and the check that turns a CUDA status into Error(cuda). CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "eigstream/error.hpp"

namespace eigstream::detail {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(ErrorCode::cuda, std::string(what) + ": " + cudaGetErrorString(status));
}

// Device memory owned by one call or stage, allocated and freed in stream order:
// cudaFree would wait for the whole device, and a persistent solver's kernel never finishes.
template <class T>
class DeviceArray {
 public:
  DeviceArray(std::size_t count, cudaStream_t stream) : count_(count), stream_(stream) {
    if (count)
      check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), stream), "cudaMallocAsync");
  }
  ~DeviceArray() {
    if (data_) cudaFreeAsync(data_, stream_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return data_; }
  void upload(const std::vector<T>& host, cudaStream_t stream) {
    check_cuda(cudaMemcpyAsync(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice, stream), "copy to GPU");
  }
  void download(std::vector<T>& host, cudaStream_t stream) const {
    host.resize(count_);
    check_cuda(cudaMemcpyAsync(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost, stream), "copy from GPU");
  }

 private:
  T* data_ = nullptr;
  std::size_t count_;
  cudaStream_t stream_;
};

}  // namespace eigstream::detail
