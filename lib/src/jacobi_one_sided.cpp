// One-sided (Hestenes) Jacobi on the CPU (seed 000: eqs. 8-14, algorithms 1 and 4; seed 003,
// fig. 4): rotate pairs of columns of G until all are mutually orthogonal. For each pair,
// alpha = g_p^H g_p, beta = g_q^H g_q, gamma = g_p^H g_q; the pair is converged when
// |gamma| / sqrt(alpha beta) <= tol. Orderings as in the two-sided solver.
// Memory: g (m x n) and v (n x n) column-major; every update is down contiguous columns.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "eigstream/detail/jacobi_rotation.hpp"
#include "eigstream/detail/round_robin.hpp"
#include "dense.hpp"
#include "jacobi.hpp"
#include "scalar.hpp"

namespace eigstream::detail {
namespace {

template <class T>
struct PairVisit {
  MatrixView<T> g;
  MatrixView<T> v;
  real_t<T> tol;
  real_t<T> negligible;   // squared column norm of rounding noise
  bool rotate;            // false: only measure
  bool rotated = false;   // some pair was rotated in this pass
  real_t<T> worst = 0;    // max |gamma| / sqrt(alpha beta) seen in this pass

  void operator()(index_t p, index_t q) {
    using R = real_t<T>;
    const T* gp = &g(0, p);
    const T* gq = &g(0, q);
    R alpha = 0, beta = 0;
    T gamma = 0;
    for (index_t k = 0; k < g.rows; ++k) {
      alpha += abs2(gp[k]);
      beta += abs2(gq[k]);
      gamma += conj_of(gp[k]) * gq[k];
    }
    if (alpha < negligible || beta < negligible) return;
    const R abs_gamma = abs_of(gamma);
    const R ratio = abs_gamma / (std::sqrt(alpha) * std::sqrt(beta));
    worst = std::max(worst, ratio);
    if (!rotate || ratio <= tol) return;
    const T e = unit_phase(gamma, abs_gamma);
    const Rotation<R> r = jacobi_rotation(alpha, beta, abs_gamma);
    const T s_e = r.s * e;
    const T s_ec = r.s * conj_of(e);
    rotate_columns(g, p, q, r.c, s_e, s_ec);
    if (!v.empty()) rotate_columns(v, p, q, r.c, s_e, s_ec);
    rotated = true;
  }
};

template <class Visit>
void sweep(index_t n, Ordering ordering, Visit& visit) {
  if (ordering == Ordering::cyclic) {
    for (index_t p = 0; p + 1 < n; ++p)
      for (index_t q = p + 1; q < n; ++q) visit(p, q);
    return;
  }
  const int m = round_robin_players(int(n));
  for (int step = 0; step < m - 1; ++step)
    for (int k = 0; k < m / 2; ++k) {
      const Pair pq = round_robin_pair(k, step, m);
      if (pq.q < n) visit(pq.p, pq.q);
    }
}

}  // namespace

template <class T>
real_t<T> negligible_norm2(index_t m, real_t<T> frobenius2) {
  using R = real_t<T>;
  const R eps = std::numeric_limits<R>::epsilon();
  return std::max(std::numeric_limits<R>::min() / eps, R(std::max<index_t>(m, 1)) * eps * eps * frobenius2);
}

template <class T>
SolveInfo jacobi_one_sided(MatrixView<T> g, MatrixView<T> v, Ordering ordering, double tol, int max_sweeps) {
  using R = real_t<T>;
  SolveInfo info;
  R frobenius2 = 0;
  for (index_t j = 0; j < g.cols; ++j)
    for (index_t i = 0; i < g.rows; ++i) frobenius2 += abs2(g(i, j));
  const R negligible = negligible_norm2<T>(g.rows, frobenius2);
  for (;;) {
    const bool may_rotate = info.sweeps < max_sweeps;
    PairVisit<T> visit{g, v, R(tol), negligible, may_rotate};
    sweep(g.cols, ordering, visit);
    info.off_norm = double(visit.worst);
    if (!visit.rotated) {
      // A pass that rotated nothing measured the final state (when may_rotate was false, it ran
      // only to measure after the last allowed sweep).
      info.converged = visit.worst <= R(tol);
      return info;
    }
    ++info.sweeps;
  }
}

#define EIGSTREAM_INSTANTIATE(T)                                                                   \
  template SolveInfo jacobi_one_sided<T>(MatrixView<T>, MatrixView<T>, Ordering, double, int); \
  template real_t<T> negligible_norm2<T>(index_t, real_t<T>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream::detail
