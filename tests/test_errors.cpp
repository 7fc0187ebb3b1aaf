// Every error path of evd / svd: the ErrorCode, and a message that names what is wrong and where (the
// matrix of a batch, the entry's row and column); Options::flag_invalid; non-convergence reported or
// thrown; the CUDA backend in a build without kernels; empty problems; in CUDA builds, the device
// interface's refusal of outputs that overlap A.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "oracle.hpp"
#if defined(EIGSTREAM_HAVE_CUDA)
#include "eigstream/cuda.hpp"
#endif

using eigstream::Backend;
using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::Method;
using eigstream::Options;
using eigstream::SolveInfo;
using namespace oracle;

namespace {

// A packed batch of `count` copies of generated matrices, and room for the outputs.
template <class T>
struct EvdBatch {
  index_t n, count;
  std::vector<T> a;
  std::vector<real_t<T>> w;
  std::vector<T> v;
  std::vector<SolveInfo> info;

  EvdBatch(index_t n_, index_t count_, EvdCase c = EvdCase::random)
      : n(n_), count(count_), w(static_cast<std::size_t>(n_ * count_)), v(static_cast<std::size_t>(n_ * n_ * count_)), info(static_cast<std::size_t>(count_)) {
    for (index_t b = 0; b < count; ++b) {
      const Matrix<T> m = evd_case<T>(c, n, 900 + std::uint64_t(b));
      a.insert(a.end(), m.data.begin(), m.data.end());
    }
  }
  T& at(index_t b, index_t i, index_t j) { return a[static_cast<std::size_t>(b * n * n + i + j * n)]; }
  void run(const Options& options = {}, const T* warm = nullptr) {
    eigstream::evd_batched(eigstream::batch<const T>(a.data(), n, n, count), eigstream::vectors(w.data(), n, count),
                           eigstream::batch(v.data(), n, n, count), info.data(), options,
                           warm ? eigstream::batch<const T>(warm, n, n, count) : eigstream::BatchView<const T>{});
  }
};

template <class T>
struct SvdBatch {
  index_t m, n, k, count;
  std::vector<T> a;
  std::vector<real_t<T>> s;
  std::vector<T> u, v;
  std::vector<SolveInfo> info;

  SvdBatch(index_t m_, index_t n_, index_t count_)
      : m(m_), n(n_), k(std::min(m_, n_)), count(count_), s(static_cast<std::size_t>(k * count_)),
        u(static_cast<std::size_t>(m_ * k * count_)), v(static_cast<std::size_t>(n_ * k * count_)), info(static_cast<std::size_t>(count_)) {
    for (index_t b = 0; b < count; ++b) {
      const Matrix<T> x = svd_case<T>(SvdCase::random, m, n, 950 + std::uint64_t(b));
      a.insert(a.end(), x.data.begin(), x.data.end());
    }
  }
  T& at(index_t b, index_t i, index_t j) { return a[static_cast<std::size_t>(b * m * n + i + j * m)]; }
  void run(const Options& options = {}) {
    eigstream::svd_batched(eigstream::batch<const T>(a.data(), m, n, count), eigstream::vectors(s.data(), k, count),
                           eigstream::batch(u.data(), m, k, count), eigstream::batch(v.data(), n, k, count),
                           info.data(), options);
  }
};

template <class T>
T nan_entry(bool in_imaginary) {
  using R = real_t<T>;
  const R nan = std::numeric_limits<R>::quiet_NaN();
  if constexpr (eigstream::is_complex_v<T>)
    return in_imaginary ? T(R(1), nan) : T(nan, R(0));
  else
    return T(nan);
}

}  // namespace

#define EIGSTREAM_TEST_TYPES float, double, std::complex<float>, std::complex<double>

