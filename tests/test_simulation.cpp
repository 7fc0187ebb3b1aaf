// Simulation: streams made in chunks equal streams made at once, bit for bit; seeds reproduce; the
// Gaussian draws have the moments of a unit circular complex Gaussian; sample covariances of long
// runs approach the model covariances (A P A^H + I with correlated sources, M M^H + sigma^2 I); bad
// configurations.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <vector>

#include "oracle.hpp"

using eigstream::ArrayGeometry;
using eigstream::ArraySignal;
using eigstream::ArraySignalConfig;
using eigstream::ComplexGaussian;
using eigstream::ErrorCode;
using eigstream::MixtureSignal;
using eigstream::MixtureSignalConfig;
using eigstream::sample_t;
using namespace oracle;

namespace {

// Generates `total` snapshots in chunks of the given sizes (cycled).
template <class Generator>
Matrix<sample_t> in_chunks(Generator generator, index_t total, const std::vector<index_t>& sizes) {
  const index_t n = generator.channels();
  Matrix<sample_t> x(n, total);
  index_t t = 0;
  for (std::size_t i = 0; t < total; ++i) {
    const index_t size = std::min(sizes[i % sizes.size()], total - t);
    generator.generate(eigstream::matrix(x.data.data() + t * n, n, size));
    t += size;
  }
  return x;
}

// ||S - model||_F / ||model||_F, S the sample covariance of x in double.
double covariance_error(const Matrix<sample_t>& x, const Matrix<std::complex<double>>& model) {
  const index_t n = x.rows;
  double diff = 0, norm = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      std::complex<double> s = 0;
      for (index_t t = 0; t < x.cols; ++t) s += std::complex<double>(x(i, t)) * std::conj(std::complex<double>(x(j, t)));
      s /= double(x.cols);
      diff += std::norm(s - model(i, j));
      norm += std::norm(model(i, j));
    }
  return std::sqrt(diff / norm);
}

ArraySignalConfig correlated_pair() {
  ArraySignalConfig config;
  config.geometry = ArrayGeometry::uniform_linear(6, 0.5);
  config.sources = {{-10, 3}, {25, 6}};
  config.correlation = 0.6;
  config.seed = 77;
  return config;
}

}  // namespace

TEST_CASE("generators made in chunks equal one call, bit for bit", "[simulation]") {
  const ArraySignal array(correlated_pair());
  const Matrix<sample_t> whole = in_chunks(array, 500, {500});
  CHECK(in_chunks(array, 500, {1, 7, 64, 3}).data == whole.data);
  CHECK(in_chunks(array, 500, {250}).data == whole.data);

  const MixtureSignal mixture({12, 3, 30, 5});
  const Matrix<sample_t> mixed = in_chunks(mixture, 400, {400});
  CHECK(in_chunks(mixture, 400, {13, 1, 100}).data == mixed.data);
}

TEST_CASE("seeds reproduce and differ", "[simulation]") {
  ArraySignalConfig config = correlated_pair();
  const Matrix<sample_t> a = in_chunks(ArraySignal(config), 100, {100});
  CHECK(in_chunks(ArraySignal(config), 100, {100}).data == a.data);
  config.seed += 1;
  CHECK(in_chunks(ArraySignal(config), 100, {100}).data != a.data);
  const MixtureSignal m1({8, 2, 20, 1}), m2({8, 2, 20, 2});
  CHECK(m1.mixing() != m2.mixing());
}

