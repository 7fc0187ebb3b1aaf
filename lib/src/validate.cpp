#include "validate.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <vector>

#include "dense.hpp"
#include "eigstream/accuracy.hpp"
#include "eigstream/error.hpp"
#include "scalar.hpp"

namespace eigstream::detail {
namespace {

// A warm start further than this from orthonormal is not a basis a previous solve produced.
constexpr double kMaxWarmStartDefect = 0.1;

[[noreturn]] void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

}  // namespace

std::string matrix_label(const char* op, index_t b, index_t count) {
  std::ostringstream s;
  s << op;
  if (count > 1) s << ": matrix " << b << " of " << count;
  return s.str();
}

template <class T>
void check_batch(const char* op, const char* name, BatchView<T> x, index_t rows, index_t cols, index_t count,
                 bool required) {
  // The message is made only when a check fails: these checks run on every call.
  const auto fail_with = [&](const auto&... parts) {
    std::ostringstream s;
    s << op << ": " << name << ' ';
    (s << ... << parts);
    fail(ErrorCode::invalid_argument, s.str());
  };
  if (x.rows < 0 || x.cols < 0 || x.count < 0)
    fail_with("has a negative size: ", x.rows, " x ", x.cols, ", ", x.count, " matrices");
  if (x.empty()) {
    if (required && rows > 0 && cols > 0 && count > 0) fail_with("is missing (null data)");
    return;
  }
  if (x.rows != rows || x.cols != cols) fail_with("is ", x.rows, " x ", x.cols, ", expected ", rows, " x ", cols);
  if (x.ld < std::max<index_t>(1, rows))
    fail_with("has leading dimension ", x.ld, ", smaller than its ", rows, " rows");
  if (x.count != count) fail_with("holds ", x.count, " matrices, expected ", count);
  if (count > 1 && x.stride < x.ld * cols)
    fail_with("has batch stride ", x.stride, ", smaller than ld * cols = ", x.ld * cols);
}

template <class T>
void check_vector_batch(const char* op, const char* name, VectorBatchView<T> x, index_t size, index_t count) {
  const auto fail_with = [&](const auto&... parts) {  // as in check_batch
    std::ostringstream s;
    s << op << ": " << name << ' ';
    (s << ... << parts);
    fail(ErrorCode::invalid_argument, s.str());
  };
  if (x.size < 0 || x.count < 0) fail_with("has a negative size: ", x.size, ", ", x.count, " vectors");
  if (x.empty()) {
    if (size > 0 && count > 0) fail_with("is missing (null data)");
    return;
  }
  if (x.size < size) fail_with("has room for ", x.size, " values, expected ", size);
  if (x.count != count) fail_with("holds ", x.count, " vectors, expected ", count);
  if (count > 1 && x.stride < x.size) fail_with("has batch stride ", x.stride, ", smaller than its size ", x.size);
}

void check_options(const char* op, const Options& o) {
  std::ostringstream s;
  s << op << ": ";
  if (!(o.tol >= 0 && o.tol < 1))
    s << "tolerance " << o.tol << " is outside [0, 1) (0 picks the default)";
  else if (o.max_sweeps < 0)
    s << "max_sweeps " << o.max_sweeps << " is negative";
  else if (!(o.symmetry_tol >= 0 && std::isfinite(o.symmetry_tol)))
    s << "symmetry_tol " << o.symmetry_tol << " must be finite and >= 0 (0 picks the default)";
  else
    return;
  fail(ErrorCode::invalid_argument, s.str());
}

template <class T>
void check_finite(const std::string& where, const char* name, MatrixView<const T> a) {
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i)
      if (!is_finite(a(i, j))) {
        std::ostringstream s;
        s << where << ": " << name << '(' << i << ", " << j << ") is " << non_finite_kind(a(i, j))
          << " (row, column from 0)";
        fail(ErrorCode::invalid_input, s.str());
      }
}

template <class T>
void check_hermitian(const std::string& where, MatrixView<const T> a, double symmetry_tol) {
  const double defect = hermitian_defect(a);
  const double norm = frobenius_norm(a);
  if (defect <= symmetry_tol * norm) return;
  index_t wi = 0, wj = 0;
  real_t<T> worst = -1;
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = j; i < a.rows; ++i) {
      const real_t<T> d = abs_of(a(i, j) - conj_of(a(j, i)));
      if (d > worst) worst = d, wi = i, wj = j;
    }
  std::ostringstream s;
  s << where << ": A is not Hermitian: ||A - A^H||_F / ||A||_F = " << defect / norm << " > " << symmetry_tol
    << "; worst at A(" << wi << ", " << wj << ") = " << a(wi, wj) << " against A(" << wj << ", " << wi
    << ") = " << a(wj, wi) << " (row, column from 0)";
  fail(ErrorCode::invalid_input, s.str());
}

