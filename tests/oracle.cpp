// The test oracle (see oracle.hpp): generators in double precision rounded once to T, references by
// LAPACKE in double precision, assertions through Catch2 and the accuracy metrics of eigstream.
#include "oracle.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <type_traits>


// LAPACKE's complex types as std::complex (layout-compatible with Fortran COMPLEX*8 / COMPLEX*16).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <catch2/catch.hpp>

namespace oracle {

template <> const char* type_name<float>() { return "float"; }
template <> const char* type_name<double>() { return "double"; }
template <> const char* type_name<std::complex<float>>() { return "complex<float>"; }
template <> const char* type_name<std::complex<double>>() { return "complex<double>"; }

namespace {
constexpr double kSqrtHalf = 0.70710678118654752440;
}  // namespace

template <> float Rng::gaussian<float>() { return float(normal()); }
template <> double Rng::gaussian<double>() { return normal(); }
template <> std::complex<float> Rng::gaussian<std::complex<float>>() {
  const double x = normal(), y = normal();
  return {float(x * kSqrtHalf), float(y * kSqrtHalf)};
}
template <> std::complex<double> Rng::gaussian<std::complex<double>>() {
  const double x = normal(), y = normal();
  return {x * kSqrtHalf, y * kSqrtHalf};
}

namespace {

using cd = std::complex<double>;

// The double-precision type with T's real/complex kind: generators and references work in it.
template <class T> using wide_t = std::conditional_t<eigstream::is_complex_v<T>, cd, double>;

double conj_w(double x) { return x; }
cd conj_w(cd x) { return std::conj(x); }
double real_w(double x) { return x; }
double real_w(cd x) { return x.real(); }
double abs2_w(double x) { return x * x; }
double abs2_w(cd x) { return std::norm(x); }

template <class W>
double frobenius(const Matrix<W>& a) {
  double s = 0;
  for (const W& x : a.data) s += abs2_w(x);
  return std::sqrt(s);
}

// c = op(a) op(b), op = adjoint where asked.
template <class W>
Matrix<W> product(const Matrix<W>& a, bool adj_a, const Matrix<W>& b, bool adj_b) {
  const index_t m = adj_a ? a.cols : a.rows;
  const index_t inner = adj_a ? a.rows : a.cols;
  const index_t n = adj_b ? b.rows : b.cols;
  Matrix<W> c(m, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t k = 0; k < inner; ++k) {
      const W bkj = adj_b ? conj_w(b(j, k)) : b(k, j);
      if (bkj == W(0)) continue;
      for (index_t i = 0; i < m; ++i) c(i, j) += (adj_a ? conj_w(a(k, i)) : a(i, k)) * bkj;
    }
  return c;
}

template <class W>
Matrix<W> gaussian_w(index_t m, index_t n, Rng& rng) {
  Matrix<W> g(m, n);
  for (W& x : g.data) x = rng.gaussian<W>();
  return g;
}

// Replaces a (m x n, m >= n) by the Q of its QR factorisation.
void qr_q(Matrix<double>& a) {
  if (a.cols == 0) return;
  std::vector<double> tau(static_cast<std::size_t>(a.cols));
  const lapack_int m = lapack_int(a.rows), n = lapack_int(a.cols);
  REQUIRE(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a.data.data(), m, tau.data()) == 0);
  REQUIRE(LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, n, a.data.data(), m, tau.data()) == 0);
}
void qr_q(Matrix<cd>& a) {
  if (a.cols == 0) return;
  std::vector<cd> tau(static_cast<std::size_t>(a.cols));
  const lapack_int m = lapack_int(a.rows), n = lapack_int(a.cols);
  REQUIRE(LAPACKE_zgeqrf(LAPACK_COL_MAJOR, m, n, a.data.data(), m, tau.data()) == 0);
  REQUIRE(LAPACKE_zungqr(LAPACK_COL_MAJOR, m, n, n, a.data.data(), m, tau.data()) == 0);
}

template <class W>
Matrix<W> unitary_w(index_t n, Rng& rng) {
  Matrix<W> q = gaussian_w<W>(n, n, rng);
  qr_q(q);
  return q;
}

