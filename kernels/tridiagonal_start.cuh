// The tridiagonal start (tridiagonal_start.hpp), the code of one matrix: a group of threads reduces
// A to a real symmetric tridiagonal T = Q^H A Q by Householder reflections (the reduction of LAPACK's
// xHETD2 with the lower triangle, its reflectors chosen so that T's off-diagonal is real), forms Q
// from them in place (as LAPACK's xUNGTR), and diagonalises T by implicit QL iterations with
// Wilkinson's shift (as EISPACK's tql2), rotating Q's columns alike, so that V0 = Q Z with Z^T T Z
// diagonal. A cold Jacobi solve spends most of its sweeps reaching what this gives in a few n^3
// operations and a chain of about n^2 / 2 rotations; the Jacobi sweeps from V0 then bring the result
// to the Jacobi solve's accuracy.
//
// A is scaled by a power of two that brings its largest component (real or imaginary part) to [1, 2).
//
// Thread mapping and memory: A, then Q in its place, is NMAX x (NMAX + 1), column-major in shared
// memory, so that threads reading down a column (or across a row) hit distinct banks. In the
// reduction thread t owns row t, and A's column k keeps reflector k's vector below the diagonal once
// the reduction has passed it; while forming Q thread t owns column t. (One matrix's worth of shared
// memory, not two, fits twice the blocks an SM in the batched kernel, whose time the QL chain's
// latency, not issue, sets: cold batches ran 1.25x faster at float 64 and 1.32x at complex float 64,
// H200.) The QL iterations are a chain of scalars: lane 0 of warp 0 follows it, with T's d and e in
// shared memory, and logs each iteration's rotations. The lanes of warp 1 apply the logged rotations
// to Q's rows (two a lane at NMAX = 64) while the chain goes on, two logs in turn, each handed over at
// a barrier of the two warps. The group is a block of its own in the batched kernel, and one of two
// in a block of the persistent solver (solve_pairs_claim in jacobi_evd_persistent.cu).
#pragma once

#include <cuda_runtime.h>

#include <limits>

#include "device_scalar.cuh"
#include "dynamic_shared_memory.cuh"
#include "eigstream/views.hpp"
#include "input_scaling.cuh"
#include "jacobi_rotation.cuh"
#include "thread_group.cuh"

