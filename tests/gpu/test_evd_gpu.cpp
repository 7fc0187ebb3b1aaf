// GPU batched EVD kernel against the LAPACK oracle and the CPU solver, on the hard cases.
// Runs only on a machine with a CUDA device (CTest label gpu).
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "eigstream/cuda.hpp"
#include "oracle.hpp"

using namespace oracle;
using eigstream::Backend;
using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::Options;

namespace {

Options gpu_options() {
  Options o;
  o.backend = Backend::cuda;
  return o;
}

// A batch of matrices laid out with ld = n + 3 and a padded stride, to test the kernel's indexing.
template <class T>
struct Batch {
  index_t n, count, ld, stride;
  std::vector<T> a;
  Batch(const std::vector<Matrix<T>>& ms) : n(ms[0].rows), count(index_t(ms.size())), ld(n + 3), stride(ld * n + 5) {
    a.assign(std::size_t(stride * count), T(std::numeric_limits<real_t<T>>::quiet_NaN()));  // padding is poison
    for (index_t b = 0; b < count; ++b)
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) a[std::size_t(b * stride + i + j * ld)] = ms[std::size_t(b)](i, j);
  }
  eigstream::BatchView<const T> view() const { return {a.data(), n, n, ld, stride, count}; }
};

}  // namespace

TEST_CASE("gpu: a CUDA device is present", "[gpu]") { REQUIRE(eigstream::cuda::device_available()); }

// The hard cases of size n (seed + n) in one padded batch, warm-started from `v0` (one n x n matrix
// a case) when given, each checked against LAPACK: converged, valid input, at most `max_sweeps`
// sweeps and check_evd's bounds under `group`. Returns each case's sweeps.
template <class T>
std::vector<int> solve_hard_cases(index_t n, std::uint64_t seed, const std::vector<T>* v0, int max_sweeps,
                                  const char* group) {
  std::vector<Matrix<T>> inputs;
  for (EvdCase c : all_evd_cases()) inputs.push_back(evd_case<T>(c, n, seed + std::uint64_t(n)));
  const Batch<T> batch(inputs);
  std::vector<real_t<T>> w(std::size_t(n * batch.count));
  std::vector<T> v(std::size_t(n * n * batch.count));
  std::vector<eigstream::SolveInfo> info(std::size_t(batch.count));
  eigstream::evd_batched(batch.view(), eigstream::vectors(w.data(), n, batch.count),
                         eigstream::batch(v.data(), n, n, batch.count), info.data(), gpu_options(),
                         v0 ? eigstream::batch<const T>(v0->data(), n, n, batch.count) : eigstream::BatchView<const T>{});
  std::vector<int> sweeps;
  for (index_t b = 0; b < batch.count; ++b) {
    const EvdCase c = all_evd_cases()[std::size_t(b)];
    INFO(type_name<T>() << " n = " << n << " case " << to_string(c));
    REQUIRE(info[std::size_t(b)].converged);
    REQUIRE_FALSE(info[std::size_t(b)].invalid_input);
    CHECK(info[std::size_t(b)].sweeps <= max_sweeps);
    sweeps.push_back(info[std::size_t(b)].sweeps);
    Matrix<T> vb(n, n);
    std::copy_n(v.begin() + b * n * n, n * n, vb.data.begin());
    const std::vector<real_t<T>> wb(w.begin() + b * n, w.begin() + (b + 1) * n);
    check_evd(inputs[std::size_t(b)], wb, &vb, reference_eigenvalues(inputs[std::size_t(b)]),
              eigstream::Sort::descending, group);
  }
  return sweeps;
}

TEMPLATE_TEST_CASE("gpu evd: hard cases against LAPACK", "[gpu]", float, double, std::complex<float>,
                   std::complex<double>) {
  using T = TestType;
  const index_t n = GENERATE(1, 2, 3, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64);
  for (int sweeps : solve_hard_cases<T>(n, 1000, nullptr, 15, "gpu evd cold"))
    record(key<T>("gpu evd cold", "sweeps"), sweeps);
}

