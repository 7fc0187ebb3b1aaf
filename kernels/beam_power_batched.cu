// Batched beam powers from eigendecompositions: power(g, b) = 1 / sum_i w_b(i) |v_i^H a_g|^2, the
// form shared by MVDR (w_i = 1 / (lambda_i + delta)) and MUSIC (w_i = 1/N on the noise subspace,
// 0 on the signal subspace).
//
// Mapping: a block per (matrix: grid x, tile of kThreads angles: grid y), a thread per angle. The block stages V_b
// and w_b in shared memory (every thread of a warp reads the same entry: a broadcast); each thread
// forms the projections v_i^H a_g for kChunk eigenvectors at a time, reading its steering vector
// from global memory (kept in L1/L2: all matrices share it) once per chunk. Per matrix and angle
// the work is n^2 complex multiply-adds; bytes are V and w once per tile, the powers once.
#include <cuda_runtime.h>

#include "device_scalar.cuh"
#include "dynamic_shared_memory.cuh"
#include "eigstream_kernels/beam_power_batched.hpp"

namespace eigstream::kernels {
namespace {

constexpr int kThreads = 128;
constexpr int kChunk = 8;

template <class R>
__global__ void __launch_bounds__(kThreads) beam_power_kernel(BeamPowerBatchedArgs<R> args) {
  using C = Cx<R>;
  extern __shared__ unsigned char shared_bytes[];
  const int n = args.n;
  C* v = reinterpret_cast<C*>(shared_bytes);  // n x n, ld n
  R* w = reinterpret_cast<R*>(v + n * n);     // n
  const index_t b = blockIdx.x;
  const auto* vectors = reinterpret_cast<const C*>(args.vectors) + b * args.stride_v;
  for (int e = threadIdx.x; e < n * n; e += kThreads) v[e] = vectors[e % n + (e / n) * args.ldv];
  for (int i = threadIdx.x; i < n; i += kThreads) w[i] = args.weights[b * args.stride_weights + i];
  __syncthreads();

  const index_t g = index_t(blockIdx.y) * kThreads + threadIdx.x;
  if (g >= args.angles) return;
  const C* a = reinterpret_cast<const C*>(args.steering) + g * args.ld_steering;
  R denominator = 0;
  for (int i0 = 0; i0 < n; i0 += kChunk) {
    C projection[kChunk];
#pragma unroll
    for (int j = 0; j < kChunk; ++j) projection[j] = {R(0), R(0)};
    for (int k = 0; k < n; ++k) {
      const C ak = a[k];
#pragma unroll
      for (int j = 0; j < kChunk; ++j)
        if (i0 + j < n) projection[j] += conj_mul(v[k + (i0 + j) * n], ak);
    }
#pragma unroll
    for (int j = 0; j < kChunk; ++j)
      if (i0 + j < n) denominator += w[i0 + j] * abs2(projection[j]);
  }
  args.power[b * args.stride_power + g] = R(1) / denominator;
}

}  // namespace

template <class R>
cudaError_t launch_beam_power_batched(const BeamPowerBatchedArgs<R>& args, cudaStream_t stream) {
  if (args.count == 0 || args.angles == 0 || args.n == 0) return cudaSuccess;
  const dim3 grid(unsigned(args.count), unsigned((args.angles + kThreads - 1) / kThreads));
  const std::size_t shared = std::size_t(args.n) * std::size_t(args.n) * sizeof(Cx<R>) + std::size_t(args.n) * sizeof(R);
  const cudaError_t status = allow_dynamic_shared_memory(beam_power_kernel<R>, shared);  // n = 64 in double
  if (status != cudaSuccess) return status;
  beam_power_kernel<R><<<grid, kThreads, shared, stream>>>(args);
  return cudaGetLastError();
}

template cudaError_t launch_beam_power_batched<float>(const BeamPowerBatchedArgs<float>&, cudaStream_t);
template cudaError_t launch_beam_power_batched<double>(const BeamPowerBatchedArgs<double>&, cudaStream_t);

}  // namespace eigstream::kernels
