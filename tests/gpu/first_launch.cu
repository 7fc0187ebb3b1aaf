#include "first_launch.hpp"

namespace {

__global__ void echo_kernel(int value, int* out) { *out = value; }

}  // namespace

cudaError_t first_launch_round_trip(int value, int* result) {
  cudaStream_t stream = nullptr;
  int* out = nullptr;
  cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (status == cudaSuccess) status = cudaMallocAsync(&out, sizeof(int), stream);
  if (status == cudaSuccess) {
    echo_kernel<<<1, 1, 0, stream>>>(value, out);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess) status = cudaMemcpyAsync(result, out, sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (out) cudaFreeAsync(out, stream);
  const cudaError_t synced = stream ? cudaStreamSynchronize(stream) : cudaSuccess;
  if (stream) cudaStreamDestroy(stream);
  return status != cudaSuccess ? status : synced;
}
