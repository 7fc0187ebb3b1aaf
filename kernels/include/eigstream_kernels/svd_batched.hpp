// Launcher of the batched one-sided Jacobi SVD kernel (kernels/jacobi_svd_batched.cu) for host
// code. All pointers are device pointers; nothing is allocated; the launch is asynchronous on
// `stream`. A is m x n with k = min(m, n) <= kSvdMaxK and max(m, n) <= kSvdMaxRows; m < n is solved
// as A^H (the roles of U and V swap, as on the CPU). Each matrix gets its SolveInfo in `info`; a
// matrix with a NaN/Inf entry is marked invalid_input and its outputs are NaN, the others are
// unaffected.
//
// Working matrix: G = A (or A^H) scaled, max(m, n) x k, lives in shared memory when it fits;
// otherwise in device memory: in the output of the long side's vectors (U for m >= n, V for m < n)
// when those are asked for, else in `workspace` (svd_workspace_bytes).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::kernels {

inline constexpr int kSvdMaxK = 64;
inline constexpr int kSvdMaxRows = 1024;

template <class T>  // float, double, std::complex<float>, std::complex<double>
struct SvdBatchedArgs {
  const T* a = nullptr;
  index_t lda = 0, stride_a = 0;
  int m = 0, n = 0;
  real_t<T>* s = nullptr;  // k per matrix
  index_t stride_s = 0;
  T* u = nullptr;  // optional, m x k
  index_t ldu = 0, stride_u = 0;
  T* v = nullptr;  // optional, n x k
  index_t ldv = 0, stride_v = 0;
  const T* warm_start = nullptr;  // optional, k x k orthonormal: V0 (m >= n) or U0 (m < n)
  index_t ldw = 0, stride_w = 0;
  T* workspace = nullptr;  // svd_workspace_bytes(...) bytes when that is not 0
  SolveInfo* info = nullptr;
  index_t count = 0;
  double tol = 0;  // every pair: |gamma| <= tol * sqrt(alpha * beta)
  int max_sweeps = 0;
  Sort sort = Sort::descending;
  bool reorthonormalise = true;  // with a warm start: the closing Newton-Schulz step (Options::reorthonormalise)
};

// Bytes of device workspace the launch needs for these sizes and outputs on the current device
// (0 when the working matrix fits in shared memory or lives in the long side's output).
template <class T>
std::size_t svd_workspace_bytes(int m, int n, index_t count, bool with_u, bool with_v);

template <class T>
cudaError_t launch_svd_batched(const SvdBatchedArgs<T>& args, cudaStream_t stream);

}  // namespace eigstream::kernels
