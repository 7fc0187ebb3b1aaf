// GPU batched one-sided Jacobi SVD kernel against the LAPACK oracle and the CPU solver: every scalar
// type, square, tall and wide shapes on both of the kernel's memory paths (working matrix in shared
// memory, or in device memory: the U output or the workspace), the hard cases, warm start, a NaN
// matrix in a batch, sort orders, padded layouts and the device interface.
// Runs only on a machine with a CUDA device (CTest label gpu).
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <utility>
#include <vector>

#include "eigstream/cuda.hpp"
#include "oracle.hpp"

using namespace oracle;
using eigstream::Backend;
using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::Options;
using eigstream::SolveInfo;
using eigstream::Sort;

namespace {

Options gpu_options() {
  Options o;
  o.backend = Backend::cuda;
  return o;
}

// As the CPU tests (tests/test_svd.cpp): rank-deficient input takes the most sweeps.
int max_cold_sweeps(SvdCase c) { return c == SvdCase::rank_deficient ? 25 : 15; }

// Matrices of one shape laid out with ld = rows + 3 and a padded stride; padding is NaN, so a kernel
// reading outside a matrix poisons its result.
template <class T>
struct Batch {
  index_t rows, cols, count, ld, stride;
  std::vector<T> data;
  Batch(index_t m, index_t n, index_t c, T fill)
      : rows(m), cols(n), count(c), ld(m + 3), stride((m + 3) * n + 5), data(std::size_t(stride * c), fill) {}
  explicit Batch(const std::vector<Matrix<T>>& ms)
      : Batch(ms[0].rows, ms[0].cols, index_t(ms.size()), T(std::numeric_limits<real_t<T>>::quiet_NaN())) {
    for (index_t b = 0; b < count; ++b)
      for (index_t j = 0; j < cols; ++j)
        for (index_t i = 0; i < rows; ++i) data[std::size_t(b * stride + i + j * ld)] = ms[std::size_t(b)](i, j);
  }
  eigstream::BatchView<const T> view() const { return {data.data(), rows, cols, ld, stride, count}; }
  eigstream::BatchView<T> view() { return {data.data(), rows, cols, ld, stride, count}; }
  Matrix<T> matrix(index_t b) const {
    Matrix<T> m(rows, cols);
    for (index_t j = 0; j < cols; ++j)
      for (index_t i = 0; i < rows; ++i) m(i, j) = data[std::size_t(b * stride + i + j * ld)];
    return m;
  }
};

// The host-memory batch call with padded U and V and a padded vector stride for s.
template <class T>
struct BatchResult {
  Batch<T> u, v;
  std::vector<real_t<T>> s;
  index_t k, s_stride;
  std::vector<SolveInfo> info;
  std::vector<real_t<T>> values(index_t b) const {
    return {s.begin() + b * s_stride, s.begin() + b * s_stride + k};
  }
};

template <class T>
BatchResult<T> solve_batch(const Batch<T>& a, const Options& options, const Batch<T>* warm = nullptr) {
  const index_t k = std::min(a.rows, a.cols);
  const T zero(0);
  BatchResult<T> r{Batch<T>(a.rows, k, a.count, zero), Batch<T>(a.cols, k, a.count, zero),
                   std::vector<real_t<T>>(std::size_t((k + 2) * a.count)), k, k + 2,
                   std::vector<SolveInfo>(std::size_t(a.count))};
  eigstream::svd_batched(a.view(), eigstream::vectors(r.s.data(), k, a.count, k + 2), r.u.view(), r.v.view(),
                         r.info.data(), options, warm ? warm->view() : eigstream::BatchView<const T>{});
  return r;
}

using Shape = std::pair<int, int>;

}  // namespace