template <class W>
Matrix<W> hermitian_w(index_t n, Rng& rng) {
  const Matrix<W> g = gaussian_w<W>(n, n, rng);
  Matrix<W> h(n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) h(i, j) = (g(i, j) + conj_w(g(j, i))) * 0.5;
  return h;
}

template <class W>
Matrix<W> covariance_w(index_t n, index_t snapshots, Rng& rng) {
  if (snapshots == 0) return Matrix<W>(n, n);
  const Matrix<W> x = gaussian_w<W>(n, snapshots, rng);
  Matrix<W> c = product(x, false, x, true);
  for (W& e : c.data) e *= 1.0 / double(snapshots);
  return c;
}

template <class W>
Matrix<W> spectrum_w(const std::vector<double>& w, Rng& rng) {
  const index_t n = index_t(w.size());
  Matrix<W> q = unitary_w<W>(n, rng);
  Matrix<W> qd = q;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) qd(i, j) *= w[static_cast<std::size_t>(j)];
  return product(qd, false, q, true);
}

template <class W>
void scale_rows_cols(Matrix<W>& a, const std::vector<double>& d) {
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) a(i, j) *= d[static_cast<std::size_t>(i)] * d[static_cast<std::size_t>(j)];
}

std::vector<double> log_spaced(index_t n, double smallest) {
  std::vector<double> d(static_cast<std::size_t>(n), 1.0);
  for (index_t i = 0; i < n && n > 1; ++i) d[static_cast<std::size_t>(i)] = std::pow(smallest, double(i) / double(n - 1));
  return d;
}

template <class T, class W>
Matrix<T> narrow(const Matrix<W>& a) {
  Matrix<T> t(a.rows, a.cols);
  for (std::size_t k = 0; k < a.data.size(); ++k) t.data[k] = T(a.data[k]);
  return t;
}

// Rounds the lower triangle to T and mirrors it: exactly Hermitian in T, real diagonal.
template <class T, class W>
Matrix<T> narrow_hermitian(const Matrix<W>& a) {
  Matrix<T> t(a.rows, a.cols);
  for (index_t j = 0; j < a.cols; ++j) {
    t(j, j) = T(real_w(a(j, j)));
    for (index_t i = j + 1; i < a.rows; ++i) {
      t(i, j) = T(a(i, j));
      if constexpr (eigstream::is_complex_v<T>)
        t(j, i) = std::conj(t(i, j));
      else
        t(j, i) = t(i, j);
    }
  }
  return t;
}

template <class W, class T>
Matrix<W> widen(const Matrix<T>& a) {
  Matrix<W> w(a.rows, a.cols);
  for (std::size_t k = 0; k < a.data.size(); ++k) w.data[k] = W(a.data[k]);
  return w;
}

double worse(double current, double candidate) {
  return (std::isnan(candidate) || candidate > current) ? candidate : current;
}

struct Stats {
  std::mutex mutex;
  std::map<std::string, double> worst;
  ~Stats() {
    if (!std::getenv("ORACLE_STATS")) return;
    for (const auto& [k, v] : worst) std::fprintf(stderr, "oracle: %-80s %10.4g\n", k.c_str(), v);
  }
};
Stats& stats() {
  static Stats s;
  return s;
}

}  // namespace

void record(const std::string& key, double value) {
  Stats& s = stats();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.worst.find(key);
  if (it == s.worst.end())
    s.worst.emplace(key, value);
  else
    it->second = worse(it->second, value);
}

// ---- generators ---------------------------------------------------------------------------------

template <class T>
Matrix<T> gaussian(index_t m, index_t n, Rng& rng) {
  return narrow<T>(gaussian_w<wide_t<T>>(m, n, rng));
}
template <class T>
Matrix<T> random_unitary(index_t n, Rng& rng) {
  return narrow<T>(unitary_w<wide_t<T>>(n, rng));
}
template <class T>
Matrix<T> random_hermitian(index_t n, Rng& rng) {
  return narrow_hermitian<T>(hermitian_w<wide_t<T>>(n, rng));
}
template <class T>
Matrix<T> hermitian_with_spectrum(const std::vector<double>& w, Rng& rng) {
  return narrow_hermitian<T>(spectrum_w<wide_t<T>>(w, rng));
}

