// GpuEvdGroup: DecomposeStage's GPU path (CUDA builds only). A group of covariances is solved in one
// launch of the batched EVD kernel (eigstream::cuda::evd_batched), or a group of blocks of samples in
// one launch of the batched SVD kernel (cuda::svd_batched: X = U S W^H gives the eigenvectors U of
// X X^H), all warm-started from one V0: the eigenvectors of the previous group's last good
// decomposition, kept on the device. Pinned host staging and device memory are allocated at
// construction; solving allocates nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <complex>
#include <cstddef>

#include "eigstream/detail/device_array.hpp"
#include "eigstream/options.hpp"
#include "cuda_stream.hpp"
#include "device_timer.hpp"
#include "eigstream/streaming/host_memory.hpp"

namespace eigstream::streaming {

class GpuEvdGroup {
 public:
  using cfloat = std::complex<float>;

  // max_snapshots: the longest block solve_block_svd takes (0: covariances only).
  GpuEvdGroup(std::size_t channels, std::size_t group, const Options& options, std::size_t max_snapshots = 0);
  GpuEvdGroup(const GpuEvdGroup&) = delete;
  GpuEvdGroup& operator=(const GpuEvdGroup&) = delete;

  std::size_t group() const noexcept { return group_; }
  // Host staging of slot s: the covariance (channels x channels, column-major) or the block
  // (channels x snapshots) to solve, and the results after solving: eigenvalues, or singular values
  // after solve_block_svd, descending.
  cfloat* matrix(std::size_t s) noexcept { return host_a_ + s * input_stride_; }
  const float* values(std::size_t s) const noexcept { return host_w_ + s * n_; }
  const cfloat* vectors(std::size_t s) const noexcept { return host_v_ + s * nn_; }
  const SolveInfo& info(std::size_t s) const noexcept { return host_info_[s]; }

  // Solves slots [0, count) in one launch, warm-started when a warm start has been kept; returns when
  // the results are in host staging.
  void solve(std::size_t count);
  // The same for blocks of `snapshots` (channels <= snapshots <= max_snapshots).
  void solve_block_svd(std::size_t count, std::size_t snapshots);
  // Slot s's eigenvectors (of the last solve) become the warm start of the next solves.
  void keep_as_warm_start(std::size_t s);
  bool has_warm_start() const noexcept { return has_warm_; }
  // The stream time of the solves since the last call.
  DeviceTime take_device_time() noexcept { return timer_.take(); }

 private:
  void copy_results(std::size_t count);  // to host staging, then waits for the stream

  std::size_t n_, nn_, group_, max_snapshots_, input_stride_;
  Options options_;
  CudaStream stream_;  // before the device memory: destroyed after it
  DeviceTimer timer_;
  HostBuffer host_buffer_;
  cfloat *host_a_, *host_v_;
  float* host_w_;
  SolveInfo* host_info_;
  detail::DeviceArray<cfloat> a_, v_, warm_;
  detail::DeviceArray<float> w_;
  detail::DeviceArray<SolveInfo> info_;
  std::size_t svd_workspace_bytes_;
  detail::DeviceArray<char> svd_workspace_;
  bool has_warm_ = false;
};

}  // namespace eigstream::streaming
