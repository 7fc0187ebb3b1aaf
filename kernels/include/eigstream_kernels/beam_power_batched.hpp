// Launcher of the batched beam-power kernel (kernels/beam_power_batched.cu) for host code: for each
// matrix b of a batch of eigenvector matrices V_b (n x n) with per-eigenvector weights w_b (n), and
// each steering vector a_g (column g of an n x angles matrix),
//   power(g, b) = 1 / sum_i w_b(i) |v_i^H a_g|^2.
// All pointers are device pointers; nothing is allocated; the launch is asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <complex>

#include "eigstream/views.hpp"

namespace eigstream::kernels {

inline constexpr int kBeamPowerMaxN = 64;

template <class R>  // float, double
struct BeamPowerBatchedArgs {
  const std::complex<R>* vectors = nullptr;
  index_t ldv = 0, stride_v = 0;
  const R* weights = nullptr;
  index_t stride_weights = 0;
  const std::complex<R>* steering = nullptr;
  index_t ld_steering = 0;
  R* power = nullptr;
  index_t stride_power = 0;
  int n = 0;
  index_t angles = 0;
  index_t count = 0;
};

template <class R>
cudaError_t launch_beam_power_batched(const BeamPowerBatchedArgs<R>& args, cudaStream_t stream);

}  // namespace eigstream::kernels
