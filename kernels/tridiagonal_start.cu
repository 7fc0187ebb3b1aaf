// The batched kernel of the tridiagonal start (tridiagonal_start.hpp): a block of two warps a matrix,
// the per-matrix code of tridiagonal_start.cuh.
#include "tridiagonal_start.hpp"

#include <cuda_runtime.h>

#include "dynamic_shared_memory.cuh"
#include "tridiagonal_start.cuh"

namespace eigstream::kernels {
namespace {

using tridiagonal::kThreads;

template <class S, int NMAX>
__global__ void __launch_bounds__(kThreads) tridiagonal_start_kernel(const S* a, index_t lda, index_t stride_a, S* v0,
                                                                     index_t ldv, index_t stride_v, int n) {
  extern __shared__ __align__(16) char smem[];
  const index_t b = blockIdx.x;
  tridiagonal::start<S, NMAX>(a + b * stride_a, lda, n, v0 + b * stride_v, ldv, smem, threadIdx.x, 0);
}

template <class S, int NMAX>
cudaError_t launch_for(const S* a, index_t lda, index_t stride_a, S* v0, index_t ldv, index_t stride_v, int n,
                       index_t count, cudaStream_t stream) {
  constexpr std::size_t bytes = tridiagonal::Layout<S, NMAX>::bytes;
  auto kernel = tridiagonal_start_kernel<S, NMAX>;
  const cudaError_t status = allow_dynamic_shared_memory(kernel, bytes);
  if (status != cudaSuccess) return status;
  kernel<<<unsigned(count), kThreads, bytes, stream>>>(a, lda, stride_a, v0, ldv, stride_v, n);
  return cudaGetLastError();
}

template <class S>
cudaError_t load_for() {
  cudaFuncAttributes attributes;
  for (cudaError_t status : {cudaFuncGetAttributes(&attributes, tridiagonal_start_kernel<S, 32>),
                             cudaFuncGetAttributes(&attributes, tridiagonal_start_kernel<S, 64>)})
    if (status != cudaSuccess) return status;
  return cudaSuccess;
}

}  // namespace

template <class S>
cudaError_t launch_tridiagonal_start(const S* a, index_t lda, index_t stride_a, S* v0, index_t ldv, index_t stride_v,
                                     int n, index_t count, cudaStream_t stream) {
  if (n < 1 || n > kTridiagonalStartMaxN) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (n <= 32) return launch_for<S, 32>(a, lda, stride_a, v0, ldv, stride_v, n, count, stream);
  return launch_for<S, 64>(a, lda, stride_a, v0, ldv, stride_v, n, count, stream);
}

cudaError_t load_tridiagonal_start_kernels() {
  for (cudaError_t status : {load_for<float>(), load_for<double>(), load_for<Cx<float>>(), load_for<Cx<double>>()})
    if (status != cudaSuccess) return status;
  return cudaSuccess;
}

#define EIGSTREAM_INSTANTIATE(S)                                                                              \
  template cudaError_t launch_tridiagonal_start<S>(const S*, index_t, index_t, S*, index_t, index_t, int, index_t, \
                                                   cudaStream_t);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(Cx<float>)
EIGSTREAM_INSTANTIATE(Cx<double>)
#undef EIGSTREAM_INSTANTIATE

}  // namespace eigstream::kernels
