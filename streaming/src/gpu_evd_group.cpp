// DecomposeStage's GPU path: a group of covariances per launch of the batched EVD kernel.
#include "gpu_evd_group.hpp"

#include "eigstream/cuda.hpp"

namespace eigstream::streaming {
namespace {

std::size_t staging_bytes(std::size_t n, std::size_t group) {
  return group * (2 * n * n * sizeof(std::complex<float>) + n * sizeof(float) + sizeof(SolveInfo)) + sizeof(float);
}

}  // namespace

GpuEvdGroup::GpuEvdGroup(std::size_t channels, std::size_t group, const Options& options)
    : n_(channels), nn_(channels * channels), group_(group), options_(options), stream_("decompose stage: cudaStreamCreate"),
      host_buffer_(staging_bytes(channels, group)),
      host_a_(static_cast<cfloat*>(host_buffer_.data())), host_v_(host_a_ + group * nn_),
      host_w_(reinterpret_cast<float*>(host_v_ + group * nn_)),
      host_info_(reinterpret_cast<SolveInfo*>(host_w_ + group * n_ + (group * n_) % 2)),
      a_(group * nn_, stream_.get()), v_(group * nn_, stream_.get()), warm_(group * nn_, stream_.get()),
      w_(group * n_, stream_.get()), info_(group, stream_.get()) {
  options_.backend = Backend::cuda;
  detail::check_cuda(cudaStreamSynchronize(stream_.get()), "decompose stage: device memory");
}

void GpuEvdGroup::solve(std::size_t count) {
  using detail::check_cuda;
  const auto n = index_t(n_);
  check_cuda(cudaMemcpyAsync(a_.get(), host_a_, count * nn_ * sizeof(cfloat), cudaMemcpyHostToDevice, stream_.get()),
             "decompose stage: copy to GPU");
  const BatchView<const cfloat> warm =
      has_warm_ ? BatchView<const cfloat>{warm_.get(), n, n, n, index_t(nn_), index_t(count)} : BatchView<const cfloat>{};
  cuda::evd_batched(eigstream::batch<const cfloat>(a_.get(), n, n, index_t(count)), eigstream::vectors(w_.get(), n, index_t(count)),
                    eigstream::batch(v_.get(), n, n, index_t(count)), info_.get(), options_, stream_.get(), warm);
  check_cuda(cudaMemcpyAsync(host_v_, v_.get(), count * nn_ * sizeof(cfloat), cudaMemcpyDeviceToHost, stream_.get()),
             "decompose stage: copy from GPU");
  check_cuda(cudaMemcpyAsync(host_w_, w_.get(), count * n_ * sizeof(float), cudaMemcpyDeviceToHost, stream_.get()),
             "decompose stage: copy from GPU");
  check_cuda(cudaMemcpyAsync(host_info_, info_.get(), count * sizeof(SolveInfo), cudaMemcpyDeviceToHost, stream_.get()),
             "decompose stage: copy from GPU");
  check_cuda(cudaStreamSynchronize(stream_.get()), "decompose stage: EVD on the GPU");
}

void GpuEvdGroup::keep_as_warm_start(std::size_t s) {
  // Every slot of the next group starts from the same V0: the batched kernel takes one per matrix.
  for (std::size_t slot = 0; slot < group_; ++slot)
    detail::check_cuda(cudaMemcpyAsync(warm_.get() + slot * nn_, v_.get() + s * nn_, nn_ * sizeof(cfloat),
                                       cudaMemcpyDeviceToDevice, stream_.get()),
                       "decompose stage: warm start");
  has_warm_ = true;
}

}  // namespace eigstream::streaming
