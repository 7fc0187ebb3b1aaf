// GpuEvdGroup: DecomposeStage's GPU path (CUDA builds only). A group of covariances is solved in one
// launch of the batched EVD kernel (eigstream::cuda::evd_batched), all warm-started from one V0: the
// eigenvectors of the previous group's last good decomposition, kept on the device. Pinned host
// staging and device memory are allocated at construction; solving allocates nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <complex>
#include <cstddef>

#include "eigstream/detail/device_array.hpp"
#include "eigstream/options.hpp"
#include "cuda_stream.hpp"
#include "eigstream/streaming/host_memory.hpp"

namespace eigstream::streaming {

class GpuEvdGroup {
 public:
  using cfloat = std::complex<float>;

  GpuEvdGroup(std::size_t channels, std::size_t group, const Options& options);
  GpuEvdGroup(const GpuEvdGroup&) = delete;
  GpuEvdGroup& operator=(const GpuEvdGroup&) = delete;

  std::size_t group() const noexcept { return group_; }
  // Host staging of slot s: the covariance to solve (channels x channels, column-major), and the
  // results after solve().
  cfloat* matrix(std::size_t s) noexcept { return host_a_ + s * nn_; }
  const float* values(std::size_t s) const noexcept { return host_w_ + s * n_; }
  const cfloat* vectors(std::size_t s) const noexcept { return host_v_ + s * nn_; }
  const SolveInfo& info(std::size_t s) const noexcept { return host_info_[s]; }

  // Solves slots [0, count) in one launch, warm-started when a warm start has been kept; returns when
  // the results are in host staging.
  void solve(std::size_t count);
  // Slot s's eigenvectors (of the last solve) become the warm start of the next solves.
  void keep_as_warm_start(std::size_t s);
  bool has_warm_start() const noexcept { return has_warm_; }

 private:
  std::size_t n_, nn_, group_;
  Options options_;
  CudaStream stream_;  // before the device memory: destroyed after it
  HostBuffer host_buffer_;
  cfloat *host_a_, *host_v_;
  float* host_w_;
  SolveInfo* host_info_;
  detail::DeviceArray<cfloat> a_, v_, warm_;
  detail::DeviceArray<float> w_;
  detail::DeviceArray<SolveInfo> info_;
  bool has_warm_ = false;
};

}  // namespace eigstream::streaming
