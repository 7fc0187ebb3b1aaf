// Two-sided Jacobi EVD of one small Hermitian matrix (n <= 64) by a group of GPU threads: the
// per-matrix solves that the batched kernels (jacobi_evd_batched.cu) and the persistent solver
// (jacobi_evd_persistent.cu) run. Two thread mappings here (and the pairs solve of
// jacobi_evd_pairs.cuh for the batched kernel's 32 < n <= 64):
//  - solve_in_registers (n <= NMAX <= 32): lanes own rows, see jacobi_evd_registers.cuh;
//  - solve_in_shared (n <= NMAX <= 32): a block, A and V in shared memory, described here: complex
//    double at 16 < n <= 32 (whose rows do not fit in registers), the batched kernel's warm starts
//    of complex float at 8 < n <= 16, and the persistent solver's block per item (its latency
//    shape).
//
// Algorithm (seed 001): parallel round-robin ordering (eq. 7), n/2 disjoint rotations per step.
// Per-matrix convergence test off(A) <= tol * ||A||_F at the start of every sweep (and, for the
// persistent solver's block per item and the batched kernel's warm starts on this solve but complex
// double's, and some of the register solve's, every second step of a sweep that starts near the
// target: kLastSweepsOff), and early exit.
// Rotations below tol * ||A||_F / n are skipped. Warm start: B = V0^H A V0 formed on chip, sweeps on
// B (the register solve's last one, where chosen, replaced by a first-order step: finish_first_order),
// V = V0 J, then one Newton-Schulz step V <- V (3I - V^H V) / 2, which takes V^H V - I = E to
// O(E^2): V0 J is only as orthonormal as V0, so without it a chain of warm starts (each V the next
// V0) drifts from orthonormality by about n * eps per link. A cold V = J needs only unit columns, as
// does a warm one whose caller skips the step (Args::reorthonormalise false, on the links of a chain
// between two that take it).
//
// solve_in_shared's step: both sides at once, in 2 x 2 blocks, by work items of three or four kinds,
// each kind in whole warps of its own (StepItems). With m players (n, or n + 1 and a zero dummy row
// and column for odd n) and P = m / 2 pairs:
//  - V: an item rotates one row of the two columns of each of up to four pairs, V <- V J_k;
//  - off-diagonal blocks: item (k, l), k < l, takes the block of A in pair k's rows and pair l's
//    columns, J_k^H B J_l, and writes its mirror (l, k) as the conjugate transpose;
//  - diagonal blocks: item k takes pair k's, whose new diagonal the rotation gives and whose
//    off-diagonal entries become zero;
//  - in the latency shape (StepShape), rotations: item j computes the next step's rotation j.
// A is double-buffered: a step reads one buffer and writes every entry of the other. The step's
// rotations are in shared memory, each computed once, in the step before, into a second buffer (the
// first step's by the first P threads): by the block item that holds its off-diagonal entry, or in
// the latency shape by its rotation item, from that block. So a step takes one barrier.
//
// Memory: A, its second buffer and V in shared memory, column-major; A and its second buffer with
// leading dimension kSharedLda (against the step's bank conflicts), V with m + 1 (odd, against bank
// conflicts along rows, which its products read). The second buffer first holds the input as read,
// then with a warm start A V0. The input and V0 are read once from device (or mapped host) memory,
// the outputs written once.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <type_traits>

#include "device_scalar.cuh"
#include "dynamic_shared_memory.cuh"
#include "eigstream/detail/round_robin.hpp"
#include "eigstream/options.hpp"
#include "input_scaling.cuh"
#include "jacobi_evd_registers.cuh"
#include "jacobi_rotation.cuh"
#include "tensor_products.cuh"
#include "thread_group.cuh"

namespace eigstream::kernels::evd {

// The rotation of the pair (p, q) of A (leading dimension ld): rotation_of its entries.
template <class S>
__device__ __forceinline__ Rot<S> pair_rotation(const S* A, int ld, int p, int q, real_of<S> negligible2) {
  return rotation_of(re(A[p + p * ld]), re(A[q + q * ld]), load_vec(&A[p + q * ld]), negligible2);
}

template <class S>
struct Args {
  const S* a;
  index_t lda, stride_a;
  real_of<S>* values;
  index_t stride_values;
  S* vectors;
  index_t ldv, stride_v;
  const S* warm_start;
  index_t ldw, stride_w;
  SolveInfo* info;
  int n;
  index_t count;
  real_of<S> tol, symmetry_tol;
  int max_sweeps;
  Sort sort;
  bool reorthonormalise;  // with a warm start: the closing Newton-Schulz step (Options::reorthonormalise)
};

// How solve_in_shared spreads a step's work over its block:
//  - throughput (the batched kernel, several blocks an SM): the block items that hold the next
//    step's rotations' entries compute those rotations;
//  - latency (the persistent solver's block per item, alone on its SM): a warp of rotation items
//    computes them, each from the block that holds its entry, a second time, so that no block item's
//    warp waits on a rotation's chain (about 200 cycles); and the solve tests convergence within its
//    last sweeps too (kLastSweepsOff). A lone warm complex float matrix's latency fell 7-10% at
//    n = 16 and 1-2% at n = 32 with the rotation warp. In batches it did not pay: warm complex float 16 ran
//    23-25% slower (its blocks of 128 threads fit 7 an SM, not 8, and a batch of 1024 took two
//    waves) (H200, bench/results/2026-11-26-h200-rotation-warp.md).
enum class StepShape { throughput, latency };

// The threads of solve_in_shared, in whole warps of one kind of work item each (StepItems): the
// rotations of V, the off-diagonal blocks of A, the diagonal blocks of A and, in the latency shape,
// the next step's rotations.
constexpr int whole_warps(int threads) { return (threads + 31) / 32 * 32; }
constexpr int shared_v_threads(int nmax) { return whole_warps(nmax / 2 * ((nmax / 2 + 1) / 2)); }
constexpr int shared_block_threads(int nmax) { return whole_warps(nmax / 2 * (nmax / 2 - 1) / 2); }
constexpr int shared_threads(int nmax, StepShape shape) {
  return shared_v_threads(nmax) + shared_block_threads(nmax) + (shape == StepShape::latency ? 2 : 1) * 32;
}
// Whether the V items (StepItems) cover every pair for every even number of players m <= nmax.
constexpr bool v_items_cover(int nmax) {
  for (int m = 2; m <= nmax; m += 2)
    if (shared_v_threads(nmax) / m * 4 < m / 2) return false;
  return true;
}

// The leading dimension of A and its second buffer in solve_in_shared: the step's blocks read and
// write entries whose rows and columns are both spread over the players, and a bank-conflict model
// of the step (bench/step_banks.py: every warp's accesses, every step of a sweep) found NMAX + 6 the
// best compromise over n and the entry sizes. With the V items of StepItems, a sweep's shared-memory
// wavefronts fell 42% for complex float at n = 32 and 61% for float against leading dimension m + 1
// (bench/results/2026-11-25-h100-step-banks.md). V keeps m + 1 (odd): its products read it along rows.
template <int NMAX>
inline constexpr int kSharedLda = NMAX + 6;

// solve_in_shared's shared memory: two NMAX x kSharedLda matrices (A and its second buffer) and an
// NMAX x (NMAX + 1) one (V), and small buffers: two steps' rotations, a sweep's pairs, the
// eigenvalues, their order, and the group's reduction scratch.
template <class S, int NMAX>
struct GroupLayout {
  static constexpr std::size_t matrix_a = align16(sizeof(S) * NMAX * kSharedLda<NMAX>);
  static constexpr std::size_t matrix_v = align16(sizeof(S) * NMAX * (NMAX + 1));
  static constexpr std::size_t rotations = align16(sizeof(Rot<S>) * NMAX);
  static constexpr std::size_t schedule = align16(sizeof(int2) * (NMAX - 1) * (NMAX / 2));
  static constexpr std::size_t values = align16(sizeof(real_of<S>) * NMAX);
  static constexpr std::size_t order = align16(sizeof(int) * NMAX);
  static constexpr std::size_t scratch = align16(sizeof(double) * 32);
  static constexpr std::size_t bytes = 2 * matrix_a + matrix_v + rotations + schedule + values + order + scratch;
};

// Copies the n x n matrix `a` (leading dimension lda) to `a_to` (shared memory, leading dimension
// lda_to) and, unless v0 is null, v0 to `v_to` (leading dimension ldv_to), with every load of a
// thread issued before its first store, so that the loads are in flight together.
template <class S, int NMAX, int THREADS>
__device__ __forceinline__ void stage_inputs(const S* a, index_t lda, S* a_to, int lda_to, const S* v0, index_t ldv0,
                                             S* v_to, int ldv_to, int n, int lane) {
  constexpr int kPerThread = (NMAX * NMAX + THREADS - 1) / THREADS;
  S x[kPerThread], y[kPerThread];
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    const int idx = lane + r * THREADS, i = idx % n, j = idx / n;
    if (idx >= n * n) continue;
    x[r] = a[i + index_t(j) * lda];
    if (v0) y[r] = v0[i + index_t(j) * ldv0];
  }
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    const int idx = lane + r * THREADS, i = idx % n, j = idx / n;
    if (idx >= n * n) continue;
    a_to[i + j * lda_to] = x[r];
    if (v0) v_to[i + j * ldv_to] = y[r];
  }
}