TEMPLATE_TEST_CASE("errors: NaN and Inf entries name the matrix of the batch and the entry", "[errors]",
                   EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  using R = real_t<T>;
  SECTION("evd: NaN in matrix 3 of 8") {
    EvdBatch<T> batch(5, 8);
    batch.at(3, 2, 1) = nan_entry<T>(false);
    check_error([&] { batch.run(); }, ErrorCode::invalid_input, {"matrix 3 of 8", "A(2, 1)", "NaN", "row, column"});
  }
  SECTION("evd: NaN only in the imaginary part (complex) / NaN (real), in the upper triangle") {
    EvdBatch<T> batch(5, 8);
    batch.at(6, 0, 4) = nan_entry<T>(true);
    check_error([&] { batch.run(); }, ErrorCode::invalid_input, {"matrix 6 of 8", "A(0, 4)", "NaN"});
  }
  SECTION("evd: Inf in matrix 5 of 8") {
    EvdBatch<T> batch(5, 8);
    batch.at(5, 4, 4) = T(-std::numeric_limits<R>::infinity());
    check_error([&] { batch.run(); }, ErrorCode::invalid_input, {"matrix 5 of 8", "A(4, 4)", "infinite"});
  }
  SECTION("evd one-sided: NaN in matrix 2 of 8") {
    EvdBatch<T> batch(5, 8, EvdCase::covariance);
    batch.at(2, 3, 0) = nan_entry<T>(false);
    Options options;
    options.method = Method::one_sided;
    check_error([&] { batch.run(options); }, ErrorCode::invalid_input, {"matrix 2 of 8", "A(3, 0)", "NaN"});
  }
  SECTION("evd: a single matrix names the entry") {
    Matrix<T> a = evd_case<T>(EvdCase::random, 4, 1);
    a(1, 3) = T(std::numeric_limits<R>::infinity());
    std::vector<R> w(4);
    check_error([&] { eigstream::evd(a.view(), w.data()); }, ErrorCode::invalid_input, {"A(1, 3)", "infinite"});
  }
  SECTION("svd: Inf in matrix 4 of 8, tall and wide") {
    SvdBatch<T> tall(7, 3, 8), wide(3, 7, 8);
    tall.at(4, 6, 2) = T(std::numeric_limits<R>::infinity());
    wide.at(4, 2, 6) = nan_entry<T>(true);
    check_error([&] { tall.run(); }, ErrorCode::invalid_input, {"svd", "matrix 4 of 8", "A(6, 2)", "infinite"});
    check_error([&] { wide.run(); }, ErrorCode::invalid_input, {"svd", "matrix 4 of 8", "A(2, 6)", "NaN"});
  }
}

TEMPLATE_TEST_CASE("errors: evd of a non-square matrix is invalid_argument", "[errors]", EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  Matrix<T> a(3, 4);
  std::vector<real_t<T>> w(4);
  check_error([&] { eigstream::evd(a.view(), w.data()); }, ErrorCode::invalid_argument, {"3 x 4", "square"});
}

