// The CPU Jacobi solvers (seed 001 and 003 for two-sided, seed 000 and 003 for one-sided).
// They work in place on scaled copies prepared by evd.cpp / svd.cpp (largest entry of order 1, so
// that squares neither overflow nor underflow) and know nothing of batches, validation or sorting.
#pragma once

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::detail {

// Two-sided Jacobi: a is n x n Hermitian in full storage; on return its diagonal holds the
// eigenvalues and a is diagonal to off(a) <= tol * ||a||_F (when converged). v: empty, or n x n
// holding the starting basis (identity or a warm start), multiplied by every rotation.
template <class T>
SolveInfo jacobi_two_sided(MatrixView<T> a, MatrixView<T> v, Ordering ordering, double tol, int max_sweeps);

// One-sided (Hestenes) Jacobi: rotates the columns of g (m x n, m >= n) until every pair has
// |g_p^H g_q| <= tol * ||g_p|| ||g_q||. Columns whose squared norm is below
// negligible_norm2(m, ||g||_F^2) are rounding noise (rank deficiency) and are left alone: rotating
// them against each other converges slowly and means nothing. v: empty, or n x n, multiplied by
// every rotation.
template <class T>
SolveInfo jacobi_one_sided(MatrixView<T> g, MatrixView<T> v, Ordering ordering, double tol, int max_sweeps);

// The squared column norm under which one-sided Jacobi treats a column of an m-row matrix with
// squared Frobenius norm `frobenius2` as zero: (sqrt(m) eps ||G||_F)^2, and at least the smallest
// square that keeps the rotation formulas in range. Callers complete such columns of U.
template <class T>
real_t<T> negligible_norm2(index_t m, real_t<T> frobenius2);

}  // namespace eigstream::detail
