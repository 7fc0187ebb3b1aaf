// A group of THREADS threads that solves one matrix: a warp (THREADS == 32, synchronised with
// __syncwarp, several groups per block), a whole block (synchronised with __syncthreads), or whole
// warps of a block that holds several such groups, each synchronised by a named barrier of its own.
#pragma once

#include <cuda_runtime.h>

namespace eigstream::kernels {

template <int THREADS>
struct ThreadGroup {
  static_assert(THREADS % 32 == 0, "a group is whole warps");
  static constexpr int kWarps = THREADS / 32;
  int lane;        // 0 .. THREADS-1
  double* scratch; // kWarps entries of shared memory (2 kWarps for sum2; block groups only)
  int barrier = 0; // THREADS > 32: 0, the whole block; else a named barrier (1-15) of this group alone

  __device__ void sync() const {
    if constexpr (THREADS == 32) {
      __syncwarp();
    } else {
      if (barrier == 0) __syncthreads();
      else asm volatile("barrier.sync %0, %1;" ::"r"(barrier), "n"(THREADS) : "memory");
    }
  }

  template <class V, class Op>
  __device__ V reduce(V x, Op op) const {
    for (int offset = 16; offset > 0; offset /= 2) x = op(x, __shfl_xor_sync(0xffffffffu, x, offset));
    if constexpr (THREADS == 32) {
      return x;
    } else {
      sync();  // earlier readers of scratch are done
      if (lane % 32 == 0) scratch[lane / 32] = double(x);
      sync();
      V total = V(scratch[0]);
      for (int w = 1; w < kWarps; ++w) total = op(total, V(scratch[w]));
      return total;
    }
  }
  template <class V> __device__ V sum(V x) const { return reduce(x, [](V a, V b) { return a + b; }); }
  // Two sums at once, each added up as sum() adds it, in one reduction's chain of shuffles and
  // barriers (scratch: 2 kWarps entries).
  template <class V>
  __device__ void sum2(V& a, V& b) const {
    for (int offset = 16; offset > 0; offset /= 2)
      a += __shfl_xor_sync(0xffffffffu, a, offset), b += __shfl_xor_sync(0xffffffffu, b, offset);
    if constexpr (THREADS > 32) {
      sync();  // earlier readers of scratch are done
      if (lane % 32 == 0) scratch[2 * (lane / 32)] = double(a), scratch[2 * (lane / 32) + 1] = double(b);
      sync();
      a = V(scratch[0]), b = V(scratch[1]);
      for (int w = 1; w < kWarps; ++w) a += V(scratch[2 * w]), b += V(scratch[2 * w + 1]);
    }
  }
  template <class V> __device__ V max(V x) const { return reduce(x, [](V a, V b) { return a > b ? a : b; }); }
  __device__ bool any(bool x) const { return max(int(x)) != 0; }
};

}  // namespace eigstream::kernels
