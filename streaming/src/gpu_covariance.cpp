// CovarianceStage's GPU path: the forgotten covariance updated by cublasCherk.
#include "gpu_covariance.hpp"

#include <string>

#include "eigstream/error.hpp"

namespace eigstream::streaming {
namespace {

void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorCode::cuda, std::string("covariance stage: ") + what + ": cuBLAS status " + std::to_string(int(status)));
}

}  // namespace

GpuCovariance::GpuCovariance(std::size_t channels)
    : n_(channels), stream_("covariance stage: cudaStreamCreate"), r_(channels * channels, stream_.get()),
      host_r_(channels * channels * sizeof(cfloat)) {
  check_blas(cublasCreate(&blas_), "cublasCreate");
  check_blas(cublasSetStream(blas_, stream_.get()), "cublasSetStream");
  detail::check_cuda(cudaMemsetAsync(r_.get(), 0, n_ * n_ * sizeof(cfloat), stream_.get()), "covariance stage: clear");
}

GpuCovariance::~GpuCovariance() { cublasDestroy(blas_); }

void GpuCovariance::update(const sample_t* block, std::size_t snapshots, float keep, float take) {
  if (snapshots > x_snapshots_) {
    x_ = std::make_unique<detail::DeviceArray<cfloat>>(n_ * snapshots, stream_.get());
    x_snapshots_ = snapshots;
  }
  detail::check_cuda(cudaMemcpyAsync(x_->get(), block, n_ * snapshots * sizeof(cfloat), cudaMemcpyHostToDevice,
                                     stream_.get()),
                     "covariance stage: copy to GPU");
  // The block goes back to its pool when the stage returns: the copy must be done by then.
  detail::check_cuda(cudaStreamSynchronize(stream_.get()), "covariance stage: copy to GPU");
  const float alpha = take / float(snapshots);
  check_blas(cublasCherk(blas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, int(n_), int(snapshots), &alpha,
                         reinterpret_cast<const cuComplex*>(x_->get()), int(n_), &keep,
                         reinterpret_cast<cuComplex*>(r_.get()), int(n_)),
             "cublasCherk");
}

void GpuCovariance::read(cfloat* out) {
  auto* lower = static_cast<cfloat*>(host_r_.data());
  detail::check_cuda(cudaMemcpyAsync(lower, r_.get(), n_ * n_ * sizeof(cfloat), cudaMemcpyDeviceToHost, stream_.get()),
                     "covariance stage: copy from GPU");
  detail::check_cuda(cudaStreamSynchronize(stream_.get()), "covariance stage: covariance on the GPU");
  for (std::size_t j = 0; j < n_; ++j) {
    out[j + j * n_] = {lower[j + j * n_].real(), 0.0f};
    for (std::size_t i = j + 1; i < n_; ++i) {
      out[i + j * n_] = lower[i + j * n_];
      out[j + i * n_] = std::conj(lower[i + j * n_]);
    }
  }
}

}  // namespace eigstream::streaming
