// Accuracy metrics in long double, so that they measure the solver and not their own rounding.
#include "eigstream/accuracy.hpp"

#include <cmath>
#include <complex>

namespace eigstream {
namespace {

using LD = long double;
using LC = std::complex<long double>;

template <class T> LC widen(T x) { return LC(LD(x), 0); }
template <class R> LC widen(std::complex<R> x) { return LC(LD(x.real()), LD(x.imag())); }
LD norm2(LC x) { return x.real() * x.real() + x.imag() * x.imag(); }

}  // namespace

template <class T>
double frobenius_norm(MatrixView<const T> a) {
  LD sum = 0;
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) sum += norm2(widen(a(i, j)));
  return double(std::sqrt(sum));
}

template <class T>
double hermitian_defect(MatrixView<const T> a) {
  LD sum = 0;
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) sum += norm2(widen(a(i, j)) - std::conj(widen(a(j, i))));
  return double(std::sqrt(sum));
}

// ||A X - Y diag(d)||_F / ||A||_F for A rows x cols, X cols x k, Y rows x k.
template <class T>
double relative_residual(MatrixView<const T> a, const real_t<T>* d, MatrixView<const T> x, MatrixView<const T> y) {
  LD sum = 0;
  for (index_t j = 0; j < x.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) {
      LC ax = 0;
      for (index_t k = 0; k < a.cols; ++k) ax += widen(a(i, k)) * widen(x(k, j));
      sum += norm2(ax - widen(y(i, j)) * LD(d[j]));
    }
  const double norm = frobenius_norm(a);
  return norm > 0 ? double(std::sqrt(sum)) / norm : double(std::sqrt(sum));
}

template <class T>
double evd_residual(MatrixView<const T> a, const real_t<T>* w, MatrixView<const T> v) {
  return relative_residual(a, w, v, v);
}

template <class T>
double svd_residual(MatrixView<const T> a, const real_t<T>* s, MatrixView<const T> u, MatrixView<const T> v) {
  return relative_residual(a, s, v, u);
}

template <class T>
double orthogonality(MatrixView<const T> v) {
  LD sum = 0;
  for (index_t j = 0; j < v.cols; ++j)
    for (index_t i = 0; i < v.cols; ++i) {
      LC dot = 0;
      for (index_t k = 0; k < v.rows; ++k) dot += std::conj(widen(v(k, i))) * widen(v(k, j));
      sum += norm2(dot - LD(i == j ? 1 : 0));
    }
  return double(std::sqrt(sum));
}

#define EIGSTREAM_INSTANTIATE(T)                                                                                \
  template double frobenius_norm<T>(MatrixView<const T>);                                                    \
  template double hermitian_defect<T>(MatrixView<const T>);                                                  \
  template double evd_residual<T>(MatrixView<const T>, const real_t<T>*, MatrixView<const T>);               \
  template double svd_residual<T>(MatrixView<const T>, const real_t<T>*, MatrixView<const T>, MatrixView<const T>); \
  template double orthogonality<T>(MatrixView<const T>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream
