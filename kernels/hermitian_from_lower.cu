// A batch of complex matrices made exactly Hermitian from their lower triangles, on the GPU: what a
// product X X^H computed as a general matrix product (both triangles, each with its own rounding)
// needs before an EVD that takes the matrix as Hermitian.
//
// Mapping: a thread per entry of the upper triangle and diagonal (grid x over the entries of one
// matrix, grid y over the matrices). The writes, down the columns of the upper triangle, are
// coalesced; the reads, along the rows of the lower triangle, are not, which costs nothing that
// matters at the sizes this serves (64 x 64: 32 KiB, from L2).
#include <cuda_runtime.h>

#include <algorithm>

#include "device_scalar.cuh"
#include "eigstream_kernels/hermitian_from_lower.hpp"

namespace eigstream::kernels {
namespace {

constexpr int kThreads = 256;

template <class R>
__global__ void __launch_bounds__(kThreads) hermitian_from_lower_kernel(Cx<R>* a, int n, index_t ld, index_t stride,
                                                                        index_t count) {
  const index_t entry = index_t(blockIdx.x) * kThreads + threadIdx.x;
  if (entry >= index_t(n) * n) return;
  const auto i = int(entry % n), j = int(entry / n);
  if (i > j) return;
  // Reads only the strict lower triangle, writes only the rest: no entry is both read and written.
  for (index_t b = blockIdx.y; b < count; b += gridDim.y) {
    Cx<R>* matrix = a + b * stride;
    if (i == j)
      matrix[i + j * ld].im = 0;
    else
      matrix[i + j * ld] = conj(matrix[j + i * ld]);
  }
}

}  // namespace

template <class R>
cudaError_t launch_hermitian_from_lower(std::complex<R>* a, int n, index_t ld, index_t stride, index_t count,
                                        cudaStream_t stream) {
  if (n <= 0 || count <= 0) return cudaSuccess;
  constexpr index_t kMaxGridY = 65535;  // more matrices: each block takes several
  const dim3 grid(unsigned((index_t(n) * n + kThreads - 1) / kThreads), unsigned(std::min(count, kMaxGridY)));
  hermitian_from_lower_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<Cx<R>*>(a), n, ld, stride, count);
  return cudaGetLastError();
}

template cudaError_t launch_hermitian_from_lower<float>(std::complex<float>*, int, index_t, index_t, index_t, cudaStream_t);
template cudaError_t launch_hermitian_from_lower<double>(std::complex<double>*, int, index_t, index_t, index_t, cudaStream_t);

}  // namespace eigstream::kernels