TEMPLATE_TEST_CASE("errors: non-Hermitian input is invalid_input and names the worst entry", "[errors]",
                   EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  using R = real_t<T>;
  SECTION("off-diagonal entry, in matrix 1 of 3") {
    EvdBatch<T> batch(6, 3);
    batch.at(1, 4, 1) += T(R(0.5));
    check_error([&] { batch.run(); }, ErrorCode::invalid_input, {"matrix 1 of 3", "not Hermitian", "A(4, 1)"});
  }
  SECTION("one-sided method too") {
    EvdBatch<T> batch(6, 3, EvdCase::covariance);
    batch.at(2, 0, 5) += T(R(0.5));
    Options options;
    options.method = Method::one_sided;
    check_error([&] { batch.run(options); }, ErrorCode::invalid_input, {"matrix 2 of 3", "not Hermitian", "A(5, 0)"});
  }
  if constexpr (eigstream::is_complex_v<T>) {
    SECTION("complex: symmetric but not Hermitian (A = A^T)") {
      Matrix<T> a = evd_case<T>(EvdCase::random, 5, 2);
      a(3, 1) = T(R(0.25), R(1));
      a(1, 3) = T(R(0.25), R(1));  // conj would be (0.25, -1)
      std::vector<R> w(5);
      check_error([&] { eigstream::evd(a.view(), w.data()); }, ErrorCode::invalid_input, {"not Hermitian", "A(3, 1)"});
    }
    SECTION("complex: diagonal entry with a nonzero imaginary part") {
      Matrix<T> a = evd_case<T>(EvdCase::random, 5, 3);
      a(4, 4) = T(R(2), R(0.5));
      std::vector<R> w(5);
      check_error([&] { eigstream::evd(a.view(), w.data()); }, ErrorCode::invalid_input, {"not Hermitian", "A(4, 4)"});
    }
  }
  SECTION("rounding-level asymmetry is accepted (only the lower triangle is used)") {
    Matrix<T> a = evd_case<T>(EvdCase::covariance, 8, 4);
    a(0, 7) *= R(1) + 4 * std::numeric_limits<R>::epsilon();
    std::vector<R> w(8);
    CHECK_NOTHROW(eigstream::evd(a.view(), w.data()));
  }
}

TEMPLATE_TEST_CASE("errors: bad layouts and output sizes are invalid_argument", "[errors]", EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  using R = real_t<T>;
  const index_t n = 4;
  std::vector<T> a_buf(64);
  for (index_t i = 0; i < n; ++i) a_buf[static_cast<std::size_t>(i * (n + 1))] = T(1);
  std::vector<R> w(64);
  std::vector<T> v(64);
  SECTION("evd: ld < rows") {
    const eigstream::MatrixView<const T> a{a_buf.data(), n, n, n - 1};
    check_error([&] { eigstream::evd(a, w.data()); }, ErrorCode::invalid_argument, {"A", "leading dimension 3", "4 rows"});
  }
  SECTION("evd: vectors with ld < rows") {
    const eigstream::MatrixView<T> vv{v.data(), n, n, n - 2};
    check_error([&] { eigstream::evd(eigstream::matrix<const T>(a_buf.data(), n, n), w.data(), vv); },
                ErrorCode::invalid_argument, {"vectors", "leading dimension 2"});
  }
  SECTION("evd_batched: A stride too small") {
    check_error(
        [&] {
          eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, 2, n, n * n - 1),
                                 eigstream::vectors(w.data(), n, 2));
        },
        ErrorCode::invalid_argument, {"A", "batch stride 15", "16"});
  }
  SECTION("evd_batched: vectors stride too small") {
    check_error(
        [&] {
          eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, 2, n, n * n),
                                 eigstream::vectors(w.data(), n, 2), eigstream::batch(v.data(), n, n, 2, n, n * n - 4));
        },
        ErrorCode::invalid_argument, {"vectors", "batch stride 12"});
  }
  SECTION("evd_batched: values too short") {
    check_error(
        [&] {
          eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, 1), eigstream::vectors(w.data(), n - 1, 1));
        },
        ErrorCode::invalid_argument, {"values", "room for 3", "expected 4"});
  }
  SECTION("evd_batched: values stride too small / count mismatch") {
    check_error(
        [&] {
          eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, 2, n, n * n),
                                 eigstream::VectorBatchView<R>{w.data(), n, n - 1, 2});
        },
        ErrorCode::invalid_argument, {"values", "stride 3"});
    check_error(
        [&] {
          eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, 2, n, n * n),
                                 eigstream::vectors(w.data(), n, 3));
        },
        ErrorCode::invalid_argument, {"values", "holds 3", "expected 2"});
  }
  SECTION("evd_batched: negative sizes") {
    check_error(
        [&] {
          eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, -1, n, n * n), eigstream::vectors(w.data(), n, -1));
        },
        ErrorCode::invalid_argument, {"A", "negative size", "-1 matrices"});
    check_error(
        [&] {
          eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, 1), eigstream::VectorBatchView<R>{w.data(), -n, n, 1});
        },
        ErrorCode::invalid_argument, {"values", "negative size", "-4"});
  }
  SECTION("evd_batched: values missing") {
    check_error([&] { eigstream::evd_batched(eigstream::batch<const T>(a_buf.data(), n, n, 1), eigstream::VectorBatchView<R>{}); },
                ErrorCode::invalid_argument, {"values", "missing"});
  }
  SECTION("evd: vectors of the wrong size") {
    check_error([&] { eigstream::evd(eigstream::matrix<const T>(a_buf.data(), n, n), w.data(), eigstream::matrix(v.data(), n - 1, n - 1)); },
                ErrorCode::invalid_argument, {"vectors", "3 x 3", "expected 4 x 4"});
    check_error([&] { eigstream::evd(eigstream::matrix<const T>(a_buf.data(), n, n), w.data(), eigstream::matrix(v.data(), n, n + 1)); },
                ErrorCode::invalid_argument, {"vectors", "4 x 5", "expected 4 x 4"});
  }
  SECTION("svd: U and V of the wrong size, singular values too short, ld < rows") {
    const index_t m = 6;  // A 6 x 4: U 6 x 4, V 4 x 4
    std::vector<T> g(64);
    const auto a = eigstream::matrix<const T>(g.data(), m, n);
    check_error([&] { eigstream::svd(a, w.data(), eigstream::matrix(v.data(), m, m)); }, ErrorCode::invalid_argument,
                {"U", "6 x 6", "expected 6 x 4"});
    check_error([&] { eigstream::svd(a, w.data(), eigstream::MatrixView<T>{}, eigstream::matrix(v.data(), m, n)); },
                ErrorCode::invalid_argument, {"V", "6 x 4", "expected 4 x 4"});
    check_error(
        [&] {
          eigstream::svd_batched(eigstream::batch<const T>(g.data(), m, n, 1), eigstream::vectors(w.data(), n - 1, 1));
        },
        ErrorCode::invalid_argument, {"singular values", "room for 3", "expected 4"});
    check_error([&] { eigstream::svd(eigstream::MatrixView<const T>{g.data(), m, n, m - 1}, w.data()); },
                ErrorCode::invalid_argument, {"A", "leading dimension 5"});
  }
}