template <class T>
void load_warm_start(const std::string& where, MatrixView<const T> v0, MatrixView<T> v) {
  check_finite(where, "warm start V0", v0);
  for (index_t j = 0; j < v.cols; ++j)
    for (index_t i = 0; i < v.rows; ++i) v(i, j) = v0(i, j);
  // ||V0^H V0 - I||_F in working precision: its rounding, about n eps, is far below the bound.
  std::vector<T> gram_buf(std::size_t(v.cols * v.cols));
  const MatrixView<T> gram{gram_buf.data(), v.cols, v.cols, v.cols};
  multiply<T>(v0, v0, gram, true);
  double defect2 = 0;
  for (index_t j = 0; j < v.cols; ++j)
    for (index_t i = 0; i < v.cols; ++i) defect2 += double(abs2(gram(i, j) - T(i == j ? 1 : 0)));
  const double defect = std::sqrt(defect2);
  if (!(defect <= kMaxWarmStartDefect)) {
    std::ostringstream s;
    s << where << ": warm start V0 is not orthonormal: ||V0^H V0 - I||_F = " << defect << " > "
      << kMaxWarmStartDefect;
    fail(ErrorCode::invalid_input, s.str());
  }
  std::vector<index_t> done;
  for (index_t j = 0; j < v.cols; ++j) {
    orthonormalise_column(v, j, done);
    done.push_back(j);
  }
}

template <class R>
void check_eigenvalues(const char* op, const R* values, index_t n) {
  std::ostringstream s;
  s << op << ": ";
  if (n < 1) fail(ErrorCode::invalid_argument, s.str() + "no eigenvalues (the matrix order must be >= 1)");
  if (values == nullptr) fail(ErrorCode::invalid_argument, s.str() + "the eigenvalues are missing (null data)");
  for (index_t i = 0; i < n; ++i)
    if (!is_finite(values[i])) {
      s << "eigenvalue " << i << " is " << non_finite_kind(values[i]);
      fail(ErrorCode::invalid_input, s.str());
    }
  for (index_t i = 1; i < n; ++i)
    if (values[i] > values[i - 1]) {
      s << "eigenvalues must be in descending order (Sort::descending), but eigenvalue " << i << " = "
        << values[i] << " > eigenvalue " << i - 1 << " = " << values[i - 1];
      fail(ErrorCode::invalid_argument, s.str());
    }
}

template <class T>
double tolerance(const Options& options, bool one_sided, index_t rows) {
  if (options.tol > 0) return options.tol;
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  return one_sided ? std::sqrt(double(std::max<index_t>(rows, 1))) * eps : eps;
}

template <class T>
double symmetry_tolerance(const Options& options) {
  return options.symmetry_tol > 0 ? options.symmetry_tol : 100 * double(std::numeric_limits<real_t<T>>::epsilon());
}

template <class T>
real_t<T> max_abs(MatrixView<const T> a) {
  real_t<T> m = 0;
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) m = std::max(m, abs_of(a(i, j)));
  return m;
}

#define EIGSTREAM_INSTANTIATE(T)                                                                                  \
  template void check_batch<const T>(const char*, const char*, BatchView<const T>, index_t, index_t, index_t, bool); \
  template void check_batch<T>(const char*, const char*, BatchView<T>, index_t, index_t, index_t, bool);          \
  template void check_finite<T>(const std::string&, const char*, MatrixView<const T>);                          \
  template void check_hermitian<T>(const std::string&, MatrixView<const T>, double);                            \
  template void load_warm_start<T>(const std::string&, MatrixView<const T>, MatrixView<T>);                     \
  template double tolerance<T>(const Options&, bool, index_t);                                                  \
  template double symmetry_tolerance<T>(const Options&);                                                        \
  template real_t<T> max_abs<T>(MatrixView<const T>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)
template void check_eigenvalues<float>(const char*, const float*, index_t);
template void check_eigenvalues<double>(const char*, const double*, index_t);
template void check_vector_batch<float>(const char*, const char*, VectorBatchView<float>, index_t, index_t);
template void check_vector_batch<double>(const char*, const char*, VectorBatchView<double>, index_t, index_t);
template void check_vector_batch<const float>(const char*, const char*, VectorBatchView<const float>, index_t, index_t);
template void check_vector_batch<const double>(const char*, const char*, VectorBatchView<const double>, index_t, index_t);

}  // namespace eigstream::detail