// The same cases warm-started from a random unitary V0, so that B = V0^H A V0 is a full matrix: the
// warm paths of every solve (among them the register solve's column groups at n <= 16) from its
// products to the last step, against LAPACK. Graded cases lose their grading in B and take more
// sweeps than cold (up to 20 in double at n = 64 on an H200), hence at most 25.
TEMPLATE_TEST_CASE("gpu evd: hard cases warm-started from a random unitary against LAPACK", "[gpu]", float, double,
                   std::complex<float>, std::complex<double>) {
  using T = TestType;
  const index_t n = GENERATE(1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 32, 64);
  std::vector<T> v0;
  Rng rng(4000 + std::uint64_t(n));
  for (std::size_t b = 0; b < all_evd_cases().size(); ++b) {
    const Matrix<T> q = random_unitary<T>(n, rng);
    v0.insert(v0.end(), q.data.begin(), q.data.end());
  }
  solve_hard_cases<T>(n, 3000, &v0, 25, "gpu evd warm from unitary");
}

TEMPLATE_TEST_CASE("gpu evd: agrees with the CPU solver", "[gpu]", float, std::complex<float>) {
  using T = TestType;
  const index_t n = GENERATE(8, 32, 64);
  const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 7);
  Options cpu;
  cpu.backend = Backend::cpu;
  const EvdResult<T> on_cpu = run_evd(a, cpu), on_gpu = run_evd(a, gpu_options());
  const double scale = std::abs(double(on_cpu.w[0])) + 1e-300;
  for (index_t i = 0; i < n; ++i)
    CHECK(std::abs(double(on_cpu.w[std::size_t(i)] - on_gpu.w[std::size_t(i)])) <= 8 * n * eps<T>() * scale);
}

// The batched register kernel's first-order finish (kRegisterFirstOrderFinish in
// kernels/jacobi_evd_batched.cu: float and double at 16 < n <= 32, complex float at 8 < n <= 16):
// warm-started from the last eigenvectors of a matrix moved by 0.01 sqrt(eps), off(B) is far above
// the target (eps ||A||_F), but one first-order step reaches it, so the solve takes no sweep, and its
// result stands against LAPACK.
TEMPLATE_TEST_CASE("gpu evd: a warm start near the answer finishes by the first-order step, without a sweep", "[gpu]",
                   float, double, std::complex<float>) {
  using T = TestType;
  const index_t n = std::is_floating_point_v<T> ? GENERATE(index_t(27), index_t(32)) : GENERATE(index_t(13), index_t(16));
  const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 21);
  const Matrix<T> a2 = perturb_hermitian(a, 0.01 * std::sqrt(eps<T>()), true, 22);
  const EvdResult<T> cold = run_evd(a, gpu_options());
  const EvdResult<T> warm = run_evd(a2, gpu_options(), &cold.v);
  INFO(type_name<T>() << " n = " << n);
  REQUIRE(warm.info.converged);
  CHECK(warm.info.sweeps == 0);
  check_evd(a2, warm.w, &warm.v, reference_eigenvalues(a2), eigstream::Sort::descending, "gpu evd first-order finish");
}

// From 1%, reaching double's epsilon takes one sweep more than float's (as on the CPU: see
// test_warm_start.cpp): 3 sweeps in float, 4 in double.
TEMPLATE_TEST_CASE("gpu evd: warm start from a 1% perturbed matrix takes <= 3 sweeps (4 in double)", "[gpu]", float, double,
                   std::complex<float>, std::complex<double>) {
  using T = TestType;
  const index_t n = GENERATE(8, 16, 17, 31, 32, 63, 64);  // odd n: the products' last columns and the dummy player
  const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 11);
  const Matrix<T> a2 = perturb_hermitian(a, 0.01, true, 12);
  const EvdResult<T> cold = run_evd(a, gpu_options());
  const EvdResult<T> warm = run_evd(a2, gpu_options(), &cold.v);
  INFO(type_name<T>() << " n = " << n);
  REQUIRE(warm.info.converged);
  CHECK(warm.info.sweeps <= (sizeof(real_t<T>) == 4 ? 3 : 4));
  record(key<T>("gpu evd warm", "sweeps"), warm.info.sweeps);
  check_evd(a2, warm.w, &warm.v, reference_eigenvalues(a2), eigstream::Sort::descending, "gpu evd warm");
}

