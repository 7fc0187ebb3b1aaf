// Accuracy metrics shared by the tests, the CLI and eigbench, computed in long double.
#pragma once

#include "eigstream/views.hpp"

namespace eigstream {

// ||A V - V diag(w)||_F / ||A||_F (0 when A is zero), A Hermitian n x n, V n x k.
template <class T>
double evd_residual(MatrixView<const T> a, const real_t<T>* w, MatrixView<const T> v);

// ||A V - U diag(s)||_F / ||A||_F, A m x n, U m x k, V n x k.
template <class T>
double svd_residual(MatrixView<const T> a, const real_t<T>* s, MatrixView<const T> u, MatrixView<const T> v);

// ||V^H V - I||_F for V with orthonormal columns expected.
template <class T>
double orthogonality(MatrixView<const T> v);

// ||A||_F and ||A - A^H||_F.
template <class T>
double frobenius_norm(MatrixView<const T> a);
template <class T>
double hermitian_defect(MatrixView<const T> a);

}  // namespace eigstream
