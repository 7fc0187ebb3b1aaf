// Two-sided Jacobi EVD of one Hermitian matrix of order n <= 64 by a block of 8 warps (256 threads):
// the per-matrix solve of the batched kernel for 32 < n <= 64 and of the persistent solver at
// NMAX = 64. Smaller n is padded with zero rows and columns, which never rotate.
//
// Ordering (seed 001, eq. 7): the chess tournament of detail/round_robin.hpp with m = 64 players;
// pair k of step t joins the players in positions k and 63 - k (x_k and y_k below). Lane k of every
// warp owns pair k, so a warp holds all 32 rotations of a step.
//
// Thread mapping and memory (the point of this file: two barriers and few shared-memory accesses
// per step):
//  - A lives in shared memory, by index, column-major with leading dimension 64; its diagonal is kept
//    apart, and so is b_pq (below) of each pair of the next step.
//  - Within a sweep A is held as G B G and V as W G, G diagonal (its factors by index in shared
//    memory), so that a rotation's factor c goes to G and not to every entry it moves, as in the
//    register solve (registers::PairRotation): J = G^-1 M G' with M = [[1, s2], [-conj(s1), 1]]. The
//    step applies M, whose entries cost four fused multiply-adds in complex against J's six; the
//    convergence test at the start of each sweep folds G back into A and V.
//  - Warp 0 computes the step's 32 rotations (lane k from b_pq, a_pp, a_qq, g_p and g_q of pair k)
//    into shared memory and sets the diagonal blocks; a barrier; then every warp applies them.
//    (Every warp computing all 32 for itself saves that barrier, but the kernel is bound by
//    instruction issue, and the redundant rotations made it 5-11% slower:
//    bench/results/2026-11-23-h100-evd-pairs.md.)
//  - The step applies both sides at once, a 2 x 2 block at a time: the block of pairs (k, l) of B
//    becomes M_k^H B M_l, and its mirror (l, k) is written as its conjugate transpose. Lane k of
//    warp w takes the blocks l = k + d (mod 32) for d = w + 1 and d = w + 9 (d = 16 by lanes k < 16
//    only), so every unordered block is done once. The blocks that hold the next step's b_pq also
//    write it where warp 0 will read it.
//  - V lives in registers: lane k of warp w holds columns x_k and y_k of the rows w, w + 8, ... . The
//    column update is thread-local, and the tournament's move of the players to their next positions
//    is one shuffle down and one up per entry.
//  - Warm start: B = V0^H A V0 and the closing Newton-Schulz step (see jacobi_evd_solve.cuh) are
//    products of 64 x 64 matrices in shared memory: on the tensor cores for float data
//    (tensor::BlockProduct; warm complex float 64 5.6% faster, float 64 unchanged, H100,
//    bench/results/2026-12-07-h100-block-tensor-products.md, and complex float 5.4% more without
//    the guards of a general size, bench/results/2026-12-07-h100-block-product-64.md), else 16
//    entries of the result a thread.
// Shared memory: two 64 x 65 regions (one without a warm start) and small buffers: PairsLayout.
#pragma once

#include <cuda_runtime.h>

#include <limits>

#include "device_scalar.cuh"
#include "eigstream/detail/round_robin.hpp"
#include "eigstream/options.hpp"
#include "input_scaling.cuh"
#include "jacobi_evd_solve.cuh"
#include "tensor_products.cuh"
#include "thread_group.cuh"