TEMPLATE_TEST_CASE("errors: bad warm starts", "[errors][warm-start]", EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  using R = real_t<T>;
  const index_t n = 5;
  const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 5);
  SECTION("wrong size: invalid_argument") {
    const Matrix<T> v0 = Matrix<T>::identity(n - 1);
    check_error([&] { run_evd(a, Options{}, &v0); }, ErrorCode::invalid_argument, {"warm start V0", "4 x 4", "expected 5 x 5"});
    const Matrix<T> tall = svd_case<T>(SvdCase::random, n + 3, n, 6);
    check_error([&] { run_svd(tall, Options{}, &v0); }, ErrorCode::invalid_argument, {"warm start V0", "expected 5 x 5"});
    const Matrix<T> wide = svd_case<T>(SvdCase::random, n - 1, n + 3, 7);
    const Matrix<T> u0 = Matrix<T>::identity(n);
    check_error([&] { run_svd(wide, Options{}, &u0); }, ErrorCode::invalid_argument, {"warm start U0", "expected 4 x 4"});
  }
  SECTION("not orthonormal: invalid_input") {
    Matrix<T> v0 = Matrix<T>::identity(n);
    v0(2, 2) = T(R(3));
    check_error([&] { run_evd(a, Options{}, &v0); }, ErrorCode::invalid_input, {"warm start V0", "not orthonormal"});
    Options one_sided;
    one_sided.method = Method::one_sided;
    check_error([&] { run_evd(a, one_sided, &v0); }, ErrorCode::invalid_input, {"not orthonormal"});
    const Matrix<T> zero(n, n);
    check_error([&] { run_evd(a, Options{}, &zero); }, ErrorCode::invalid_input, {"not orthonormal"});
  }
  SECTION("NaN entry: invalid_input naming the entry and the matrix of the batch") {
    Matrix<T> v0 = Matrix<T>::identity(n);
    v0(1, 2) = nan_entry<T>(false);
    check_error([&] { run_evd(a, Options{}, &v0); }, ErrorCode::invalid_input, {"warm start V0(1, 2)", "NaN"});
    EvdBatch<T> batch(n, 4);
    std::vector<T> warm;
    for (index_t b = 0; b < 4; ++b) {
      const Matrix<T> id = Matrix<T>::identity(n);
      warm.insert(warm.end(), id.data.begin(), id.data.end());
    }
    warm[static_cast<std::size_t>(2 * n * n + 3 + 0 * n)] = nan_entry<T>(true);
    check_error([&] { batch.run(Options{}, warm.data()); }, ErrorCode::invalid_input,
                {"matrix 2 of 4", "warm start V0(3, 0)", "NaN"});
  }
}