TEMPLATE_TEST_CASE("gpu svd: hard cases against LAPACK in padded batches", "[gpu][svd]", float, double,
                   std::complex<float>, std::complex<double>) {
  using T = TestType;
  // 1 x 1 to 64 x 64 square; tall and wide (solved as A^H); 256 x 64, 1024 x 64 and 1024 x 33 put
  // the working matrix in device memory for some types (in the U output here).
  const Shape shape = GENERATE(values<Shape>({{1, 1}, {2, 2}, {3, 3}, {7, 7}, {8, 8}, {16, 16}, {17, 17}, {32, 32},
                                              {33, 33}, {64, 64}, {5, 3}, {3, 5}, {100, 7}, {7, 100}, {256, 64},
                                              {64, 256}, {1024, 64}, {1024, 33}, {33, 1024}}));
  const index_t m = shape.first, n = shape.second;
  std::vector<Matrix<T>> inputs;
  for (SvdCase c : all_svd_cases()) inputs.push_back(svd_case<T>(c, m, n, 4000 + std::uint64_t(m * 7 + n)));
  const Batch<T> batch(inputs);
  const BatchResult<T> r = solve_batch(batch, gpu_options());
  const double tol = std::sqrt(double(std::max(m, n))) * eps<T>();
  for (index_t b = 0; b < batch.count; ++b) {
    const SvdCase c = all_svd_cases()[std::size_t(b)];
    INFO(type_name<T>() << " " << m << " x " << n << " case " << to_string(c));
    const SolveInfo& info = r.info[std::size_t(b)];
    REQUIRE_FALSE(info.invalid_input);
    CHECK(info.converged);
    CHECK(info.sweeps <= max_cold_sweeps(c));
    CHECK(info.off_norm <= tol);
    record(key<T>("gpu svd cold", "sweeps"), info.sweeps);
    const Matrix<T> u = r.u.matrix(b), v = r.v.matrix(b);
    check_svd(inputs[std::size_t(b)], r.values(b), &u, &v, reference_singular_values(inputs[std::size_t(b)]),
              Sort::descending, "gpu svd cold");
  }
  // The padding of the outputs is untouched.
  for (index_t b = 0; b < batch.count; ++b) {
    CHECK(r.u.data[std::size_t(b * r.u.stride + r.u.rows)] == T(0));
    CHECK(r.v.data[std::size_t(b * r.v.stride + r.v.rows)] == T(0));
    CHECK(r.s[std::size_t(b * r.s_stride + r.k)] == 0);
  }
}

TEMPLATE_TEST_CASE("gpu svd: agrees with the CPU solver", "[gpu][svd]", float, std::complex<float>) {
  using T = TestType;
  const Shape shape = GENERATE(values<Shape>({{8, 8}, {32, 32}, {64, 64}, {1024, 64}, {40, 1024}}));
  const index_t m = shape.first, n = shape.second;
  const Matrix<T> a = svd_case<T>(SvdCase::graded_columns, m, n, 17);
  Options cpu;
  cpu.backend = Backend::cpu;
  const SvdResult<T> on_cpu = run_svd(a, cpu), on_gpu = run_svd(a, gpu_options());
  INFO(type_name<T>() << " " << m << " x " << n);
  const double scale = double(on_cpu.s[0]);
  for (std::size_t i = 0; i < on_cpu.s.size(); ++i)
    CHECK(std::abs(double(on_cpu.s[i]) - double(on_gpu.s[i])) <= 8 * std::max(m, n) * eps<T>() * scale);
  // Same algorithm and ordering: the sweep counts agree to within rounding's effect on the last one.
  CHECK(std::abs(on_cpu.info.sweeps - on_gpu.info.sweeps) <= 1);
}

// Bounds as the CPU's warm-start tests (tests/test_warm_start.cpp): from 1%, 4 sweeps in float, 5 in
// double; and fewer than the same matrix takes cold.
TEMPLATE_TEST_CASE("gpu svd: warm start from a 1% perturbed matrix with V0 tall and U0 wide", "[gpu][svd]", float,
                   double, std::complex<float>, std::complex<double>) {
  using T = TestType;
  const Shape shape = GENERATE(values<Shape>({{12, 8}, {48, 32}, {32, 48}, {96, 64}, {64, 96}, {1024, 64}, {64, 1024}}));
  const index_t m = shape.first, n = shape.second;
  const Matrix<T> a = svd_case<T>(SvdCase::random, m, n, 700 + std::uint64_t(m + n));
  const Matrix<T> a2 = perturb_general(a, 0.01, 800 + std::uint64_t(m + n));
  const SvdResult<T> cold = run_svd(a, gpu_options());
  REQUIRE(cold.info.converged);
  const SvdResult<T> cold2 = run_svd(a2, gpu_options());
  Options warm_options = gpu_options();
  warm_options.reorthonormalise = GENERATE(true, false);  // one link: W0 J is orthonormal enough without the step
  const SvdResult<T> warm = run_svd(a2, warm_options, m >= n ? &cold.v : &cold.u);
  INFO(type_name<T>() << " " << m << " x " << n << ": cold " << cold2.info.sweeps << " sweeps, warm " << warm.info.sweeps
                      << (warm_options.reorthonormalise ? "" : ", no Newton-Schulz step"));
  REQUIRE(warm.info.converged);
  CHECK(warm.info.sweeps <= (sizeof(real_t<T>) == 4 ? 4 : 5));
  CHECK(warm.info.sweeps < cold2.info.sweeps);
  record(key<T>("gpu svd warm", "sweeps"), warm.info.sweeps);
  check_svd(a2, warm.s, &warm.u, &warm.v, reference_singular_values(a2), Sort::descending, "gpu svd warm");
  const double scale = double(cold2.s[0]);
  for (std::size_t i = 0; i < warm.s.size(); ++i)
    CHECK(std::abs(double(warm.s[i]) - double(cold2.s[i])) <= 8 * std::max(m, n) * eps<T>() * scale);
}