namespace eigstream::kernels::evd {

namespace pairs {

constexpr int kNmax = 64;       // players of the tournament
constexpr int kPairs = 32;      // pairs of a step, one per lane
constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kRows = kNmax / kWarps;  // rows of V per lane
constexpr int kLda = kNmax;     // A during the sweeps: x_k and the x_l of a warp fall in distinct banks
constexpr int kLdv = kNmax + 1; // V, V0 and products: lanes reading along a row hit distinct banks
// Blocks an SM that a kernel of the pairs solve is compiled for: 4 (64 registers a thread) for
// float, 3 (85) for complex float and double, as the products' tiles and the rows of V then fit with
// a few spills; 1 for complex double.
template <class S>
inline constexpr int kMinBlocksPerSm = sizeof(S) == 4 ? 4 : sizeof(S) == 8 ? 3 : 1;
// Whether float data can take the warm start's and the Newton-Schulz step's products on the tensor
// cores (tensor::BlockProduct).
template <class S>
inline constexpr bool kTensorProducts = tensor::kAvailable && tensor::kFloatData<S>;

}  // namespace pairs

template <class S>
struct PairsLayout {
  using R = real_of<S>;
  static constexpr std::size_t region = align16(sizeof(S) * pairs::kNmax * pairs::kLdv);
  static constexpr std::size_t diag = align16(sizeof(R) * pairs::kNmax);
  static constexpr std::size_t factors = align16(sizeof(R) * pairs::kNmax);
  static constexpr std::size_t apq = align16(sizeof(S) * pairs::kPairs);
  static constexpr std::size_t rot = sizeof(Multipliers<S>) * pairs::kPairs;
  static constexpr std::size_t values = align16(sizeof(R) * pairs::kNmax);
  static constexpr std::size_t order = align16(sizeof(int) * pairs::kNmax);
  static constexpr std::size_t scratch = align16(sizeof(double) * 2 * pairs::kWarps);  // ThreadGroup::sum2's
  static constexpr std::size_t stop = align16(sizeof(int));
  static constexpr std::size_t small = diag + factors + apq + rot + values + order + scratch + stop;
  static constexpr std::size_t bytes(bool warm) { return (warm ? 2 : 1) * region + small; }
};

namespace pairs {

// The 4 x 4 tile (rows ti + 16 r, columns tj + 16 c, r, c < 4) of op(X) Y for 64 x 64 matrices in
// shared memory, op(X) = X^H when CONJ_X, else X. Rows 16 apart, so that the 16 values of ti in a
// warp read 16 consecutive rows (a tile of 4 adjacent rows fell 4 ways into the same banks).
template <bool CONJ_X, class S>
__device__ __forceinline__ void tile_product(const S* X, int ldx, const S* Y, int ldy, int ti, int tj, S (&acc)[4][4]) {
  using R = real_of<S>;
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[r][c] = from_real<S>(R(0));
#pragma unroll 4
  for (int k = 0; k < kNmax; ++k) {
    S x[4], y[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) x[r] = CONJ_X ? conj(X[k + (ti + 16 * r) * ldx]) : X[ti + 16 * r + k * ldx];
#pragma unroll
    for (int c = 0; c < 4; ++c) y[c] = Y[k + (tj + 16 * c) * ldy];
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[r][c] += x[r] * y[c];
  }
}

}  // namespace pairs

// Solves matrix b of `args` (n <= 64) on the 256 threads of a block (tid = threadIdx.x), with `smem`
// holding PairsLayout<S>::bytes(args.warm_start != nullptr). Returns the matrix's SolveInfo (meaningful
// in thread 0, which also stores it to args.info). TENSOR_PRODUCTS: the products on the tensor cores,
// where kTensorProducts allows.
template <class S, bool TENSOR_PRODUCTS = true>
__device__ SolveInfo solve_in_pairs(const Args<S>& args, index_t b, char* smem, int tid) {
  constexpr bool kTensor = TENSOR_PRODUCTS && pairs::kTensorProducts<S>;
  using R = real_of<S>;
  using L = PairsLayout<S>;
  using namespace pairs;
  const bool warm = args.warm_start != nullptr;
  S* A = reinterpret_cast<S*>(smem);
  S* Q = reinterpret_cast<S*>(smem + L::small + L::region);  // the second region (warm start only)
  char* p = smem + L::region;
  R* diag = reinterpret_cast<R*>(p);           // [64], by index, of A itself
  R* factors = reinterpret_cast<R*>(p += L::diag);  // [64], by index: G's, A = G B G within a sweep
  S* apq = reinterpret_cast<S*>(p += L::factors);   // [32], b_pq of each pair of the step
  auto* rot = reinterpret_cast<Multipliers<S>*>(p += L::apq);  // [32], the step's rotations
  R* w = reinterpret_cast<R*>(p += L::rot);
  int* rank = reinterpret_cast<int*>(p += L::values);
  double* scratch = reinterpret_cast<double*>(p += L::order);
  int* stop = reinterpret_cast<int*>(p += L::scratch);  // warp 0's word to the block: the sweep ends here
  const ThreadGroup<kThreads> g{tid, scratch};
  const int n = args.n;
  // The block is kThreads threads. Told so, the compiler knows each warp's blocks (d below) and the
  // trip counts of the loops over the matrix, and keeps fewer registers: ptxas, complex float's spill
  // stores 236 -> 20 bytes, double's 96 -> 28. With next_apq and next_moving_player below, warm float
  // 64 ran 7.9% faster, complex float 4.9% (H100, bench/results/2026-12-07-h100-pairs-block-size.md).
  __builtin_assume(tid >= 0 && tid < kThreads);
  const int lane = tid % 32, warp = tid / 32;
  const int ti = tid % 16, tj = tid / 16;  // this thread's tile of the products
  const S zero = from_real<S>(R(0));
  const S* a = args.a + b * args.stride_a;

  int exponent = 0;
  if (!scan_input(a, n, n, args.lda, g, tid, exponent)) return write_invalid(args, b, tid, kThreads);

  // Pass 2: the scaled lower triangle into A in full Hermitian storage, zero padded; defect and norm.
  // A warm start's product A V0 on the tensor cores reads A with the products' leading dimension.
  const int ld_in = warm && kTensor ? kLdv : kLda;
  R defect2 = 0, norm2 = 0;
  for (int idx = tid; idx < kNmax * kNmax; idx += kThreads) {
    const int i = idx % kNmax, j = idx / kNmax;
    const bool inside = i < n && j < n;
    const S x = inside ? scale2(a[i + index_t(j) * args.lda], exponent) : zero;
    const S xt = inside ? scale2(a[j + index_t(i) * args.lda], exponent) : zero;
    defect2 += abs2(x - conj(xt));
    norm2 += abs2(x);
    A[i + j * ld_in] = i > j ? x : i == j ? from_real<S>(re(x)) : conj(xt);
  }
  g.sum2(defect2, norm2);
  if (!(sqrt(defect2) <= args.symmetry_tol * sqrt(norm2))) return write_invalid(args, b, tid, kThreads);

  // V in registers: columns x_k = k and y_k = 63 - k (step 0) of rows warp + 8 r; the identity, or
  // the warm start padded with it, after which A becomes B = V0^H A V0.
  S vx[kRows], vy[kRows];
  if (warm) {
    const S* v0 = args.warm_start + b * args.stride_w;
    for (int idx = tid; idx < kNmax * kNmax; idx += kThreads) {
      const int i = idx % kNmax, j = idx / kNmax;
      Q[i + j * kLdv] = i < n && j < n ? v0[i + index_t(j) * args.ldw] : from_real<S>(R(i == j ? 1 : 0));
    }
    g.sync();
    const auto store_p = [&](int i, int j, S x) { A[i + j * kLdv] = x; };
    const auto store_b = [&](int i, int j, S x) {  // exactly Hermitian: the lower triangle mirrored
      if (i > j) A[i + j * kLda] = x, A[j + i * kLda] = conj(x);
      if (i == j) A[i + i * kLda] = from_real<S>(re(x));
    };
    if constexpr (kTensor) {
      tensor::BlockProduct<S> product;
      product.template compute<false, tensor::Precision::split>(warp, lane, A, kLdv, Q, kLdv);  // P = A V0
      g.sync();
      product.store(warp, lane, store_p);
      g.sync();
      product.template compute<true, tensor::Precision::split>(warp, lane, Q, kLdv, A, kLdv);  // B = V0^H P
      g.sync();
      product.store(warp, lane, store_b);
    } else {
      S acc[4][4];
      tile_product<false>(A, kLda, Q, kLdv, ti, tj, acc);  // P = A V0
      g.sync();
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) store_p(ti + 16 * r, tj + 16 * c, acc[r][c]);
      g.sync();
      tile_product<true>(Q, kLdv, A, kLdv, ti, tj, acc);  // B = V0^H P
      g.sync();
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) store_b(ti + 16 * r, tj + 16 * c, acc[r][c]);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      vx[r] = Q[warp + 8 * r + lane * kLdv];
      vy[r] = Q[warp + 8 * r + (kNmax - 1 - lane) * kLdv];
    }
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      vx[r] = from_real<S>(R(warp + 8 * r == lane ? 1 : 0));
      vy[r] = from_real<S>(R(warp + 8 * r == kNmax - 1 - lane ? 1 : 0));
    }
  }
  g.sync();
  for (int i = tid; i < kNmax; i += kThreads) diag[i] = re(A[i + i * kLda]), factors[i] = R(1);

  const R norm = sqrt(norm2);
  const R target = args.tol * norm;
  const R negligible2 = negligible_square(target, n);
  // A sweep that starts with off(A) <= target / sqrt(8 eps) follows off(A)^2 through its steps rather
  // than testing it: a rotation lowers it by exactly 2 |b_pq|^2 (J is unitary, and the diagonal takes
  // what leaves the pair). Warp 0's lanes add up their rotations' |b_pq|^2, and every
  // kFollowEvery-th step warp 0 sums them; where off_0^2 - 2 sum <= target^2 / 2 the sweep ends after
  // that step and the test at the loop's top confirms the stop. The estimate errs by about
  // eps off_0^2 (each term, and each rotated entry, is rounded), hence the window, and a solve whose
  // test overrules an estimate follows no more. Where the window opens (a warm start's third sweep,
  // a cold one's second after the tridiagonal start) the sweep ends early: on an H100 warm batches
  // of float and complex float 64 ran 2% faster, cold ones 3.5-4.7%, and a lone warm complex float
  // item's median latency fell 12% (bench/results/2026-12-07-h100-follow-off-in-last-sweep.md).
  constexpr int kFollowEvery = 8;
  const R follow_below2 = target * target / (R(8) * std::numeric_limits<R>::epsilon());
  bool may_follow = true;
  int sweeps = 0;
  R off = 0;
  // The players of the thread's pairs in the step: pair k = lane (x, y) and, for each of its two
  // blocks, pair l (xl, yl); position p holds player p at the first step, and every player moves on
  // by detail::next_player each step (kept in registers: the kernel is bound by instruction issue).
  int x = lane, y = kNmax - 1 - lane;
  int xl[2], yl[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int l = (lane + warp + 1 + kWarps * half) % kPairs;
    xl[half] = l, yl[half] = kNmax - 1 - l;
  }
  // The next step pairs position p with 63 - p, and each player moves from position p + 1 to p (from
  // 1 to 63; 0 stays): its pair 0 is (x_0, x_1), pair 31 (y_31, y_30), and pair k in 1..30 is
  // (x_{k+1}, y_{k-1}), an entry of the block {k - 1, k + 1}. The pair whose b_pq this thread's first
  // block (l = k + 1 in warp 0, k + 2 in warp 1) holds, or -1.
  const int next_apq = warp == 0 && lane == 0            ? 0
                       : warp == 0 && lane == kPairs - 2 ? kPairs - 1
                       : warp == 1 && lane <= kPairs - 3 ? lane + 1
                                                         : -1;
  for (;;) {
    // The test, of A itself: G folded into A (B's diagonal is never read: diag holds A's) and V.
    g.sync();
    R off2 = 0;
    for (int idx = tid; idx < kNmax * kNmax; idx += kThreads) {
      const int i = idx % kNmax, j = idx / kNmax;
      if (i != j) {
        const S a_ij = rn::scale(rn::mul(factors[i], factors[j]), A[i + j * kLda]);
        A[i + j * kLda] = a_ij;
        off2 += abs2(a_ij);
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) vx[r] = rn::scale(factors[x], vx[r]), vy[r] = rn::scale(factors[y], vy[r]);
    off = sqrt(g.sum(off2));  // its barriers: every read of factors and write of A is done
    if (off <= target || sweeps == args.max_sweeps) break;  // (before A is read again: V goes there next)
    const bool follow = may_follow && off * off <= follow_below2;
    R removed2 = 0;  // warp 0: the |b_pq|^2 of this lane's rotations in the sweep
    if (warp == 0) {  // pair `lane` of the sweep's first step, which this lane alone reads next
      apq[lane] = A[x + y * kLda];
      factors[x] = factors[y] = R(1);
    }
    ++sweeps;
    for (int step = 0; step < kNmax - 1; ++step) {
      const bool check = follow && step % kFollowEvery == kFollowEvery - 1;
      if (warp == 0) {  // the step's rotations, lane k's of pair k, and the diagonal blocks
        // Lane k alone touches pair k's b_pq, diagonal and factors here.
        const R dx = diag[x], dy = diag[y], gx = factors[x], gy = factors[y];
        const S b_pq = rn::scale(rn::mul(gx, gy), apq[lane]);
        const TangentRot<S> r = tangent_rotation_of(dx, dy, b_pq, negligible2);
        if (!is_zero(r.t_e)) {
          removed2 += rn::abs2(b_pq);
          diag[x] = dx - r.shift;
          diag[y] = dy + r.shift;
          factors[x] = rn::mul(gx, r.c);
          factors[y] = rn::mul(gy, r.c);
          A[x + y * kLda] = A[y + x * kLda] = zero;
        }
        const Multipliers<S> m = multipliers_of(r.t_e, gx, gy, rn::rcp(gx), rn::rcp(gy));
        store_multipliers(&rot[lane], m.s1, m.s2);
        if (check) {  // read by the block after the barrier below, written again kFollowEvery steps on
          const R removed = registers::group_sum<32>(0xffffffffu, removed2);
          if (lane == 0) *stop = rn::fma(R(-2), removed, off * off) <= R(0.5) * target * target;
        }
      }
      g.sync();
      const bool ends = check && *stop;
      const Multipliers<S> mk = load_multipliers(&rot[lane]);
      const S row_s1 = conj(mk.s1), row_s2 = conj(mk.s2);  // M^H from the left, as a column update
      // The off-diagonal blocks (k, l), l = k + d: B <- M_k^H B M_l, and the mirror.
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int d = warp + 1 + kWarps * half;
        if (d == kPairs / 2 && lane >= kPairs / 2) continue;  // the block {k, k + 16} once
        const int l = (lane + d) % kPairs;
        const Multipliers<S> ml = load_multipliers(&rot[l]);
        const int cx = xl[half] * kLda, cy = yl[half] * kLda;  // pair l's columns
        S b_xx = A[x + cx], b_xy = A[x + cy], b_yx = A[y + cx], b_yy = A[y + cy];
        if (!is_zero(mk.s1) || !is_zero(ml.s1)) {  // else both are the identity
          rotate_columns_unscaled(b_xx, b_xy, ml.s1, ml.s2);  // row x of B M_l
          rotate_columns_unscaled(b_yx, b_yy, ml.s1, ml.s2);  // row y
          rotate_columns_unscaled(b_xx, b_yx, row_s1, row_s2);  // M_k^H from the left: rows (x, y) as a column pair
          rotate_columns_unscaled(b_xy, b_yy, row_s1, row_s2);
          A[x + cx] = b_xx, A[x + cy] = b_xy, A[y + cx] = b_yx, A[y + cy] = b_yy;
          A[xl[half] + x * kLda] = conj(b_xx), A[yl[half] + x * kLda] = conj(b_xy),
          A[xl[half] + y * kLda] = conj(b_yx), A[yl[half] + y * kLda] = conj(b_yy);
        }
        if (half == 0 && next_apq >= 0)
          apq[next_apq] = next_apq == 0 ? b_xx : next_apq == kPairs - 1 ? conj(b_yy) : conj(b_yx);
      }

      // W <- W M, then the columns follow their players: lane k takes x from lane k + 1 (lane 31 its
      // own y, lane 0 keeps x), and y from lane k - 1 (lane 0 takes lane 1's x). Selected, not
      // branched on: a branch for lanes 0 and 31 made each row three paths in turn.
      const bool first = lane == 0, last = lane == kPairs - 1;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        rotate_columns_unscaled(vx[r], vy[r], mk.s1, mk.s2);
        const S down = shfl_down<32>(0xffffffffu, vx[r], 1);
        const S up = shfl_up<32>(0xffffffffu, vy[r], 1);
        const S x_next = pick(first, vx[r], pick(last, vy[r], down));
        vy[r] = pick(first, down, up);
        vx[r] = x_next;
      }
      x = detail::next_player(x, kNmax), y = detail::next_moving_player(y, kNmax);  // y: seats >= 32
#pragma unroll
      for (int half = 0; half < 2; ++half)
        xl[half] = detail::next_player(xl[half], kNmax), yl[half] = detail::next_moving_player(yl[half], kNmax);
      g.sync();
      if (ends) {
        may_follow = false;  // the test at the top confirms the stop, or no estimate is followed again
        break;
      }
    }
  }

  // Eigenvalues, unscaled; V by index into the first region (A is no longer needed).
  for (int i = tid; i < kNmax; i += kThreads) w[i] = scalbn(diag[i], -exponent);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    A[warp + 8 * r + x * kLdv] = vx[r];
    A[warp + 8 * r + y * kLdv] = vy[r];
  }
  g.sync();
  const S* v_out = A;
  if (warm && args.reorthonormalise) {  // one Newton-Schulz step (jacobi_evd_solve.cuh), into Q
    if constexpr (kTensor) {  // as V - V E / 2, E = V^H V - I
      tensor::BlockProduct<S> product;
      product.template compute<true, tensor::Precision::split>(warp, lane, A, kLdv, A, kLdv);  // V^H V
      product.store(warp, lane, [&](int i, int j, S x) { Q[i + j * kLdv] = i == j ? x - from_real<S>(R(1)) : x; });
      g.sync();
      // E is about n eps: one TF32 product gives V E to far below eps.
      product.template compute<false, tensor::Precision::single>(warp, lane, A, kLdv, Q, kLdv);
      g.sync();
      product.store(warp, lane, [&](int i, int j, S x) { Q[i + j * kLdv] = A[i + j * kLdv] - R(0.5) * x; });
    } else {  // as V (3I - V^H V) / 2
      S acc[4][4];
      tile_product<true>(A, kLdv, A, kLdv, ti, tj, acc);  // V^H V
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) Q[ti + 16 * r + (tj + 16 * c) * kLdv] = acc[r][c];
      g.sync();
      tile_product<false>(A, kLdv, Q, kLdv, ti, tj, acc);
      g.sync();
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int i = ti + 16 * r, j = tj + 16 * c;
          Q[i + j * kLdv] = R(1.5) * A[i + j * kLdv] - R(0.5) * acc[r][c];
        }
    }
    v_out = Q;
  } else {
    normalise_columns(A, kLdv, n, diag, g, tid);
  }
  g.sync();
  return write_results(args, b, w, v_out, kLdv, rank, sweeps, off, norm, target, g, tid);
}

}  // namespace eigstream::kernels::evd
