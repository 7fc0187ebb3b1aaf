// The Jacobi rotation that diagonalises a 2 x 2 Hermitian block [[a, b], [conj(b), d]] (a, d real,
// |b| > 0). With e = b / |b| and the returned c, s, the unitary
//     J = [[c, s e], [-s conj(e), c]]
// gives J^H M J = diag(a - t |b|, d + t |b|). Real case: e = 1 (Rutishauser's formulas; seed 000,
// eqs. 9-11). The same block is the Gram matrix [[alpha, gamma], [conj(gamma), beta]] of one-sided
// Jacobi, where G <- G J orthogonalises columns p and q.
#pragma once

#include <cmath>
#include <limits>

#include "eigstream/detail/host_device.hpp"

namespace eigstream::detail {

template <class R>
struct Rotation {
  R c;
  R s;
  R t;  // tan(theta): the diagonal moves by -t|b| (p) and +t|b| (q)
};

template <class R>
EIGSTREAM_HD Rotation<R> jacobi_rotation(R a, R d, R abs_b) {
  using std::abs;
  using std::sqrt;
  const R zeta = (d - a) / (R(2) * abs_b);
  const R abs_zeta = abs(zeta);
  // sqrt(1 + zeta^2) without overflow: for huge zeta it is |zeta| to working precision.
  const R root = abs_zeta < R(1) / std::numeric_limits<R>::epsilon() ? sqrt(R(1) + zeta * zeta) : abs_zeta;
  const R t = (zeta >= R(0) ? R(1) : R(-1)) / (abs_zeta + root);
  const R c = R(1) / sqrt(R(1) + t * t);
  return {c, t * c, t};
}

}  // namespace eigstream::detail