const char* to_string(EvdCase c) {
  switch (c) {
    case EvdCase::random: return "random";
    case EvdCase::covariance: return "covariance";
    case EvdCase::graded: return "graded";
    case EvdCase::graded_psd: return "graded_psd";
    case EvdCase::clustered: return "clustered";
    case EvdCase::repeated: return "repeated";
    case EvdCase::zero: return "zero";
    case EvdCase::identity: return "identity";
    case EvdCase::diagonal: return "diagonal";
    case EvdCase::rank_deficient: return "rank_deficient";
    case EvdCase::negative_definite: return "negative_definite";
    case EvdCase::tiny: return "tiny";
    case EvdCase::huge: return "huge";
    case EvdCase::tiny_psd: return "tiny_psd";
    case EvdCase::huge_psd: return "huge_psd";
  }
  return "?";
}

bool is_psd(EvdCase c) {
  switch (c) {
    case EvdCase::covariance:
    case EvdCase::graded_psd:
    case EvdCase::clustered:
    case EvdCase::repeated:
    case EvdCase::zero:
    case EvdCase::identity:
    case EvdCase::rank_deficient:
    case EvdCase::tiny_psd:
    case EvdCase::huge_psd:
      return true;
    default:
      return false;
  }
}

std::vector<EvdCase> all_evd_cases() {
  return {EvdCase::random,   EvdCase::covariance, EvdCase::graded,         EvdCase::graded_psd,
          EvdCase::clustered, EvdCase::repeated,  EvdCase::zero,           EvdCase::identity,
          EvdCase::diagonal, EvdCase::rank_deficient, EvdCase::negative_definite, EvdCase::tiny,
          EvdCase::huge,     EvdCase::tiny_psd,   EvdCase::huge_psd};
}

std::vector<EvdCase> psd_evd_cases() {
  std::vector<EvdCase> out;
  for (EvdCase c : all_evd_cases())
    if (is_psd(c)) out.push_back(c);
  return out;
}

template <class T>
Matrix<T> evd_case(EvdCase c, index_t n, std::uint64_t seed) {
  using W = wide_t<T>;
  Rng rng(seed);
  Matrix<W> a(n, n);
  switch (c) {
    case EvdCase::random: a = hermitian_w<W>(n, rng); break;
    case EvdCase::covariance: a = covariance_w<W>(n, 2 * n, rng); break;
    case EvdCase::graded:
      a = hermitian_w<W>(n, rng);
      scale_rows_cols(a, log_spaced(n, 1e-8));
      break;
    case EvdCase::graded_psd:
      a = covariance_w<W>(n, 2 * n, rng);
      scale_rows_cols(a, log_spaced(n, 1e-8));
      break;
    case EvdCase::clustered: {
      // A cluster 1, 1 + 1e-6, 1 + 2e-6, ... and (from n = 4 on) three well separated values.
      const double spread[] = {10.0, 0.5, 3.0};
      std::vector<double> w(static_cast<std::size_t>(n));
      for (index_t k = 0; k < n; ++k)
        w[static_cast<std::size_t>(k)] = (n >= 4 && k >= n - 3) ? spread[k - (n - 3)] : 1.0 + double(k) * 1e-6;
      a = spectrum_w<W>(w, rng);
      break;
    }
    case EvdCase::repeated: {
      std::vector<double> w(static_cast<std::size_t>(n));
      for (index_t k = 0; k < n; ++k) w[static_cast<std::size_t>(k)] = k < 3 ? 3.0 : 1.0;
      a = spectrum_w<W>(w, rng);
      break;
    }
    case EvdCase::zero: break;
    case EvdCase::identity:
      for (index_t i = 0; i < n; ++i) a(i, i) = 1;
      break;
    case EvdCase::diagonal:
      for (index_t i = 0; i < n; ++i) a(i, i) = rng.normal();
      break;
    case EvdCase::rank_deficient: a = covariance_w<W>(n, n / 2, rng); break;
    case EvdCase::negative_definite:
      a = covariance_w<W>(n, 2 * n, rng);
      for (W& x : a.data) x = -x;
      for (index_t i = 0; i < n; ++i) a(i, i) -= 0.01;
      break;
    case EvdCase::tiny:
    case EvdCase::huge:
      a = hermitian_w<W>(n, rng);
      for (W& x : a.data) x *= (c == EvdCase::tiny ? 1e-30 : 1e30);
      break;
    case EvdCase::tiny_psd:
    case EvdCase::huge_psd:
      a = covariance_w<W>(n, 2 * n, rng);
      for (W& x : a.data) x *= (c == EvdCase::tiny_psd ? 1e-30 : 1e30);
      break;
  }
  return narrow_hermitian<T>(a);
}