// Warm starts from perturbations of 10 eps to 1%, so that in some the last sweep starts within
// kLastSweepsOff (100) times the target: the solves that test convergence within such a sweep (the
// block solves' warm starts, and the register solve's at complex float 8) stop part way through it,
// each matrix of the batch at a step of its own, two to a warp at n <= 8; so does the pairs solve
// (n = 64), which follows off(A) through a sweep that starts within target / sqrt(8 eps). The
// results must be as accurate as from whole sweeps. An odd count leaves the last warp (n <= 8) and
// block (n <= 4) of the register kernel part empty.
TEMPLATE_TEST_CASE("gpu evd: warm starts that stop part way through a sweep", "[gpu]", float, double,
                   std::complex<float>, std::complex<double>) {
  using T = TestType;
  const index_t n = GENERATE(1, 2, 3, 4, 5, 8, 13, 16, 32, 64);
  const index_t count = 13;
  std::vector<Matrix<T>> inputs;
  std::vector<T> v0(std::size_t(n * n * count));
  for (index_t b = 0; b < count; ++b) {
    const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 300 + std::uint64_t(b));
    const EvdResult<T> cold = run_evd(a, gpu_options());
    REQUIRE(cold.info.converged);
    std::copy(cold.v.data.begin(), cold.v.data.end(), v0.begin() + b * n * n);
    const double size = 10 * eps<T>() * std::pow(1e-2 / (10 * eps<T>()), double(b) / double(count - 1));
    inputs.push_back(perturb_hermitian(a, size, true, 400 + std::uint64_t(b)));
  }
  const Batch<T> batch(inputs);
  std::vector<real_t<T>> w(std::size_t(n * count));
  std::vector<T> v(std::size_t(n * n * count));
  std::vector<eigstream::SolveInfo> info(static_cast<std::size_t>(count));
  eigstream::evd_batched(batch.view(), eigstream::vectors(w.data(), n, count), eigstream::batch(v.data(), n, n, count),
                         info.data(), gpu_options(), eigstream::batch<const T>(v0.data(), n, n, count));
  for (index_t b = 0; b < count; ++b) {
    INFO(type_name<T>() << " n = " << n << " matrix " << b);
    REQUIRE(info[std::size_t(b)].converged);
    CHECK(info[std::size_t(b)].sweeps <= (sizeof(real_t<T>) == 4 ? 3 : 4));
    Matrix<T> vb(n, n);
    std::copy_n(v.begin() + b * n * n, n * n, vb.data.begin());
    const std::vector<real_t<T>> wb(w.begin() + b * n, w.begin() + (b + 1) * n);
    check_evd(inputs[std::size_t(b)], wb, &vb, reference_eigenvalues(inputs[std::size_t(b)]),
              eigstream::Sort::descending, "gpu evd warm part sweep");
  }
}

// Each result is the next warm start, as in a stream, through the host-memory interface, which
// orthonormalises each V0 on the CPU as it reads it: so this checks the accuracy of a long chain, with
// the kernel's Newton-Schulz step on every link and on one link in 8 only (Options::reorthonormalise;
// the chain then ends 7 links after its last step), not the drift the step prevents on the device
// (eigbench's latency case chains 10000 items on the device: 2026-11-25-h100-reorthonormalise-every.md).
// The register solve (in two column groups at n = 16) and the pairs solve (48).
TEMPLATE_TEST_CASE("gpu evd: a chain of 3000 warm starts stays orthonormal and accurate", "[gpu]", float,
                   std::complex<float>) {
  using T = TestType;
  const index_t n = GENERATE(16, 32, 48);
  const int period = GENERATE(1, 8);
  Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 70);
  EvdResult<T> r = run_evd(a, gpu_options());
  for (int link = 1; link <= 3000 + period - 1; ++link) {
    a = perturb_hermitian(a, 1e-3, true, 7000 + std::uint64_t(link));
    const Matrix<T> v0 = r.v;
    Options options = gpu_options();
    options.reorthonormalise = link % period == 0;
    r = run_evd(a, options, &v0);
    REQUIRE(r.info.converged);
  }
  INFO(type_name<T>() << " n = " << n << ", a Newton-Schulz step every " << period << " links");
  check_evd(a, r.w, &r.v, reference_eigenvalues(a), eigstream::Sort::descending, "gpu evd warm chain");
}

