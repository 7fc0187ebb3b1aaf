// Two-sided Jacobi EVD of a Hermitian matrix on the CPU, with the parallel round-robin ordering
// (seed 001, eq. 7: n/2 disjoint rotations per step, n-1 steps per sweep, a dummy index for odd n)
// or the cyclic-by-row ordering (seed 003, figs. 1-2). Complex rotations follow jacobi_rotation.hpp.
// Memory: a and v column-major with leading dimensions; a is kept Hermitian in full storage.
#include <cmath>
#include <complex>

#include "eigstream/detail/jacobi_rotation.hpp"
#include "eigstream/detail/round_robin.hpp"
#include "dense.hpp"
#include "jacobi.hpp"
#include "scalar.hpp"

namespace eigstream::detail {
namespace {

template <class T>
real_t<T> off_norm(MatrixView<const T> a) {
  real_t<T> sum = 0;
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = j + 1; i < a.rows; ++i) sum += abs2(a(i, j));
  return std::sqrt(2 * sum);
}

// A <- J^H A J and V <- V J for the pair (p, q), J from jacobi_rotation.hpp.
template <class T>
void rotate(MatrixView<T> a, MatrixView<T> v, index_t p, index_t q, real_t<T> abs_b) {
  using R = real_t<T>;
  const index_t n = a.rows;
  const T e = unit_phase(a(p, q), abs_b);
  const R app = real_of(a(p, p));
  const R aqq = real_of(a(q, q));
  const Rotation<R> r = jacobi_rotation(app, aqq, abs_b);
  const T s_e = r.s * e;
  const T s_ec = r.s * conj_of(e);
  // Columns p and q (their 2 x 2 block is then set exactly), and rows p and q by Hermitian symmetry.
  rotate_columns(a, p, q, r.c, s_e, s_ec);
  a(p, p) = app - r.t * abs_b;
  a(q, q) = aqq + r.t * abs_b;
  a(p, q) = T(0);
  a(q, p) = T(0);
  for (index_t k = 0; k < n; ++k) {
    if (k == p || k == q) continue;
    a(p, k) = conj_of(a(k, p));
    a(q, k) = conj_of(a(k, q));
  }
  if (!v.empty()) rotate_columns(v, p, q, r.c, s_e, s_ec);
}

}  // namespace

template <class T>
SolveInfo jacobi_two_sided(MatrixView<T> a, MatrixView<T> v, Ordering ordering, double tol, int max_sweeps) {
  using R = real_t<T>;
  const index_t n = a.rows;
  SolveInfo info;
  R norm2 = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) norm2 += abs2(a(i, j));
  const R norm = std::sqrt(norm2);
  if (norm == 0) {
    info.converged = true;
    return info;
  }
  const R target = R(tol) * norm;
  // A rotation whose |a_pq| is below this cannot matter: if every pair were below it, off(A) would
  // already be under the target.
  const R negligible = target / R(n);
  auto visit = [&](index_t p, index_t q) {
    const R abs_b = abs_of(a(p, q));
    if (abs_b > negligible) rotate(a, v, p, q, abs_b);
  };
  R off = off_norm<T>(a);
  while (off > target && info.sweeps < max_sweeps) {
    ++info.sweeps;
    if (ordering == Ordering::cyclic) {
      for (index_t p = 0; p + 1 < n; ++p)
        for (index_t q = p + 1; q < n; ++q) visit(p, q);
    } else {
      const int m = round_robin_players(int(n));
      for (int step = 0; step < m - 1; ++step)
        for (int k = 0; k < m / 2; ++k) {
          const Pair pq = round_robin_pair(k, step, m);
          if (pq.q < n) visit(pq.p, pq.q);
        }
    }
    off = off_norm<T>(a);
  }
  info.converged = off <= target;
  info.off_norm = double(off / norm);
  return info;
}

#define EIGSTREAM_INSTANTIATE(T) \
  template SolveInfo jacobi_two_sided<T>(MatrixView<T>, MatrixView<T>, Ordering, double, int);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream::detail
