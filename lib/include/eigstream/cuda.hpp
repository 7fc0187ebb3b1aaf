// The GPU interface for CUDA users: the same decompositions on device memory, asynchronous on a
// stream, with nothing allocated and no host synchronisation (pools and buffers are the caller's).
// Available when eigstream was built with CUDA (EIGSTREAM_CUDA in the installed package).
#pragma once

#include <cuda_runtime_api.h>

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

namespace detail {
template <class T>
void evd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> values, BatchView<T> vectors, SolveInfo* info,
                 const Options& options, cudaStream_t stream, BatchView<const T> warm_start);
}  // namespace detail

// Batched Hermitian EVD, all views and `info` (count entries) in device memory. Sizes, strides and
// options are checked here (Error invalid_argument); the data is checked on the GPU: a matrix with
// a NaN/Inf entry or not Hermitian gets info.invalid_input and NaN outputs, the others are solved.
// The warm start must be orthonormal (it is not checked on the GPU). Errors of the launch throw
// Error(cuda); faults during the kernel surface at the caller's next synchronisation.
template <class A>
void evd_batched(BatchView<A> a, VectorBatchView<real_t<A>> values, BatchView<std::remove_const_t<A>> vectors,
                 SolveInfo* info, const Options& options, cudaStream_t stream,
                 BatchView<const std::remove_const_t<A>> warm_start = {}) {
  detail::evd_batched<std::remove_const_t<A>>(a, values, vectors, info, options, stream, warm_start);
}

}  // namespace eigstream::cuda
