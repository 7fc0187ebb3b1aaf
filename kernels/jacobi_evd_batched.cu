// Batched two-sided Jacobi EVD of small Hermitian matrices (n <= 64), the whole solve in one launch;
// the per-matrix solves are in jacobi_evd_solve.cuh. The mapping is chosen per size and type in
// launch_evd_batched:
//  - registers (n <= 32; see kSharedSolve): NMAX lanes per matrix, or for warm starts at NMAX = 8
//    and 16 two column groups of NMAX (kRegisterColumnGroups; 16 lanes at NMAX = 4:
//    kRegisterGroupLanes), in blocks of 128 threads (32 at NMAX = 8: kRegisterBlockThreads);
//  - shared memory, a block of evd::shared_threads(NMAX, throughput) per matrix: complex double at
//    16 < n <= 32;
//  - pairs (n > 32): a block of 256 threads per matrix, jacobi_evd_pairs.cuh.
#include <cuda_runtime.h>

#include <complex>
#include <type_traits>

#include "dynamic_shared_memory.cuh"
#include "eigstream_kernels/evd_batched.hpp"
#include "jacobi_evd_pairs.cuh"
#include "jacobi_evd_solve.cuh"
#include "tridiagonal_start.hpp"

namespace eigstream::kernels {
namespace {

using evd::Args;
using evd::GroupLayout;

// The shared-memory mapping: a block of evd::shared_threads(NMAX, throughput) per matrix, compiled for
// kSharedBlocksPerSm blocks an SM at n = 32, where only complex double takes it now (72 registers, 76
// bytes of spills). When float and complex float 32 took it too (capped for 4 blocks, 56 registers),
// left to itself the compiler took 64-96 registers, which fit only 2-3 blocks an SM, and warm batches
// ran 4-14% slower (H100, 2026-11-23, bench/results/2026-11-23-shared-step-rotations-once.md).
template <class S, int NMAX>
inline constexpr int kSharedBlocksPerSm = NMAX == 32 ? 3 : 1;

// The shared-memory solve here does not test convergence within its last sweeps
// (evd::kLastSweepsOff): complex double, the one type that takes it, then spilled 138 bytes, not 76,
// and its warm batches of 32 ran 5.5% slower (H200, bench/results/2026-11-26-h200-last-sweep-tests.md).
template <class S, int NMAX>
__global__ void __launch_bounds__(evd::shared_threads(NMAX, evd::StepShape::throughput),
                                  (kSharedBlocksPerSm<S, NMAX>))
    evd_shared_kernel(Args<S> args) {
  extern __shared__ __align__(16) char smem[];
  evd::solve_in_shared<S, NMAX, evd::StepShape::throughput, false>(args, blockIdx.x, smem, threadIdx.x);
}

template <class S, int NMAX>
cudaError_t launch_shared(const Args<S>& args, cudaStream_t stream) {
  const std::size_t bytes = GroupLayout<S, NMAX>::bytes;
  auto kernel = evd_shared_kernel<S, NMAX>;
  const cudaError_t status = allow_dynamic_shared_memory(kernel, bytes);
  if (status != cudaSuccess) return status;
  kernel<<<unsigned(args.count), evd::shared_threads(NMAX, evd::StepShape::throughput), bytes, stream>>>(args);
  return cudaGetLastError();
}

template <class S>
__global__ void __launch_bounds__(evd::pairs::kThreads, evd::pairs::kMinBlocksPerSm<S>) evd_pairs_kernel(Args<S> args) {
  extern __shared__ __align__(16) char smem[];
  evd::solve_in_pairs<S>(args, blockIdx.x, smem, threadIdx.x);
}

template <class S>
cudaError_t launch_pairs(const Args<S>& args, cudaStream_t stream) {
  const std::size_t bytes = evd::PairsLayout<S>::bytes(args.warm_start != nullptr);
  auto kernel = evd_pairs_kernel<S>;
  const cudaError_t status = allow_dynamic_shared_memory(kernel, bytes);
  if (status != cudaSuccess) return status;
  kernel<<<unsigned(args.count), evd::pairs::kThreads, bytes, stream>>>(args);
  return cudaGetLastError();
}

// The register mapping: kRegisterGroupLanes lanes per matrix, kRegisterBlockThreads of them per
// block; a kernel for cold solves (WARM false) and one for warm starts. At NMAX = 8 a block is one
// warp: in blocks of 128 a warm batch of 1024 matrices (four to a warp) took 64 blocks, half the
// SMs; in warps it took every SM, and back to back ran 1-2% faster at float and complex float 8 and
// 6% at double 8, with cold batches as fast. At NMAX = 4 warps did not pay (H200,
// bench/results/2026-11-26-h200-register-block-threads.md).
template <int NMAX>
inline constexpr int kRegisterBlockThreads = NMAX == 8 ? 32 : 128;

// The column groups of a matrix in the register kernel (jacobi_evd_registers.cuh): two for warm
// starts at NMAX = 8 and 16, so that a matrix's steps, the critical path of a warm batch of 1024
// that fills the GPU only thinly, have twice the lanes. Back to back, warm batches of 1024 ran 12%
// faster at float 16 (36.3-36.7 -> 40.6-40.9 million matrices a second), 15% at complex float 8, 19%
// at complex float 16 (against the shared-memory solve it took before), 16% at double 16, 23% at
// complex double 8, 3-5% at double 8 and complex double 16, and as fast at float 8 (H200,
// bench/results/2026-11-27-h200-column-groups.md). Tests within the last sweep (as
// kRegisterLastSweepTests) cost 2-6% with them in every type but complex float 8, which has them.
template <int NMAX, bool WARM>
inline constexpr int kRegisterColumnGroups = WARM && (NMAX == 8 || NMAX == 16) ? 2 : 1;
// The lanes a matrix takes in the register kernel: NMAX per column group, or for warm starts at
// NMAX = 4 sixteen, of which NMAX work, so that two matrices share a warp rather than eight. A warm
// batch of 1024 fills the GPU only thinly, and a warp runs until the last of its matrices has
// converged. Back to back, warm batches of 1024 ran 8-13% faster at n = 4 and 2-4% at n = 8 in all
// four types; a warp per matrix gained less at n = 4, and lost 3-13% at n = 8 and, at n = 16 (two to
// a warp already), 17-24% (H200, bench/results/2026-11-27-h200-warm-register-lanes.md).
template <int NMAX, bool WARM>
inline constexpr int kRegisterGroupLanes = kRegisterColumnGroups<NMAX, WARM> > 1
                                               ? NMAX * kRegisterColumnGroups<NMAX, WARM>
                                           : WARM && NMAX <= 8 ? 16
                                                               : NMAX;
// Matrices a block of the register kernel solves, each with its RegisterScratch in static shared
// memory.
template <int NMAX, bool WARM>
inline constexpr int kRegisterGroups = kRegisterBlockThreads<NMAX> / kRegisterGroupLanes<NMAX, WARM>;

// Whether the register kernel's warm starts try the first-order finish (evd::finish_first_order) at
// each sweep's start. Warm batches of 1024 took 24-32% fewer sweeps with it in every type and size
// measured, but ran faster only at float 32 (12.8 -> 13.6 million matrices a second back to back),
// double 32 (6.08 -> 6.41) and complex float 16 (26.4 -> 29.1); within 2% either way at n = 8 and at
// float and double 16, whose slowest matrix of a step still took 3 sweeps in half the steps; and 7%
// slower at complex float 32 (5.53 -> 5.15), though its steps' slowest took 2.15 sweeps against 3.05
// (H100, bench/results/2026-12-07-h100-first-order-finish.md). Complex double was not measured. The
// persistent solver's register consumers do not take it: compiled into their kernels (which hold the
// cold solve too), it cost cold items of 64 6-7% at float 32 and complex float 16. Tried within warm
// sweeps too (after every 8th step), at float and double 16 and complex float 32 as well, it cut
// complex float 32's sweeps from 2.69 to 2.04 but ran 19% slower, and every type 4-13% slower (H100,
// bench/results/2026-12-07-h100-finish-mid-sweep-withdrawn.md).
template <class S, int NMAX>
inline constexpr bool kRegisterFirstOrderFinish =
    (NMAX == 32 && std::is_same_v<S, real_of<S>>) || (NMAX == 16 && std::is_same_v<S, Cx<float>>);

template <class S, int NMAX, bool WARM>
__device__ __forceinline__ void solve_group_in_registers(const Args<S>& args) {
  constexpr int kColumnGroups = kRegisterColumnGroups<NMAX, WARM>;
  constexpr int kLanes = kRegisterGroupLanes<NMAX, WARM>;
  constexpr int kWorking = NMAX * kColumnGroups;  // of the kLanes
  constexpr int kGroups = kRegisterGroups<NMAX, WARM>;
  __shared__ evd::RegisterScratch<S, NMAX, kColumnGroups> scratch[kGroups];
  extern __shared__ __align__(16) char warm_smem[];  // kGroups * kRegisterWarmScalars scalars with a warm start
  const int group = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const index_t b = index_t(blockIdx.x) * kGroups + group;
  if (b >= args.count || lane >= kWorking) return;  // whole groups leave together; groups sharing a warp use their own masks
  const unsigned mask = kWorking == 32 ? 0xffffffffu : ((1u << kWorking) - 1u) << (threadIdx.x % 32 / kLanes * kLanes);
  evd::solve_in_registers<S, NMAX, WARM, kColumnGroups, kRegisterFirstOrderFinish<S, NMAX>>(
      args, b, lane, mask, scratch[group],
      reinterpret_cast<S*>(warm_smem) + group * evd::kRegisterWarmScalars<S, NMAX, kColumnGroups>);
}

// Blocks an SM that the register kernel is compiled for, where a cap on its registers paid: left to
// itself the compiler took 89 registers at float 16 and 135 at float 32 (5 and 3 blocks an SM);
// capped for 6 and 4 blocks, cold batches ran 3% and 7% faster (H100,
// bench/results/2026-11-25-register-step.md). With the scaled rotations (jacobi_evd_registers.cuh)
// cold complex float 16 took 146 registers, 3 blocks an SM where it had fit 4: capped for 4 (36
// bytes of spills) it ran 7% faster, 2.25x cuSOLVER against 2.10x; and cold complex float 32, capped
// for 3 blocks since 2026-11-25, spilled 352 bytes: uncapped (254 registers, 2 blocks, no spills) it
// ran 0.5-1% faster (H200, bench/results/2026-11-27-h200-scaled-rotations.md).
// Warm kernels are not capped: a warm batch of 1024 takes about one block an SM at n = 16 and two at
// n = 32, so a cap only makes them spill. Uncapped, warm float 16 (115 registers, no spills, against
// 80 and 24 bytes) ran 3-4% faster (H200, bench/results/2026-11-27-h200-warm-float16-uncapped.md), and
// warm float 32 takes 144 registers and no spills (kSharedSolve). Warm complex float 32 takes 255 and
// spills 64 bytes (ptxas, sm_90, at 5389a0c; the spill is not located).
// 0: no cap (any cap, 1 included, changes how the compiler allocates, and spilled elsewhere).
template <class S, int NMAX, bool WARM>
inline constexpr int kRegisterBlocksPerSm = WARM                                        ? 0
                                           : std::is_same_v<S, float> && NMAX == 16     ? 6
                                           : std::is_same_v<S, float> && NMAX == 32     ? 4
                                           : std::is_same_v<S, Cx<float>> && NMAX == 16 ? 4
                                                                                        : 0;

template <class S, int NMAX, bool WARM>
__global__ void __launch_bounds__(kRegisterBlockThreads<NMAX>) evd_registers_kernel(Args<S> args) {
  solve_group_in_registers<S, NMAX, WARM>(args);
}
template <class S, int NMAX, bool WARM>
__global__ void __launch_bounds__(kRegisterBlockThreads<NMAX>, (kRegisterBlocksPerSm<S, NMAX, WARM>))
    evd_registers_capped_kernel(Args<S> args) {
  solve_group_in_registers<S, NMAX, WARM>(args);
}
template <class S, int NMAX, bool WARM>
constexpr auto registers_kernel() {
  if constexpr (kRegisterBlocksPerSm<S, NMAX, WARM> > 0) return evd_registers_capped_kernel<S, NMAX, WARM>;
  else return evd_registers_kernel<S, NMAX, WARM>;
}

template <class S, int NMAX, bool WARM>
cudaError_t launch_registers(const Args<S>& args, cudaStream_t stream) {
  constexpr int kGroups = kRegisterGroups<NMAX, WARM>;
  const std::size_t bytes =
      WARM ? sizeof(S) * kGroups * evd::kRegisterWarmScalars<S, NMAX, kRegisterColumnGroups<NMAX, WARM>> : 0;
  auto kernel = registers_kernel<S, NMAX, WARM>();
  const cudaError_t status = allow_dynamic_shared_memory(
      kernel, bytes, sizeof(evd::RegisterScratch<S, NMAX, kRegisterColumnGroups<NMAX, WARM>>) * kGroups);
  if (status != cudaSuccess) return status;
  const index_t blocks = (args.count + kGroups - 1) / kGroups;
  kernel<<<unsigned(blocks), kRegisterBlockThreads<NMAX>, bytes, stream>>>(args);
  return cudaGetLastError();
}

template <class Kernel>
cudaError_t load(Kernel kernel) {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, kernel);
}

// The mapping for n <= NMAX <= 32: the register solve, or a block per matrix in shared memory where
// rows do not fit in registers (complex double 32). The register solve forms B = V0^H A V0 and the
// closing Newton-Schulz products a row (or a column group's part of one) per lane, or at complex
// float 32 on the tensor cores (evd::kRegisterTensorProducts), the block a row per lane of a group of
// NMAX threads (evd::group_product). Warm-started on an H200, the block was
// 1.6-1.7x faster for complex float at n = 16 and 32 and 1.07-1.23x for float at 32 against the
// register solve of 2026-11-23 (bench/results/2026-11-23-batched-shared-step.md); against that of
// 2026-11-27 (pipelined steps at real n >= 16, warm kernels uncapped) it was 13% faster at complex
// float 16 only, and the register solve 1.83x faster at float 32 and 1.12x at complex float 32
// (bench/results/2026-11-27-h200-warm-register-solve-at-32.md); with two column groups, the register
// solve was 1.19x faster at complex float 16 too (26.7 against 22.5 million matrices a second back
// to back, bench/results/2026-11-27-h200-column-groups.md). Cold, the register solve was faster in
// all four (1.35-2.3x).
template <class S, int NMAX>
inline constexpr bool kSharedSolve = !evd::kRegistersFit<S, NMAX>;

template <class S, int NMAX, bool WARM>
cudaError_t launch_small(const Args<S>& args, cudaStream_t stream) {
  if constexpr (kSharedSolve<S, NMAX>) return launch_shared<S, NMAX>(args, stream);
  else return launch_registers<S, NMAX, WARM>(args, stream);
}

template <class S, int NMAX>
cudaError_t launch_small(const Args<S>& args, cudaStream_t stream) {
  return args.warm_start ? launch_small<S, NMAX, true>(args, stream) : launch_small<S, NMAX, false>(args, stream);
}

template <class S, int NMAX, bool WARM>
cudaError_t load_small() {
  if constexpr (kSharedSolve<S, NMAX>) return load(evd_shared_kernel<S, NMAX>);
  else return load(registers_kernel<S, NMAX, WARM>());
}

template <class S, int NMAX>
cudaError_t load_small() {
  const cudaError_t status = load_small<S, NMAX, false>();
  return status != cudaSuccess ? status : load_small<S, NMAX, true>();
}

template <class S>
cudaError_t load_for() {
  for (cudaError_t status : {load_small<S, 4>(), load_small<S, 8>(), load_small<S, 16>(), load_small<S, 32>()})
    if (status != cudaSuccess) return status;
  return load(evd_pairs_kernel<S>);
}

}  // namespace

