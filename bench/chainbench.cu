// chainbench: the latencies that bound a Jacobi step of the block solves (kernels/jacobi_evd_solve.cuh,
// kernels/jacobi_evd_pairs.cuh), measured with clock64 in one block on the GPU: a rotation's
// parameters (rotation_of, each scalar type, each call fed the last one's result), a shared-memory
// load whose address is the last load's value, a block barrier, and a warp's five-shuffle sum. Each is
// timed over many repetitions in a block of one warp and in one of nine warps (the shared-memory
// solve's block at NMAX = 32), and printed in cycles per repetition. Then, for one matrix spread over
// a cluster of blocks (2, 4 and 8 blocks of 256 threads): a cluster barrier, a dependent load from the
// next block's shared memory, and a broadcast round (every thread stores a value into each block's
// shared memory, a cluster barrier, each reads what its peers stored, and a second barrier before the
// next round may overwrite it), the exchange a step of a cluster-wide Jacobi solve would wait on.
//
//     chainbench [--repeat N]
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "jacobi_rotation.cuh"

namespace {

using eigstream::kernels::Cx;
using eigstream::kernels::real_of;
using eigstream::kernels::Rot;
using eigstream::kernels::rotation_of;

enum Timing { kRotationFloat, kRotationComplexFloat, kRotationDouble, kRotationComplexDouble, kSharedLoad, kBarrier,
              kShuffleSum, kTimings };
const char* const kNames[kTimings] = {"rotation_of, float",  "rotation_of, complex float", "rotation_of, double",
                                      "rotation_of, complex double", "dependent shared-memory load",
                                      "__syncthreads",       "five-shuffle warp sum"};

// A chain of `repeat` rotations, each from the last one's parameters; returns something of the
// last, so that none is left out.
template <class S>
__device__ double rotation_chain(int repeat, float seed, long long& cycles) {
  using R = real_of<S>;
  R app = R(1) + R(seed), aqq = R(2);
  S b = eigstream::kernels::from_real<S>(R(0.3));
  const long long start = clock64();
  for (int i = 0; i < repeat; ++i) {
    const Rot<S> r = rotation_of<S>(app, aqq, b, R(1e-30));
    app = r.c + R(0.5), aqq = r.shift + R(2);
    b = r.s_e + eigstream::kernels::from_real<S>(R(0.1));
  }
  cycles = clock64() - start;
  return double(app) + double(aqq) + double(eigstream::kernels::re(b));
}

__global__ void chains(long long* cycles, double* sink, int repeat) {
  __shared__ int next[1024];
  const int lane = threadIdx.x;
  for (int i = lane; i < 1024; i += blockDim.x) next[i] = (i * 7 + 1) % 1024;
  __syncthreads();
  long long t[kTimings];
  double keep = rotation_chain<float>(repeat, float(lane), t[kRotationFloat]);
  keep += rotation_chain<Cx<float>>(repeat, float(lane), t[kRotationComplexFloat]);
  keep += rotation_chain<double>(repeat, float(lane), t[kRotationDouble]);
  keep += rotation_chain<Cx<double>>(repeat, float(lane), t[kRotationComplexDouble]);
  int at = lane;
  long long start = clock64();
  for (int i = 0; i < repeat; ++i) at = next[at];
  t[kSharedLoad] = clock64() - start;
  start = clock64();
  for (int i = 0; i < repeat; ++i) __syncthreads();
  t[kBarrier] = clock64() - start;
  float x = float(at);
  start = clock64();
  for (int i = 0; i < repeat; ++i)
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  t[kShuffleSum] = clock64() - start;
  sink[lane] = keep + x;
  if (lane == 0)
    for (int k = 0; k < kTimings; ++k) cycles[k] = t[k];
}

enum ClusterTiming { kClusterBarrier, kRemoteLoad, kBroadcastRound, kClusterTimings };
const char* const kClusterNames[kClusterTimings] = {"cluster barrier", "dependent load from the next block's shared memory",
                                                    "broadcast round (store to every block, barrier, read, barrier)"};

__global__ void cluster_chains(long long* cycles, double* sink, int repeat) {
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ int next[1024];
  __shared__ float inbox[8][256];
  const int lane = threadIdx.x, rank = int(cluster.block_rank()), blocks = int(cluster.num_blocks());
  for (int i = lane; i < 1024; i += blockDim.x) next[i] = (i * 7 + 1) % 1024;
  cluster.sync();
  long long t[kClusterTimings];
  long long start = clock64();
  for (int i = 0; i < repeat; ++i) cluster.sync();
  t[kClusterBarrier] = clock64() - start;
  const int* peer_next = cluster.map_shared_rank(next, (rank + 1) % blocks);
  int at = lane;
  start = clock64();
  for (int i = 0; i < repeat; ++i) at = peer_next[at];
  t[kRemoteLoad] = clock64() - start;
  cluster.sync();
  float x = float(at);
  start = clock64();
  for (int i = 0; i < repeat; ++i) {
    for (int peer = 0; peer < blocks; ++peer) cluster.map_shared_rank(&inbox[0][0], peer)[rank * 256 + lane] = x;
    cluster.sync();
    float sum = 0;
    for (int peer = 0; peer < blocks; ++peer) sum += inbox[peer][lane];
    x = sum * 0.5f;
    cluster.sync();  // nobody overwrites an inbox before its owner has read it
  }
  t[kBroadcastRound] = clock64() - start;
  sink[rank * 256 + lane] = x;
  if (lane == 0 && rank == 0)
    for (int k = 0; k < kClusterTimings; ++k) cycles[k] = t[k];
}

bool check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "chainbench: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: chainbench [--repeat N]\n"
                  "Prints, in clock cycles, the latency of a Jacobi rotation's parameters (each scalar type), a\n"
                  "dependent shared-memory load, a block barrier and a warp's five-shuffle sum, each timed over N\n"
                  "repetitions (default 1000) in a block of 32 threads and in one of 288; then a cluster barrier, a\n"
                  "load from another block's shared memory and a broadcast round, in clusters of 2, 4 and 8 blocks.\n");
      return 0;
    }
    if (std::strcmp(argv[i], "--repeat") == 0) {
      repeat = i + 1 < argc ? std::atoi(argv[++i]) : 0;
      if (repeat > 0) continue;
      std::fprintf(stderr, "chainbench: --repeat needs a positive count (try --help)\n");
      return 2;
    }
    std::fprintf(stderr, "chainbench: unknown argument '%s' (try --help)\n", argv[i]);
    return 2;
  }
  cudaDeviceProp prop{};
  if (!check(cudaGetDeviceProperties(&prop, 0), "no CUDA device")) return 1;
  long long* cycles = nullptr;
  double* sink = nullptr;
  if (!check(cudaMallocManaged(&cycles, sizeof(long long) * kTimings), "cudaMallocManaged") ||
      !check(cudaMalloc(&sink, sizeof(double) * 2048), "cudaMalloc"))
    return 1;
  std::printf("# %s: cycles per repetition, %d repetitions\n\n| | 32 threads | 288 threads |\n| --- | ---: | ---: |\n",
              prop.name, repeat);
  double per[2][kTimings];
  const int threads[2] = {32, 288};
  for (int b = 0; b < 2; ++b)
    for (int pass = 0; pass < 2; ++pass) {  // the first pass warms the instruction cache
      chains<<<1, threads[b]>>>(cycles, sink, repeat);
      if (!check(cudaDeviceSynchronize(), "kernel")) return 1;
      for (int k = 0; k < kTimings; ++k) per[b][k] = double(cycles[k]) / repeat;
    }
  for (int k = 0; k < kTimings; ++k) std::printf("| %s | %.1f | %.1f |\n", kNames[k], per[0][k], per[1][k]);
  std::printf("\n| cluster of blocks of 256 threads | 2 blocks | 4 blocks | 8 blocks |\n| --- | ---: | ---: | ---: |\n");
  double cluster_per[3][kClusterTimings];
  for (int c = 0; c < 3; ++c) {
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = unsigned(2 << c), attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(unsigned(2 << c)), config.blockDim = dim3(256), config.attrs = &attribute, config.numAttrs = 1;
    for (int pass = 0; pass < 2; ++pass) {
      if (!check(cudaLaunchKernelEx(&config, cluster_chains, cycles, sink, repeat), "cluster launch") ||
          !check(cudaDeviceSynchronize(), "cluster kernel"))
        return 1;
      for (int k = 0; k < kClusterTimings; ++k) cluster_per[c][k] = double(cycles[k]) / repeat;
    }
  }
  for (int k = 0; k < kClusterTimings; ++k)
    std::printf("| %s | %.1f | %.1f | %.1f |\n", kClusterNames[k], cluster_per[0][k], cluster_per[1][k], cluster_per[2][k]);
  cudaFree(cycles);
  cudaFree(sink);
  return 0;
}
