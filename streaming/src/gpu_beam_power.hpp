// GpuBeamPower: BeamformStage's GPU path (CUDA builds only). A group of decompositions gets its MVDR
// beam powers and MUSIC pseudospectra over the scan grid in one launch each of
// eigstream::cuda::beam_power_batched; the weights per eigenvector come from Beamformer<float> on the
// host. Pinned host staging and device memory (with the grid's steering vectors, uploaded once) are
// allocated at construction; computing allocates nothing.
#pragma once

#include <complex>
#include <cstddef>

#include "cuda_stream.hpp"
#include "device_timer.hpp"
#include "eigstream/beamforming.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/streaming/host_memory.hpp"

namespace eigstream::streaming {

class GpuBeamPower {
 public:
  using cfloat = std::complex<float>;

  GpuBeamPower(const Beamformer<float>& beamformer, std::size_t group, GpuTimeline* timeline);
  GpuBeamPower(const GpuBeamPower&) = delete;
  GpuBeamPower& operator=(const GpuBeamPower&) = delete;

  std::size_t group() const noexcept { return group_; }
  // Host staging of slot s: the eigenvalues and eigenvectors (elements x elements, column-major)
  // and both sets of weights to fill; the powers after compute().
  float* values(std::size_t s) noexcept { return host_values_ + s * n_; }
  cfloat* vectors(std::size_t s) noexcept { return host_v_ + s * n_ * n_; }
  float* mvdr_weights(std::size_t s) noexcept { return host_weights_ + s * n_; }
  float* music_weights(std::size_t s) noexcept { return host_weights_ + (group_ + s) * n_; }
  EvdView<float> evd(std::size_t s) const noexcept {
    return {host_values_ + s * n_, {host_v_ + s * n_ * n_, index_t(n_), index_t(n_), index_t(n_)}};
  }
  const float* mvdr_power(std::size_t s) const noexcept { return host_power_ + s * angles_; }
  const float* music_spectrum(std::size_t s) const noexcept { return host_power_ + (group_ + s) * angles_; }

  // Slots [0, count): the MVDR powers and/or MUSIC spectra; returns when they are in host staging.
  void compute(std::size_t count, bool mvdr, bool music);
  // The stream time of the work since the last call.
  DeviceTime take_device_time() { return timer_.take(); }

 private:
  std::size_t n_, angles_, group_;
  CudaStream stream_;  // before the device memory: destroyed after it
  DeviceTimer timer_;
  HostBuffer host_buffer_;
  cfloat* host_v_;
  float *host_values_, *host_weights_, *host_power_;
  detail::DeviceArray<cfloat> v_, steering_;
  detail::DeviceArray<float> weights_, power_;
};

}  // namespace eigstream::streaming
