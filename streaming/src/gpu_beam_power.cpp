// BeamformStage's GPU path: MVDR powers and MUSIC spectra of a group of decompositions per launch.
#include "gpu_beam_power.hpp"

#include "eigstream/cuda.hpp"

namespace eigstream::streaming {
namespace {

std::size_t staging_bytes(std::size_t n, std::size_t angles, std::size_t group) {
  // vectors, then values, both weight sets and both power sets (floats)
  return group * (n * n * sizeof(std::complex<float>) + (3 * n + 2 * angles) * sizeof(float));
}

}  // namespace

GpuBeamPower::GpuBeamPower(const Beamformer<float>& beamformer, std::size_t group, GpuTimeline* timeline)
    : n_(std::size_t(beamformer.elements())), angles_(beamformer.angles().size()), group_(group),
      stream_("beamform stage: cudaStreamCreate"), timer_(stream_.get(), timeline),
      host_buffer_(staging_bytes(n_, angles_, group)), host_v_(static_cast<cfloat*>(host_buffer_.data())),
      host_values_(reinterpret_cast<float*>(host_v_ + group * n_ * n_)), host_weights_(host_values_ + group * n_),
      host_power_(host_weights_ + 2 * group * n_), v_(group * n_ * n_, stream_.get()),
      steering_(n_ * angles_, stream_.get()), weights_(2 * group * n_, stream_.get()),
      power_(2 * group * angles_, stream_.get()) {
  const MatrixView<const cfloat> steering = beamformer.steering();  // packed: ld = elements
  detail::check_cuda(cudaMemcpyAsync(steering_.get(), steering.data, n_ * angles_ * sizeof(cfloat), cudaMemcpyHostToDevice,
                                     stream_.get()),
                     "beamform stage: steering vectors to the GPU");
  detail::check_cuda(cudaStreamSynchronize(stream_.get()), "beamform stage: device memory");
}

void GpuBeamPower::compute(std::size_t count, bool mvdr, bool music) {
  using detail::check_cuda;
  const auto n = index_t(n_), angles = index_t(angles_), c = index_t(count);
  timer_.begin(DeviceTimer::Kind::copy);
  check_cuda(cudaMemcpyAsync(v_.get(), host_v_, count * n_ * n_ * sizeof(cfloat), cudaMemcpyHostToDevice, stream_.get()),
             "beamform stage: copy to GPU");
  timer_.end();
  const BatchView<const cfloat> vectors = eigstream::batch<const cfloat>(v_.get(), n, n, c);
  const MatrixView<const cfloat> steering{steering_.get(), n, angles, n};
  for (const std::size_t set : {0, 1}) {  // MVDR, MUSIC
    if (!(set == 0 ? mvdr : music)) continue;
    float* weights = weights_.get() + set * group_ * n_;
    float* power = power_.get() + set * group_ * angles_;
    timer_.begin(DeviceTimer::Kind::copy);
    check_cuda(cudaMemcpyAsync(weights, host_weights_ + set * group_ * n_, count * n_ * sizeof(float),
                               cudaMemcpyHostToDevice, stream_.get()),
               "beamform stage: copy to GPU");
    timer_.end();
    timer_.begin(DeviceTimer::Kind::kernel);
    cuda::beam_power_batched<float>(vectors, {weights, n, n, c}, steering, {power, angles, angles, c}, stream_.get());
    timer_.end();
    timer_.begin(DeviceTimer::Kind::copy);
    check_cuda(cudaMemcpyAsync(host_power_ + set * group_ * angles_, power, count * angles_ * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_.get()),
               "beamform stage: copy from GPU");
    timer_.end();
  }
  check_cuda(cudaStreamSynchronize(stream_.get()), "beamform stage: beam powers on the GPU");
  timer_.collect_through(timer_.ticket());
}

}  // namespace eigstream::streaming
