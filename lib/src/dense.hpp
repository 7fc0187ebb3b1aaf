// Small dense kernels for the CPU path: products, Gram-Schmidt, sorting permutations.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"
#include "scalar.hpp"

namespace eigstream::detail {

// c = a * b (op = plain) or c = a^H * b (adjoint_a); c must not alias a or b.
template <class T>
void multiply(MatrixView<const T> a, MatrixView<const T> b, MatrixView<T> c, bool adjoint_a) {
  for (index_t j = 0; j < c.cols; ++j) {
    for (index_t i = 0; i < c.rows; ++i) c(i, j) = T(0);
    if (adjoint_a) {
      for (index_t i = 0; i < c.rows; ++i) {
        T sum = 0;
        for (index_t k = 0; k < a.rows; ++k) sum += conj_of(a(k, i)) * b(k, j);
        c(i, j) = sum;
      }
    } else {
      for (index_t k = 0; k < a.cols; ++k) {
        const T bkj = b(k, j);
        for (index_t i = 0; i < c.rows; ++i) c(i, j) += a(i, k) * bkj;
      }
    }
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
      for (index_t k = 0; k < x.rows; ++k) x(k, j) -= dot * x(k, o);
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