TEMPLATE_TEST_CASE("gpu svd: a batch of warm starts, one per matrix", "[gpu][svd]", float, std::complex<double>) {
  using T = TestType;
  const index_t m = 40, n = 24, count = 20;
  std::vector<Matrix<T>> next;
  std::vector<Matrix<T>> bases;
  for (index_t b = 0; b < count; ++b) {
    const Matrix<T> a = svd_case<T>(SvdCase::random, m, n, 900 + std::uint64_t(b));
    bases.push_back(run_svd(a, gpu_options()).v);
    next.push_back(perturb_general(a, 0.01, 950 + std::uint64_t(b)));
  }
  const Batch<T> in(next), warm(bases);
  const BatchResult<T> r = solve_batch(in, gpu_options(), &warm);
  for (index_t b = 0; b < count; ++b) {
    INFO(type_name<T>() << " matrix " << b);
    REQUIRE(r.info[std::size_t(b)].converged);
    CHECK(r.info[std::size_t(b)].sweeps <= (sizeof(real_t<T>) == 4 ? 4 : 5));
    const Matrix<T> u = r.u.matrix(b), v = r.v.matrix(b);
    check_svd(next[std::size_t(b)], r.values(b), &u, &v, reference_singular_values(next[std::size_t(b)]),
              Sort::descending, "gpu svd warm batch");
  }
}

TEMPLATE_TEST_CASE("gpu svd: a NaN or Inf matrix in a batch is flagged and the others are unaffected", "[gpu][svd]",
                   float, std::complex<float>, std::complex<double>) {
  using T = TestType;
  using R = real_t<T>;
  // 24 x 20 on the shared-memory path, 1024 x 64 in device memory for float.
  const Shape shape = GENERATE(values<Shape>({{24, 20}, {20, 24}, {1024, 64}}));
  const index_t m = shape.first, n = shape.second, count = 8;
  std::vector<Matrix<T>> ms;
  for (index_t b = 0; b < count; ++b) ms.push_back(svd_case<T>(SvdCase::random, m, n, 50 + std::uint64_t(b)));
  const Batch<T> clean(ms);
  ms[3](5, 2) = T(std::numeric_limits<R>::quiet_NaN());
  ms[6](1, 7) = T(std::numeric_limits<R>::infinity());
  const Batch<T> dirty(ms);
  Options flag = gpu_options();
  flag.flag_invalid = true;
  const BatchResult<T> good = solve_batch(clean, flag), mixed = solve_batch(dirty, flag);
  INFO(type_name<T>() << " " << m << " x " << n);
  for (index_t b = 0; b < count; ++b) {
    const bool bad = b == 3 || b == 6;
    INFO("matrix " << b);
    CHECK(mixed.info[std::size_t(b)].invalid_input == bad);
    CHECK(mixed.info[std::size_t(b)].converged == !bad);
    const std::vector<R> s = mixed.values(b), s_clean = good.values(b);
    const Matrix<T> u = mixed.u.matrix(b), u_clean = good.u.matrix(b);
    const Matrix<T> v = mixed.v.matrix(b), v_clean = good.v.matrix(b);
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (bad) CHECK(std::isnan(s[i]));
      else CHECK(s[i] == s_clean[i]);
    }
    for (std::size_t i = 0; i < u.data.size(); ++i) {
      if (bad) CHECK(std::isnan(std::real(u.data[i])));
      else CHECK(u.data[i] == u_clean.data[i]);
    }
    for (std::size_t i = 0; i < v.data.size(); ++i) {
      if (bad) CHECK(std::isnan(std::real(v.data[i])));
      else CHECK(v.data[i] == v_clean.data[i]);
    }
  }
  // Without flag_invalid the first bad matrix is an error naming it and its entry.
  REQUIRE_THROWS_MATCHES(solve_batch(dirty, gpu_options()), Error, Catch::Predicate<Error>([](const Error& e) {
                           const std::string msg = e.what();
                           return e.code() == ErrorCode::invalid_input &&
                                  msg.find("matrix 3 of 8") != std::string::npos &&
                                  msg.find("A(5, 2) is NaN") != std::string::npos;
                         }, "invalid_input naming matrix 3 and A(5, 2)"));
}