// Each solve returns the matrix's SolveInfo (meaningful in lane 0, which also stores it to args.info).
template <class S>
__device__ SolveInfo write_invalid(const Args<S>& args, index_t b, int lane, int threads) {
  using R = real_of<S>;
  const int n = args.n;
  const R nan = R(__longlong_as_double(0x7ff8000000000000ll));
  for (int i = lane; i < n; i += threads) args.values[b * args.stride_values + i] = nan;
  if (args.vectors)
    for (int idx = lane; idx < n * n; idx += threads)
      args.vectors[b * args.stride_v + idx % n + index_t(idx / n) * args.ldv] = from_real<S>(nan);
  const SolveInfo info{0, 0.0, false, true};
  if (lane == 0) args.info[b] = info;
  return info;
}

// Scales the first n columns of V (leading dimension ld, n rows) to unit length, with `scale`
// (n reals of shared memory) as scratch. Why: see normalise_v in jacobi_evd_registers.cuh.
template <class S, int THREADS>
__device__ void normalise_columns(S* V, int ld, int n, real_of<S>* scale, const ThreadGroup<THREADS>& g, int lane) {
  using R = real_of<S>;
  for (int j = lane; j < n; j += THREADS) {
    R norm2 = 0;
    for (int i = 0; i < n; ++i) norm2 += abs2(V[i + j * ld]);
    scale[j] = norm2 > R(0) ? R(1) / sqrt(norm2) : R(1);
  }
  g.sync();
  for (int idx = lane; idx < n * n; idx += THREADS) {
    const int i = idx % n, j = idx / n;
    V[i + j * ld] = scale[j] * V[i + j * ld];
  }
}

// The end of a solve: the n eigenvalues w (in index order) to their places in the requested order
// (ties keep index order), the columns of V (leading dimension ld) permuted alike, and the matrix's
// SolveInfo, returned (meaningful in lane 0, which also stores it). `rank` is n ints of shared memory.
template <class S, int THREADS>
__device__ SolveInfo write_results(const Args<S>& args, index_t b, const real_of<S>* w, const S* V, int ld, int* rank,
                                   int sweeps, real_of<S> off, real_of<S> norm, real_of<S> target,
                                   const ThreadGroup<THREADS>& g, int lane) {
  const int n = args.n;
  for (int i = lane; i < n; i += THREADS) {
    int r = i;
    if (args.sort != Sort::none) {
      r = 0;
      for (int j = 0; j < n; ++j) {
        const bool before = args.sort == Sort::descending ? w[j] > w[i] : w[j] < w[i];
        r += before || (w[j] == w[i] && j < i);
      }
    }
    rank[i] = r;
    args.values[b * args.stride_values + r] = w[i];
  }
  g.sync();
  if (args.vectors)
    for (int idx = lane; idx < n * n; idx += THREADS) {
      const int i = idx % n, j = idx / n;
      args.vectors[b * args.stride_v + i + index_t(rank[j]) * args.ldv] = V[i + j * ld];
    }
  const SolveInfo info{sweeps, norm > real_of<S>(0) ? double(off / norm) : 0.0, off <= target, false};
  if (lane == 0) args.info[b] = info;
  return info;
}

// A thread's work item in every step of solve_in_shared, for P pairs (P = m / 2), by its warp's kind
// (shared_threads):
//  - V: thread t of the first warps rotates row t % m of the columns of pairs k, k + G, k + 2G and
//    k + 3G (those < P), k = t / m < min(P, G), G = shared_v_threads / m: consecutive lanes take
//    consecutive rows of the same columns, which fall in distinct banks whatever the players (a whole
//    warp at m = 32; at smaller m a warp spans two or more items);
//  - blocks: thread t < P (P - 1) / 2 of the next warps takes the block (k, l), k < l, in row-major
//    order, and in the throughput shape the next step's rotations whose off-diagonal entry it holds
//    (detail::next_pairs_in_block);
//  - diagonal: thread t < P of the next warp takes pair t's diagonal block (k == l == t); with P == 1
//    the pair stays from step to step, and this item computes its next rotation;
//  - rotations, in the latency shape: with P >= 2, thread j < P of the last warp computes the next
//    step's rotation j from the block that holds its entry.
template <StepShape SHAPE>
struct StepItems {
  enum Kind { none, v_rows, block, diagonal, rotation };
  Kind kind = none;
  static constexpr int kVPairs = 4;  // pairs of a V item
  int k = 0, l = 0;  // the item's pairs: V's first pair k, A's block (k, l) or pair k's diagonal block
  int row = 0;       // V's row
  int pair_stride = 0;  // G, the distance between a V item's pairs
  int owned = 0;        // a block item's next-step rotations in the throughput shape (0, 1 or 2)
  detail::NextPair own[2];  // those, or a rotation item's one

  __device__ StepItems(int t, int m, int v_threads, int block_threads) {
    const int half = m / 2;
    if (t < v_threads) {
      pair_stride = v_threads / m;
      if (t < pair_stride * m && t / m < half) kind = v_rows, k = t / m, row = t % m;
      return;
    }
    t -= v_threads;
    if (SHAPE == StepShape::latency && t >= block_threads + 32) {  // the rotation warp
      t -= block_threads + 32;
      if (t >= half || half < 2) return;
      const detail::NextPairSource source = detail::next_pair_source(t, half);
      kind = rotation, k = source.k, l = source.l;
      own[0] = {source.u_second, source.v_second, t};
      return;
    }
    if (t >= block_threads) {
      if (t - block_threads < half) kind = diagonal, k = l = t - block_threads;
      return;
    }
    if (t >= half * (half - 1) / 2) return;
    kind = block;
    while (t >= half - 1 - k) t -= half - 1 - k, ++k;
    l = k + 1 + t;
    if (SHAPE == StepShape::throughput) owned = detail::next_pairs_in_block(k, l, half, own[0], own[1]);
  }
};

