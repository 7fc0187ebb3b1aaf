// GpuCovariance: CovarianceStage's GPU path (CUDA builds only): an exponentially forgotten covariance
// kept on the device and updated per block by cuBLAS, R <- keep R + take X X^H / L (cublasCherk on
// the lower triangle). Device memory is allocated at construction and when a block larger than any
// before arrives (the first block, in a stream of equal blocks).
#pragma once

#include <cublas_v2.h>

#include <complex>
#include <cstddef>
#include <memory>

#include "cuda_stream.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/streaming/host_memory.hpp"
#include "eigstream/views.hpp"

namespace eigstream::streaming {

class GpuCovariance {
 public:
  using cfloat = std::complex<float>;

  explicit GpuCovariance(std::size_t channels);
  ~GpuCovariance();
  GpuCovariance(const GpuCovariance&) = delete;
  GpuCovariance& operator=(const GpuCovariance&) = delete;

  // Folds block X (channels x snapshots, channels interleaved per snapshot; pinned host memory for a
  // fast copy) into R with the given weights. Returns once X has been copied (the update itself may
  // still run: read() waits for it), so the caller may reuse X's memory.
  void update(const sample_t* block, std::size_t snapshots, float keep, float take);
  // R, full Hermitian (the lower triangle mirrored, the diagonal real), into out (channels x channels).
  void read(cfloat* out);

 private:
  std::size_t n_;
  CudaStream stream_;  // before the device memory: destroyed after it
  cublasHandle_t blas_ = nullptr;
  std::unique_ptr<detail::DeviceArray<cfloat>> x_;
  std::size_t x_snapshots_ = 0;
  detail::DeviceArray<cfloat> r_;
  HostBuffer host_r_;
};

}  // namespace eigstream::streaming
