// The first pass of the block solves (jacobi_evd_solve.cuh, jacobi_evd_pairs.cuh,
// jacobi_svd_batched.cu) over their input, read coalesced down its columns: whether every entry is
// finite, and the power of two that brings the largest entry to [1, 2), by which the solves scale
// the matrix (exactly) before their sweeps and scale the values back after.
#pragma once

#include <cuda_runtime.h>

#include "device_scalar.cuh"
#include "eigstream/views.hpp"
#include "thread_group.cuh"

namespace eigstream::kernels {

// a: rows x cols, leading dimension ld, read by the THREADS threads of g. Returns false (in every
// thread) when an entry is NaN or infinite; else sets `exponent`.
template <class S, int THREADS>
__device__ bool scan_input(const S* a, int rows, int cols, index_t ld, const ThreadGroup<THREADS>& g, int lane,
                           int& exponent) {
  using R = real_of<S>;
  bool bad = false;
  R amax = 0;
  for (int idx = lane; idx < rows * cols; idx += THREADS) {
    const S x = a[idx % rows + index_t(idx / rows) * ld];
    bad |= !finite(x);
    amax = fmax(amax, max_component(x));
  }
  // One reduction for both: a non-finite entry makes the maximum infinite.
  amax = g.max(bad ? R(INFINITY) : amax);
  if (!(amax < R(INFINITY))) return false;
  exponent = amax > R(0) ? -ilogb(amax) : 0;
  return true;
}

}  // namespace eigstream::kernels