TEMPLATE_TEST_CASE("errors: bad options are invalid_argument", "[errors]", EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  const Matrix<T> a = evd_case<T>(EvdCase::random, 4, 8);
  const Matrix<T> g = svd_case<T>(SvdCase::random, 5, 3, 9);
  Options options;
  SECTION("negative tol") {
    options.tol = -1e-6;
    check_error([&] { run_evd(a, options); }, ErrorCode::invalid_argument, {"tolerance", "-1e-06"});
    check_error([&] { run_svd(g, options); }, ErrorCode::invalid_argument, {"svd", "tolerance"});
  }
  SECTION("tol >= 1 and NaN tol") {
    options.tol = 1;
    check_error([&] { run_evd(a, options); }, ErrorCode::invalid_argument, {"tolerance"});
    options.tol = std::numeric_limits<double>::quiet_NaN();
    check_error([&] { run_evd(a, options); }, ErrorCode::invalid_argument, {"tolerance"});
  }
  SECTION("negative max_sweeps") {
    options.max_sweeps = -2;
    check_error([&] { run_evd(a, options); }, ErrorCode::invalid_argument, {"max_sweeps", "-2"});
    check_error([&] { run_svd(g, options); }, ErrorCode::invalid_argument, {"max_sweeps"});
  }
  SECTION("negative symmetry_tol") {
    options.symmetry_tol = -1;
    check_error([&] { run_evd(a, options); }, ErrorCode::invalid_argument, {"symmetry_tol"});
  }
}

