// The CUDA path of svd_batched for host memory: stage the batch on the GPU, run the kernel, bring
// the results back, and report invalid matrices as the CPU path does.
#pragma once

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::detail {

template <class T>
void svd_batched_cuda_from_host(BatchView<const T> a, VectorBatchView<real_t<T>> s, BatchView<T> u, BatchView<T> v,
                                SolveInfo* info, const Options& options, BatchView<const T> warm_start);

}  // namespace eigstream::detail