const char* to_string(SvdCase c) {
  switch (c) {
    case SvdCase::random: return "random";
    case SvdCase::rank_deficient: return "rank_deficient";
    case SvdCase::zero_columns: return "zero_columns";
    case SvdCase::graded_columns: return "graded_columns";
    case SvdCase::zero: return "zero";
    case SvdCase::tiny: return "tiny";
    case SvdCase::huge: return "huge";
  }
  return "?";
}

std::vector<SvdCase> all_svd_cases() {
  return {SvdCase::random, SvdCase::rank_deficient, SvdCase::zero_columns, SvdCase::graded_columns,
          SvdCase::zero,   SvdCase::tiny,           SvdCase::huge};
}

template <class T>
Matrix<T> svd_case(SvdCase c, index_t m, index_t n, std::uint64_t seed) {
  using W = wide_t<T>;
  Rng rng(seed);
  Matrix<W> a(m, n);
  switch (c) {
    case SvdCase::random: a = gaussian_w<W>(m, n, rng); break;
    case SvdCase::rank_deficient: {
      const index_t r = std::min(m, n) / 2;
      if (r > 0) a = product(gaussian_w<W>(m, r, rng), false, gaussian_w<W>(r, n, rng), false);
      break;
    }
    case SvdCase::zero_columns:
      a = gaussian_w<W>(m, n, rng);
      for (index_t j = 1; j < n; j += 3)
        for (index_t i = 0; i < m; ++i) a(i, j) = 0;
      break;
    case SvdCase::graded_columns: {
      a = gaussian_w<W>(m, n, rng);
      const std::vector<double> d = log_spaced(n, 1e-8);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) a(i, j) *= d[static_cast<std::size_t>(j)];
      break;
    }
    case SvdCase::zero: break;
    case SvdCase::tiny:
    case SvdCase::huge:
      a = gaussian_w<W>(m, n, rng);
      for (W& x : a.data) x *= (c == SvdCase::tiny ? 1e-30 : 1e30);
      break;
  }
  return narrow<T>(a);
}

template <class T>
Matrix<T> perturb_hermitian(const Matrix<T>& a, double rel, bool psd, std::uint64_t seed) {
  using W = wide_t<T>;
  Rng rng(seed);
  const index_t n = a.rows;
  Matrix<W> aw = widen<W>(a);
  const Matrix<W> e = psd ? covariance_w<W>(n, 2 * n, rng) : hermitian_w<W>(n, rng);
  const double norm_a = frobenius(aw), norm_e = frobenius(e);
  const double scale = norm_e > 0 ? rel * (norm_a > 0 ? norm_a : 1.0) / norm_e : 0.0;
  for (std::size_t k = 0; k < aw.data.size(); ++k) aw.data[k] += scale * e.data[k];
  return narrow_hermitian<T>(aw);
}

