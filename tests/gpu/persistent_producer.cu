// See persistent_producer.hpp.
#include "persistent_producer.hpp"

#include "eigstream/persistent_submit.cuh"

namespace {

__global__ void build_and_submit(eigstream::cuda::DeviceQueue<float> queue, const eigstream::cuda::EvdItem<float>* items,
                                 std::uint64_t* positions) {
  const eigstream::cuda::EvdItem<float> item = items[blockIdx.x];
  float* a = const_cast<float*>(item.a);
  for (int idx = threadIdx.x; idx < item.n * item.n; idx += blockDim.x) {
    const int i = idx % item.n, j = idx / item.n;
    a[i + j * item.lda] = 0.5f + (i == j ? float(i + 1) : 0.0f);
  }
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint64_t position = kNotSubmitted;
    if (!eigstream::cuda::try_submit(queue, item, &position)) position = kNotSubmitted;
    positions[blockIdx.x] = position;
  }
}

}  // namespace

cudaError_t preload_producer() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, build_and_submit);
}

cudaError_t launch_build_and_submit(eigstream::cuda::DeviceQueue<float> queue,
                                    const eigstream::cuda::EvdItem<float>* items, int count,
                                    std::uint64_t* positions, cudaStream_t stream) {
  build_and_submit<<<count, 128, 0, stream>>>(queue, items, positions);
  return cudaGetLastError();
}