cudaError_t load_evd_batched_kernels() {
  for (cudaError_t status : {load_for<float>(), load_for<double>(), load_for<Cx<float>>(), load_for<Cx<double>>(),
                             load_tridiagonal_start_kernels()})
    if (status != cudaSuccess) return status;
  return cudaSuccess;
}

template <class T>
cudaError_t launch_evd_batched(const EvdBatchedArgs<T>& in, cudaStream_t stream) {
  using S = typename DeviceScalar<T>::type;
  using R = real_of<S>;
  if (in.n < 1 || in.n > kEvdMaxN) return cudaErrorInvalidValue;
  if (in.count == 0) return cudaSuccess;
  Args<S> args{reinterpret_cast<const S*>(in.a), in.lda, in.stride_a, in.values, in.stride_values,
               reinterpret_cast<S*>(in.vectors), in.ldv, in.stride_v,
               reinterpret_cast<const S*>(in.warm_start), in.ldw, in.stride_w, in.info, in.n, in.count,
               R(in.tol), R(in.symmetry_tol), in.max_sweeps, in.sort, in.reorthonormalise};
  if (!args.warm_start && args.vectors && uses_tridiagonal_start<S>(args.n)) {
    // V0 goes where V will: each matrix's solve reads its V0 before it writes V.
    const cudaError_t status = launch_tridiagonal_start(args.a, args.lda, args.stride_a, args.vectors, args.ldv,
                                                        args.stride_v, args.n, args.count, stream);
    if (status != cudaSuccess) return status;
    args.warm_start = args.vectors, args.ldw = args.ldv, args.stride_w = args.stride_v;
  }
  if (in.n <= 4) return launch_small<S, 4>(args, stream);
  if (in.n <= 8) return launch_small<S, 8>(args, stream);
  if (in.n <= 16) return launch_small<S, 16>(args, stream);
  if (in.n <= 32) return launch_small<S, 32>(args, stream);
  return launch_pairs<S>(args, stream);
}

template cudaError_t launch_evd_batched<float>(const EvdBatchedArgs<float>&, cudaStream_t);
template cudaError_t launch_evd_batched<double>(const EvdBatchedArgs<double>&, cudaStream_t);
template cudaError_t launch_evd_batched<std::complex<float>>(const EvdBatchedArgs<std::complex<float>>&, cudaStream_t);
template cudaError_t launch_evd_batched<std::complex<double>>(const EvdBatchedArgs<std::complex<double>>&, cudaStream_t);

}  // namespace eigstream::kernels