template <class T>
Matrix<T> perturb_general(const Matrix<T>& a, double rel, std::uint64_t seed) {
  using W = wide_t<T>;
  Rng rng(seed);
  Matrix<W> aw = widen<W>(a);
  const Matrix<W> e = gaussian_w<W>(a.rows, a.cols, rng);
  const double norm_a = frobenius(aw), norm_e = frobenius(e);
  const double scale = norm_e > 0 ? rel * (norm_a > 0 ? norm_a : 1.0) / norm_e : 0.0;
  for (std::size_t k = 0; k < aw.data.size(); ++k) aw.data[k] += scale * e.data[k];
  return narrow<T>(aw);
}

// ---- references -----------------------------------------------------------------------------------

template <class T>
std::vector<double> reference_eigenvalues(const Matrix<T>& a) {
  using W = wide_t<T>;
  const lapack_int n = lapack_int(a.rows);
  std::vector<double> w(static_cast<std::size_t>(n));
  if (n == 0) return w;
  Matrix<W> aw = widen<W>(a);
  lapack_int info;
  if constexpr (eigstream::is_complex_v<T>)
    info = LAPACKE_zheevd(LAPACK_COL_MAJOR, 'N', 'L', n, aw.data.data(), n, w.data());
  else
    info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'L', n, aw.data.data(), n, w.data());
  REQUIRE(info == 0);
  std::reverse(w.begin(), w.end());  // LAPACK: ascending
  return w;
}

template <class T>
std::vector<double> reference_singular_values(const Matrix<T>& a) {
  using W = wide_t<T>;
  const lapack_int m = lapack_int(a.rows), n = lapack_int(a.cols);
  std::vector<double> s(static_cast<std::size_t>(std::min(m, n)));
  if (s.empty()) return s;
  Matrix<W> aw = widen<W>(a);
  lapack_int info;
  if constexpr (eigstream::is_complex_v<T>)
    info = LAPACKE_zgesdd(LAPACK_COL_MAJOR, 'N', m, n, aw.data.data(), m, s.data(), nullptr, 1, nullptr, 1);
  else
    info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, n, aw.data.data(), m, s.data(), nullptr, 1, nullptr, 1);
  REQUIRE(info == 0);
  return s;  // LAPACK: descending
}

// ---- assertions -----------------------------------------------------------------------------------

namespace {

// Checks the order asked for, and returns the largest |value - reference| / ||A||_2 (values compared
// after sorting both descending).
template <class R>
double value_error(const std::vector<R>& got, const std::vector<double>& reference, eigstream::Sort sort) {
  REQUIRE(got.size() == reference.size());
  for (std::size_t i = 0; i + 1 < got.size(); ++i) {
    if (sort == eigstream::Sort::descending) {
      INFO("values must be descending: position " << i);
      CHECK(got[i] >= got[i + 1]);
    } else if (sort == eigstream::Sort::ascending) {
      INFO("values must be ascending: position " << i);
      CHECK(got[i] <= got[i + 1]);
    }
  }
  std::vector<double> sorted(got.begin(), got.end());
  std::sort(sorted.begin(), sorted.end(), [](double x, double y) { return x > y; });
  double norm2 = 0, err = 0;
  for (double r : reference) norm2 = std::max(norm2, std::abs(r));
  for (std::size_t i = 0; i < sorted.size(); ++i) err = worse(err, std::abs(sorted[i] - reference[i]));
  if (norm2 == 0) return err == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return err / norm2;
}

}  // namespace

template <class T>
void check_orthonormal(const Matrix<T>& v, const std::string& group, Bounds bounds) {
  const double ne = double(std::max<index_t>(v.rows, 1)) * eps<T>();
  const double orth = eigstream::orthogonality<T>(v.view()) / ne;
  record(key<T>(group, "orthogonality / (n eps)"), orth);
  CHECK(orth <= bounds.orthogonality);
}

template <class T>
void check_evd(const Matrix<T>& a, const std::vector<real_t<T>>& w, const Matrix<T>* v,
               const std::vector<double>& reference, eigstream::Sort sort, const std::string& group, Bounds bounds) {
  const index_t n = a.rows;
  REQUIRE(index_t(w.size()) == n);
  const double ne = double(std::max<index_t>(n, 1)) * eps<T>();
  const double values = value_error(w, reference, sort) / ne;
  record(key<T>(group, "value error / (n eps ||A||_2)"), values);
  CHECK(values <= bounds.values);
  if (!v) return;
  REQUIRE(v->rows == n);
  REQUIRE(v->cols == n);
  const double residual = eigstream::evd_residual<T>(a.view(), w.data(), v->view()) / ne;
  record(key<T>(group, "residual / (n eps)"), residual);
  CHECK(residual <= bounds.residual);
  check_orthonormal(*v, group, bounds);
}