// The 2 x 2 block of A (leading dimension lda) in rows x and y (pair k's players, x < y) and columns
// xl and yl (pair l's), after the step's rotations rk and rl: J_k^H B J_l.
template <class S>
struct Block2x2 {
  S xx, xy, yx, yy;
};
template <class S>
__device__ __forceinline__ Block2x2<S> rotated_block(const S* A, int lda, int x, int y, int xl, int yl,
                                                     const Rot<S>& rk, const Rot<S>& rl) {
  Block2x2<S> b{load_vec(&A[x + xl * lda]), load_vec(&A[x + yl * lda]), load_vec(&A[y + xl * lda]),
                load_vec(&A[y + yl * lda])};
  if (rl.active) {  // B J_l: rows x and y as column pairs
    rotate_columns(b.xx, b.xy, rl.c, rl.s_e);
    rotate_columns(b.yx, b.yy, rl.c, rl.s_e);
  }
  if (rk.active) {  // J_k^H B: columns xl and yl as row pairs
    rotate_columns(b.xx, b.yx, rk.c, conj(rk.s_e));
    rotate_columns(b.xy, b.yy, rk.c, conj(rk.s_e));
  }
  return b;
}

// The next step's rotation of players u (of pair k: row x when u_is_x, else y) and v (of pair l:
// column xl when v_is_x, else yl), from their entry b_uv in the block rotated this step and their
// diagonal entries a_uu and a_vv before it, moved as pair k's and l's diagonal items move them.
template <class S>
__device__ __forceinline__ Rot<S> next_rotation(S b_uv, real_of<S> a_uu, real_of<S> a_vv, bool u_is_x, bool v_is_x,
                                                bool u_first, const Rot<S>& rk, const Rot<S>& rl,
                                                real_of<S> negligible2) {
  using R = real_of<S>;
  const R new_uu = rk.active ? (u_is_x ? a_uu - rk.shift : a_uu + rk.shift) : a_uu;
  const R new_vv = rl.active ? (v_is_x ? a_vv - rl.shift : a_vv + rl.shift) : a_vv;
  return rotation_of(u_first ? new_uu : new_vv, u_first ? new_vv : new_uu, u_first ? b_uv : conj(b_uv), negligible2);
}

// The n x n product op(X) Y (n <= NMAX) of two matrices in shared memory (leading dimensions ldx
// and ldy), op(X) = X^H when CONJ_X, else X, by the THREADS threads of solve_in_shared: entry (i, j) goes to
// store(i, j, value). The threads fall into groups of NMAX; lane i of a group takes row i of the
// result and the group a run of kCols columns. So a thread reads row i of op(X) once for kCols
// entries, and the entries of Y it reads are the same across its group (a broadcast): half the
// shared-memory traffic, and a third fewer instructions, of an entry per thread, which the products
// were bound by. Each entry is summed over k in order, as an entry per thread would be.
template <bool CONJ_X, int NMAX, int THREADS, class S, class Store>
__device__ __forceinline__ void group_product(const S* X, int ldx, const S* Y, int ldy, int n, int lane, Store store) {
  constexpr int kGroups = THREADS / NMAX;
  constexpr int kCols = (NMAX + kGroups - 1) / kGroups;
  const int i = lane % NMAX, first = lane / NMAX * kCols;
  if (lane >= kGroups * NMAX || i >= n || first >= n) return;
  const S* y[kCols];  // column first + c of Y; past the last, the last (read, never stored)
#pragma unroll
  for (int c = 0; c < kCols; ++c) y[c] = Y + min(first + c, n - 1) * ldy;
  S acc[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) acc[c] = from_real<S>(real_of<S>(0));
#pragma unroll 2
  for (int k = 0; k < n; ++k) {
    const S x = load_vec(CONJ_X ? &X[k + i * ldx] : &X[i + k * ldx]);
#pragma unroll
    for (int c = 0; c < kCols; ++c) acc[c] += CONJ_X ? conj_mul(x, load_vec(&y[c][k])) : x * load_vec(&y[c][k]);
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c)
    if (first + c < n) store(i, first + c, acc[c]);
}

// A sweep that starts with off(A) <= kLastSweepsOff * target is likely the last. With
// LAST_SWEEP_TESTS, solve_in_shared then tests convergence every second step too and stops part way
// through the sweep: a CPU model (float, eigbench's covariances) took 15-21% fewer steps for warm
// starts at n = 16 and 32 (bench/results/2026-11-25-mid-sweep-tests.md). Where they pay:
//  - the persistent solver's block per item, where one matrix's solve is the critical path;
//  - the batched kernel's warm starts, a block per matrix, where a block that stops early makes room
//    for the next: warm batches of float 32 and complex float 32 ran 3-5% faster when they took this
//    solve, and complex double 5.5% slower (bench/results/2026-11-26-h200-last-sweep-tests.md). No
//    warm batch takes it with the tests now: complex double 32, the one type left on this solve in
//    the batched kernel, runs without them (evd_shared_kernel in jacobi_evd_batched.cu).
//  - the register solve's warm starts where its step is long beside a test (kRegisterLastSweepTests);
//    its warps wait for their slowest matrix, so elsewhere the tests only cost.
// Not in cold batches: compiled into the cold complex double 32 kernel, the tests' code alone made it
// spill more and run 2.5% slower.
inline constexpr double kLastSweepsOff = 100;

