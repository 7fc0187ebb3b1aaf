// eigstream::cuda::hermitian_from_lower: the upper triangle becomes exactly the conjugate of the
// lower, the diagonal exactly real; the lower triangle and the padding between columns and matrices
// are left as they were. Float and double, 1 to 64 rows, padded leading dimensions and strides, a
// batch; bad calls. Label gpu.
#include <catch2/catch.hpp>

#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "eigstream/cuda.hpp"
#include "eigstream/detail/device_array.hpp"
#include "oracle.hpp"

using eigstream::ErrorCode;
using eigstream::detail::DeviceArray;
using namespace oracle;

TEMPLATE_TEST_CASE("gpu hermitian_from_lower: the lower triangle mirrored, exactly, and nothing else written",
                   "[gpu][hermitian]", float, double) {
  using R = TestType;
  using C = std::complex<R>;
  // (n, count): sizes up to the covariance stage's 64, and more matrices than one launch's grid
  // holds (65535 in y).
  const auto [n, count] = GENERATE(table<index_t, index_t>({{1, 3}, {2, 3}, {7, 3}, {33, 3}, {64, 3}, {2, 70000}}));
  const index_t ld = n + 2, stride = ld * n + 5;
  // Every entry different, both triangles (and the padding) unrelated: nothing Hermitian to start from.
  std::mt19937_64 random{std::uint64_t(n)};
  std::normal_distribution<R> normal;
  std::vector<C> a(std::size_t(stride * count));
  for (C& z : a) z = {normal(random), normal(random)};

  cudaStream_t stream = cudaStreamPerThread;
  DeviceArray<C> dev(a.size(), stream);
  dev.upload(a, stream);
  eigstream::cuda::hermitian_from_lower<R>({dev.get(), n, n, ld, stride, count}, stream);
  std::vector<C> out;
  dev.download(out, stream);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);

  std::size_t wrong = 0;
  for (index_t k = 0; k < stride * count; ++k) {
    const index_t b = k / stride, e = k % stride, i = e % ld, j = e / ld;
    C expected = a[std::size_t(k)];  // the lower triangle and the padding
    if (j < n && i < n && i < j) expected = std::conj(a[std::size_t(b * stride + j + i * ld)]);
    if (j < n && i < n && i == j) expected = {a[std::size_t(k)].real(), R(0)};
    if (std::memcmp(&expected, &out[std::size_t(k)], sizeof(C)) != 0) ++wrong;
  }
  INFO((sizeof(R) == 4 ? "float" : "double") << " n = " << n << ", " << count << " matrices");
  CHECK(wrong == 0);
}

TEST_CASE("gpu hermitian_from_lower: bad calls name what is wrong", "[gpu][hermitian]") {
  using C = std::complex<float>;
  cudaStream_t stream = cudaStreamPerThread;
  DeviceArray<C> a(64, stream);
  check_error([&] { eigstream::cuda::hermitian_from_lower<float>({a.get(), 4, 3, 4, 12, 1}, stream); },
              ErrorCode::invalid_argument, {"cuda::hermitian_from_lower", "4 x 3", "4 x 4"});
  check_error([&] { eigstream::cuda::hermitian_from_lower<float>({a.get(), 4, 4, 3, 16, 1}, stream); },
              ErrorCode::invalid_argument, {"cuda::hermitian_from_lower", "leading dimension 3"});
  check_error([&] { eigstream::cuda::hermitian_from_lower<float>({nullptr, 4, 4, 4, 16, 2}, stream); },
              ErrorCode::invalid_argument, {"cuda::hermitian_from_lower", "missing"});
  check_error([&] { eigstream::cuda::hermitian_from_lower<float>({a.get(), 2, 2, 2, 3, 2}, stream); },
              ErrorCode::invalid_argument, {"cuda::hermitian_from_lower", "batch stride 3"});
  check_error([&] { eigstream::cuda::hermitian_from_lower<float>({a.get(), -4, -4, 4, 16, 1}, stream); },
              ErrorCode::invalid_argument, {"cuda::hermitian_from_lower", "negative size"});
  check_error([&] { eigstream::cuda::hermitian_from_lower<float>({a.get(), 4, 4, 4, 16, -1}, stream); },
              ErrorCode::invalid_argument, {"cuda::hermitian_from_lower", "negative size"});
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
}