template <class T>
void check_svd(const Matrix<T>& a, const std::vector<real_t<T>>& s, const Matrix<T>* u, const Matrix<T>* v,
               const std::vector<double>& reference, eigstream::Sort sort, const std::string& group, Bounds bounds) {
  const index_t m = a.rows, n = a.cols, k = std::min(m, n);
  REQUIRE(index_t(s.size()) == k);
  const double ne = double(std::max<index_t>(std::max(m, n), 1)) * eps<T>();
  for (std::size_t i = 0; i < s.size(); ++i) {
    INFO("singular value " << i << " must be >= 0");
    CHECK(s[i] >= 0);
  }
  const double values = value_error(s, reference, sort) / ne;
  record(key<T>(group, "value error / (n eps ||A||_2)"), values);
  CHECK(values <= bounds.values);
  if (u) {
    REQUIRE(u->rows == m);
    REQUIRE(u->cols == k);
    const double ne_u = double(std::max<index_t>(std::max(m, n), 1)) * eps<T>();
    const double orth = eigstream::orthogonality<T>(u->view()) / ne_u;
    record(key<T>(group, "orthogonality U / (n eps)"), orth);
    CHECK(orth <= bounds.orthogonality);
  }
  if (v) {
    REQUIRE(v->rows == n);
    REQUIRE(v->cols == k);
    const double orth = eigstream::orthogonality<T>(v->view()) / ne;
    record(key<T>(group, "orthogonality V / (n eps)"), orth);
    CHECK(orth <= bounds.orthogonality);
  }
  if (u && v) {
    const double residual = eigstream::svd_residual<T>(a.view(), s.data(), u->view(), v->view()) / ne;
    record(key<T>(group, "residual / (n eps)"), residual);
    CHECK(residual <= bounds.residual);
  }
}

#define ORACLE_INSTANTIATE(T)                                                                                  \
  template Matrix<T> gaussian<T>(index_t, index_t, Rng&);                                                    \
  template Matrix<T> random_unitary<T>(index_t, Rng&);                                                       \
  template Matrix<T> random_hermitian<T>(index_t, Rng&);                                                     \
  template Matrix<T> hermitian_with_spectrum<T>(const std::vector<double>&, Rng&);                           \
  template Matrix<T> evd_case<T>(EvdCase, index_t, std::uint64_t);                                           \
  template Matrix<T> svd_case<T>(SvdCase, index_t, index_t, std::uint64_t);                                  \
  template Matrix<T> perturb_hermitian<T>(const Matrix<T>&, double, bool, std::uint64_t);                    \
  template Matrix<T> perturb_general<T>(const Matrix<T>&, double, std::uint64_t);                            \
  template std::vector<double> reference_eigenvalues<T>(const Matrix<T>&);                                   \
  template std::vector<double> reference_singular_values<T>(const Matrix<T>&);                               \
  template void check_orthonormal<T>(const Matrix<T>&, const std::string&, Bounds);                          \
  template void check_evd<T>(const Matrix<T>&, const std::vector<real_t<T>>&, const Matrix<T>*,              \
                             const std::vector<double>&, eigstream::Sort, const std::string&, Bounds);       \
  template void check_svd<T>(const Matrix<T>&, const std::vector<real_t<T>>&, const Matrix<T>*,              \
                             const Matrix<T>*, const std::vector<double>&, eigstream::Sort,                 \
                             const std::string&, Bounds);
ORACLE_INSTANTIATE(float)
ORACLE_INSTANTIATE(double)
ORACLE_INSTANTIATE(std::complex<float>)
ORACLE_INSTANTIATE(std::complex<double>)

}  // namespace oracle