// Solves matrix b of `args` (n <= NMAX) on the shared_threads(NMAX, SHAPE) threads of a block (lane =
// threadIdx.x), with `smem` holding GroupLayout<S, NMAX>::bytes; LAST_SWEEP_TESTS: see kLastSweepsOff.
template <class S, int NMAX, StepShape SHAPE, bool LAST_SWEEP_TESTS = SHAPE == StepShape::latency>
__device__ SolveInfo solve_in_shared(const Args<S>& args, index_t b, char* smem, int lane) {
  static_assert(NMAX <= 32, "n > 32: solve_in_pairs");
  using R = real_of<S>;
  using Layout = GroupLayout<S, NMAX>;
  constexpr int THREADS = shared_threads(NMAX, SHAPE);
  const bool warm = args.warm_start != nullptr;
  const bool want_v = warm || args.vectors != nullptr;
  char* p = smem;
  S* A = reinterpret_cast<S*>(p);
  S* N = reinterpret_cast<S*>(p += Layout::matrix_a);  // A's second buffer; A V0 before the sweeps
  S* V = reinterpret_cast<S*>(p += Layout::matrix_a);
  Rot<S>* rot = reinterpret_cast<Rot<S>*>(p += Layout::matrix_v);  // P of this step's, P of the next's
  int2* schedule = reinterpret_cast<int2*>(p += Layout::rotations);  // pair k of step t: its players, lower first, at t P + k
  R* w = reinterpret_cast<R*>(p += Layout::schedule);
  int* rank = reinterpret_cast<int*>(p += Layout::values);
  double* scratch = reinterpret_cast<double*>(p += Layout::order);
  const ThreadGroup<THREADS> g{lane, scratch};
  const int n = args.n;
  const int m = detail::round_robin_players(n);
  const int half = m / 2;
  constexpr int lda = kSharedLda<NMAX>;  // A and N
  const int ldv = m + 1;                  // V
  const S zero = from_real<S>(R(0));
  const S* a = args.a + b * args.stride_a;

  // The input into N, and the warm start into V, first, every load in flight together: the input is
  // read once instead of three times (2-3% more warm-batch throughput, H100, 2026-11-23).
  const S* v0 = warm ? args.warm_start + b * args.stride_w : nullptr;
  stage_inputs<S, NMAX, THREADS>(a, args.lda, N, lda, v0, args.ldw, V, ldv, n, lane);
  g.sync();
  int exponent = 0;
  if (!scan_input(N, n, n, index_t(lda), g, lane, exponent)) return write_invalid(args, b, lane, THREADS);

  // Pass 2: the scaled lower triangle into A in full Hermitian storage; Hermitian defect and norm.
  // The dummy row and column of odd n are zero (in V too: V's dummy column is never rotated).
  R defect2 = 0, norm2 = 0;
  for (int idx = lane; idx < m * m; idx += THREADS) {
    const int i = idx % m, j = idx / m;
    if (i == n || j == n) {
      A[i + j * lda] = zero;
      V[i + j * ldv] = zero;
      continue;
    }
    const S x = scale2(N[i + j * lda], exponent);
    const S xt = scale2(N[j + i * lda], exponent);
    defect2 += abs2(x - conj(xt));
    norm2 += abs2(x);
    A[i + j * lda] = i > j ? x : i == j ? from_real<S>(re(x)) : conj(xt);
  }
  g.sum2(defect2, norm2);
  if (!(sqrt(defect2) <= args.symmetry_tol * sqrt(norm2))) return write_invalid(args, b, lane, THREADS);

  if (warm) {  // V holds V0 (staged above); the barriers of g.sum2 have ordered pass 2 before this
    group_product<false, NMAX, THREADS>(A, lda, V, ldv, n, lane, [&](int i, int j, S x) { N[i + j * lda] = x; });  // N = A V0
    g.sync();
    group_product<true, NMAX, THREADS>(V, ldv, N, lda, n, lane, [&](int i, int j, S x) {  // A = V0^H N, exactly Hermitian
      if (i > j) A[i + j * lda] = x, A[j + i * lda] = conj(x);  // the lower triangle mirrored
      if (i == j) A[i + i * lda] = from_real<S>(re(x));
    });
  } else if (want_v) {
    for (int idx = lane; idx < n * n; idx += THREADS) {
      const int i = idx % n, j = idx / n;
      V[i + j * ldv] = from_real<S>(R(i == j ? 1 : 0));
    }
  }
  g.sync();

  const R norm = sqrt(norm2);
  const R target = args.tol * norm;
  const R negligible2 = negligible_square(target, n);
  S* cur = A;  // the step's A; it writes `next`
  S* next = N;
  Rot<S>* rot_cur = rot;  // the step's rotations; its items write the next step's into rot_next
  Rot<S>* rot_next = rot + half;
  static_assert(v_items_cover(NMAX), "too few V items");
  using Items = StepItems<SHAPE>;
  const Items items(lane, m, shared_v_threads(NMAX), shared_block_threads(NMAX));
  // The players of the item's pairs k and l, in their first seats (k, l) and second (m - 1 - k, ...).
  int k_first = detail::round_robin_player(items.k, 0, m), k_second = detail::round_robin_player(m - 1 - items.k, 0, m);
  int l_first = detail::round_robin_player(items.l, 0, m), l_second = detail::round_robin_player(m - 1 - items.l, 0, m);
  if (lane < half) {
    const detail::Pair pr = detail::round_robin_pair(lane, 0, m);
    store_rotation(&rot_cur[lane], pair_rotation(cur, lda, pr.p, pr.q, negligible2));
  }
  for (int idx = lane; idx < (m - 1) * half; idx += THREADS) {  // the V items read their pairs' players here
    const detail::Pair pr = detail::round_robin_pair(idx % half, idx / half, m);
    schedule[idx] = make_int2(pr.p, pr.q);
  }
  int sweeps = 0;
  R off = 0;
  // off(A), summed by the first warp alone (lane i down row i of each column, in four chains) and
  // handed to the others in one of two slots of shared memory, taken in turn, so that a test takes
  // one barrier. Summed by every thread, a block-wide reduction (each warp's shuffles, two barriers),
  // a test took 1 200-1 600 cycles at n = 16 and 32 (H200, bench/results/2026-11-26-h200-step-profile.md);
  // with one warp, warm batches of float 32 ran 5% faster and complex float 32 2.5%, a lone warm float
  // 32 item finished 1.2 us sooner, and cold complex double 32 ran 3% slower
  // (bench/results/2026-11-26-h200-latency-path.md). The barrier also orders the first rotations,
  // and a step's writes, before their readers.
  double* const off_slots = scratch + 30;  // past the 2 kWarps entries of g.sum2
  static_assert(2 * (THREADS / 32) <= 30 && Layout::scratch >= 32 * sizeof(double),
                "room for the reductions and the tests' slots");
  int off_slot = 0;
  auto off_norm = [&] {
    if (lane < 32) {
      R off2[4] = {0, 0, 0, 0};  // four chains of additions
#pragma unroll 4
      for (int j = 0; j < n; ++j)
        if (lane < n && lane != j) off2[j % 4] += abs2(cur[lane + j * lda]);
      R total = (off2[0] + off2[1]) + (off2[2] + off2[3]);
      for (int offset = 16; offset > 0; offset /= 2) total += __shfl_xor_sync(0xffffffffu, total, offset);
      if (lane == 0) off_slots[off_slot] = double(total);
    }
    g.sync();
    const R total = R(off_slots[off_slot]);
    off_slot ^= 1;
    return sqrt(total);
  };
  bool tested = false;  // off holds off(A) of cur, from a test within the sweep
  for (;;) {
    if (!tested) off = off_norm();
    if (off <= target || sweeps == args.max_sweeps) break;
    ++sweeps;
    const bool test_steps = LAST_SWEEP_TESTS && off <= R(kLastSweepsOff) * target;
    for (int step = 0; step < m - 1; ++step) {
      const int x = min(k_first, k_second), y = max(k_first, k_second);  // pair k, and pair l below
      if (items.kind == Items::v_rows) {  // V <- V J_k on one row of each of the item's pairs' columns
#pragma unroll
        for (int j0 = 0; j0 < Items::kVPairs; j0 += 2) {  // two pairs at a time, their loads first
          // Both past the last pair: no loads (at m = 18, every item's second two).
          if (items.k + j0 * items.pair_stride >= half) break;
          S s_e[2], u[2], w[2];
          R c[2];
          int ox[2], oy[2];
#pragma unroll
          for (int j = 0; j < 2; ++j) {  // a pair past the last reads the item's first pair (its own), unused
            const int k = items.k + (j0 + j) * items.pair_stride < half ? items.k + (j0 + j) * items.pair_stride : items.k;
            const int2 players = schedule[step * half + k];
            s_e[j] = rot_cur[k].s_e, c[j] = rot_cur[k].c;
            ox[j] = players.x * ldv + items.row, oy[j] = players.y * ldv + items.row;
            u[j] = load_vec(&V[ox[j]]), w[j] = load_vec(&V[oy[j]]);
          }
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            if (items.k + (j0 + j) * items.pair_stride >= half || is_zero(s_e[j])) continue;  // s e = 0: J = I
            rotate_columns(u[j], w[j], c[j], s_e[j]);
            store_vec(&V[ox[j]], u[j]), store_vec(&V[oy[j]], w[j]);
          }
        }
      } else if (items.kind == Items::diagonal) {
        const Rot<S> rk = rot_cur[items.k];
        const R app = re(cur[x + x * lda]), aqq = re(cur[y + y * lda]);
        const R new_pp = rk.active ? app - rk.shift : app, new_qq = rk.active ? aqq + rk.shift : aqq;
        const S new_pq = rk.active ? zero : load_vec(&cur[x + y * lda]);
        store_vec(&next[x + x * lda], from_real<S>(new_pp));
        store_vec(&next[y + y * lda], from_real<S>(new_qq));
        store_vec(&next[x + y * lda], new_pq);
        store_vec(&next[y + x * lda], conj(new_pq));
        if (half == 1)  // the pair stays from step to step
          store_rotation(&rot_next[0], rotation_of(new_pp, new_qq, new_pq, negligible2));
      } else if (items.kind == Items::block) {  // pair k's rows and pair l's columns, and the mirror
        const int xl = min(l_first, l_second), yl = max(l_first, l_second);
        const Rot<S> rk = rot_cur[items.k], rl = rot_cur[items.l];
        const Block2x2<S> r = rotated_block(cur, lda, x, y, xl, yl, rk, rl);
        store_vec(&next[x + xl * lda], r.xx), store_vec(&next[x + yl * lda], r.xy);
        store_vec(&next[y + xl * lda], r.yx), store_vec(&next[y + yl * lda], r.yy);
        store_vec(&next[xl + x * lda], conj(r.xx)), store_vec(&next[yl + x * lda], conj(r.xy));
        store_vec(&next[xl + y * lda], conj(r.yx)), store_vec(&next[yl + y * lda], conj(r.yy));
        if constexpr (SHAPE == StepShape::throughput) {  // the next step's rotations whose entry it holds
#pragma unroll
          for (int o = 0; o < 2; ++o) {
            if (o == items.owned) break;
            const int u = items.own[o].u_second ? k_second : k_first;
            const int v = items.own[o].v_second ? l_second : l_first;
            const bool u_is_x = u == x, v_is_x = v == xl;
            const S b_uv = u_is_x ? (v_is_x ? r.xx : r.xy) : (v_is_x ? r.yx : r.yy);
            store_rotation(&rot_next[items.own[o].pair], next_rotation(b_uv, re(cur[u + u * lda]), re(cur[v + v * lda]),
                                                                       u_is_x, v_is_x, u < v, rk, rl, negligible2));
          }
        }
      } else if (SHAPE == StepShape::latency && items.kind == Items::rotation) {  // from its block
        const int xl = min(l_first, l_second), yl = max(l_first, l_second);
        const int u = items.own[0].u_second ? k_second : k_first;
        const int v = items.own[0].v_second ? l_second : l_first;
        const R a_uu = re(cur[u + u * lda]), a_vv = re(cur[v + v * lda]);  // loaded with the block
        const Rot<S> rk = rot_cur[items.k], rl = rot_cur[items.l];
        const Block2x2<S> r = rotated_block(cur, lda, x, y, xl, yl, rk, rl);
        // The entry by selects: chosen as the block items choose it, it was a branch, after which the
        // compiler put the loads of a_uu and a_vv, on the step's critical path: latency 10% longer at
        // n = 16 (H200, bench/results/2026-11-26-h200-rotation-warp.md).
        const bool u_is_x = u == x, v_is_x = v == xl;
        const S b_uv = pick(u_is_x, pick(v_is_x, r.xx, r.xy), pick(v_is_x, r.yx, r.yy));
        store_rotation(&rot_next[items.own[0].pair],
                       next_rotation(b_uv, a_uu, a_vv, u_is_x, v_is_x, u < v, rk, rl, negligible2));
      }
      k_first = detail::next_player(k_first, m), k_second = detail::next_player(k_second, m);
      l_first = detail::next_player(l_first, m), l_second = detail::next_player(l_second, m);
      S* const done = cur;
      cur = next;
      next = done;
      Rot<S>* const used = rot_cur;
      rot_cur = rot_next;
      rot_next = used;
      g.sync();
      if (test_steps && step % 2 == 1 && (off = off_norm()) <= target) {  // the loop's test stops the solve
        tested = true;
        break;
      }
    }
  }

  // Eigenvalues, unscaled; both A buffers are free from here on.
  for (int i = lane; i < n; i += THREADS) w[i] = scalbn(re(cur[i + i * lda]), -exponent);
  g.sync();
  S* v_out = V;
  int ld_out = ldv;
  if (warm && args.reorthonormalise) {  // V0 J is only as orthonormal as V0: one Newton-Schulz step (file comment)
    group_product<true, NMAX, THREADS>(V, ldv, V, ldv, n, lane, [&](int i, int j, S x) { next[i + j * lda] = x; });  // V^H V
    g.sync();
    group_product<false, NMAX, THREADS>(V, ldv, next, lda, n, lane, [&](int i, int j, S x) {  // V (3I - next) / 2, into cur
      cur[i + j * lda] = R(1.5) * V[i + j * ldv] - R(0.5) * x;
    });
    v_out = cur, ld_out = lda;
  } else if (want_v) {
    normalise_columns(V, ldv, n, reinterpret_cast<R*>(cur), g, lane);
  }
  g.sync();
  return write_results(args, b, w, v_out, ld_out, rank, sweeps, off, norm, target, g, lane);
}

