// Two-sided Jacobi EVD of one small Hermitian matrix (n <= 64) by a group of GPU threads: the
// per-matrix solves that the batched kernels (jacobi_evd_batched.cu) and the persistent solver
// (jacobi_evd_persistent.cu) run. Two thread mappings here (and the pairs solve of
// jacobi_evd_pairs.cuh for the batched kernel's 32 < n <= 64):
//  - solve_in_registers (n <= NMAX <= 32): lanes own rows, see jacobi_evd_registers.cuh;
//  - solve_in_shared (n <= NMAX <= 32): a block, A and V in shared memory, described here: complex
//    double at 16 < n <= 32 (whose rows do not fit in registers), the batched kernel's warm starts
//    of complex float at n > 8 and float at n > 16, and the persistent solver's block per item (its
//    latency shape).
//
// Algorithm (seed 001): parallel round-robin ordering (eq. 7), n/2 disjoint rotations per step.
// Per-matrix convergence test off(A) <= tol * ||A||_F at the start of every sweep, and early exit.
// Rotations below tol * ||A||_F / n are skipped. Warm start: B = V0^H A V0 formed on chip, sweeps on
// B, V = V0 J, then one Newton-Schulz step V <- V (3I - V^H V) / 2, which takes V^H V - I = E to
// O(E^2): V0 J is only as orthonormal as V0, so without it a chain of warm starts (each V the next
// V0) drifts from orthonormality by about n * eps per link. A cold V = J needs only unit columns.
//
// solve_in_shared's step: both sides at once, in 2 x 2 blocks. With m players (n, or n + 1 and a
// zero dummy row and column for odd n) and P = m / 2 pairs, work item (k, l) of the P^2 takes:
//  - rows l, l + P, ... of V's columns of pair k: V <- V J_k;
//  - for k < l, the block of A in pair k's rows and pair l's columns, J_k^H B J_l, and its mirror
//    (l, k) as the conjugate transpose; for k == l, pair k's diagonal block, whose new diagonal the
//    rotation gives and whose off-diagonal entries become zero.
// A thread per item: (NMAX / 2)^2 threads, at least a warp and at most 256. A is double-buffered: a
// step reads one buffer and writes every entry of the other, so no item waits for another within a
// step, and a step takes one barrier. Every item computes the one or two rotations it needs, from
// the same entries with operations rounded as written (pair_rotation, jacobi_rotation.cuh), so they
// agree bit for bit.
//
// Memory: A, its second buffer and V in shared memory, column-major with leading dimension m + 1
// (odd, against bank conflicts along rows); with a warm start the second buffer first holds A V0.
// The input is read twice from device memory (scale, then load), the outputs written once.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <type_traits>

#include "device_scalar.cuh"
#include "eigstream/detail/round_robin.hpp"
#include "eigstream/options.hpp"
#include "input_scaling.cuh"
#include "jacobi_evd_registers.cuh"
#include "jacobi_rotation.cuh"
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
};

constexpr std::size_t align16(std::size_t x) { return (x + 15) / 16 * 16; }

// The threads of solve_in_shared: one per work item (see the file comment), at least a warp.
constexpr int shared_threads(int nmax) { return nmax * nmax / 4 < 32 ? 32 : nmax * nmax / 4; }

// solve_in_shared's shared memory: three NMAX x (NMAX + 1) matrices (A, its second buffer, V), and
// small buffers: the eigenvalues, their order, and the group's reduction scratch.
template <class S, int NMAX>
struct GroupLayout {
  static constexpr std::size_t matrix = align16(sizeof(S) * NMAX * (NMAX + 1));
  static constexpr std::size_t values = align16(sizeof(real_of<S>) * NMAX);
  static constexpr std::size_t order = align16(sizeof(int) * NMAX);
  static constexpr std::size_t scratch = align16(sizeof(double) * 32);
  static constexpr std::size_t bytes = 3 * matrix + values + order + scratch;
};

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

