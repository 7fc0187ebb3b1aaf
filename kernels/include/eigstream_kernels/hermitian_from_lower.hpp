// Launcher of the kernel that makes a batch of complex matrices exactly Hermitian from their
// lower triangles (kernels/hermitian_from_lower.cu): the strict upper triangle becomes the
// conjugate transpose of the strict lower one, and the diagonal's imaginary parts become 0. Matrix b
// (n x n, column-major, leading dimension ld) starts at a + b * stride. a is a device pointer;
// nothing is allocated; the launch is asynchronous on `stream`, and can be captured in a graph.
#pragma once

#include <cuda_runtime_api.h>

#include <complex>

#include "eigstream/views.hpp"

namespace eigstream::kernels {

template <class R>  // float, double
cudaError_t launch_hermitian_from_lower(std::complex<R>* a, int n, index_t ld, index_t stride, index_t count,
                                        cudaStream_t stream);

}  // namespace eigstream::kernels
