// The tridiagonal start of the batched EVD's cold solves (kernels/tridiagonal_start.cu): for each
// Hermitian matrix A of a batch, an orthonormal V0 with V0^H A V0 diagonal to about working
// precision, from which the Jacobi solve runs as from a warm start.
#pragma once

#include <cuda_runtime.h>

#include "device_scalar.cuh"
#include "eigstream/views.hpp"

#include <type_traits>

namespace eigstream::kernels {

// Largest n the tridiagonal start takes.
inline constexpr int kTridiagonalStartMaxN = 64;

// V0 (n x n, leading dimension ldv, matrix b at v0 + b * stride_v) of each A (lower triangle read
// only; leading dimension lda, matrix b at a + b * stride_a), 1 <= n <= kTridiagonalStartMaxN. Where
// A has a NaN or infinite entry, is zero, or the QL iterations do not converge, V0 is the identity
// (the Jacobi solve then starts cold, and flags invalid input itself). Asynchronous on `stream`.
template <class S>
cudaError_t launch_tridiagonal_start(const S* a, index_t lda, index_t stride_a, S* v0, index_t ldv, index_t stride_v,
                                     int n, index_t count, cudaStream_t stream);

// Whether cold solves of order n with V asked for take the tridiagonal start (the batched kernel's,
// and the persistent solver's throughput consumers' at NMAX = 64), where it paid: from it, cold
// batches took 1.0 Jacobi sweep at n = 32 and 1.0-1.7 at 64 (from the identity 9-11.5 and 11-18),
// and ran 1.18x faster at complex float 32, 2.25x at complex double 32, 1.73x at float 64, 1.71x at
// complex float 64, 2.06x at double 64 and 2.75x at complex double 64. At float and double 32 the
// register solve's cold sweeps are cheap enough that with it they took 51% and 5% longer (H200,
// bench/results/2026-11-27-h200-tridiagonal-start.md), and so at complex n = 16: 2.1x as long at
// complex float, 1.6x at complex double (bench/results/2026-11-27-h200-start-at-complex-16-withdrawn.md).
// Values-only solves start from the identity: V0 needs the vectors' buffer.
template <class S>
__host__ __device__ constexpr bool uses_tridiagonal_start(int n) {
  return n > 32 || (n > 16 && !std::is_same_v<S, real_of<S>>);
}

// Loads the kernels now (see load_evd_batched_kernels).
cudaError_t load_tridiagonal_start_kernels();

}  // namespace eigstream::kernels