// Solves matrix b of `args` (n <= NMAX) on the shared_threads(NMAX) threads of a block (lane =
// threadIdx.x), with `smem` holding GroupLayout<S, NMAX>::bytes.
template <class S, int NMAX>
__device__ SolveInfo solve_in_shared(const Args<S>& args, index_t b, char* smem, int lane) {
  static_assert(NMAX <= 32, "n > 32: solve_in_pairs");
  using R = real_of<S>;
  using Layout = GroupLayout<S, NMAX>;
  constexpr int THREADS = shared_threads(NMAX);
  const bool warm = args.warm_start != nullptr;
  const bool want_v = warm || args.vectors != nullptr;
  char* p = smem;
  S* A = reinterpret_cast<S*>(p);
  S* N = reinterpret_cast<S*>(p += Layout::matrix);  // A's second buffer; A V0 before the sweeps
  S* V = reinterpret_cast<S*>(p += Layout::matrix);
  R* w = reinterpret_cast<R*>(p += Layout::matrix);
  int* rank = reinterpret_cast<int*>(p += Layout::values);
  double* scratch = reinterpret_cast<double*>(p += Layout::order);
  const ThreadGroup<THREADS> g{lane, scratch};
  const int n = args.n;
  const int m = detail::round_robin_players(n);
  const int half = m / 2;
  const int ld = m + 1;
  const S zero = from_real<S>(R(0));
  const S* a = args.a + b * args.stride_a;

  int exponent = 0;
  if (!scan_input(a, n, n, args.lda, g, lane, exponent)) return write_invalid(args, b, lane, THREADS);

  // Pass 2: the scaled lower triangle into A in full Hermitian storage; Hermitian defect and norm.
  // The dummy row and column of odd n are zero (in V too: V's dummy column is never rotated).
  R defect2 = 0, norm2 = 0;
  for (int idx = lane; idx < m * m; idx += THREADS) {
    const int i = idx % m, j = idx / m;
    if (i == n || j == n) {
      A[i + j * ld] = zero;
      V[i + j * ld] = zero;
      continue;
    }
    const S x = scale2(a[i + index_t(j) * args.lda], exponent);
    const S xt = scale2(a[j + index_t(i) * args.lda], exponent);
    defect2 += abs2(x - conj(xt));
    norm2 += abs2(x);
    A[i + j * ld] = i > j ? x : i == j ? from_real<S>(re(x)) : conj(xt);
  }
  defect2 = g.sum(defect2);
  norm2 = g.sum(norm2);
  if (!(sqrt(defect2) <= args.symmetry_tol * sqrt(norm2))) return write_invalid(args, b, lane, THREADS);

  if (warm) {
    const S* v0 = args.warm_start + b * args.stride_w;
    for (int idx = lane; idx < n * n; idx += THREADS) {
      const int i = idx % n, j = idx / n;
      V[i + j * ld] = v0[i + index_t(j) * args.ldw];
    }
    g.sync();
    for (int idx = lane; idx < n * n; idx += THREADS) {  // N = A V0
      const int i = idx % n, j = idx / n;
      S sum = zero;
      for (int k = 0; k < n; ++k) sum += A[i + k * ld] * V[k + j * ld];
      N[i + j * ld] = sum;
    }
    g.sync();
    for (int idx = lane; idx < n * n; idx += THREADS) {  // A = V0^H N, lower triangle mirrored
      const int i = idx % n, j = idx / n;
      if (i < j) continue;
      S sum = zero;
      for (int k = 0; k < n; ++k) sum += conj_mul(V[k + i * ld], N[k + j * ld]);
      A[i + j * ld] = i == j ? from_real<S>(re(sum)) : sum;
      if (i != j) A[j + i * ld] = conj(sum);
    }
  } else if (want_v) {
    for (int idx = lane; idx < n * n; idx += THREADS) {
      const int i = idx % n, j = idx / n;
      V[i + j * ld] = from_real<S>(R(i == j ? 1 : 0));
    }
  }
  g.sync();

  const R norm = sqrt(norm2);
  const R target = args.tol * norm;
  const R negligible2 = negligible_square(target, n);
  S* cur = A;  // the step's A; it writes `next`
  S* next = N;
  const bool has_item = lane < half * half;  // work item (k, l)
  const int k = lane / half, l = lane % half;
  int sweeps = 0;
  R off = 0;
  for (;;) {
    R off2 = 0;
    for (int idx = lane; idx < n * n; idx += THREADS) {
      const int i = idx % n, j = idx / n;
      if (i != j) off2 += abs2(cur[i + j * ld]);
    }
    off = sqrt(g.sum(off2));
    if (off <= target || sweeps == args.max_sweeps) break;
    ++sweeps;
    for (int step = 0; step < m - 1; ++step) {
      if (has_item) {
        const detail::Pair pk = detail::round_robin_pair(k, step, m);
        const int x = pk.p, y = pk.q;
        const Rot<S> rk = pair_rotation(cur, ld, x, y, negligible2);
        if (want_v && rk.active)
          for (int i = l; i < m; i += half) {
            S u = load_vec(&V[i + x * ld]), v = load_vec(&V[i + y * ld]);
            rotate_columns(u, v, rk.c, rk.s_e);
            store_vec(&V[i + x * ld], u);
            store_vec(&V[i + y * ld], v);
          }
        if (k == l) {  // the diagonal block
          const R app = re(cur[x + x * ld]), aqq = re(cur[y + y * ld]);
          store_vec(&next[x + x * ld], from_real<S>(rk.active ? app - rk.shift : app));
          store_vec(&next[y + y * ld], from_real<S>(rk.active ? aqq + rk.shift : aqq));
          store_vec(&next[x + y * ld], rk.active ? zero : load_vec(&cur[x + y * ld]));
          store_vec(&next[y + x * ld], rk.active ? zero : load_vec(&cur[y + x * ld]));
        } else if (k < l) {  // the block (k, l) and its mirror
          const detail::Pair pl = detail::round_robin_pair(l, step, m);
          const int xl = pl.p, yl = pl.q;
          const Rot<S> rl = pair_rotation(cur, ld, xl, yl, negligible2);
          S b_xx = load_vec(&cur[x + xl * ld]), b_xy = load_vec(&cur[x + yl * ld]);
          S b_yx = load_vec(&cur[y + xl * ld]), b_yy = load_vec(&cur[y + yl * ld]);
          if (rl.active) {  // B J_l: rows x and y as column pairs
            rotate_columns(b_xx, b_xy, rl.c, rl.s_e);
            rotate_columns(b_yx, b_yy, rl.c, rl.s_e);
          }
          if (rk.active) {  // J_k^H B: columns xl and yl as row pairs
            rotate_columns(b_xx, b_yx, rk.c, conj(rk.s_e));
            rotate_columns(b_xy, b_yy, rk.c, conj(rk.s_e));
          }
          store_vec(&next[x + xl * ld], b_xx), store_vec(&next[x + yl * ld], b_xy);
          store_vec(&next[y + xl * ld], b_yx), store_vec(&next[y + yl * ld], b_yy);
          store_vec(&next[xl + x * ld], conj(b_xx)), store_vec(&next[yl + x * ld], conj(b_xy));
          store_vec(&next[xl + y * ld], conj(b_yx)), store_vec(&next[yl + y * ld], conj(b_yy));
        }
      }
      S* const done = cur;
      cur = next;
      next = done;
      g.sync();
    }
  }

  // Eigenvalues, unscaled; both A buffers are free from here on.
  for (int i = lane; i < n; i += THREADS) w[i] = scalbn(re(cur[i + i * ld]), -exponent);
  g.sync();
  S* v_out = V;
  if (warm) {  // V0 J is only as orthonormal as V0: one Newton-Schulz step (file comment)
    for (int idx = lane; idx < n * n; idx += THREADS) {  // next = V^H V
      const int i = idx % n, j = idx / n;
      S sum = zero;
      for (int k = 0; k < n; ++k) sum += conj_mul(V[k + i * ld], V[k + j * ld]);
      next[i + j * ld] = sum;
    }
    g.sync();
    for (int idx = lane; idx < n * n; idx += THREADS) {  // V (3I - next) / 2, into cur
      const int i = idx % n, j = idx / n;
      S sum = zero;
      for (int k = 0; k < n; ++k) sum += V[i + k * ld] * next[k + j * ld];
      cur[i + j * ld] = R(1.5) * V[i + j * ld] - R(0.5) * sum;
    }
    v_out = cur;
  } else if (want_v) {
    normalise_columns(V, ld, n, reinterpret_cast<R*>(cur), g, lane);
  }
  g.sync();
  return write_results(args, b, w, v_out, ld, rank, sweeps, off, norm, target, g, lane);
}