TEMPLATE_TEST_CASE("errors: flag_invalid marks the bad matrix and solves the other 7 exactly", "[errors][batch]",
                   EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  using R = real_t<T>;
  const index_t bad = 5;
  Options flagged;
  flagged.flag_invalid = true;
  SECTION("evd") {
    const index_t n = 9;
    EvdBatch<T> clean(n, 8), dirty(n, 8);
    dirty.at(bad, 7, 2) = nan_entry<T>(false);
    clean.run();
    REQUIRE_NOTHROW(dirty.run(flagged));
    for (index_t b = 0; b < 8; ++b) {
      INFO("matrix " << b);
      const bool is_bad = b == bad;
      CHECK(dirty.info[b].invalid_input == is_bad);
      CHECK(dirty.info[b].converged == !is_bad);
      CHECK(dirty.info[b].sweeps == (is_bad ? 0 : clean.info[b].sweeps));
      CHECK_FALSE(clean.info[b].invalid_input);
      for (index_t k = 0; k < n; ++k) {
        const R x = dirty.w[static_cast<std::size_t>(b * n + k)];
        if (is_bad)
          CHECK(std::isnan(x));
        else
          CHECK(x == clean.w[static_cast<std::size_t>(b * n + k)]);
      }
      for (index_t k = 0; k < n * n; ++k) {
        const T x = dirty.v[static_cast<std::size_t>(b * n * n + k)];
        if (is_bad)
          CHECK(std::isnan(std::real(x)));
        else
          CHECK(x == clean.v[static_cast<std::size_t>(b * n * n + k)]);
      }
    }
  }
  SECTION("evd: a non-Hermitian matrix is flagged too") {
    EvdBatch<T> dirty(6, 8);
    dirty.at(bad, 3, 0) += T(R(1));
    REQUIRE_NOTHROW(dirty.run(flagged));
    for (index_t b = 0; b < 8; ++b) CHECK(dirty.info[b].invalid_input == (b == bad));
  }
  SECTION("svd") {
    SvdBatch<T> clean(7, 4, 8), dirty(7, 4, 8);
    dirty.at(bad, 6, 3) = T(std::numeric_limits<R>::infinity());
    clean.run();
    REQUIRE_NOTHROW(dirty.run(flagged));
    for (index_t b = 0; b < 8; ++b) {
      INFO("matrix " << b);
      const bool is_bad = b == bad;
      CHECK(dirty.info[b].invalid_input == is_bad);
      for (index_t k = 0; k < 4; ++k) {
        const R x = dirty.s[static_cast<std::size_t>(b * 4 + k)];
        if (is_bad)
          CHECK(std::isnan(x));
        else
          CHECK(x == clean.s[static_cast<std::size_t>(b * 4 + k)]);
      }
      for (index_t k = 0; k < 7 * 4; ++k)
        if (is_bad)
          CHECK(std::isnan(std::real(dirty.u[static_cast<std::size_t>(b * 28 + k)])));
        else
          CHECK(dirty.u[static_cast<std::size_t>(b * 28 + k)] == clean.u[static_cast<std::size_t>(b * 28 + k)]);
      for (index_t k = 0; k < 4 * 4; ++k)
        if (!is_bad) CHECK(dirty.v[static_cast<std::size_t>(b * 16 + k)] == clean.v[static_cast<std::size_t>(b * 16 + k)]);
    }
  }
}

TEMPLATE_TEST_CASE("errors: too few sweeps is reported and thrown only when asked", "[errors]",
                   EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  using R = real_t<T>;
  const index_t n = 24;
  const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 10);
  const Matrix<T> g = svd_case<T>(SvdCase::random, n + 6, n, 11);
  const int max_sweeps = GENERATE(0, 1);
  const Method method = GENERATE(Method::two_sided, Method::one_sided);
  INFO("max_sweeps = " << max_sweeps << ", method " << (method == Method::one_sided ? "one-sided" : "two-sided"));
  Options options;
  options.max_sweeps = max_sweeps;
  options.method = method;
  SECTION("evd: reported") {
    EvdResult<T> r;
    REQUIRE_NOTHROW(r = run_evd(a, options));
    CHECK_FALSE(r.info.converged);
    CHECK(r.info.sweeps == max_sweeps);
    CHECK(r.info.off_norm > 1e-3);
    for (R x : r.w) CHECK(std::isfinite(x));
  }
  SECTION("evd: thrown with throw_on_not_converged") {
    options.throw_on_not_converged = true;
    check_error([&] { run_evd(a, options); }, ErrorCode::not_converged, {"evd", "did not converge"});
  }
  SECTION("evd_batched: thrown, naming the first matrix") {
    options.throw_on_not_converged = true;
    EvdBatch<T> batch(8, 3, EvdCase::covariance);
    check_error([&] { batch.run(options); }, ErrorCode::not_converged, {"matrix 0 of 3", "did not converge"});
  }
  SECTION("svd: reported, then thrown") {
    SvdResult<T> r;
    REQUIRE_NOTHROW(r = run_svd(g, options));
    CHECK_FALSE(r.info.converged);
    CHECK(r.info.sweeps == max_sweeps);
    options.throw_on_not_converged = true;
    check_error([&] { run_svd(g, options); }, ErrorCode::not_converged, {"svd", "did not converge"});
  }
}

