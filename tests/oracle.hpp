// The test oracle: a small dense matrix, seeded generators of hard cases for EVD and SVD, reference
// eigenvalues and singular values from LAPACKE in double precision (dsyevd / zheevd, dgesdd / zgesdd,
// applied to the input promoted to double), and the shared assertions on residual, orthogonality
// and value error (metrics from eigstream/accuracy.hpp).
//
// Memory layout: Matrix<T> is column-major and packed (ld = rows), as eigstream's default views.
// Scalars: float, double, std::complex<float>, std::complex<double>.
#pragma once

#include <catch2/catch.hpp>

#include <complex>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eigstream/eigstream.hpp"

namespace oracle {

using eigstream::index_t;
template <class T> using real_t = eigstream::real_t<T>;

template <class T>
double eps() {
  return double(std::numeric_limits<real_t<T>>::epsilon());
}

template <class T> const char* type_name();
template <> const char* type_name<float>();
template <> const char* type_name<double>();
template <> const char* type_name<std::complex<float>>();
template <> const char* type_name<std::complex<double>>();

template <class T>
struct Matrix {
  index_t rows = 0;
  index_t cols = 0;
  std::vector<T> data;

  Matrix() = default;
  Matrix(index_t r, index_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c)) {}

  T& operator()(index_t i, index_t j) { return data[static_cast<std::size_t>(i + j * rows)]; }
  const T& operator()(index_t i, index_t j) const { return data[static_cast<std::size_t>(i + j * rows)]; }
  eigstream::MatrixView<T> view() { return {data.data(), rows, cols, rows}; }
  eigstream::MatrixView<const T> view() const { return {data.data(), rows, cols, rows}; }
  eigstream::MatrixView<const T> cview() const { return view(); }

  static Matrix identity(index_t n) {
    Matrix m(n, n);
    for (index_t i = 0; i < n; ++i) m(i, i) = T(1);
    return m;
  }
};

// Seeded random numbers; gaussian<complex>() has E|z|^2 = 1.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  double normal() { return normal_(engine_); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
  template <class T> T gaussian();

 private:
  std::mt19937_64 engine_;
  std::normal_distribution<double> normal_{0.0, 1.0};
};
template <> float Rng::gaussian<float>();
template <> double Rng::gaussian<double>();
template <> std::complex<float> Rng::gaussian<std::complex<float>>();
template <> std::complex<double> Rng::gaussian<std::complex<double>>();

// ---- generators ---------------------------------------------------------------------------------
// All are computed in double (real or complex as T) and rounded to T once; Hermitian outputs are
// made exactly Hermitian in T (mirrored lower triangle, real diagonal).

template <class T> Matrix<T> gaussian(index_t m, index_t n, Rng& rng);
template <class T> Matrix<T> random_unitary(index_t n, Rng& rng);       // QR (geqrf/ungqr) of a Gaussian
template <class T> Matrix<T> random_hermitian(index_t n, Rng& rng);     // (G + G^H) / 2
template <class T> Matrix<T> hermitian_with_spectrum(const std::vector<double>& w, Rng& rng);  // Q diag(w) Q^H

enum class EvdCase {
  random,             // (G + G^H) / 2
  covariance,         // X X^H / 2n, X n x 2n
  graded,             // D H D, H random Hermitian, D log-spaced 1e-8 .. 1
  graded_psd,         // D C D, C covariance
  clustered,          // Q diag(1 + k 1e-6, and 10, 0.5, 3) Q^H
  repeated,           // Q diag(3, 3, 3, 1, 1, ...) Q^H
  zero,
  identity,
  diagonal,           // Gaussian diagonal (both signs), no rotation needed
  rank_deficient,     // X X^H, X n x (n / 2)
  negative_definite,  // -(covariance + 0.01 I)
  tiny,               // random Hermitian * 1e-30
  huge,               // random Hermitian * 1e30
  tiny_psd,           // covariance * 1e-30
  huge_psd,           // covariance * 1e30
};
const char* to_string(EvdCase c);
bool is_psd(EvdCase c);
std::vector<EvdCase> all_evd_cases();
std::vector<EvdCase> psd_evd_cases();
template <class T> Matrix<T> evd_case(EvdCase c, index_t n, std::uint64_t seed);

enum class SvdCase {
  random,          // Gaussian m x n
  rank_deficient,  // (m x r)(r x n), r = min(m, n) / 2
  zero_columns,    // Gaussian with columns 1, 4, 7, ... zero
  graded_columns,  // Gaussian with column j scaled by 1e-8^(j / (n - 1))
  zero,
  tiny,            // Gaussian * 1e-30
  huge,            // Gaussian * 1e30
};
const char* to_string(SvdCase c);
std::vector<SvdCase> all_svd_cases();
template <class T> Matrix<T> svd_case(SvdCase c, index_t m, index_t n, std::uint64_t seed);

// A + rel * ||A||_F * E / ||E||_F: E random Hermitian, or a random covariance when psd (so that a
// PSD A stays PSD). general: E Gaussian m x n (for SVD).
template <class T> Matrix<T> perturb_hermitian(const Matrix<T>& a, double rel, bool psd, std::uint64_t seed);
template <class T> Matrix<T> perturb_general(const Matrix<T>& a, double rel, std::uint64_t seed);

// ---- references (LAPACKE, double precision) -------------------------------------------------------
template <class T> std::vector<double> reference_eigenvalues(const Matrix<T>& a);       // descending
template <class T> std::vector<double> reference_singular_values(const Matrix<T>& a);   // descending

