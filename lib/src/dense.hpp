// Small dense kernels for the CPU path: products, Gram-Schmidt, sorting permutations.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"
#include "scalar.hpp"

namespace eigstream::detail {

// y += s x over n entries. Complex entries are worked in real arithmetic, which the compiler
// vectorises: std::complex's multiply keeps a NaN fallback that stops it.
template <class T>
void axpy(index_t n, T s, const T* x, T* y) {
  if constexpr (!is_complex<T>::value) {
    for (index_t i = 0; i < n; ++i) y[i] += s * x[i];
  } else {
    using R = real_t<T>;
    const R sr = s.real(), si = s.imag();
    const R* xr = reinterpret_cast<const R*>(x);  // std::complex<R> is laid out as R[2]
    R* yr = reinterpret_cast<R*>(y);
    for (index_t i = 0; i < n; ++i) {
      const R re = xr[2 * i], im = xr[2 * i + 1];
      yr[2 * i] += re * sr - im * si;
      yr[2 * i + 1] += re * si + im * sr;
    }
  }
}

// Columns p and q of x <- (c x_p - s_ec x_q, s_e x_p + c x_q), the right-hand side of a Jacobi
// rotation (s_e = s e, s_ec = s conj(e)); in real arithmetic, as axpy, so that it vectorises.
template <class T>
void rotate_columns(MatrixView<T> x, index_t p, index_t q, real_t<T> c, T s_e, T s_ec) {
  T* xp = &x(0, p);
  T* xq = &x(0, q);
  if constexpr (!is_complex<T>::value) {
    for (index_t k = 0; k < x.rows; ++k) {
      const T a = xp[k], b = xq[k];
      xp[k] = c * a - s_ec * b;
      xq[k] = s_e * a + c * b;
    }
  } else {
    using R = real_t<T>;
    const R er = s_e.real(), ei = s_e.imag(), fr = s_ec.real(), fi = s_ec.imag();
    R* u = reinterpret_cast<R*>(xp);  // std::complex<R> is laid out as R[2]
    R* w = reinterpret_cast<R*>(xq);
    for (index_t k = 0; k < x.rows; ++k) {
      const R ar = u[2 * k], ai = u[2 * k + 1], br = w[2 * k], bi = w[2 * k + 1];
      u[2 * k] = c * ar - (fr * br - fi * bi);
      u[2 * k + 1] = c * ai - (fr * bi + fi * br);
      w[2 * k] = (er * ar - ei * ai) + c * br;
      w[2 * k + 1] = (er * ai + ei * ar) + c * bi;
    }
  }
}

// c = a * b (op = plain) or c = a^H * b (adjoint_a); c must not alias a or b. Column by column as
// sums of scaled columns of a (a^H is formed first), so the inner loop is axpy.
template <class T>
void multiply(MatrixView<const T> a, MatrixView<const T> b, MatrixView<T> c, bool adjoint_a) {
  std::vector<T> adjoint;
  if (adjoint_a) {
    adjoint.resize(std::size_t(a.rows * a.cols));
    for (index_t j = 0; j < a.cols; ++j)
      for (index_t i = 0; i < a.rows; ++i) adjoint[std::size_t(j + i * a.cols)] = conj_of(a(i, j));
    a = MatrixView<const T>{adjoint.data(), a.cols, a.rows, a.cols};
  }
  for (index_t j = 0; j < c.cols; ++j) {
    T* cj = &c(0, j);
    std::fill_n(cj, c.rows, T(0));
    for (index_t k = 0; k < a.cols; ++k) axpy(c.rows, b(k, j), &a(0, k), cj);
  }
}

template <class T>
void set_identity(MatrixView<T> v) {
  for (index_t j = 0; j < v.cols; ++j)
    for (index_t i = 0; i < v.rows; ++i) v(i, j) = T(i == j ? 1 : 0);
}

// Makes column j of x orthogonal to the columns in `others` and of unit norm, by two passes of
// modified Gram-Schmidt. Returns the norm left after orthogonalisation (before normalising).
template <class T>
real_t<T> orthonormalise_column(MatrixView<T> x, index_t j, const std::vector<index_t>& others) {
  using R = real_t<T>;
  for (int pass = 0; pass < 2; ++pass)
    for (index_t o : others) {
      T dot = 0;
      for (index_t k = 0; k < x.rows; ++k) dot += conj_of(x(k, o)) * x(k, j);
      axpy(x.rows, -dot, &x(0, o), &x(0, j));
    }
  R norm2 = 0;
  for (index_t k = 0; k < x.rows; ++k) norm2 += abs2(x(k, j));
  const R norm = std::sqrt(norm2);
  if (norm > 0)
    for (index_t k = 0; k < x.rows; ++k) x(k, j) /= norm;
  return norm;
}

// Scales every column of v to unit norm. Rotations with t^2 below epsilon round c to exactly 1 and
// so lengthen both columns by sqrt(1 + t^2): always the same way, so over many sweeps the columns
// of an accumulated V drift from unit length. One pass at the end removes that drift.
template <class T>
void normalise_columns(MatrixView<T> v) {
  using R = real_t<T>;
  for (index_t j = 0; j < v.cols; ++j) {
    R norm2 = 0;
    for (index_t i = 0; i < v.rows; ++i) norm2 += abs2(v(i, j));
    const R norm = std::sqrt(norm2);
    if (norm > 0)
      for (index_t i = 0; i < v.rows; ++i) v(i, j) /= norm;
  }
}

// The order in which to emit values (stable, so equal values keep their solver order).
template <class R>
std::vector<index_t> sort_order(const std::vector<R>& values, Sort sort) {
  std::vector<index_t> order(values.size());
  std::iota(order.begin(), order.end(), index_t(0));
  if (sort == Sort::descending)
    std::stable_sort(order.begin(), order.end(), [&](index_t x, index_t y) { return values[x] > values[y]; });
  else if (sort == Sort::ascending)
    std::stable_sort(order.begin(), order.end(), [&](index_t x, index_t y) { return values[x] < values[y]; });
  return order;
}

// Column k of dst = column order[k] of src.
template <class T>
void copy_columns(MatrixView<const T> src, const std::vector<index_t>& order, MatrixView<T> dst) {
  for (index_t k = 0; k < index_t(order.size()); ++k)
    for (index_t i = 0; i < src.rows; ++i) dst(i, k) = src(i, order[k]);
}

}  // namespace eigstream::detail