// Whether a row of A and of V fits in registers: 32 complex doubles each would spill.
template <class S, int NMAX>
inline constexpr bool kRegistersFit = sizeof(S) * NMAX <= 256;

// The shared memory of one matrix's register solve: the rotations of a step and the sort, and with
// column groups (C > 1) the rotations' c and shifts.
template <class S, int NMAX>
struct RegisterScratchOfRows {
  Multipliers<S> rot[2][NMAX / 2];  // a step's rotations, in two buffers used in turn
  real_of<S> w[NMAX];  // the factors of G by seat in Registers::unscale, then the eigenvalues by seat
  int player[NMAX];
  int rank[NMAX];
};
template <class S, int NMAX, int C = 1>
struct RegisterScratch : RegisterScratchOfRows<S, NMAX> {
  registers::FactorShift<real_of<S>> factors[2][NMAX / 2];
};
template <class S, int NMAX>
struct RegisterScratch<S, NMAX, 1> : RegisterScratchOfRows<S, NMAX> {};
template <class S, int NMAX, int C>
__device__ __forceinline__ registers::FactorShift<real_of<S>>* factors_of(RegisterScratch<S, NMAX, C>& scratch,
                                                                         unsigned buffer) {
  if constexpr (C > 1) return scratch.factors[buffer];
  else return nullptr;
}

// Whether the register solve's warm starts test convergence every second step of a sweep that starts
// within kLastSweepsOff of the target. Where NMAX lanes hold several matrices, a warp goes on until
// its last matrix stops, and the tests paid only at complex float 8: warm batches of 1024 ran 5-8%
// faster there (H100 and H200). At float 4 and 8, double 4 and 8 and complex double 8 they cost
// 1-13%; at n = 16 they gained 5-13% in one build on an H100 and lost 1-2% in another on an H200,
// where they also made the persistent solver's double 16 kernel 5% slower
// (bench/results/2026-11-26-register-last-sweep-tests.md).
template <class S, int NMAX>
inline constexpr bool kRegisterLastSweepTests = std::is_same_v<S, Cx<float>> && NMAX == 8;