TEMPLATE_TEST_CASE("gpu svd: sort orders on both memory paths", "[gpu][svd]", float, std::complex<double>) {
  using T = TestType;
  const Shape shape = GENERATE(values<Shape>({{30, 30}, {200, 40}, {1024, 64}, {64, 1024}}));
  const Sort sort = GENERATE(Sort::ascending, Sort::none);
  const index_t m = shape.first, n = shape.second;
  const Matrix<T> a = svd_case<T>(SvdCase::graded_columns, m, n, 31);
  Options o = gpu_options();
  o.sort = sort;
  const SvdResult<T> r = run_svd(a, o);
  INFO(type_name<T>() << " " << m << " x " << n << (sort == Sort::none ? " unsorted" : " ascending"));
  REQUIRE(r.info.converged);
  check_svd(a, r.s, &r.u, &r.v, reference_singular_values(a), sort, "gpu svd sort");
}

TEMPLATE_TEST_CASE("gpu svd: device interface with padded layouts and partial outputs and the workspace", "[gpu][svd]",
                   float, std::complex<double>) {
  using T = TestType;
  using R = real_t<T>;
  const Shape shape = GENERATE(values<Shape>({{24, 16}, {16, 24}, {1024, 64}, {64, 1024}}));
  const bool with_u = GENERATE(true, false);
  const bool with_v = GENERATE(true, false);
  const index_t m = shape.first, n = shape.second, k = std::min(m, n), count = 37;
  INFO(type_name<T>() << " " << m << " x " << n << (with_u ? " with U" : "") << (with_v ? " with V" : ""));
  std::vector<Matrix<T>> ms;
  for (index_t b = 0; b < count; ++b) ms.push_back(svd_case<T>(SvdCase::random, m, n, 300 + std::uint64_t(b)));
  const Batch<T> a(ms);
  const T zero(0);
  Batch<T> u(m, k, count, zero), v(n, k, count, zero);
  const index_t s_stride = k + 1;
  std::vector<R> s(std::size_t(s_stride * count), R(-1));

  const std::size_t work_bytes = eigstream::cuda::svd_workspace_size<T>(m, n, count, with_u, with_v);
  // Only a working matrix too large for shared memory, with the long side's vectors not asked for,
  // needs the workspace; none of these fits in shared memory at 1024 x 64 for these types.
  const bool long_side = m >= n ? with_u : with_v;
  CHECK((work_bytes > 0) == (std::max(m, n) == 1024 && !long_side));

  T *d_a, *d_u = nullptr, *d_v = nullptr;
  R* d_s;
  void* d_work = nullptr;
  SolveInfo* d_info;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_a), a.data.size() * sizeof(T)) == cudaSuccess);
  if (with_u) REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_u), u.data.size() * sizeof(T)) == cudaSuccess);
  if (with_v) REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_v), v.data.size() * sizeof(T)) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_s), s.size() * sizeof(R)) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_info), std::size_t(count) * sizeof(SolveInfo)) == cudaSuccess);
  if (work_bytes) REQUIRE(cudaMalloc(&d_work, work_bytes) == cudaSuccess);
  cudaStream_t stream;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(d_a, a.data.data(), a.data.size() * sizeof(T), cudaMemcpyHostToDevice, stream) == cudaSuccess);
  if (with_u) REQUIRE(cudaMemcpyAsync(d_u, u.data.data(), u.data.size() * sizeof(T), cudaMemcpyHostToDevice, stream) == cudaSuccess);
  if (with_v) REQUIRE(cudaMemcpyAsync(d_v, v.data.data(), v.data.size() * sizeof(T), cudaMemcpyHostToDevice, stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(d_s, s.data(), s.size() * sizeof(R), cudaMemcpyHostToDevice, stream) == cudaSuccess);

  const eigstream::BatchView<const T> a_dev{d_a, m, n, a.ld, a.stride, count};
  const eigstream::BatchView<T> u_dev = with_u ? eigstream::BatchView<T>{d_u, m, k, u.ld, u.stride, count}
                                               : eigstream::BatchView<T>{};
  const eigstream::BatchView<T> v_dev = with_v ? eigstream::BatchView<T>{d_v, n, k, v.ld, v.stride, count}
                                               : eigstream::BatchView<T>{};
  const auto s_dev = eigstream::vectors(d_s, k, count, s_stride);
  if (work_bytes)
    REQUIRE_THROWS_MATCHES(eigstream::cuda::svd_batched(a_dev, s_dev, u_dev, v_dev, d_info, gpu_options(), stream),
                           Error, Catch::Predicate<Error>([](const Error& e) {
                             return e.code() == ErrorCode::invalid_argument &&
                                    std::string(e.what()).find("workspace") != std::string::npos;
                           }, "invalid_argument naming the workspace"));
  eigstream::cuda::svd_batched(a_dev, s_dev, u_dev, v_dev, d_info, gpu_options(), stream, {}, d_work);
  std::vector<SolveInfo> info(static_cast<std::size_t>(count));
  if (with_u) REQUIRE(cudaMemcpyAsync(u.data.data(), d_u, u.data.size() * sizeof(T), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  if (with_v) REQUIRE(cudaMemcpyAsync(v.data.data(), d_v, v.data.size() * sizeof(T), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(s.data(), d_s, s.size() * sizeof(R), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(info.data(), d_info, info.size() * sizeof(SolveInfo), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  for (index_t b = 0; b < count; b += (m > 100 || n > 100) ? 12 : 5) {
    INFO("matrix " << b);
    REQUIRE(info[std::size_t(b)].converged);
    const std::vector<R> sb(s.begin() + b * s_stride, s.begin() + b * s_stride + k);
    CHECK(s[std::size_t(b * s_stride + k)] == R(-1));  // the vector stride's padding is untouched
    const Matrix<T> ub = u.matrix(b), vb = v.matrix(b);
    check_svd(ms[std::size_t(b)], sb, with_u ? &ub : nullptr, with_v ? &vb : nullptr,
              reference_singular_values(ms[std::size_t(b)]), Sort::descending, "gpu svd device interface");
  }
  cudaFree(d_a), cudaFree(d_u), cudaFree(d_v), cudaFree(d_s), cudaFree(d_info), cudaFree(d_work);
  cudaStreamDestroy(stream);
}

TEST_CASE("gpu svd: backend choice; problems the kernel does not take are refused clearly", "[gpu][svd]") {
  Options automatic;
  CHECK(eigstream::svd_backend(1024, 64, 16, automatic) == Backend::cuda);
  CHECK(eigstream::svd_backend(64, 1024, 16, automatic) == Backend::cuda);
  CHECK(eigstream::svd_backend(64, 64, 4, automatic) == Backend::cpu);  // small batches stay on the CPU
  CHECK(eigstream::svd_backend(64, 64, 1, gpu_options()) == Backend::cuda);
  for (const Shape shape : {Shape{65, 65}, Shape{1025, 8}, Shape{8, 1025}}) {
    const Matrix<double> a = svd_case<double>(SvdCase::random, shape.first, shape.second, 1);
    const index_t k = std::min(a.rows, a.cols);
    std::vector<double> s(static_cast<std::size_t>(k));
    INFO(a.rows << " x " << a.cols);
    REQUIRE_THROWS_MATCHES(eigstream::svd(a.view(), s.data(), {}, {}, gpu_options()), Error,
                           Catch::Predicate<Error>([](const Error& e) { return e.code() == ErrorCode::cuda; }, "cuda error"));
    // automatic falls back to the CPU for a problem the kernel does not take
    REQUIRE(eigstream::svd(a.view(), s.data(), {}, {}, automatic).converged);
  }
}
