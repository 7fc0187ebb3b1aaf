// Launcher of the batched two-sided Jacobi EVD kernel (kernels/jacobi_evd_batched.cu) for host
// code. All pointers are device pointers; nothing is allocated; the launch is asynchronous on
// `stream`. Each matrix gets its SolveInfo in `info`; an invalid matrix (NaN/Inf entry, not
// Hermitian) is marked invalid_input and its outputs are NaN, the others are unaffected.
#pragma once

#include <cuda_runtime_api.h>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::kernels {

inline constexpr int kEvdMaxN = 64;

template <class T>  // float, double, std::complex<float>, std::complex<double>
struct EvdBatchedArgs {
  const T* a = nullptr;
  index_t lda = 0, stride_a = 0;
  real_t<T>* values = nullptr;
  index_t stride_values = 0;
  T* vectors = nullptr;  // optional
  index_t ldv = 0, stride_v = 0;
  const T* warm_start = nullptr;  // optional, orthonormal
  index_t ldw = 0, stride_w = 0;
  SolveInfo* info = nullptr;
  int n = 0;
  index_t count = 0;
  double tol = 0;           // off(A) <= tol * ||A||_F
  double symmetry_tol = 0;  // ||A - A^H||_F <= symmetry_tol * ||A||_F
  int max_sweeps = 0;
  Sort sort = Sort::descending;
  bool reorthonormalise = true;  // with a warm start: the closing Newton-Schulz step (Options::reorthonormalise)
};

template <class T>
cudaError_t launch_evd_batched(const EvdBatchedArgs<T>& args, cudaStream_t stream);

// Loads every batched kernel now (CUDA loads modules lazily by default, and a first load waits for
// the device, which never idles while a persistent kernel is resident).
cudaError_t load_evd_batched_kernels();

}  // namespace eigstream::kernels