// Cold solves with vectors from the tridiagonal start (n > 32, and complex n > 16) on covariance
// matrices, 16 to a batch: eigenvalues and residuals within n eps / 2 (c = 0.5 where check_evd takes
// 4). Before the start normalised V0's columns, cold covariance batches reached 0.84-1.27 n eps, 1.2-5x
// cuSOLVER's on the same inputs (eigbench, H200, bench/results/2026-11-27-h200-tridiagonal-start.md).
TEMPLATE_TEST_CASE("gpu evd: cold solves from the tridiagonal start keep eigenvalues and residuals within n eps / 2",
                   "[gpu]", float, double, std::complex<float>, std::complex<double>) {
  using T = TestType;
  const index_t n = GENERATE(24, 33, 48, 64);
  if (!eigstream::is_complex_v<T> && n <= 32) return;  // real types start from the identity there
  const index_t count = 16;
  std::vector<Matrix<T>> inputs;
  for (index_t b = 0; b < count; ++b) inputs.push_back(evd_case<T>(EvdCase::covariance, n, 500 + std::uint64_t(b)));
  const Batch<T> batch(inputs);
  std::vector<real_t<T>> w(std::size_t(n * count));
  std::vector<T> v(std::size_t(n * n * count));
  std::vector<eigstream::SolveInfo> info(static_cast<std::size_t>(count));
  eigstream::evd_batched(batch.view(), eigstream::vectors(w.data(), n, count), eigstream::batch(v.data(), n, n, count),
                         info.data(), gpu_options());
  Bounds tight;
  tight.residual = tight.values = 0.5;
  for (index_t b = 0; b < count; ++b) {
    INFO(type_name<T>() << " n = " << n << " matrix " << b);
    REQUIRE(info[std::size_t(b)].converged);
    CHECK(info[std::size_t(b)].sweeps <= 3);  // from the start: 1-2 (from the identity: 9-18)
    Matrix<T> vb(n, n);
    std::copy_n(v.begin() + b * n * n, n * n, vb.data.begin());
    const std::vector<real_t<T>> wb(w.begin() + b * n, w.begin() + (b + 1) * n);
    check_evd(inputs[std::size_t(b)], wb, &vb, reference_eigenvalues(inputs[std::size_t(b)]),
              eigstream::Sort::descending, "gpu evd tridiagonal start", tight);
  }
}

// Values only, and with vectors: at n = 48 and complex n = 32 these solves start from the
// tridiagonal start, which passes the bad matrices on for the Jacobi solve to flag.
TEST_CASE("gpu evd: a NaN matrix in a batch is flagged and the others are unaffected", "[gpu]") {
  using T = std::complex<float>;
  const index_t n = GENERATE(32, 48), count = 8;
  const bool with_vectors = GENERATE(false, true);
  INFO("n = " << n << (with_vectors ? " with vectors" : " values only"));
  std::vector<Matrix<T>> ms;
  for (index_t b = 0; b < count; ++b) ms.push_back(evd_case<T>(EvdCase::random, n, 50 + std::uint64_t(b)));
  const Batch<T> clean(ms);
  ms[3](5, 2) = T(std::numeric_limits<float>::quiet_NaN(), 0);
  ms[6](1, 7) = T(1e9f, 0);  // not Hermitian any more
  const Batch<T> dirty(ms);
  std::vector<T> v(with_vectors ? std::size_t(n * n * count) : 0);
  auto solve = [&](const Batch<T>& in, Options o, std::vector<float>& w, std::vector<eigstream::SolveInfo>& info) {
    w.assign(std::size_t(n * count), 0);
    info.assign(std::size_t(count), {});
    eigstream::evd_batched(in.view(), eigstream::vectors(w.data(), n, count),
                           with_vectors ? eigstream::batch(v.data(), n, n, count) : eigstream::BatchView<T>{},
                           info.data(), o);
  };
  Options flag = gpu_options();
  flag.flag_invalid = true;
  std::vector<float> w_clean, w_dirty;
  std::vector<eigstream::SolveInfo> i_clean, i_dirty;
  solve(clean, flag, w_clean, i_clean);
  solve(dirty, flag, w_dirty, i_dirty);
  for (index_t b = 0; b < count; ++b) {
    const bool bad = b == 3 || b == 6;
    CHECK(i_dirty[std::size_t(b)].invalid_input == bad);
    for (index_t k = 0; k < n; ++k) {
      const float x = w_dirty[std::size_t(b * n + k)];
      if (bad) CHECK(std::isnan(x));
      else CHECK(x == w_clean[std::size_t(b * n + k)]);
    }
  }
  // Without flag_invalid the first bad matrix is an error naming it and its entry.
  REQUIRE_THROWS_MATCHES(solve(dirty, gpu_options(), w_dirty, i_dirty), Error,
                         Catch::Predicate<Error>([](const Error& e) {
                           const std::string m = e.what();
                           return e.code() == ErrorCode::invalid_input && m.find("matrix 3 of 8") != std::string::npos &&
                                  m.find("A(5, 2) is NaN") != std::string::npos;
                         }, "invalid_input naming matrix 3 and A(5, 2)"));
}