namespace eigstream::kernels::tridiagonal {

template <class R>
struct Rotation {
  R c, s;  // [c s; -s c] on columns (i, i + 1)
};

template <class S, int NMAX>
struct Layout {
  using R = real_of<S>;
  static constexpr int kLd = NMAX + 1;
  static constexpr std::size_t matrix = align16(sizeof(S) * NMAX * kLd);
  static constexpr std::size_t vector = align16(sizeof(S) * NMAX);
  static constexpr std::size_t reals = align16(sizeof(R) * NMAX);
  static constexpr std::size_t log = align16(sizeof(Rotation<R>) * NMAX);
  // the logs' extents and the outcome (5 ints, padded to 6 for the doubles); ThreadGroup's scratch
  // (sum2 of the group's two warps: 4 doubles)
  static constexpr std::size_t small = align16(6 * sizeof(int) + 4 * sizeof(double));
  // A (then Q); the reduction's x and the reflectors' tau; T's d and e; two logs; small
  static constexpr std::size_t bytes = matrix + 2 * vector + 2 * reals + 2 * log + small;
};

// The rotation [c s; -s c] taking (g, f) to (r, 0), r = hypot(f, g): c = g / r, s = f / r. Returns
// false, c and s untouched, for f = g = 0. The QL chain runs through here: where h = f^2 + g^2 is safely
// within range, r = h / sqrt(h) from the hardware's reciprocal square root and Newton steps
// (rn::rsqrt, which skips the library's care for denormals and, in double, its subroutine), and the
// only branch waits on h; hypot otherwise.
template <class R>
__device__ __forceinline__ bool givens(R f, R g, R& c, R& s, R& r) {
  const R h = f * f + g * g;
  if (h >= std::numeric_limits<R>::min() && h <= std::numeric_limits<R>::max() / R(4)) {
    const R inv = rn::rsqrt(h);
    c = g * inv, s = f * inv, r = h * inv;
    return true;
  }
  r = hypot(f, g);
  if (r == R(0)) return false;
  const R inv = R(1) / r;
  c = g * inv, s = f * inv;
  return true;
}

// The threads of the group that starts one matrix: two warps.
constexpr int kThreads = 64;

// The named barrier of warps 0 and 1 at which the chain hands a log over: barrier.sync, not bar.sync
// (its .aligned form), as the two warps reach it from different code.
__device__ __forceinline__ void handover(int id) {
  asm volatile("barrier.sync %0, %1;" ::"r"(id), "n"(kThreads) : "memory");
}

// V0 (n x n, leading dimension ldv) of A (lower triangle read; leading dimension lda), 1 <= n <= NMAX,
// by a group of kThreads threads (tid = 0 .. kThreads - 1), with `smem` holding Layout<S, NMAX>::bytes.
// The group synchronises at `barrier` (0: it is the whole block; else a named barrier of its own, see
// ThreadGroup; at most 14) and its warps hand logs over at barrier + 1. V0 is the identity where A
// has a NaN or infinite entry, is zero, or the QL iterations do not converge. Ends with the group's
// barrier.
template <class S, int NMAX>
__device__ void start(const S* a, index_t lda, int n, S* v0, index_t ldv, char* smem, int tid, int barrier) {
  static_assert(NMAX <= kThreads, "a thread a row; a 64-bit ballot of e's entries");
  using R = real_of<S>;
  using L = Layout<S, NMAX>;
  constexpr int kLd = L::kLd;
  constexpr int kSlots = (NMAX + 31) / 32;  // rows of Q a lane rotates; entries of e a lane tests
  constexpr R eps = std::numeric_limits<R>::epsilon();
  char* p = smem;
  S* A = reinterpret_cast<S*>(p);
  S* Q = A;  // once formed
  S* x = reinterpret_cast<S*>(p += L::matrix);
  S* tau = reinterpret_cast<S*>(p += L::vector);
  R* d = reinterpret_cast<R*>(p += L::vector);
  R* e = reinterpret_cast<R*>(p += L::reals);
  Rotation<R>* logs = reinterpret_cast<Rotation<R>*>(p += L::reals);  // log b at logs + b * NMAX
  // log b's first column and rotations (-1: the chain is done) at 2 b and 2 b + 1; whether it converged at 4
  int* extent = reinterpret_cast<int*>(p += 2 * L::log);
  const ThreadGroup<kThreads> g{tid, reinterpret_cast<double*>(extent + 6), barrier};
  const int lane = tid % 32, warp = tid / 32;
  const bool has_row = tid < n;  // thread tid's row in the reduction
  const S zero = from_real<S>(R(0)), one = from_real<S>(R(1));
  auto group_sum = [&](S v) {
    R re_part = re(v), im_part = im(v);
    g.sum2(re_part, im_part);
    if constexpr (std::is_same_v<S, R>) return re_part; else return S{re_part, im_part};
  };

  // The lower triangle, scaled by the power of two that brings A's largest component to [1, 2), into
  // A in full Hermitian storage (the diagonal real). A non-finite entry gives V0 = I, and the solve
  // flags the matrix; A = 0 goes through as it is, and the reduction and QL leave Q = I.
  int exponent;
  bool ok = scan_input(a, n, n, lda, g, tid, exponent);
  if (ok) {
    for (int idx = tid; idx < n * n; idx += kThreads) {
      const int i = idx % n, j = idx / n;
      if (i < j) continue;
      const S v = scale2(a[i + index_t(j) * lda], exponent);
      A[i + j * kLd] = i == j ? from_real<S>(re(v)) : v;
      if (i != j) A[j + i * kLd] = conj(v);
    }
  }
  g.sync();

  if (ok) {
    // The reduction: reflector k, H = I - tau v v^H with v = (1, v_{k+2}, ...) over rows k + 1 ..
    // n - 1, takes A's column k below the diagonal to (beta, 0, ...) with beta real, and A <- H^H A H.
    for (int k = 0; k + 1 < n; ++k) {
      const bool below = has_row && tid >= k + 2;
      const R tail2 = g.sum(below ? abs2(A[tid + k * kLd]) : R(0));
      const S alpha = A[k + 1 + k * kLd];
      const R norm2 = abs2(alpha) + tail2;
      S t = zero;
      R beta = re(alpha);
      if (norm2 < std::numeric_limits<R>::min()) {
        beta = 0;  // the column is negligible beside ||A|| >= 1: drop it
      } else if (tail2 > R(0) || im(alpha) != R(0)) {
        beta = -copysign(sqrt(norm2), re(alpha));
        t = (R(1) / beta) * (from_real<S>(beta) - alpha);
        const S diff = alpha - from_real<S>(beta);
        if (below) A[tid + k * kLd] = A[tid + k * kLd] * ((R(1) / abs2(diff)) * conj(diff));  // / (alpha - beta)
      }
      if (tid == 0) tau[k] = t, d[k] = re(A[k + k * kLd]), e[k] = beta;
      g.sync();
      if (is_zero(t)) continue;

      // w = tau A22 v, then x = w - (tau / 2) (w^H v) v, and A22 <- A22 - v x^H - x v^H.
      auto v_of = [&](int i) { return i == k + 1 ? one : A[i + k * kLd]; };
      const bool mine = has_row && tid > k;
      const S v_mine = mine ? v_of(tid) : zero;
      S w = zero;
      if (mine) {
        w = A[tid + (k + 1) * kLd];
#pragma unroll 4
        for (int j = k + 2; j < n; ++j) w += A[tid + j * kLd] * A[j + k * kLd];
      }
      w = t * w;
      w += (R(-0.5) * t * group_sum(conj_mul(w, v_mine))) * v_mine;
      if (mine) x[tid] = w;
      g.sync();
      if (mine) {
#pragma unroll 4
        for (int j = k + 1; j < n; ++j) {
          S& aij = A[tid + j * kLd];
          aij = aij - (v_mine * conj(x[j]) + w * conj(v_of(j)));
        }
      }
      g.sync();
    }
    if (tid == 0) d[n - 1] = re(A[(n - 1) * (kLd + 1)]);

    // Q = H_0 H_1 ... H_{n-2} in place, from the last reflector back, each thread its own column j:
    // with W = H_{k+1} ... H_{n-2} in columns and rows k + 2 .., H_k W's column j >= k + 2 is
    // W_j - tau v (v^H W_j), and its column k + 1 is H_k e_{k+1} = e_{k+1} - tau v, over reflector
    // k's column, which is read for the last time then. Q's row and column 0 are e_0.
    {
      const int j = tid;
      S* q = Q + j * kLd;
      for (int k = n - 2; k >= 0; --k) {
        const S t = tau[k];
        if (j >= k + 2 && j < n) {
          S dot = zero;  // v^H W_j; W's row k + 1 is zero
#pragma unroll 4
          for (int i = k + 2; i < n; ++i) dot += conj_mul(A[i + k * kLd], q[i]);
          dot = t * dot;
          q[k + 1] = zero - dot;
#pragma unroll 4
          for (int i = k + 2; i < n; ++i) q[i] = q[i] - A[i + k * kLd] * dot;
        }
        g.sync();  // column k + 1, read in the step before as reflector k + 1's, is rewritten now
        if (j == k + 1) {
          q[k + 1] = one - t;
          for (int i = k + 2; i < n; ++i) q[i] = zero - t * A[i + k * kLd];
        }
      }
      g.sync();  // and column 0, reflector 0's
      if (j < n) q[0] = j == 0 ? one : zero;
      if (j > 0 && j < n) Q[j] = zero;
    }
    g.sync();

    // Implicit QL on (d, e): for each l, iterate on the unreduced block [l, m] until e_l is
    // negligible. Each iteration chases the shift's bulge from m up to l with rotations of rows and
    // columns (i, i + 1), i = m - 1 .. l, which lane 0 of warp 0 logs and warp 1 applies to Q while
    // warp 0 goes on.
    auto apply = [&](int buf) {  // log buf to Q's rows lane + 32 s, rows n and beyond too (unread)
      const Rotation<R>* log = logs + buf * NMAX;
      const int first = extent[2 * buf], count = extent[2 * buf + 1];
      S* q = Q + lane;
      // Each rotation reads the next one's column before it writes its own, so no read waits on a write.
      S carry[kSlots], next[kSlots];  // each row's entries in the rotation's second and first columns
#pragma unroll
      for (int s = 0; s < kSlots; ++s) carry[s] = q[32 * s + (first + 1) * kLd], next[s] = q[32 * s + first * kLd];
#pragma unroll 4
      for (int r = 0; r < count; ++r) {
        const int i = first - r;
        const Rotation<R> rot = log[r];
        const int ahead = r + 1 < count ? i - 1 : i;
#pragma unroll
        for (int s = 0; s < kSlots; ++s) {
          const S qi = next[s];
          next[s] = q[32 * s + ahead * kLd];
          q[32 * s + (i + 1) * kLd] = rot.s * qi + rot.c * carry[s];
          carry[s] = rot.c * qi - rot.s * carry[s];
        }
      }
#pragma unroll
      for (int s = 0; s < kSlots; ++s) q[32 * s + (first - count + 1) * kLd] = carry[s];
    };
    if (warp == 0) {
      const int max_iterations = 30 * n;
      int iterations = 0, buf = 0;
      bool converged = true;
      for (int l = 0; l < n;) {
        // m: the first index >= l with e_m negligible beside its neighbours on the diagonal (or
        // n - 1). A's largest component is in [1, 2), so ||A|| >= 1 and an e_m below epsilon is
        // negligible whatever the diagonal.
        unsigned long long ends = 0;
#pragma unroll
        for (int s = 0; s < kSlots; ++s) {
          const int k = lane + 32 * s;
          const bool end = k >= n - 1 || fabs(e[k]) <= eps * fmax(fabs(d[k]) + fabs(d[k + 1]), R(1));
          ends |= static_cast<unsigned long long>(__ballot_sync(0xffffffffu, end)) << (32 * s);
        }
        const int m = __ffsll(static_cast<long long>(ends & (~0ull << l))) - 1;
        if (m == l) {
          ++l;
          continue;
        }
        if (++iterations > max_iterations) {
          converged = false;
          break;
        }
        __syncwarp();  // the lanes' reads of d and e above, before lane 0 writes them
        if (lane == 0) {
          Rotation<R>* log = logs + buf * NMAX;
          const R dl = d[l], el = e[l];
          R g_ = (d[l + 1] - dl) / (R(2) * el);
          g_ = d[m] - dl + el / (g_ + copysign(hypot(g_, R(1)), g_));
          R s = 1, c = 1, p = 0;
          R d_next = d[m], e_i = e[m - 1], d_i = d[m - 1];  // d_{i+1}, e_i and d_i as the iteration found them
          int count = 0;
          bool split = false;
          for (int i = m - 1; i >= l; --i) {
            const int ahead = i > 0 ? i - 1 : 0;  // the next rotation's entries, read before this one writes
            const R e_ahead = e[ahead], d_ahead = d[ahead];
            const R f = s * e_i, b = c * e_i;
            R r;
            if (!givens(f, g_, c, s, r)) {  // the bulge vanished: the block splits at i + 1
              e[i + 1] = 0;
              d[i + 1] = d_next - p;
              e[m] = 0;
              split = true;
              break;
            }
            e[i + 1] = r;
            g_ = d_next - p;
            r = (d_i - g_) * s + R(2) * c * b;
            p = s * r;
            d[i + 1] = g_ + p;
            g_ = c * r - b;
            log[count++] = {c, s};
            d_next = d_i, e_i = e_ahead, d_i = d_ahead;
          }
          if (!split) d[l] -= p, e[l] = g_, e[m] = 0;
          extent[2 * buf] = m - 1, extent[2 * buf + 1] = count;
        }
        __syncwarp();  // lane 0's d and e, before the other lanes read them
        handover(barrier + 1);  // warp 1 takes this log once done with the last
        buf ^= 1;
      }
      if (lane == 0) {
        for (int k = 0; k < n; ++k) converged = converged && isfinite(d[k]);
        extent[4] = converged;
        extent[2 * buf + 1] = -1;
      }
      handover(barrier + 1);
    } else {
      for (int buf = 0;; buf ^= 1) {
        handover(barrier + 1);
        if (extent[2 * buf + 1] < 0) break;
        apply(buf);
      }
    }
    g.sync();
    ok = extent[4] != 0;
  }

  // Q's columns, normalised. givens' c and s, from a reciprocal square root and Newton steps, have
  // c^2 + s^2 off 1 by an ulp or two, mostly the same way, and each column goes through some 2n of
  // them: the norms drift by about n eps. B = V0^H A V0 then scales eigenvalue i by its
  // column's norm squared, which the Jacobi sweeps keep. Normalised, cold float 64 covariance batches
  // came to an eigenvalue error of 0.10 n eps ||A|| and a residual of 0.22 n eps, against 0.89 and
  // 0.84 before (H200, bench/results/2026-11-27-h200-start-column-norms.md).
  R* column_scale = reinterpret_cast<R*>(x);
  if (ok) {
    for (int j = tid; j < n; j += kThreads) {
      R norm2 = 0;
      for (int i = 0; i < n; ++i) norm2 += abs2(Q[i + j * kLd]);
      column_scale[j] = R(1) / sqrt(norm2);
    }
    g.sync();
  }
  for (int idx = tid; idx < n * n; idx += kThreads) {
    const int i = idx % n, j = idx / n;
    v0[i + index_t(j) * ldv] = ok ? column_scale[j] * Q[i + j * kLd] : from_real<S>(R(i == j ? 1 : 0));
  }
  g.sync();
}

}  // namespace eigstream::kernels::tridiagonal
