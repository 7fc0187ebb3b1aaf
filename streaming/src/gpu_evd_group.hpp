// GpuEvdGroup: DecomposeStage's GPU path (CUDA builds only). A group of covariances is solved in one
// launch of the batched EVD kernel (eigstream::cuda::evd_batched), or a group of blocks of samples in
// one launch of the batched SVD kernel (cuda::svd_batched: X = U S W^H gives the eigenvectors U of
// X X^H), each warm-started from the eigenvectors of its subband's last good decomposition of the
// groups before, kept on the device. Pinned host staging and device memory are allocated at
// construction; solving allocates nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <complex>
#include <cstddef>
#include <vector>

#include "eigstream/detail/device_array.hpp"
#include "eigstream/options.hpp"
#include "eigstream/views.hpp"
#include "cuda_stream.hpp"
#include "device_timer.hpp"
#include "eigstream/streaming/host_memory.hpp"

namespace eigstream::streaming {

class GpuEvdGroup {
 public:
  using cfloat = std::complex<float>;

  // max_snapshots: the longest block solve_block_svd takes (0: covariances only); subbands: how
  // many warm starts are kept.
  GpuEvdGroup(std::size_t channels, std::size_t group, const Options& options, std::size_t max_snapshots,
              std::size_t subbands, GpuTimeline* timeline);
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

  // Slot s of the next solve holds a matrix of this subband.
  void set_subband(std::size_t s, std::size_t subband) noexcept { slot_subband_[s] = subband; }
  // Solves slots [0, count) in one launch, with `warm` each from its subband's warm start (every
  // one must have been kept); returns when the results are in host staging.
  void solve(std::size_t count, bool warm);
  // The same for blocks of `snapshots` (channels <= snapshots <= max_snapshots).
  void solve_block_svd(std::size_t count, std::size_t snapshots, bool warm);
  // Slot s's eigenvectors (of the last solve) become its subband's warm start for the next solves.
  void keep_as_warm_start(std::size_t s);
  bool has_warm_start(std::size_t subband) const noexcept { return has_warm_[subband] != 0; }
  // The stream time of the solves since the last call.
  DeviceTime take_device_time() noexcept { return timer_.take(); }

 private:
  void copy_results(std::size_t count);  // to host staging, then waits for the stream
  BatchView<const cfloat> warm_starts(std::size_t count, bool warm);  // queues each slot's V0

  std::size_t n_, nn_, group_, max_snapshots_, input_stride_;
  Options options_;
  CudaStream stream_;  // before the device memory: destroyed after it
  DeviceTimer timer_;
  HostBuffer host_buffer_;
  cfloat *host_a_, *host_v_;
  float* host_w_;
  SolveInfo* host_info_;
  detail::DeviceArray<cfloat> a_, v_, warm_, subband_warm_;  // warm_: per slot, subband_warm_: per subband
  detail::DeviceArray<float> w_;
  detail::DeviceArray<SolveInfo> info_;
  std::size_t svd_workspace_bytes_;
  detail::DeviceArray<char> svd_workspace_;
  std::vector<std::size_t> slot_subband_;
  std::vector<char> has_warm_;  // per subband
};

}  // namespace eigstream::streaming