// A run of a row in shared memory: 16 bytes, kRegisterRun entries, loaded in one access.
template <class S>
inline constexpr int kRegisterRun = sizeof(S) >= 16 ? 1 : int(16 / sizeof(S));
// In PTX: where the loop was unrolled, the compiler split a plain 16-byte load back into 4-byte ones.
// Volatile and ordered with memory, as it reads what other lanes stored.
template <class S>
__device__ __forceinline__ void load_run(const S* from, S (&to)[kRegisterRun<S>]) {
  static_assert(sizeof(to) == 16, "a run is 16 bytes");
  unsigned x[4];
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3])
               : "r"(unsigned(__cvta_generic_to_shared(from)))
               : "memory");
  memcpy(to, x, sizeof(x));
}
// acc[j] = update(acc[j], row[j]) for j < K, where the products' rows are RUNS (16-byte aligned): a
// run at a time. The products of a row held whole in registers (C = 1) read their rows so: warm
// batches of 1024 ran 4% faster at complex float 32 (3.48x -> 3.58x cuSOLVER), where they had taken
// two 4-byte loads an entry (Cx<float> is 4-byte aligned, as std::complex<float>), and 1% at float
// 32. With column groups, whose products also read rows lane by lane and so need rows of NMAX + 1
// entries for their banks, runs made warm double 16 4% slower and complex float 16 2-5% (H200,
// bench/results/2026-11-27-h200-product-runs.md).
template <bool RUNS, class S, int K, class Update>
__device__ __forceinline__ void accumulate_row(S (&acc)[K], const S* row, Update update) {
  if constexpr (RUNS) {
    static_assert(K % kRegisterRun<S> == 0, "whole runs");
#pragma unroll
    for (int j0 = 0; j0 < K; j0 += kRegisterRun<S>) {
      S run[kRegisterRun<S>];
      load_run(row + j0, run);
#pragma unroll
      for (int i = 0; i < kRegisterRun<S>; ++i) acc[j0 + i] = update(acc[j0 + i], run[i]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < K; ++j) acc[j] = update(acc[j], row[j]);
  }
}
// The rows of the register solve's products in shared memory: in runs (C = 1), NMAX entries and a
// run of padding, so that every row starts 16-byte aligned; else NMAX + 1.
template <class S, int NMAX, int C>
inline constexpr int kRegisterWarmLd = C == 1 ? NMAX + kRegisterRun<S> : NMAX + 1;
// Where the register solve's warm-start products (A V0, V0^H (A V0), and the Newton-Schulz step's
// V^H V and V E) run on the tensor cores (tensor_products.cuh) rather than a row a lane: warm
// batches of 1024 ran 13% faster at complex float 32 (3.55-3.57x -> 3.996-4.008x cuSOLVER back to
// back), orthogonality 1.1e-6 against 8.2e-7 and cuSOLVER's 3.9e-6 (H100,
// bench/results/2026-12-07-h100-tensor-products.md). With no row held in registers across them
// (spill stores 416 -> 60 bytes), 4.7% more: 4.20-4.21x (H100,
// bench/results/2026-12-07-h100-block-tensor-products.md). Not tried at other types and sizes.
template <class S, int NMAX, int C>
inline constexpr bool kRegisterTensorProducts = tensor::kAvailable && std::is_same_v<S, Cx<float>> && NMAX == 32 && C == 1;
// The shared memory of a register solve's warm start, in scalars: V0 and the product A V0, each
// NMAX x kRegisterWarmLd.
template <class S, int NMAX, int C = 1>
inline constexpr int kRegisterWarmScalars = 2 * NMAX * kRegisterWarmLd<S, NMAX, C>;

// The first-order finish of a warm start (register solve), tried at a sweep's start, where A's rows
// hold B = D + F unscaled and every index sits in its own seat: with E_ij = f_ij / (d_j - d_i) for
// the entries above negligible, the unitary factor of I + E takes B to D + [F, E] / 2 and terms of
// third order, so off(B) falls to about off(B) ||E|| where a sweep would take it to about the same.
// Where off(B) ||E||_F <= target / 2 and ||E||_F^4 <= eps, V <- V (I + E) (made orthonormal by the
// Newton-Schulz step that follows) and d_i <- d_i + sum_j |f_ij|^2 / (d_i - d_j) finish the solve in
// place of the sweep, and off becomes that bound; returns whether it did. A warm start's last sweep
// is most often this case: its pairs' rotations are all small against their gaps. An entry above
// negligible between diagonal entries less than the least normal number apart rules it out.
// `by_seat` (NMAX reals) and `warm_buffer` are free on entry.
template <class S, int NMAX, int C>
__device__ __forceinline__ bool finish_first_order(registers::Registers<S, NMAX, C>& m, int row, unsigned mask,
                                                   real_of<S>& off, real_of<S> target, real_of<S> negligible2,
                                                   real_of<S>* by_seat, S* warm_buffer) {
  using R = real_of<S>;
  using Rows = registers::Registers<S, NMAX, C>;
  constexpr int K = Rows::K;
  constexpr int kLanes = Rows::kLanes;
  constexpr int kLd = kRegisterWarmLd<S, NMAX, C>;
  if (C == 1 || m.group == 0) by_seat[row] = m.d;
  __syncwarp(mask);
  bool tied = false;
  // 1 / (d_j - d_i) for column j's entry above negligible, else 0 (and `tied` set where the two are
  // less than the least normal number apart).
  const auto inverse_gap = [&](int j) {
    const R gap = by_seat[m.seat_of(j)] - m.d;
    const bool above = !m.is_me(j) && abs2(m.a[j]) > negligible2, apart = fabs(gap) >= std::numeric_limits<R>::min();
    tied |= above && !apart;
    return above && apart ? rn::rcp(gap) : R(0);
  };
  R e2 = 0, shift = 0;  // the row's share of ||E||_F^2; its eigenvalue's second-order term
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const R inverse = inverse_gap(j);
    e2 += inverse * inverse * abs2(m.a[j]);
    shift -= inverse * abs2(m.a[j]);
  }
  e2 = registers::group_sum<kLanes>(mask, e2);
#pragma unroll
  for (int offset = NMAX; offset < kLanes; offset *= 2) shift += __shfl_xor_sync(mask, shift, offset);  // the row's groups
  // ||E||_F^4 <= eps as well: the Newton-Schulz step then leaves V orthonormal to about eps.
  constexpr R kEps = std::numeric_limits<R>::epsilon();
  if (__any_sync(mask, tied) || !(off * off * e2 <= R(0.25) * target * target) || !(e2 * e2 <= kEps)) {
    __syncwarp(mask);  // by_seat read
    return false;
  }
  S* p = warm_buffer;               // E, by rows
  S* q = warm_buffer + NMAX * kLd;  // V by rows, where the row is spread over the groups
#pragma unroll
  for (int j = 0; j < K; ++j) {
    p[row * kLd + m.seat_of(j)] = inverse_gap(j) * m.a[j];
    if constexpr (C > 1) q[row * kLd + m.seat_of(j)] = m.v[j];
    m.a[j] = from_real<S>(R(0));
  }
  __syncwarp(mask);
#pragma unroll
  for (int k = 0; k < NMAX; ++k) {  // (V E), row `row`, in A's registers, by fused multiply-adds
    const S v_k = C == 1 ? m.v[k % K] : q[row * kLd + k];
    accumulate_row<C == 1>(m.a, &p[k * kLd + m.seat_of(0)],
                           [&](S acc, S y) { return registers::combine_rows(acc, v_k, y); });
  }
#pragma unroll
  for (int j = 0; j < K; ++j) m.v[j] += m.a[j];
  m.d += shift;
  off *= sqrt(e2);
  return true;
}