TEMPLATE_TEST_CASE("errors: the CUDA backend in a build without kernels is ErrorCode::cuda", "[errors][cuda]",
                   EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  const Matrix<T> a = evd_case<T>(EvdCase::random, 4, 12);
  const Matrix<T> g = svd_case<T>(SvdCase::random, 5, 3, 13);
  Options options;
  options.backend = Backend::cuda;
  check_error([&] { run_evd(a, options); }, ErrorCode::cuda, {"evd", "CUDA"});
  check_error([&] { run_svd(g, options); }, ErrorCode::cuda, {"svd", "CUDA"});
  options.backend = Backend::automatic;
  CHECK_NOTHROW(run_evd(a, options));
  options.backend = Backend::cpu;
  CHECK_NOTHROW(run_svd(g, options));
}

TEMPLATE_TEST_CASE("errors: empty problems (n = 0 or count = 0) do nothing", "[errors]", EIGSTREAM_TEST_TYPES) {
  using T = TestType;
  using R = real_t<T>;
  const eigstream::MatrixView<const T> none{};
  CHECK_NOTHROW(eigstream::evd(none, static_cast<R*>(nullptr)));
  CHECK_NOTHROW(eigstream::evd(none, static_cast<R*>(nullptr), eigstream::MatrixView<T>{}, Options{}));
  CHECK_NOTHROW(eigstream::svd(none, static_cast<R*>(nullptr)));
  // count = 0 with nonzero sizes and no data.
  CHECK_NOTHROW(eigstream::evd_batched(eigstream::BatchView<const T>{nullptr, 4, 4, 4, 16, 0},
                                       eigstream::VectorBatchView<R>{nullptr, 4, 4, 0}));
  CHECK_NOTHROW(eigstream::svd_batched(eigstream::BatchView<const T>{nullptr, 5, 3, 5, 15, 0},
                                       eigstream::VectorBatchView<R>{nullptr, 3, 3, 0}));
  // 0 x 5 and 5 x 0: no singular values.
  std::vector<T> dummy(5);
  CHECK_NOTHROW(eigstream::svd(eigstream::MatrixView<const T>{dummy.data(), 0, 5, 1}, static_cast<R*>(nullptr)));
  CHECK_NOTHROW(eigstream::svd(eigstream::MatrixView<const T>{dummy.data(), 5, 0, 5}, static_cast<R*>(nullptr)));
  // The outputs of an empty batch are left alone.
  std::vector<R> w(4, R(7));
  eigstream::evd_batched(eigstream::BatchView<const T>{nullptr, 4, 4, 4, 16, 0}, eigstream::VectorBatchView<R>{w.data(), 4, 4, 0});
  for (R x : w) CHECK(x == R(7));
}

#if defined(EIGSTREAM_HAVE_CUDA)
// The device interface refuses a `vectors` that overlaps A before it touches either: a cold solve may
// write its start V0 there before it reads A. Host memory stands in for device memory, as nothing is
// read or launched; a warm start may share `vectors`.
TEST_CASE("errors: cuda::evd_batched refuses vectors that overlap A", "[errors][cuda]") {
  using T = std::complex<float>;
  const index_t n = 48, count = 2;
  std::vector<T> memory(std::size_t(n * n * (count + 1)));
  std::vector<float> w(std::size_t(n * count));
  SolveInfo info[2];
  const eigstream::BatchView<const T> a{memory.data(), n, n, n, n * n, count};
  const eigstream::BatchView<T> into_a{memory.data() + n * n, n, n, n, n * n, count};  // from A's second matrix on
  check_error([&] { eigstream::cuda::evd_batched(a, eigstream::vectors(w.data(), n, count), into_a, info, Options{}, nullptr); },
              ErrorCode::invalid_argument, {"cuda::evd_batched", "vectors overlap A"});
}
#endif
