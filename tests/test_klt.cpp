// KLT: 16 channels mixing 4 latent signals at 40 dB SNR are reconstructed from k = 4 components at
// >= 35 dB (and near the 41.2 dB that the noise outside the signal subspace allows), the energy rule
// picks 4; coefficients against a long double product; the component rules; bad calls.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "oracle.hpp"

using eigstream::ComponentRule;
using eigstream::ErrorCode;
using eigstream::MixtureSignal;
using eigstream::sample_t;
using namespace oracle;

namespace {

// Reconstruction SNR of the block from the first k eigenvectors of its covariance.
template <class R>
double klt_snr_db(const SampleEvd<R>& s, index_t k) {
  const index_t n = s.x.rows, l = s.x.cols;
  const eigstream::MatrixView<const std::complex<R>> basis{s.v.data.data(), n, k, n};
  Matrix<std::complex<R>> c(k, l);
  eigstream::klt_coefficients(basis, s.x.cview(), c.view());
  Matrix<sample_t> y(n, l);
  eigstream::klt_reconstruct(basis, c.cview(), y.view());
  return eigstream::reconstruction_snr_db(s.x.cview(), y.cview());
}

template <class R>
SampleEvd<R> mixture(index_t channels, index_t latent, double snr_db, index_t snapshots, std::uint64_t seed) {
  return SampleEvd<R>::generated(MixtureSignal({channels, latent, snr_db, seed}), snapshots);
}

}  // namespace

TEMPLATE_TEST_CASE("KLT of 16 channels mixing 4 latent signals at 40 dB keeps them in 4 components", "[klt]",
                   float, double) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const SampleEvd<TestType> klt = mixture<TestType>(16, 4, 40, 2000, seed);
    INFO("seed " << seed << ", eigenvalues 4 and 5: " << klt.w[3] << ", " << klt.w[4]);
    CHECK(eigstream::choose_components(klt.w.data(), 16, ComponentRule::energy(0.999)) == 4);
    CHECK(eigstream::choose_components(klt.w.data(), 16, ComponentRule::fixed(4)) == 4);
    // Noise of power 1e-4 per channel, 12 of its 16 dimensions outside the kept subspace: the error
    // power is 12/16 of the noise, the signal power 1 + 1e-4 per channel: SNR = 41.25 dB.
    const double snr = klt_snr_db(klt, 4);
    const double expected = 10 * std::log10((1 + 1e-4) / (0.75e-4));
    INFO("reconstruction SNR " << snr << " dB, expected about " << expected);
    CHECK(snr >= 35);
    CHECK(std::abs(snr - expected) < 0.5);
    CHECK(klt_snr_db(klt, 3) < 30);  // a missing latent signal shows
  }
}

TEST_CASE("KLT with the whole basis reconstructs the block to rounding", "[klt]") {
  const SampleEvd<double> klt = mixture<double>(8, 3, 20, 300, 7);
  CHECK(klt_snr_db(klt, 8) > 120);
}

TEST_CASE("KLT coefficients equal V^H X computed in long double", "[klt]") {
  Rng rng(3);
  const index_t n = 7, k = 3, l = 25;
  const Matrix<std::complex<double>> q = random_unitary<std::complex<double>>(n, rng);
  const Matrix<sample_t> x = gaussian<sample_t>(n, l, rng);
  const eigstream::MatrixView<const std::complex<double>> basis{q.data.data(), n, k, n};
  Matrix<std::complex<double>> c(k, l);
  eigstream::klt_coefficients(basis, x.cview(), c.view());
  for (index_t t = 0; t < l; ++t)
    for (index_t j = 0; j < k; ++j) {
      std::complex<long double> sum = 0;
      for (index_t i = 0; i < n; ++i)
        sum += std::conj(std::complex<long double>(q(i, j))) * std::complex<long double>(x(i, t));
      CHECK(std::abs(std::complex<long double>(c(j, t)) - sum) <= 1e-14L);
    }
}

