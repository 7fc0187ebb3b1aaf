// Batched one-sided (Hestenes) Jacobi SVD of m x n matrices (k = min(m, n) <= 64, max(m, n) <= 1024),
// the whole solve in one launch; the GPU form of lib/src/svd.cpp and jacobi_one_sided.cpp.
//
// Algorithm (seed 000, eqs. 8-14; seed 001, eq. 7): G = A (m >= n) or A^H (m < n), scaled by the
// power of two that brings its largest entry to [1, 2), times the warm start W0 when there is one.
// Sweeps of the parallel round-robin ordering rotate column pairs of G (and of W = W0 J): per pair,
// alpha = g_p^H g_p, beta = g_q^H g_q, gamma = g_p^H g_q; a pair rotates when
// |gamma| / sqrt(alpha beta) > tol, and pairs with a column of rounding noise (squared norm below
// (sqrt(rows) eps ||G||_F)^2) are left alone. A sweep that rotates nothing measured the final state.
// Then singular values are the column norms, the long side's vectors the normalised columns (noise
// columns completed to an orthonormal set, as on the CPU), the short side's W with unit columns
// (after a warm start, one Newton-Schulz step W (3I - W^H W) / 2 as well), all sorted alike.
//
// Memory: per matrix, G (rows x k, column-major, ld = rows) in shared memory when it fits (with W,
// k x k, and a few vectors); else G lives in device memory (the long side's output, or the
// workspace) and shared memory holds W and a staging block for the final column permutation.
//
// Thread mapping: a group of THREADS threads per matrix (a warp up to 16 rows, and up to 32 while a
// lane's share of a step is short, four groups per block; else a block of 128 or 256 threads:
// make_plan). Within a group, teams of `team` lanes (a power of two within one warp) each take one
// pair of a round-robin step: the lanes sum alpha, beta, gamma over rows lane, lane + team, ...,
// reduce by butterfly shuffles (every lane gets the same sums and so the same rotation), and rotate
// their own rows. Pairs of a step are disjoint, so the only synchronisation is one group barrier per
// step.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <limits>

#include "device_scalar.cuh"
#include "dynamic_shared_memory.cuh"
#include "eigstream/detail/jacobi_rotation.hpp"
#include "eigstream/detail/round_robin.hpp"
#include "eigstream_kernels/svd_batched.hpp"
#include "input_scaling.cuh"
#include "thread_group.cuh"