// Whether a row of A and of V fits in registers: 32 complex doubles each would spill.
template <class S, int NMAX>
inline constexpr bool kRegistersFit = sizeof(S) * NMAX <= 256;

// The shared memory of one matrix's register solve: the rotations of a step and the sort.
template <class S, int NMAX>
struct RegisterScratch {
  registers::PairRotation<S> rot[NMAX / 2];
  real_of<S> w[NMAX];
  int player[NMAX];
  int rank[NMAX];
};

// Solves matrix b of `args` on the NMAX lanes of `mask` (lane = 0 .. NMAX-1 within them), rows in
// registers (jacobi_evd_registers.cuh). `warm_buffer` holds NMAX * (NMAX + 1) scalars when there is a
// warm start (unused otherwise). With MAY_WARM false, args.warm_start is ignored and the warm-start
// code is left out, which spares registers where every row is held in them.
template <class S, int NMAX, bool MAY_WARM = true>
__device__ __forceinline__ SolveInfo solve_in_registers(const Args<S>& args, index_t b, int lane, unsigned mask,
                                   RegisterScratch<S, NMAX>& scratch, S* warm_buffer) {
  using R = real_of<S>;
  constexpr int kLd = NMAX + 1;
  const int n = args.n;
  const S* a = args.a + b * args.stride_a;
  const S zero = from_real<S>(R(0));

  registers::Registers<S, NMAX> m;
  m.lane = lane;
  m.t = 0;
  m.set_seat(lane);
  m.mask = mask;

  // Pass 1: finiteness and the scaling exponent (coalesced: lanes read down a column).
  bool bad = false;
  R amax = 0;
#pragma unroll
  for (int j = 0; j < NMAX; ++j) {
    const S x = lane < n && j < n ? a[lane + index_t(j) * args.lda] : zero;
    bad |= !finite(x);
    amax = fmax(amax, max_component(x));
  }
  if (__any_sync(mask, bad)) return write_invalid(args, b, lane, NMAX);
  for (int offset = NMAX / 2; offset > 0; offset /= 2) amax = fmax(amax, __shfl_xor_sync(mask, amax, offset, NMAX));
  const int exponent = amax > R(0) ? -ilogb(amax) : 0;

  // Pass 2: the scaled lower triangle mirrored into row `lane`; Hermitian defect and norm.
  R defect2 = 0, norm2 = 0;
#pragma unroll
  for (int j = 0; j < NMAX; ++j) {
    const bool inside = lane < n && j < n;
    const S x = inside ? scale2(a[lane + index_t(j) * args.lda], exponent) : zero;
    const S xt = inside ? scale2(a[j + index_t(lane) * args.lda], exponent) : zero;
    defect2 += abs2(x - conj(xt));
    norm2 += abs2(x);
    m.a[j] = j < lane ? x : m.is_me(j) ? from_real<S>(re(x)) : conj(xt);
  }
  defect2 = registers::group_sum<NMAX>(mask, defect2);
  norm2 = registers::group_sum<NMAX>(mask, norm2);
  if (!(sqrt(defect2) <= args.symmetry_tol * sqrt(norm2))) return write_invalid(args, b, lane, NMAX);

  // V: identity, or the warm start (padded with the identity); then B = V0^H A V0 in row `lane`.
  const S* v0 = MAY_WARM && args.warm_start ? args.warm_start + b * args.stride_w : nullptr;
  auto v0_at = [=](int i, int j) {
    return i < n && j < n ? v0[i + index_t(j) * args.ldw] : from_real<S>(R(i == j ? 1 : 0));
  };
#pragma unroll
  for (int j = 0; j < NMAX; ++j) m.v[j] = v0 ? v0_at(lane, j) : from_real<S>(R(m.is_me(j) ? 1 : 0));
  if (v0) {
    S* p = warm_buffer;
#pragma unroll
    for (int j = 0; j < NMAX; ++j) {  // P = A V0, row `lane`
      S sum = zero;
#pragma unroll
      for (int k = 0; k < NMAX; ++k) sum += m.a[k] * v0_at(k, j);
      p[lane * kLd + j] = sum;
    }
    __syncwarp(mask);
    S row[NMAX];
#pragma unroll
    for (int j = 0; j < NMAX; ++j) {  // B = V0^H P, row `lane`
      S sum = zero;
      for (int k = 0; k < NMAX; ++k) sum += conj_mul(v0_at(k, lane), p[k * kLd + j]);
      row[j] = sum;
    }
    __syncwarp(mask);
#pragma unroll
    for (int j = 0; j < NMAX; ++j) p[lane * kLd + j] = row[j];
    __syncwarp(mask);
#pragma unroll
    for (int j = 0; j < NMAX; ++j)  // exactly Hermitian: the lower triangle mirrored
      m.a[j] = j < lane ? row[j] : m.is_me(j) ? from_real<S>(re(row[j])) : conj(p[j * kLd + lane]);
  }

  const R norm = sqrt(norm2);
  const R target = args.tol * norm;
  const R negligible = target / R(n);
  registers::PairRotation<S>* rot = scratch.rot;
  int sweeps = 0;
  R off = 0;
  for (;;) {
    off = sqrt(registers::group_sum<NMAX>(mask, m.off_norm2_of_row()));
    if (off <= target || sweeps == args.max_sweeps) break;
    ++sweeps;
    for (int step = 0; step < NMAX - 1; ++step) m.step(rot, negligible);
  }

  if (v0) {  // one Newton-Schulz step, as solve_in_shared: V <- V (3I - V^H V) / 2
    S* p = warm_buffer;
#pragma unroll
    for (int j = 0; j < NMAX; ++j) p[lane * kLd + j] = m.v[j];
    __syncwarp(mask);
    S row[NMAX];
#pragma unroll
    for (int j = 0; j < NMAX; ++j) {  // row `lane` of V^H V
      S sum = zero;
      for (int k = 0; k < NMAX; ++k) sum += conj_mul(p[k * kLd + lane], p[k * kLd + j]);
      row[j] = sum;
    }
    __syncwarp(mask);
#pragma unroll
    for (int j = 0; j < NMAX; ++j) p[lane * kLd + j] = row[j];
    __syncwarp(mask);
#pragma unroll
    for (int j = 0; j < NMAX; ++j) {
      S sum = zero;
#pragma unroll
      for (int k = 0; k < NMAX; ++k) sum += m.v[k] * p[k * kLd + j];
      row[j] = R(1.5) * m.v[j] - R(0.5) * sum;
    }
#pragma unroll
    for (int j = 0; j < NMAX; ++j) m.v[j] = row[j];
    __syncwarp(mask);
  } else {
    m.normalise_v();
  }

  // Eigenvalues by seat (column j of V is the eigenvector of the row now in seat j), their places in
  // the requested order (padding excluded), and the output.
  R* w = scratch.w;
  int* player = scratch.player;  // the index sitting in each seat
  int* rank = scratch.rank;
  const R mine = scalbn(re(m.diagonal()), -exponent);
  w[m.seat] = mine;
  player[m.seat] = lane;
  __syncwarp(mask);
  int r = lane;
  if (args.sort != Sort::none) {
    r = 0;
    for (int s = 0; s < NMAX; ++s) {
      if (player[s] >= n) continue;
      const bool before = args.sort == Sort::descending ? w[s] > mine : w[s] < mine;
      r += before || (w[s] == mine && player[s] < lane);
    }
  }
  rank[m.seat] = r;
  if (lane < n) args.values[b * args.stride_values + r] = mine;
  __syncwarp(mask);
  if (args.vectors && lane < n) {
#pragma unroll
    for (int j = 0; j < NMAX; ++j)
      if (player[j] < n) args.vectors[b * args.stride_v + lane + index_t(rank[j]) * args.ldv] = m.v[j];
  }
  const SolveInfo info{sweeps, norm > R(0) ? double(off / norm) : 0.0, off <= target, false};
  if (lane == 0) args.info[b] = info;
  return info;
}

}  // namespace eigstream::kernels::evd
