// DecomposeStage's GPU path: a group of covariances per launch of the batched EVD kernel, or a group
// of blocks per launch of the batched SVD kernel.
#include "gpu_evd_group.hpp"

#include <algorithm>

#include "eigstream/cuda.hpp"
#include "eigstream/error.hpp"

namespace eigstream::streaming {
namespace {

std::size_t staging_bytes(std::size_t n, std::size_t input_stride, std::size_t group) {
  return group * ((input_stride + n * n) * sizeof(std::complex<float>) + n * sizeof(float) + sizeof(SolveInfo)) +
         sizeof(float);
}

}  // namespace

GpuEvdGroup::GpuEvdGroup(std::size_t channels, std::size_t group, const Options& options, std::size_t max_snapshots,
                         std::size_t subbands, GpuTimeline* timeline)
    : n_(channels), nn_(channels * channels), group_(group), max_snapshots_(max_snapshots),
      input_stride_(std::max(nn_, channels * max_snapshots)), options_(options),
      stream_("decompose stage: cudaStreamCreate"), timer_(stream_.get(), timeline),
      host_buffer_(staging_bytes(channels, input_stride_, group)),
      host_a_(static_cast<cfloat*>(host_buffer_.data())), host_v_(host_a_ + group * input_stride_),
      host_w_(reinterpret_cast<float*>(host_v_ + group * nn_)),
      host_info_(reinterpret_cast<SolveInfo*>(host_w_ + group * n_ + (group * n_) % 2)),
      a_(group * input_stride_, stream_.get()), v_(group * nn_, stream_.get()), warm_(group * nn_, stream_.get()),
      subband_warm_(subbands * nn_, stream_.get()),
      w_(group * n_, stream_.get()), info_(group, stream_.get()),
      svd_workspace_bytes_(max_snapshots > 0 ? cuda::svd_workspace_size<cfloat>(index_t(channels), index_t(max_snapshots),
                                                                               index_t(group), true, false)
                                             : 0),
      svd_workspace_(svd_workspace_bytes_, stream_.get()), slot_subband_(group, 0), has_warm_(subbands, 0) {
  options_.backend = Backend::cuda;
  detail::check_cuda(cudaStreamSynchronize(stream_.get()), "decompose stage: device memory");
}

BatchView<const GpuEvdGroup::cfloat> GpuEvdGroup::warm_starts(std::size_t count, bool warm) {
  if (!warm) return {};
  for (std::size_t slot = 0; slot < count; ++slot)
    detail::check_cuda(cudaMemcpyAsync(warm_.get() + slot * nn_, subband_warm_.get() + slot_subband_[slot] * nn_,
                                       nn_ * sizeof(cfloat), cudaMemcpyDeviceToDevice, stream_.get()),
                       "decompose stage: warm start");
  const auto n = index_t(n_);
  return {warm_.get(), n, n, n, index_t(nn_), index_t(count)};
}

void GpuEvdGroup::solve(std::size_t count, bool warm_start) {
  using detail::check_cuda;
  const auto n = index_t(n_);
  timer_.begin(DeviceTimer::Kind::copy);
  check_cuda(cudaMemcpyAsync(a_.get(), host_a_, count * input_stride_ * sizeof(cfloat), cudaMemcpyHostToDevice,
                             stream_.get()),
             "decompose stage: copy to GPU");
  timer_.end();
  const BatchView<const cfloat> warm = warm_starts(count, warm_start);
  timer_.begin(DeviceTimer::Kind::kernel);
  cuda::evd_batched(BatchView<const cfloat>{a_.get(), n, n, n, index_t(input_stride_), index_t(count)},
                    eigstream::vectors(w_.get(), n, index_t(count)), eigstream::batch(v_.get(), n, n, index_t(count)),
                    info_.get(), options_, stream_.get(), warm);
  timer_.end();
  copy_results(count);
}

void GpuEvdGroup::solve_block_svd(std::size_t count, std::size_t snapshots, bool warm_start) {
  using detail::check_cuda;
  if (snapshots < n_ || snapshots > max_snapshots_)
    throw Error(ErrorCode::invalid_argument, "decompose stage: a block of " + std::to_string(snapshots) +
                                                 " snapshots is outside the GPU group's range [" + std::to_string(n_) +
                                                 ", " + std::to_string(max_snapshots_) + "]");
  const auto n = index_t(n_), l = index_t(snapshots);
  if (cuda::svd_workspace_size<cfloat>(n, l, index_t(count), true, false) > svd_workspace_bytes_)
    throw Error(ErrorCode::cuda, "decompose stage: blocks of " + std::to_string(snapshots) +
                                     " snapshots need more GPU workspace than blocks of " + std::to_string(max_snapshots_));
  timer_.begin(DeviceTimer::Kind::copy);
  // Slot by slot: each block fills only the start of its slot.
  check_cuda(cudaMemcpy2DAsync(a_.get(), input_stride_ * sizeof(cfloat), host_a_, input_stride_ * sizeof(cfloat),
                               n_ * snapshots * sizeof(cfloat), count, cudaMemcpyHostToDevice, stream_.get()),
             "decompose stage: copy to GPU");
  timer_.end();
  const BatchView<const cfloat> warm = warm_starts(count, warm_start);
  timer_.begin(DeviceTimer::Kind::kernel);
  cuda::svd_batched(BatchView<const cfloat>{a_.get(), n, l, n, index_t(input_stride_), index_t(count)},
                    eigstream::vectors(w_.get(), n, index_t(count)), eigstream::batch(v_.get(), n, n, index_t(count)),
                    BatchView<cfloat>{}, info_.get(), options_, stream_.get(), warm, svd_workspace_.get());
  timer_.end();
  copy_results(count);
}

void GpuEvdGroup::copy_results(std::size_t count) {
  using detail::check_cuda;
  timer_.begin(DeviceTimer::Kind::copy);
  check_cuda(cudaMemcpyAsync(host_v_, v_.get(), count * nn_ * sizeof(cfloat), cudaMemcpyDeviceToHost, stream_.get()),
             "decompose stage: copy from GPU");
  check_cuda(cudaMemcpyAsync(host_w_, w_.get(), count * n_ * sizeof(float), cudaMemcpyDeviceToHost, stream_.get()),
             "decompose stage: copy from GPU");
  check_cuda(cudaMemcpyAsync(host_info_, info_.get(), count * sizeof(SolveInfo), cudaMemcpyDeviceToHost, stream_.get()),
             "decompose stage: copy from GPU");
  timer_.end();
  check_cuda(cudaStreamSynchronize(stream_.get()), "decompose stage: decomposition on the GPU");
  timer_.collect_through(timer_.ticket());
}

void GpuEvdGroup::keep_as_warm_start(std::size_t s) {
  const std::size_t subband = slot_subband_[s];
  detail::check_cuda(cudaMemcpyAsync(subband_warm_.get() + subband * nn_, v_.get() + s * nn_, nn_ * sizeof(cfloat),
                                     cudaMemcpyDeviceToDevice, stream_.get()),
                     "decompose stage: warm start");
  has_warm_[subband] = 1;
}

}  // namespace eigstream::streaming