// ---- shared assertions ------------------------------------------------------------------------------
// Bounds, as multiples of n * eps(T) (n: the order for EVD, max(m, n) for SVD).
//
// Why c = 4 is enough for Jacobi: each sweep touches every entry of a column of V (or G) through
// n - 1 plane rotations, each exact up to a few ulps; the rounding errors of independent rotations
// add up like a random walk, so a column drifts by O(sqrt(n * sweeps) * eps) and the Frobenius norms
// of ||V^H V - I|| and of the residual by O(n * sqrt(sweeps) * eps) at worst, with a constant near 1
// in practice (Demmel & Veselic: Jacobi is backward stable with a modest constant). The eigenvalue
// error is bounded by the backward error (Weyl: |dlambda| <= ||dA||_2), so the same factor applies
// relative to ||A||_2. c = 4 leaves room for ~10 sweeps and for the float outputs' own rounding.
struct Bounds {
  double residual = 4;
  double orthogonality = 4;
  double values = 4;
};

// Solves and checks. `group` names the statistics line ("evd two-sided cold", ...).
template <class T>
void check_evd(const Matrix<T>& a, const std::vector<real_t<T>>& w, const Matrix<T>* v,
               const std::vector<double>& reference, eigstream::Sort sort, const std::string& group,
               Bounds bounds = {});

template <class T>
void check_svd(const Matrix<T>& a, const std::vector<real_t<T>>& s, const Matrix<T>* u, const Matrix<T>* v,
               const std::vector<double>& reference, eigstream::Sort sort, const std::string& group,
               Bounds bounds = {});

// Orthogonality ||V^H V - I||_F / (n eps) checked against bounds.orthogonality (n = rows of V).
template <class T>
void check_orthonormal(const Matrix<T>& v, const std::string& group, Bounds bounds = {});

// Records the largest value seen per key, printed at exit when ORACLE_STATS is set in the environment
// (the worst ratios and sweeps per type and group).
void record(const std::string& key, double value);

template <class T>
std::string key(const std::string& group, const char* metric) {
  return std::string(type_name<T>()) + " | " + group + " | " + metric;
}

// Convenience: one EVD / SVD with all outputs, packed.
template <class T>
struct EvdResult {
  std::vector<real_t<T>> w;
  Matrix<T> v;
  eigstream::SolveInfo info;
};

template <class T>
EvdResult<T> run_evd(const Matrix<T>& a, const eigstream::Options& options, const Matrix<T>* warm = nullptr) {
  EvdResult<T> r;
  r.w.resize(static_cast<std::size_t>(a.rows));
  r.v = Matrix<T>(a.rows, a.rows);
  r.info = eigstream::evd(a.view(), r.w.data(), r.v.view(), options,
                          warm ? warm->view() : eigstream::MatrixView<const T>{});
  return r;
}

template <class T>
struct SvdResult {
  std::vector<real_t<T>> s;
  Matrix<T> u;
  Matrix<T> v;
  eigstream::SolveInfo info;
};

template <class T>
SvdResult<T> run_svd(const Matrix<T>& a, const eigstream::Options& options, const Matrix<T>* warm = nullptr) {
  const index_t k = a.rows < a.cols ? a.rows : a.cols;
  SvdResult<T> r;
  r.s.resize(static_cast<std::size_t>(k));
  r.u = Matrix<T>(a.rows, k);
  r.v = Matrix<T>(a.cols, k);
  r.info = eigstream::svd(a.view(), r.s.data(), r.u.view(), r.v.view(), options,
                          warm ? warm->view() : eigstream::MatrixView<const T>{});
  return r;
}

// ---- signal-processing scenes ------------------------------------------------------------------------
// What the klt and beamforming tests start from: a block of samples x (empty when the covariance was
// given), its covariance r (eigstream::Covariance of that one block) and the EVD of r (eigstream::evd,
// descending).
template <class R>
struct SampleEvd {
  Matrix<eigstream::sample_t> x;
  Matrix<std::complex<R>> r;
  std::vector<R> w;
  Matrix<std::complex<R>> v;

  template <class Generator>
  static SampleEvd generated(Generator generator, index_t snapshots) {
    SampleEvd s;
    s.x = Matrix<eigstream::sample_t>(generator.channels(), snapshots);
    generator.generate(s.x.view());
    eigstream::Covariance<R> covariance({s.x.rows, eigstream::CovarianceConfig::Mode::exponential, 0, 1, {}});
    covariance.update(s.x.cview());
    s.r = Matrix<std::complex<R>>(s.x.rows, s.x.rows);
    covariance.covariance(s.r.view());
    s.decompose();
    return s;
  }
  static SampleEvd of_covariance(Matrix<std::complex<R>> r) {
    SampleEvd s;
    s.r = std::move(r);
    s.decompose();
    return s;
  }
  eigstream::EvdView<R> evd() const { return {w.data(), v.cview()}; }

 private:
  void decompose() {
    w.resize(static_cast<std::size_t>(r.rows));
    v = Matrix<std::complex<R>>(r.rows, r.rows);
    eigstream::evd(r.cview(), w.data(), v.view());
  }
};

// ---- errors -------------------------------------------------------------------------------------------
// Runs f, which must throw eigstream::Error with `code` and a message holding every one of `needles`.
template <class F>
void check_error(F&& f, eigstream::ErrorCode code, std::initializer_list<const char*> needles) {
  bool thrown = false;
  try {
    f();
  } catch (const eigstream::Error& e) {
    thrown = true;
    const std::string message = e.what();
    INFO("message: " << message);
    CHECK(std::string(eigstream::to_string(e.code())) == eigstream::to_string(code));
    for (const char* needle : needles) {
      INFO("expected in the message: \"" << needle << "\"");
      CHECK(message.find(needle) != std::string::npos);
    }
  }
  INFO("expected an eigstream::Error with code " << eigstream::to_string(code));
  CHECK(thrown);
}

}  // namespace oracle