TEST_CASE("the energy rule keeps the smallest prefix reaching the fraction", "[klt]") {
  const std::vector<double> w = {5, 3, 1, 0.5, 0.5, -1e-17};  // sum 10; rounding negatives count as 0
  CHECK(eigstream::choose_components(w.data(), 6, ComponentRule::energy(0.5)) == 1);
  CHECK(eigstream::choose_components(w.data(), 6, ComponentRule::energy(0.51)) == 2);
  CHECK(eigstream::choose_components(w.data(), 6, ComponentRule::energy(0.8)) == 2);
  CHECK(eigstream::choose_components(w.data(), 6, ComponentRule::energy(0.85)) == 3);
  CHECK(eigstream::choose_components(w.data(), 6, ComponentRule::energy(0.95)) == 4);
  CHECK(eigstream::choose_components(w.data(), 6, ComponentRule::energy(1.0)) == 5);
  const std::vector<float> zero(4, 0.0f);
  CHECK(eigstream::choose_components(zero.data(), 4, ComponentRule::energy(0.9)) == 1);
}

TEST_CASE("reconstruction SNR of a known error", "[klt]") {
  Rng rng(9);
  const Matrix<sample_t> x = gaussian<sample_t>(4, 50, rng);
  Matrix<sample_t> y = x;
  for (auto& s : y.data) s *= 1.1f;  // error = 0.1 x: 20 dB
  CHECK(eigstream::reconstruction_snr_db(x.cview(), y.cview()) == Approx(20).margin(1e-4));
  CHECK(std::isinf(eigstream::reconstruction_snr_db(x.cview(), x.cview())));
}

TEST_CASE("KLT rejects bad calls with clear messages", "[klt][errors]") {
  const std::vector<double> w = {3, 2, 1};
  check_error([&] { eigstream::choose_components(w.data(), 3, ComponentRule::fixed(4)); },
              ErrorCode::invalid_argument, {"component count 4", "[1, 3]"});
  check_error([&] { eigstream::choose_components(w.data(), 3, ComponentRule::energy(0)); },
              ErrorCode::invalid_argument, {"energy fraction", "(0, 1]"});
  check_error([&] { eigstream::choose_components(w.data(), 3, ComponentRule::energy(1.5)); },
              ErrorCode::invalid_argument, {"energy fraction", "1.5"});
  const std::vector<double> ascending = {1, 2, 3};
  check_error([&] { eigstream::choose_components(ascending.data(), 3, ComponentRule::energy(0.9)); },
              ErrorCode::invalid_argument, {"descending", "eigenvalue 1"});
  const std::vector<double> nan = {3, std::numeric_limits<double>::quiet_NaN(), 1};
  check_error([&] { eigstream::choose_components(nan.data(), 3, ComponentRule::energy(0.9)); },
              ErrorCode::invalid_input, {"eigenvalue 1", "NaN"});

  const Matrix<std::complex<float>> basis(6, 2);
  const Matrix<sample_t> block(5, 10);
  Matrix<std::complex<float>> c(2, 10);
  check_error([&] { eigstream::klt_coefficients(basis.cview(), block.cview(), c.view()); },
              ErrorCode::invalid_argument, {"klt coefficients", "block", "5 x 10", "6 x 10"});
  const Matrix<sample_t> block6(6, 10);
  Matrix<std::complex<float>> c3(3, 10);
  check_error([&] { eigstream::klt_coefficients(basis.cview(), block6.cview(), c3.view()); },
              ErrorCode::invalid_argument, {"coefficients", "3 x 10", "2 x 10"});
  Matrix<sample_t> out(6, 9);
  check_error([&] { eigstream::klt_reconstruct(basis.cview(), c.cview(), out.view()); },
              ErrorCode::invalid_argument, {"klt reconstruct", "block", "6 x 9", "6 x 10"});
  check_error([&] { eigstream::reconstruction_snr_db(block6.cview(), out.cview()); }, ErrorCode::invalid_argument,
              {"reconstructed block", "6 x 9", "6 x 10"});
}