TEST_CASE("gpu evd: sort orders and values-only output", "[gpu]") {
  using T = double;
  const index_t n = 17;
  const Matrix<T> a = evd_case<T>(EvdCase::random, n, 99);
  const std::vector<double> ref = reference_eigenvalues(a);
  Options o = gpu_options();
  o.sort = eigstream::Sort::ascending;
  std::vector<double> w(static_cast<std::size_t>(n));
  eigstream::evd(a.view(), w.data(), {}, o);
  for (index_t i = 0; i < n; ++i) CHECK(std::abs(w[std::size_t(i)] - ref[std::size_t(n - 1 - i)]) <= 64 * n * eps<T>() * std::abs(ref[0]));
}

TEST_CASE("gpu evd: device interface with padded layout on a stream", "[gpu]") {
  using T = float;
  const index_t n = 24, count = 300, ld = 27, stride = ld * n + 11;
  std::vector<Matrix<T>> ms;
  for (index_t b = 0; b < count; ++b) ms.push_back(evd_case<T>(EvdCase::covariance, n, 300 + std::uint64_t(b)));
  std::vector<T> host(std::size_t(stride * count), std::numeric_limits<T>::quiet_NaN());  // padding is poison
  for (index_t b = 0; b < count; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) host[std::size_t(b * stride + i + j * ld)] = ms[std::size_t(b)](i, j);
  T *d_a, *d_w, *d_v;
  eigstream::SolveInfo* d_info;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_a), host.size() * sizeof(T)) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_w), std::size_t(n * count) * sizeof(T)) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_v), host.size() * sizeof(T)) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_info), std::size_t(count) * sizeof(eigstream::SolveInfo)) == cudaSuccess);
  cudaStream_t stream;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(d_a, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream) == cudaSuccess);
  eigstream::cuda::evd_batched(eigstream::BatchView<const T>{d_a, n, n, ld, stride, count},
                               eigstream::vectors(d_w, n, count), eigstream::BatchView<T>{d_v, n, n, ld, stride, count},
                               d_info, gpu_options(), stream);
  std::vector<T> w(std::size_t(n * count)), v(host.size());
  std::vector<eigstream::SolveInfo> info(static_cast<std::size_t>(count));
  REQUIRE(cudaMemcpyAsync(w.data(), d_w, w.size() * sizeof(T), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(v.data(), d_v, v.size() * sizeof(T), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(info.data(), d_info, info.size() * sizeof(eigstream::SolveInfo), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  for (index_t b = 0; b < count; b += 37) {
    INFO("matrix " << b);
    REQUIRE(info[std::size_t(b)].converged);
    Matrix<T> vb(n, n);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) vb(i, j) = v[std::size_t(b * stride + i + j * ld)];
    const std::vector<T> wb(w.begin() + b * n, w.begin() + (b + 1) * n);
    check_evd(ms[std::size_t(b)], wb, &vb, reference_eigenvalues(ms[std::size_t(b)]), eigstream::Sort::descending,
              "gpu evd device interface");
  }
  cudaFree(d_a), cudaFree(d_w), cudaFree(d_v), cudaFree(d_info), cudaStreamDestroy(stream);
}

TEST_CASE("gpu evd: problems the kernel does not take are refused clearly", "[gpu]") {
  const Matrix<double> a = evd_case<double>(EvdCase::random, 65, 1);
  std::vector<double> w(65);
  REQUIRE_THROWS_MATCHES(eigstream::evd(a.view(), w.data(), {}, gpu_options()), Error,
                         Catch::Predicate<Error>([](const Error& e) { return e.code() == ErrorCode::cuda; }, "cuda error"));
  Options automatic;  // automatic falls back to the CPU for a problem the kernel does not take
  REQUIRE(eigstream::evd(a.view(), w.data(), {}, automatic).converged);
}