TEST_CASE("complex Gaussian draws have unit circular moments", "[simulation]") {
  ComplexGaussian gaussian(2026);
  const int count = 400000;
  std::complex<double> mean = 0, pseudo = 0;
  double power = 0, fourth = 0;
  for (int i = 0; i < count; ++i) {
    const std::complex<double> z = gaussian();
    mean += z;
    pseudo += z * z;
    power += std::norm(z);
    fourth += std::norm(z) * std::norm(z);
  }
  // Standard errors: mean and pseudo-covariance 1/sqrt(count) = 0.0016, power 0.0016, E|z|^4 = 2
  // with standard error sqrt(24 - 4)/sqrt(count) = 0.007. Bounds are 5 standard errors.
  CHECK(std::abs(mean / double(count)) < 0.008);
  CHECK(std::abs(pseudo / double(count)) < 0.008);
  CHECK(power / count == Approx(1).margin(0.008));
  CHECK(fourth / count == Approx(2).margin(0.035));
}

TEST_CASE("array signal covariance approaches A P A^H + I with correlated sources", "[simulation]") {
  const ArraySignalConfig config = correlated_pair();
  const index_t n = 6;
  const Matrix<sample_t> x = in_chunks(ArraySignal(config), 40000, {4000});
  Matrix<std::complex<double>> model = Matrix<std::complex<double>>::identity(n);
  std::vector<std::vector<std::complex<double>>> a(2, std::vector<std::complex<double>>(std::size_t(n)));
  double amplitude[2];
  for (int k = 0; k < 2; ++k) {
    config.geometry.steering_vector(config.sources[std::size_t(k)].angle_deg, a[std::size_t(k)].data());
    amplitude[k] = std::pow(10.0, config.sources[std::size_t(k)].snr_db / 20);
  }
  for (int k = 0; k < 2; ++k)
    for (int l = 0; l < 2; ++l) {
      const double p = amplitude[k] * amplitude[l] * (k == l ? 1.0 : config.correlation);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i)
          model(i, j) += p * a[std::size_t(k)][std::size_t(i)] * std::conj(a[std::size_t(l)][std::size_t(j)]);
    }
  // Relative sampling error of a covariance from 40000 snapshots is about 1/sqrt(40000) = 0.005.
  CHECK(covariance_error(x, model) < 0.03);
}

TEST_CASE("mixture signal covariance approaches M M^H + sigma^2 I", "[simulation]") {
  const MixtureSignalConfig config{10, 3, 10, 9};
  const MixtureSignal mixture(config);
  const Matrix<sample_t> x = in_chunks(mixture, 40000, {40000});
  const index_t n = config.channels;
  Matrix<std::complex<double>> model(n, n);
  double norm2 = 0;
  for (const auto& m : mixture.mixing()) norm2 += std::norm(m);
  CHECK(norm2 == Approx(double(n)).epsilon(1e-12));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      for (index_t r = 0; r < config.latent; ++r)
        model(i, j) += mixture.mixing()[std::size_t(i + r * n)] * std::conj(mixture.mixing()[std::size_t(j + r * n)]);
      if (i == j) model(i, j) += 0.1;  // 10 dB below the mean signal power 1
    }
  CHECK(covariance_error(x, model) < 0.03);
}

TEST_CASE("generators reject bad configurations with clear messages", "[simulation][errors]") {
  ArraySignalConfig config = correlated_pair();
  config.correlation = 1.5;
  check_error([&] { ArraySignal signal(config); }, ErrorCode::invalid_argument, {"correlation", "[0, 1]", "1.5"});
  config.correlation = 0;
  config.sources[1].snr_db = std::nan("");
  check_error([&] { ArraySignal signal(config); }, ErrorCode::invalid_argument, {"source 1", "non-finite"});
  check_error([] { MixtureSignal signal({0, 2, 10, 1}); }, ErrorCode::invalid_argument, {"channels", "got 0"});
  check_error([] { MixtureSignal signal({4, 0, 10, 1}); }, ErrorCode::invalid_argument, {"latent", "got 0"});
  MixtureSignal mixture({4, 2, 10, 1});
  Matrix<sample_t> wrong(5, 10);
  check_error([&] { mixture.generate(wrong.view()); }, ErrorCode::invalid_argument, {"mixture signal", "5 x 10", "4 x 10"});
}