namespace eigstream::kernels {
namespace {

// Byte offsets within one group's shared memory.
struct Layout {
  std::size_t w, sigma, rank, coef, scratch, bytes;
  int stage_rows;  // rows of G staged per pass of the in-place column permutation (device-memory G)
};

template <class S>
struct Args {
  const S* a;
  index_t lda, stride_a;
  bool transposed;  // G = A^H (m < n)
  int rows, k;      // G is rows x k
  real_of<S>* s;
  index_t stride_s;
  S* long_out;  // rows x k: U (m >= n) or V (m < n); optional
  index_t ld_long, stride_long;
  S* short_out;  // k x k: V (m >= n) or U (m < n); optional
  index_t ld_short, stride_short;
  const S* warm;
  index_t ldw, stride_w;
  S* work;  // G in device memory (long_out or the workspace); nullptr: G in shared memory
  index_t ld_work, stride_work;
  SolveInfo* info;
  index_t count;
  real_of<S> tol;
  int max_sweeps;
  Sort sort;
  int team;
  Layout layout;
  bool reorthonormalise;  // with a warm start: the closing Newton-Schulz step on W (Options::reorthonormalise)
};

template <class R>
__device__ __forceinline__ R team_sum(R x, int team) {
  for (int offset = team / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}
template <class R>
__device__ __forceinline__ Cx<R> team_sum(Cx<R> x, int team) {
  return {team_sum(x.re, team), team_sum(x.im, team)};
}
template <class S>
__device__ void write_invalid(const Args<S>& args, index_t b, int lane, int threads) {
  using R = real_of<S>;
  const R nan = R(__longlong_as_double(0x7ff8000000000000ll));
  const int rows = args.rows, k = args.k;
  for (int i = lane; i < k; i += threads) args.s[b * args.stride_s + i] = nan;
  if (args.long_out)
    for (int idx = lane; idx < rows * k; idx += threads)
      args.long_out[b * args.stride_long + idx % rows + index_t(idx / rows) * args.ld_long] = from_real<S>(nan);
  if (args.short_out)
    for (int idx = lane; idx < k * k; idx += threads)
      args.short_out[b * args.stride_short + idx % k + index_t(idx / k) * args.ld_short] = from_real<S>(nan);
  if (lane == 0) args.info[b] = SolveInfo{0, 0.0, false, true};
}

// The squared column norm of rounding noise, as negligible_norm2 in lib/src/jacobi_one_sided.cpp.
template <class R>
__device__ R negligible_norm2(int rows, R frobenius2) {
  const R eps = std::numeric_limits<R>::epsilon();
  return fmax(std::numeric_limits<R>::min() / eps, R(rows > 1 ? rows : 1) * eps * eps * frobenius2);
}

template <class S, int THREADS>
__device__ void solve(const Args<S>& args, index_t b, char* smem, int lane) {
  using R = real_of<S>;
  const Layout& layout = args.layout;
  const int rows = args.rows, k = args.k;
  const int team = args.team, teams = THREADS / team, me = lane % team, my_team = lane / team;
  S* stage = reinterpret_cast<S*>(smem);  // G itself on the shared-memory path
  S* W = reinterpret_cast<S*>(smem + layout.w);
  R* sigma = reinterpret_cast<R*>(smem + layout.sigma);
  int* rank = reinterpret_cast<int*>(smem + layout.rank);
  S* coef = reinterpret_cast<S*>(smem + layout.coef);
  const ThreadGroup<THREADS> g{lane, reinterpret_cast<double*>(smem + layout.scratch)};
  S* G = args.work ? args.work + b * args.stride_work : stage;
  const index_t ldg = args.work ? args.ld_work : rows;
  const bool want_w = args.warm != nullptr || args.short_out != nullptr;
  const S* a = args.a + b * args.stride_a;
  const int a_rows = args.transposed ? k : rows;  // A is a_rows x (rows * k / a_rows)

  int exponent = 0;
  if (!scan_input(a, a_rows, rows * k / a_rows, args.lda, g, lane, exponent)) return write_invalid(args, b, lane, THREADS);

  // Pass 2: G = scaled A (or A^H), times W0 with a warm start; W = W0 or the identity.
  R frobenius2 = 0;
  if (args.warm) {
    const S* w0 = args.warm + b * args.stride_w;
    for (int idx = lane; idx < k * k; idx += THREADS) W[idx] = w0[idx % k + index_t(idx / k) * args.ldw];
    g.sync();
    for (int idx = lane; idx < rows * k; idx += THREADS) {
      const int i = idx % rows, j = idx / rows;
      S sum = from_real<S>(R(0));
      for (int l = 0; l < k; ++l) {
        const S x = args.transposed ? conj(a[l + index_t(i) * args.lda]) : a[i + index_t(l) * args.lda];
        sum += scale2(x, exponent) * W[l + j * k];
      }
      G[i + j * ldg] = sum;
      frobenius2 += abs2(sum);
    }
  } else {
    for (int idx = lane; idx < rows * k; idx += THREADS) {
      const int ai = idx % a_rows, aj = idx / a_rows;
      const S x = scale2(a[ai + index_t(aj) * args.lda], exponent);
      if (args.transposed) G[aj + ai * ldg] = conj(x);
      else G[ai + aj * ldg] = x;
      frobenius2 += abs2(x);
    }
    if (want_w)
      for (int idx = lane; idx < k * k; idx += THREADS) W[idx] = from_real<S>(R(idx % k == idx / k ? 1 : 0));
  }
  frobenius2 = g.sum(frobenius2);
  g.sync();

  const R negligible = negligible_norm2(rows, frobenius2);
  const R tol = args.tol;
  const int players = detail::round_robin_players(k);
  const int half = players / 2;
  int sweeps = 0;
  R worst = 0;
  bool converged = false;
  for (;;) {
    const bool may_rotate = sweeps < args.max_sweeps;
    bool rotated = false;
    worst = 0;
    for (int step = 0; step < players - 1; ++step) {
      for (int base = 0; base < half; base += teams) {  // uniform over the group: shuffles need every lane
        const int pair = base + my_team;
        detail::Pair pq{0, k};
        if (pair < half) pq = detail::round_robin_pair(pair, step, players);
        const bool active = pq.q < k;
        R alpha = 0, beta = 0;
        S gamma = from_real<S>(R(0));
        if (active)
          for (int i = me; i < rows; i += team) {
            const S x = G[i + pq.p * ldg], y = G[i + pq.q * ldg];
            alpha += abs2(x);
            beta += abs2(y);
            gamma += conj_mul(x, y);
          }
        alpha = team_sum(alpha, team);
        beta = team_sum(beta, team);
        gamma = team_sum(gamma, team);
        if (!active || alpha < negligible || beta < negligible) continue;
        const R abs_gamma = sqrt(abs2(gamma));
        const R ratio = abs_gamma / (sqrt(alpha) * sqrt(beta));
        worst = fmax(worst, ratio);
        if (!may_rotate || !(ratio > tol)) continue;
        const detail::Rotation<R> r = detail::jacobi_rotation(alpha, beta, abs_gamma);
        const S e = gamma / abs_gamma;
        const S s_e = r.s * e, s_ec = r.s * conj(e);
        for (int i = me; i < rows; i += team) {
          S* gp = G + i + pq.p * ldg;
          S* gq = G + i + pq.q * ldg;
          const S x = *gp, y = *gq;
          *gp = r.c * x - s_ec * y;
          *gq = s_e * x + r.c * y;
        }
        if (want_w)
          for (int i = me; i < k; i += team) {
            S* wp = W + i + pq.p * k;
            S* wq = W + i + pq.q * k;
            const S x = *wp, y = *wq;
            *wp = r.c * x - s_ec * y;
            *wq = s_e * x + r.c * y;
          }
        rotated = true;
      }
      g.sync();
    }
    worst = g.max(worst);
    if (!g.any(rotated)) {
      converged = worst <= tol;
      break;
    }
    ++sweeps;
  }

  // Unit columns of W (see normalise_columns in lib/src/dense.hpp); sigma serves as scratch.
  if (want_w) {
    for (int j = lane; j < k; j += THREADS) {
      R norm2 = 0;
      for (int i = 0; i < k; ++i) norm2 += abs2(W[i + j * k]);
      sigma[j] = norm2 > R(0) ? R(1) / sqrt(norm2) : R(1);
    }
    g.sync();
    for (int idx = lane; idx < k * k; idx += THREADS) W[idx] = sigma[idx / k] * W[idx];
    g.sync();
  }

  // Singular values (column norms), their places in the requested order (ties keep index order).
  for (int base = 0; base < k; base += teams) {
    const int j = base + my_team;
    R norm2 = 0;
    if (j < k)
      for (int i = me; i < rows; i += team) norm2 += abs2(G[i + j * ldg]);
    norm2 = team_sum(norm2, team);
    if (j < k && me == 0) sigma[j] = sqrt(norm2);
  }
  g.sync();
  R sigma2 = 0;
  for (int j = 0; j < k; ++j) sigma2 += sigma[j] * sigma[j];
  const R noise = negligible_norm2(rows, sigma2);
  for (int j = lane; j < k; j += THREADS) {
    int r = j;
    if (args.sort != Sort::none) {
      r = 0;
      for (int l = 0; l < k; ++l) {
        const bool before = args.sort == Sort::descending ? sigma[l] > sigma[j] : sigma[l] < sigma[j];
        r += before || (sigma[l] == sigma[j] && l < j);
      }
    }
    rank[j] = r;
    args.s[b * args.stride_s + r] = scalbn(sigma[j], -exponent);
  }
  g.sync();
  if (args.short_out) {
    S* out = args.short_out + b * args.stride_short;
    if (args.warm && args.reorthonormalise) {
      // W0 J is only as orthonormal as W0: one Newton-Schulz step, W (3I - W^H W) / 2, column by
      // column (coef holds column j of W^H W), so that each result can be the next warm start
      // without the chain drifting from orthonormality.
      for (int j = 0; j < k; ++j) {
        for (int l = lane; l < k; l += THREADS) {
          S p = from_real<S>(R(0));
          for (int i = 0; i < k; ++i) p += conj_mul(W[i + l * k], W[i + j * k]);
          coef[l] = p;
        }
        g.sync();
        for (int i = lane; i < k; i += THREADS) {
          S sum = from_real<S>(R(0));
          for (int l = 0; l < k; ++l) sum += W[i + l * k] * coef[l];
          out[i + index_t(rank[j]) * args.ld_short] = R(1.5) * W[i + j * k] - R(0.5) * sum;
        }
        g.sync();
      }
    } else {
      for (int idx = lane; idx < k * k; idx += THREADS) out[idx % k + index_t(rank[idx / k]) * args.ld_short] = W[idx];
    }
  }

  if (args.long_out) {
    for (int idx = lane; idx < rows * k; idx += THREADS) {
      const int i = idx % rows, j = idx / rows;
      if (sigma[j] * sigma[j] >= noise) G[i + j * ldg] = G[i + j * ldg] / sigma[j];
    }
    g.sync();
    // Noise columns, in index order: the coordinate vector with the largest part outside the
    // columns done so far, orthonormalised against them by two passes of classical Gram-Schmidt.
    // Each thread owns rows lane, lane + THREADS, ... of column j, so only the sums need barriers.
    for (int j = 0; j < k; ++j) {
      if (sigma[j] * sigma[j] >= noise) continue;
      auto done = [&](int c) { return c != j && (c < j || sigma[c] * sigma[c] >= noise); };
      R best = -1;
      int best_row = INT_MAX;
      for (int i = lane; i < rows; i += THREADS) {
        R inside = 0;
        for (int c = 0; c < k; ++c)
          if (done(c)) inside += abs2(G[i + c * ldg]);
        if (R(1) - inside > best) best = R(1) - inside, best_row = i;
      }
      const R top = g.max(best);
      const int pick = -g.max(best == top ? -best_row : -INT_MAX);
      for (int i = lane; i < rows; i += THREADS) G[i + j * ldg] = from_real<S>(R(i == pick ? 1 : 0));
      g.sync();
      for (int pass = 0; pass < 2; ++pass) {
        for (int base = 0; base < k; base += teams) {
          const int c = base + my_team;
          S dot = from_real<S>(R(0));
          if (c < k && done(c))
            for (int i = me; i < rows; i += team) dot += conj_mul(G[i + c * ldg], G[i + j * ldg]);
          dot = team_sum(dot, team);
          if (c < k && me == 0) coef[c] = dot;
        }
        g.sync();
        for (int i = lane; i < rows; i += THREADS) {
          S x = G[i + j * ldg];
          for (int c = 0; c < k; ++c)
            if (done(c)) x = x - coef[c] * G[i + c * ldg];
          G[i + j * ldg] = x;
        }
        g.sync();
      }
      R norm2 = 0;
      for (int i = lane; i < rows; i += THREADS) norm2 += abs2(G[i + j * ldg]);
      norm2 = g.sum(norm2);
      if (norm2 > R(0))
        for (int i = lane; i < rows; i += THREADS) G[i + j * ldg] = G[i + j * ldg] / sqrt(norm2);
      g.sync();
    }
    S* out = args.long_out + b * args.stride_long;
    if (!args.work) {
      for (int idx = lane; idx < rows * k; idx += THREADS) {
        const int i = idx % rows, j = idx / rows;
        out[i + index_t(rank[j]) * args.ld_long] = G[i + j * rows];
      }
    } else if (args.sort != Sort::none) {
      // G is the output itself: permute its columns in place, a block of rows at a time.
      const int block = layout.stage_rows;
      for (int r0 = 0; r0 < rows; r0 += block) {
        for (int idx = lane; idx < block * k; idx += THREADS) {
          const int ii = idx % block, j = idx / block;
          if (r0 + ii < rows) stage[idx] = G[r0 + ii + j * ldg];
        }
        g.sync();
        for (int idx = lane; idx < block * k; idx += THREADS) {
          const int ii = idx % block, j = idx / block;
          if (r0 + ii < rows) G[r0 + ii + rank[j] * ldg] = stage[idx];
        }
        g.sync();
      }
    }
  }
  if (lane == 0) args.info[b] = SolveInfo{sweeps, double(worst), converged, false};
}

template <class S, int THREADS, int GROUPS>
__global__ void __launch_bounds__(THREADS * GROUPS) svd_batched_kernel(Args<S> args) {
  extern __shared__ __align__(16) char smem[];
  const int group = threadIdx.x / THREADS;
  const index_t b = index_t(blockIdx.x) * GROUPS + group;
  if (b >= args.count) return;  // whole groups leave together
  solve<S, THREADS>(args, b, smem + group * args.layout.bytes, threadIdx.x % THREADS);
}

int ceil_pow2(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

int shared_memory_limit() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return 48 * 1024;
  return bytes;
}

// The mapping for one problem size: threads per group, groups per block, where G lives, and the
// shared-memory layout.
struct Plan {
  int threads = 0, groups = 0, team = 0;
  bool shared = false;  // G in shared memory
  Layout layout{};
};

template <class S>
Plan make_plan(int rows, int k) {
  using R = real_of<S>;
  const int limit = shared_memory_limit();
  Plan plan;
  auto lay_out = [&](std::size_t g_bytes) {
    Layout l{};
    l.w = align16(g_bytes);
    l.sigma = l.w + align16(sizeof(S) * k * k);
    l.rank = l.sigma + align16(sizeof(R) * k);
    l.coef = l.rank + align16(sizeof(int) * k);
    l.scratch = l.coef + align16(sizeof(S) * k);
    l.bytes = l.scratch + align16(sizeof(double) * 32);
    return l;
  };
  const Layout on_chip = lay_out(sizeof(S) * rows * k);
  const int half = detail::round_robin_players(k) / 2;
  // A warp per matrix up to 16 rows, and up to 32 while a lane's share of a step stays short: its
  // rows of a pair (rows / team), weighted by the scalar's cost (complex float and double 2, complex
  // double 4). Past 12, a block of 128 threads was faster (H100, bench/results/2026-11-25-svd-block-at-32.md):
  // 32 x 32 3.4x in float and 3.8x in complex float, 24 x 24 and 32 x 16 in complex float 2.2x and
  // 1.5x; float 24 x 24 and 32 x 16 (12 and 8) and 32 x 8 in both types kept the warp, where the
  // block was 1.2x to 3x slower.
  const int warp_team = 32 / ceil_pow2(half);
  const bool warp_fits = (rows + warp_team - 1) / warp_team * int(sizeof(S) / sizeof(float)) <= 12;
  if (rows <= 32 && (rows <= 16 || warp_fits) && 4 * on_chip.bytes <= std::size_t(limit)) {
    plan.threads = 32, plan.groups = 4, plan.shared = true, plan.layout = on_chip;
  } else {
    plan.threads = rows <= 128 ? 128 : 256, plan.groups = 1;
    plan.shared = on_chip.bytes <= std::size_t(limit);
    if (plan.shared) {
      plan.layout = on_chip;
    } else {
      const int stage_rows = std::max(1, std::min(rows, int(16384 / (sizeof(S) * k))));
      plan.layout = lay_out(sizeof(S) * stage_rows * k);
      plan.layout.stage_rows = stage_rows;
    }
  }
  plan.team = std::min(32, std::max(1, plan.threads / ceil_pow2(half)));
  return plan;
}

template <class S, int THREADS, int GROUPS>
cudaError_t launch(const Args<S>& args, cudaStream_t stream) {
  const std::size_t bytes = args.layout.bytes * GROUPS;
  auto kernel = svd_batched_kernel<S, THREADS, GROUPS>;
  const cudaError_t status = allow_dynamic_shared_memory(kernel, bytes);
  if (status != cudaSuccess) return status;
  const index_t blocks = (args.count + GROUPS - 1) / GROUPS;
  kernel<<<unsigned(blocks), THREADS * GROUPS, bytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace

template <class T>
std::size_t svd_workspace_bytes(int m, int n, index_t count, bool with_u, bool with_v) {
  using S = typename DeviceScalar<T>::type;
  const int rows = std::max(m, n), k = std::min(m, n);
  if (k < 1 || k > kSvdMaxK || rows > kSvdMaxRows || count <= 0) return 0;
  const bool with_long = m >= n ? with_u : with_v;
  if (with_long || make_plan<S>(rows, k).shared) return 0;
  return sizeof(S) * std::size_t(rows) * std::size_t(k) * std::size_t(count);
}

template <class T>
cudaError_t launch_svd_batched(const SvdBatchedArgs<T>& in, cudaStream_t stream) {
  using S = typename DeviceScalar<T>::type;
  using R = real_of<S>;
  const bool transposed = in.m < in.n;
  const int rows = transposed ? in.n : in.m, k = transposed ? in.m : in.n;
  if (k < 1 || k > kSvdMaxK || rows > kSvdMaxRows) return cudaErrorInvalidValue;
  if (in.count == 0) return cudaSuccess;
  const Plan plan = make_plan<S>(rows, k);
  S* u = reinterpret_cast<S*>(in.u);
  S* v = reinterpret_cast<S*>(in.v);
  Args<S> args{};
  args.a = reinterpret_cast<const S*>(in.a), args.lda = in.lda, args.stride_a = in.stride_a;
  args.transposed = transposed, args.rows = rows, args.k = k;
  args.s = in.s, args.stride_s = in.stride_s;
  args.long_out = transposed ? v : u;
  args.ld_long = transposed ? in.ldv : in.ldu, args.stride_long = transposed ? in.stride_v : in.stride_u;
  args.short_out = transposed ? u : v;
  args.ld_short = transposed ? in.ldu : in.ldv, args.stride_short = transposed ? in.stride_u : in.stride_v;
  args.warm = reinterpret_cast<const S*>(in.warm_start), args.ldw = in.ldw, args.stride_w = in.stride_w;
  if (!plan.shared) {
    if (args.long_out) {
      args.work = args.long_out, args.ld_work = args.ld_long, args.stride_work = args.stride_long;
    } else {
      if (!in.workspace) return cudaErrorInvalidValue;
      args.work = reinterpret_cast<S*>(in.workspace), args.ld_work = rows, args.stride_work = index_t(rows) * k;
    }
  }
  args.info = in.info, args.count = in.count;
  args.tol = R(in.tol), args.max_sweeps = in.max_sweeps, args.sort = in.sort;
  args.reorthonormalise = in.reorthonormalise;
  args.team = plan.team, args.layout = plan.layout;
  if (plan.groups == 4) return launch<S, 32, 4>(args, stream);
  if (plan.threads == 128) return launch<S, 128, 1>(args, stream);
  return launch<S, 256, 1>(args, stream);
}

#define EIGSTREAM_INSTANTIATE(T)                                                                   \
  template std::size_t svd_workspace_bytes<T>(int, int, index_t, bool, bool);                     \
  template cudaError_t launch_svd_batched<T>(const SvdBatchedArgs<T>&, cudaStream_t);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream::kernels