// Solves matrix b of `args` on the NMAX * C lanes of `mask` (lane = 0 .. NMAX * C - 1 within them),
// rows in registers (jacobi_evd_registers.cuh; C column groups, lane = group * NMAX + row).
// `warm_buffer` holds kRegisterWarmScalars<S, NMAX, C> scalars when there is a warm start (unused
// otherwise). With MAY_WARM false, args.warm_start is ignored and the warm-start code is left out,
// which spares registers where every row is held in them. With FIRST_ORDER_FINISH, a warm start
// tries finish_first_order at each sweep's start.
template <class S, int NMAX, bool MAY_WARM = true, int C = 1, bool FIRST_ORDER_FINISH = false>
__device__ __forceinline__ SolveInfo solve_in_registers(const Args<S>& args, index_t b, int lane, unsigned mask,
                                   RegisterScratch<S, NMAX, C>& scratch, S* warm_buffer) {
  using R = real_of<S>;
  using Rows = registers::Registers<S, NMAX, C>;
  constexpr int kLd = kRegisterWarmLd<S, NMAX, C>;
  constexpr int K = Rows::K;
  constexpr int kLanes = Rows::kLanes;
  const int n = args.n;
  const S* a = args.a + b * args.stride_a;
  const S zero = from_real<S>(R(0));
  const int row = C == 1 ? lane : lane % NMAX;

  Rows m;
  m.start(row, mask, C == 1 ? 0 : lane / NMAX);

  // Pass 1: finiteness and the scaling exponent (coalesced: lanes read down a column).
  bool bad = false;
  R amax = 0;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int col = m.seat_of(j);
    const S x = row < n && col < n ? a[row + index_t(col) * args.lda] : zero;
    bad |= !finite(x);
    amax = fmax(amax, max_component(x));
  }
  if (__any_sync(mask, bad)) return write_invalid(args, b, lane, kLanes);
  for (int offset = kLanes / 2; offset > 0; offset /= 2) amax = fmax(amax, __shfl_xor_sync(mask, amax, offset, kLanes));
  const int exponent = amax > R(0) ? -ilogb(amax) : 0;

  // Pass 2: the scaled lower triangle mirrored into row `row`; Hermitian defect and norm.
  R defect2 = 0, norm2 = 0;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int col = m.seat_of(j);
    const bool inside = row < n && col < n;
    const S x = inside ? scale2(a[row + index_t(col) * args.lda], exponent) : zero;
    const S xt = inside ? scale2(a[col + index_t(row) * args.lda], exponent) : zero;
    defect2 += abs2(x - conj(xt));
    norm2 += abs2(x);
    m.a[j] = col < row ? x : m.is_me(j) ? from_real<S>(re(x)) : conj(xt);
  }
  defect2 = registers::group_sum<kLanes>(mask, defect2);
  norm2 = registers::group_sum<kLanes>(mask, norm2);
  if (!(sqrt(defect2) <= args.symmetry_tol * sqrt(norm2))) return write_invalid(args, b, lane, kLanes);

  // V: identity, or the warm start (padded with the identity); then B = V0^H A V0 in row `row`.
  const S* v0 = MAY_WARM && args.warm_start ? args.warm_start + b * args.stride_w : nullptr;
  // The products hold no more in registers than the sweeps do (a row of A and one of V): loops over
  // a register row are unrolled, and results build up in a row that is free. The other loops are
  // unrolled only at NMAX <= 8 (kUnrollProducts), where that made warm batches of 1024 2-3.5% faster
  // in real types (float 8 3.89-4.01x -> 4.08-4.11x cuSOLVER back to back; H100,
  // bench/results/2026-11-26-h100-register-products-unrolled.md).
  constexpr int kUnrollProducts = NMAX <= 8 ? NMAX : 1;
  if (v0) {
    // V0's row into V's registers, every load in flight at once (the lanes read down each column),
    // and into shared memory, where the products read it.
    S* p = warm_buffer;               // A V0, then B, by rows
    S* q = warm_buffer + NMAX * kLd;  // V0, by rows
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const int col = m.seat_of(j);
      m.v[j] = row < n && col < n ? v0[row + index_t(col) * args.ldw] : from_real<S>(R(m.is_me(j) ? 1 : 0));
    }
