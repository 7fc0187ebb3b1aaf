// The GPU interface for CUDA users: the same decompositions on device memory, asynchronous on a
// stream, with nothing allocated and no host synchronisation (pools and buffers are the caller's).
// Available when eigstream was built with CUDA (EIGSTREAM_CUDA in the installed package).
#pragma once

#include <cuda_runtime_api.h>

#include <complex>
#include <cstddef>
#include <type_traits>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::cuda {

// A usable CUDA device is present (the answer is computed once).
bool device_available();

// Largest n the batched EVD kernel takes.
index_t max_evd_size();

// Whether evd_batched below can solve this problem (n and options), before any work is queued.
bool can_implement_evd(index_t n, const Options& options);

// Largest k = min(m, n) and max(m, n) the batched SVD kernel takes.
index_t max_svd_size();
index_t max_svd_rows();

// Whether svd_batched below can solve m x n problems, before any work is queued.
bool can_implement_svd(index_t m, index_t n, const Options& options);

// Bytes of device workspace svd_batched needs for count m x n matrices with these outputs (U and V
// asked for or not) on the current device: 0 unless the working matrix, max(m, n) x min(m, n),
// is too large for shared memory and the long side's vectors (U when m >= n, V when m < n) are not
// asked for (when they are, their output buffer holds the working matrix).
template <class T>
std::size_t svd_workspace_size(index_t m, index_t n, index_t count, bool with_u, bool with_v);

// Largest number of array elements beam_power_batched takes.
index_t max_beam_power_elements();

// Beam powers of a batch of EVDs (Beamformer::beam_power on the GPU): for matrix b and steering
// vector g (column g of `steering`, N x G),
//   power[b][g] = 1 / sum_i weights[b][i] |v_i^H a_g|^2,
// the vectors (N x N each) and weights (N each) from Beamformer's mvdr_power_weights or
// music_power_weights, all in device memory. Sizes are checked here (Error invalid_argument); the
// launch is asynchronous on `stream` and allocates nothing. Errors of the launch throw Error(cuda).
template <class R>
void beam_power_batched(BatchView<const std::complex<R>> vectors, VectorBatchView<const R> weights,
                        MatrixView<const std::complex<R>> steering, VectorBatchView<R> power, cudaStream_t stream);

// Makes each matrix of a batch (square, in device memory) exactly Hermitian from its lower triangle:
// the strict upper triangle becomes the conjugate transpose of the strict lower one, and the
// diagonal real; nothing else is written (the lower triangle and any padding stay as they are). For
// a covariance formed as a general product X X^H (as cuBLAS gemm forms it: the two triangles rounded
// apart) before a Hermitian EVD or a read. Sizes are checked here (Error invalid_argument); the
// launch is asynchronous on `stream`, allocates nothing and can be captured in a CUDA graph. Errors
// of the launch throw Error(cuda).
template <class R>
void hermitian_from_lower(BatchView<std::complex<R>> a, cudaStream_t stream);

namespace detail {
template <class T>
void svd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> s, BatchView<T> u, BatchView<T> v, SolveInfo* info,
                 const Options& options, cudaStream_t stream, BatchView<const T> warm_start, void* workspace);
template <class T>
void evd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> values, BatchView<T> vectors, SolveInfo* info,
                 const Options& options, cudaStream_t stream, BatchView<const T> warm_start);
}  // namespace detail

// Batched Hermitian EVD, all views and `info` (count entries) in device memory. Sizes, strides and
// options are checked here (Error invalid_argument), and that `vectors` does not overlap A (the warm
// start may be the very same view as `vectors`, not a partial overlap); the data is checked on the
// GPU: a matrix with a NaN/Inf entry or not Hermitian gets info.invalid_input and NaN outputs, the
// others are solved.
// The warm start must be orthonormal (it is not checked on the GPU); a warm-started V gets one
// Newton-Schulz step, V (3I - V^H V) / 2, so that each result can be the next warm start without the
// chain drifting from orthonormality (it cost 13-17% of warm-stream throughput at n = 32 on an H100,
// bench/results/2026-11-22-h100-persistent-block.md); Options::reorthonormalise = false skips it, for
// the links of a chain between two that take it. Without a warm start, solves with `vectors` at n > 32
// (complex: n > 16) first write a V0 into `vectors` from a Householder reduction to tridiagonal form
// and QL iterations (kernels/tridiagonal_start.hpp), then run as warm-started from it: info.sweeps
// counts the Jacobi sweeps after that start (1.0-1.7 a matrix on eigbench's covariances on an H200),
// and Options::reorthonormalise applies to them too. Errors of the launch throw Error(cuda); faults
// during the kernel surface at the caller's next synchronisation.
template <class A>
void evd_batched(BatchView<A> a, VectorBatchView<real_t<A>> values, BatchView<std::remove_const_t<A>> vectors,
                 SolveInfo* info, const Options& options, cudaStream_t stream,
                 BatchView<const std::remove_const_t<A>> warm_start = {}) {
  detail::evd_batched<std::remove_const_t<A>>(a, values, vectors, info, options, stream, warm_start);
}

// Batched thin SVD A = U diag(s) V^H by one-sided Jacobi (as eigstream::svd_batched: k = min(m, n)
// values, U m x k and V n x k optional, m < n by transposition, the warm start k x k: V0 when
// m >= n, U0 when m < n), all views, `info` and `workspace` in device memory. Sizes, strides and
// options are checked here (Error invalid_argument, also when a needed workspace is missing); a
// matrix with a NaN/Inf entry gets info.invalid_input and NaN outputs, the others are solved. The
// warm start must be orthonormal (it is not checked on the GPU); the warm-started side's vectors get
// one Newton-Schulz step, as evd_batched's, so a chain of warm starts does not drift (unless
// Options::reorthonormalise is false). The kernel
// always uses the round-robin ordering. Errors of the launch throw Error(cuda).
template <class A>
void svd_batched(BatchView<A> a, VectorBatchView<real_t<A>> s, BatchView<std::remove_const_t<A>> u,
                 BatchView<std::remove_const_t<A>> v, SolveInfo* info, const Options& options, cudaStream_t stream,
                 BatchView<const std::remove_const_t<A>> warm_start = {}, void* workspace = nullptr) {
  detail::svd_batched<std::remove_const_t<A>>(a, s, u, v, info, options, stream, warm_start, workspace);
}

}  // namespace eigstream::cuda