#pragma unroll
    for (int j = 0; j < K; ++j) q[row * kLd + m.seat_of(j)] = m.v[j];
    if constexpr (kRegisterTensorProducts<S, NMAX, C>) {
#pragma unroll
      for (int j = 0; j < K; ++j) p[row * kLd + j] = m.a[j];
      tensor::product_32<false, tensor::Precision::split, kLd>(lane, p, q, p);  // P = A V0
      tensor::product_32<true, tensor::Precision::split, kLd>(lane, q, p, p);   // B = V0^H P
      // Rows taken back from shared memory, so that none is held in registers across the products.
#pragma unroll
      for (int j = 0; j < K; ++j) m.a[j] = p[row * kLd + j], m.v[j] = q[row * kLd + j];
    } else {
      if constexpr (C == 1) {
        __syncwarp(mask);
#pragma unroll kUnrollProducts
        for (int j = 0; j < NMAX; ++j) {  // P = A V0, row `row`, in two sums (half the dependent chain)
          S even = zero, odd = zero;
#pragma unroll
          for (int k = 0; k < NMAX; k += 2) {
            even += m.a[k] * q[k * kLd + j];
            odd += m.a[k + 1] * q[(k + 1) * kLd + j];
          }
          p[row * kLd + j] = even + odd;
        }
      } else {  // the row of A is spread over the groups: through shared memory first
#pragma unroll
        for (int j = 0; j < K; ++j) p[row * kLd + m.seat_of(j)] = m.a[j];
        __syncwarp(mask);
#pragma unroll
        for (int j = 0; j < K; ++j) {  // P = A V0, the group's part of row `row`, in two sums
          S even = zero, odd = zero;
#pragma unroll
          for (int k = 0; k < NMAX; k += 2) {
            even += p[row * kLd + k] * q[k * kLd + m.seat_of(j)];
            odd += p[row * kLd + k + 1] * q[(k + 1) * kLd + m.seat_of(j)];
          }
          m.a[j] = even + odd;
        }
        __syncwarp(mask);
#pragma unroll
        for (int j = 0; j < K; ++j) p[row * kLd + m.seat_of(j)] = m.a[j];
      }
      __syncwarp(mask);
#pragma unroll
      for (int j = 0; j < K; ++j) m.a[j] = zero;
#pragma unroll kUnrollProducts
      for (int k = 0; k < NMAX; ++k) {  // B = V0^H P, row `row`, in A's registers
        const S x = q[k * kLd + row];
        accumulate_row<C == 1>(m.a, &p[k * kLd + m.seat_of(0)], [&](S acc, S y) { return acc + conj_mul(x, y); });
      }
      __syncwarp(mask);
#pragma unroll
      for (int j = 0; j < K; ++j) p[row * kLd + m.seat_of(j)] = m.a[j];
      __syncwarp(mask);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) {  // exactly Hermitian: the lower triangle mirrored
      const int col = m.seat_of(j);
      m.a[j] = col < row ? m.a[j] : m.is_me(j) ? from_real<S>(re(m.a[j])) : conj(p[col * kLd + row]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < K; ++j) m.v[j] = from_real<S>(R(m.is_me(j) ? 1 : 0));
  }
  m.take_diagonal();

  const R norm = sqrt(norm2);
  const R target = args.tol * norm;
  const R negligible2 = negligible_square(target, n);
  int sweeps = 0;
  R off = 0;
  // The rotation buffer of the next step. It alternates across sweep boundaries too: a sweep has an
  // odd number of steps, and nothing between two sweeps orders one's reads before the next's writes.
  unsigned buffer = 0;
  // off(A), with G folded into the rows first; `own`: the row's seat, one-hot (Registers::off_norm2_of_row).
  auto off_norm = [&](unsigned own) {
    m.unscale(scratch.w);
    return sqrt(registers::group_sum<kLanes>(mask, m.off_norm2_of_row(own)));
  };
  bool tested = false;  // off holds off(A), from a test within the sweep
  bool finished = false;  // by the first-order step, whose V then takes the Newton-Schulz step
  for (;;) {
    if (!tested) off = off_norm(m.me_bit);
    if (off <= target || sweeps == args.max_sweeps) break;
    // Only where it may finish: ||E||_F >= off(B) / (d_max - d_min) >= off(B) / (2 ||A||_F), so it
    // needs off(B)^2 <= target ||A||_F.
    if constexpr (FIRST_ORDER_FINISH)
      if (v0 && !tested && off * off <= target * norm &&
          (finished = finish_first_order<S, NMAX, C>(m, row, mask, off, target, negligible2, scratch.w, warm_buffer)))
        break;
    ++sweeps;
    const auto& schedule = registers::kSchedule<NMAX>.entry;
    if (v0) {  // warm starts: the row phase first (registers::StepOrder); a cold solve is the same everywhere
      const bool test_steps = kRegisterLastSweepTests<S, NMAX> && off <= R(kLastSweepsOff) * target;
      for (int step = 0; step < NMAX - 1; ++step, buffer ^= 1u) {
        m.template step<registers::StepOrder::rows_first>(scratch.rot[buffer], factors_of(scratch, buffer),
                                                          schedule[step + 1 < NMAX - 1 ? step + 1 : 0][row], negligible2);
        if (test_steps && step % 2 == 1 && (off = off_norm(m.seat_bit())) <= target) {  // the loop's test stops the solve
          tested = true;
          break;
        }
      }
    } else
      for (int step = 0; step < NMAX - 1; ++step, buffer ^= 1u)
        m.template step<registers::StepOrder::columns_first>(scratch.rot[buffer], factors_of(scratch, buffer),
                                                             schedule[step + 1 < NMAX - 1 ? step + 1 : 0][row],
                                                             negligible2);
  }

  // The eigenvalue of the row, taken before A's registers are freed for the Newton-Schulz step.
  const R mine = scalbn(m.d, -exponent);
  if (v0 && (args.reorthonormalise || finished)) {  // one Newton-Schulz step, as solve_in_shared: V <- V (3I - V^H V) / 2, in A's registers
    S* p = warm_buffer;
    S* q = warm_buffer + NMAX * kLd;
    // The mirror above read other lanes' rows of p; with no sweep between (a warm start already
    // converged) nothing else has ordered those reads before these writes.
    __syncwarp(mask);
    if constexpr (kRegisterTensorProducts<S, NMAX, C>) {  // V <- V - V E / 2, E = V^H V - I
#pragma unroll
      for (int j = 0; j < K; ++j) p[row * kLd + j] = m.v[j];
      tensor::product_32<true, tensor::Precision::split, kLd>(lane, p, p, q);  // V^H V
      q[row * kLd + row].re -= R(1);
      // E is about n eps: one TF32 product gives V E to far below eps.
      tensor::product_32<false, tensor::Precision::single, kLd>(lane, p, q, q);
#pragma unroll
      for (int j = 0; j < K; ++j) m.v[j] = p[row * kLd + j] - R(0.5) * q[row * kLd + j];
      __syncwarp(mask);
    } else {
#pragma unroll
      for (int j = 0; j < K; ++j) p[row * kLd + m.seat_of(j)] = m.v[j], m.a[j] = zero;
      __syncwarp(mask);
#pragma unroll kUnrollProducts
      for (int k = 0; k < NMAX; ++k) {  // row `row` of V^H V
        const S x = p[k * kLd + row];
        accumulate_row<C == 1>(m.a, &p[k * kLd + m.seat_of(0)], [&](S acc, S y) { return acc + conj_mul(x, y); });
      }
      // V^H V by rows: over V in p where the row of V is in registers, beside it in q where the
      // row is spread over the groups.
      S* const product = C == 1 ? p : q;
      __syncwarp(mask);
#pragma unroll
      for (int j = 0; j < K; ++j) product[row * kLd + m.seat_of(j)] = m.a[j], m.a[j] = zero;
      __syncwarp(mask);
#pragma unroll
      for (int k = 0; k < NMAX; ++k) {
        const S v_k = C == 1 ? m.v[k % K] : p[row * kLd + k];
        accumulate_row<C == 1>(m.a, &product[k * kLd + m.seat_of(0)], [&](S acc, S y) { return acc + v_k * y; });
      }
#pragma unroll
      for (int j = 0; j < K; ++j) m.v[j] = R(1.5) * m.v[j] - R(0.5) * m.a[j];
      __syncwarp(mask);
    }
  } else {
    m.normalise_v();
  }

  // Eigenvalues by seat (column j of V is the eigenvector of the row now in seat j), their places in
  // the requested order (padding excluded), and the output; with column groups, the first group
  // writes what every group holds alike.
  R* w = scratch.w;
  int* player = scratch.player;  // the index sitting in each seat
  int* rank = scratch.rank;
  const bool first_group = C == 1 || m.group == 0;
  if (first_group) {
    w[m.seat] = mine;
    player[m.seat] = row;
  }
  __syncwarp(mask);
  int r = row;
  if (args.sort != Sort::none) {
    r = 0;
    // Without branches below NMAX = 32 (unrolled, bitwise on the comparisons): with a `continue` for
    // padding and short-circuit operators, each seat took two branches and their reconvergence, 5% of
    // warm float 16's stall samples. Warm batches of 1024 ran 5% faster back to back at float 16
    // (40.9 -> 42.9 million matrices a second) and complex float 16 (29.3 -> 30.7). At NMAX = 32 the
    // bitwise form, unrolled or not, moved the kernels' register allocation (warm float 32: 233
    // registers to 168 and 16 bytes of spills) and cost warm float 32 1.5%, so the loop there keeps
    // its branches (H100, bench/results/2026-12-07-h100-sort-without-branches.md). So does the solve
    // that may warm-start at real double 16: the bitwise form moved its kernel to 36 bytes of spills,
    // and warm batches ran 3% slower (23.7 -> 23.0 million matrices a second), while cold double 16
    // ran 3% faster and warm double 4 and 8 and complex double 4-16 1-7% (H100,
    // bench/results/2026-12-07-h100-sort-double.md).
    if constexpr (NMAX < 32 && !(MAY_WARM && NMAX == 16 && std::is_same_v<S, double>)) {
      const bool descending = args.sort == Sort::descending;
#pragma unroll
      for (int s = 0; s < NMAX; ++s) {
        const R w_s = w[s];
        const int player_s = player[s];
        const bool before = descending ? w_s > mine : w_s < mine;
        r += int(player_s < n) & (int(before) | (int(w_s == mine) & int(player_s < row)));
      }
    } else {
      for (int s = 0; s < NMAX; ++s) {
        if (player[s] >= n) continue;
        const bool before = args.sort == Sort::descending ? w[s] > mine : w[s] < mine;
        r += before || (w[s] == mine && player[s] < row);
      }
    }
  }
  if (first_group) {
    rank[m.seat] = r;
    if (row < n) args.values[b * args.stride_values + r] = mine;
  }
  __syncwarp(mask);
  if (args.vectors && row < n) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const int s = m.seat_of(j);
      if (player[s] < n) args.vectors[b * args.stride_v + row + index_t(rank[s]) * args.ldv] = m.v[j];
    }
  }
  const SolveInfo info{sweeps, norm > R(0) ? double(off / norm) : 0.0, off <= target, false};
  if (lane == 0) args.info[b] = info;
  return info;
}

}  // namespace eigstream::kernels::evd
