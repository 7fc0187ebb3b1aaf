// Beamforming on an 8-element half-wavelength ULA: the steering-vector sign against phases worked out
// by hand and against the phase a simulated source puts between two elements; MUSIC finds sources at
// -20 and 35 degrees (10 dB SNR, 200 snapshots) within 0.5 degree for every seed, and to 0.01 degree
// on an exact covariance from a 1-degree grid; MDL counts 0, 2 and 3 sources; MVDR's beam pattern
// peaks at the sources and its weights satisfy (R + delta I) w = P a and w^H a = 1; eigen-beamforming
// weights are the principal eigenvector (R w = lambda_max w, lambda_max from LAPACK); bad calls.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "oracle.hpp"

using eigstream::ArrayGeometry;
using eigstream::ArraySignal;
using eigstream::Beamformer;
using eigstream::Covariance;
using eigstream::CovarianceConfig;
using eigstream::DiagonalLoading;
using eigstream::ErrorCode;
using eigstream::sample_t;
using namespace oracle;

namespace {

constexpr double kPi = 3.14159265358979323846;

template <class R>
SampleEvd<R> scene_of(const eigstream::ArraySignalConfig& config, index_t snapshots) {
  return SampleEvd<R>::generated(ArraySignal(config), snapshots);
}

eigstream::ArraySignalConfig two_sources(std::uint64_t seed) {
  eigstream::ArraySignalConfig config;
  config.geometry = ArrayGeometry::uniform_linear(8, 0.5);
  config.sources = {{-20, 10}, {35, 10}};
  config.seed = seed;
  return config;
}

// The `count` largest interior local maxima of p over the grid, as angles, ascending.
std::vector<double> local_maxima(const std::vector<double>& angles, const std::vector<double>& p, std::size_t count) {
  std::vector<std::size_t> peaks;
  for (std::size_t g = 1; g + 1 < p.size(); ++g)
    if (p[g] > p[g - 1] && p[g] >= p[g + 1]) peaks.push_back(g);
  std::sort(peaks.begin(), peaks.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
  std::vector<double> out;
  for (std::size_t i = 0; i < std::min(count, peaks.size()); ++i) out.push_back(angles[peaks[i]]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("steering vectors follow the documented sign convention", "[beamforming]") {
  // Half-wavelength ULA, 30 degrees: element n leads by 2 pi * 0.5 n * sin 30 = n pi / 2.
  const ArrayGeometry ula = ArrayGeometry::uniform_linear(4, 0.5);
  std::vector<std::complex<double>> a(4);
  ula.steering_vector(30.0, a.data());
  const std::complex<double> expected[] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  for (int n = 0; n < 4; ++n) CHECK(std::abs(a[std::size_t(n)] - expected[n]) < 1e-14);

  // Arbitrary positions: a quarter wavelength toward broadside leads by pi / 2 at 0 degrees; a quarter
  // wavelength along x lags by pi / 2 for a source at -90 degrees (it lies farther from the source).
  const ArrayGeometry free_array({{0, 0}, {0, 0.25}, {0.25, 0}});
  std::vector<std::complex<float>> b(3);
  free_array.steering_vector(0.0, b.data());
  CHECK(std::abs(b[1] - std::complex<float>(0, 1)) < 1e-6f);
  CHECK(std::abs(b[2] - std::complex<float>(1, 0)) < 1e-6f);
  free_array.steering_vector(-90.0, b.data());
  CHECK(std::abs(b[2] - std::complex<float>(0, -1)) < 1e-6f);

  // A simulated source at +30 degrees: E[x_1 conj(x_0)] has the phase of a_1 conj(a_0) = +90 degrees.
  eigstream::ArraySignalConfig config;
  config.geometry = ArrayGeometry::uniform_linear(2, 0.5);
  config.sources = {{30, 20}};
  const SampleEvd<double> scene = scene_of<double>(config, 2000);
  CHECK(std::arg(scene.r(1, 0)) * 180 / kPi == Approx(90).margin(1));
}

TEMPLATE_TEST_CASE("MUSIC finds two sources within 0.5 degree and MDL counts them", "[beamforming]", float, double) {
  Beamformer<TestType> beamformer(ArrayGeometry::uniform_linear(8, 0.5), eigstream::angle_grid(-90, 90, 1));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const SampleEvd<TestType> scene = scene_of<TestType>(two_sources(seed), 200);
    INFO("seed " << seed);
    CHECK(eigstream::mdl_sources(scene.w.data(), 8, 200) == 2);
    double doa[2] = {0, 0};
    REQUIRE(beamformer.music_doa(scene.evd(), 2, doa) == 2);
    INFO("estimates " << doa[0] << ", " << doa[1]);
    CHECK(std::abs(doa[0] + 20) < 0.5);
    CHECK(std::abs(doa[1] - 35) < 0.5);
  }
}

TEST_CASE("MUSIC on 100 consecutive blocks of one stream: RMS error within 0.5 degree", "[beamforming]") {
  // The beamform app's target: blocks of 200 snapshots, a fresh covariance per block, K from MDL.
  ArraySignal signal(two_sources(2026));
  Beamformer<float> beamformer(ArrayGeometry::uniform_linear(8, 0.5), eigstream::angle_grid(-90, 90, 1));
  Covariance<float> covariance({8, CovarianceConfig::Mode::exponential, 0, 1, {}});
  Matrix<sample_t> x(8, 200);
  Matrix<std::complex<float>> r(8, 8), v(8, 8);
  std::vector<float> w(8);
  double sum2 = 0;
  for (int block = 0; block < 100; ++block) {
    signal.generate(x.view());
    covariance.update(x.cview());
    covariance.covariance(r.view());
    eigstream::evd(r.cview(), w.data(), v.view());
    const index_t sources = eigstream::mdl_sources(w.data(), 8, covariance.effective_snapshots());
    double doa[2];
    INFO("block " << block);
    REQUIRE(sources == 2);
    REQUIRE(beamformer.music_doa({w.data(), v.cview()}, sources, doa) == 2);
    sum2 += (doa[0] + 20) * (doa[0] + 20) + (doa[1] - 35) * (doa[1] - 35);
  }
  const double rms = std::sqrt(sum2 / 200);
  INFO("RMS DOA error " << rms << " degrees");
  CHECK(rms <= 0.5);
}

TEST_CASE("MUSIC refines a 1-degree grid to the exact peaks of an exact covariance", "[beamforming]") {
  // R = A diag(p) A^H + I with sources between grid points.
  const ArrayGeometry ula = ArrayGeometry::uniform_linear(8, 0.5);
  const double truth[] = {-20.37, 35.62};
  Matrix<std::complex<double>> r = Matrix<std::complex<double>>::identity(8);
  std::vector<std::complex<double>> a(8);
  for (double angle : truth) {
    ula.steering_vector(angle, a.data());
    for (index_t j = 0; j < 8; ++j)
      for (index_t i = 0; i < 8; ++i) r(i, j) += 10.0 * a[std::size_t(i)] * std::conj(a[std::size_t(j)]);
  }
  const SampleEvd<double> scene = SampleEvd<double>::of_covariance(r);
  Beamformer<double> beamformer(ula, eigstream::angle_grid(-90, 90, 1));
  double doa[2];
  REQUIRE(beamformer.music_doa(scene.evd(), 2, doa) == 2);
  CHECK(std::abs(doa[0] - truth[0]) < 0.01);
  CHECK(std::abs(doa[1] - truth[1]) < 0.01);
  CHECK(eigstream::mdl_sources(scene.w.data(), 8, 1000) == 2);
}

TEST_CASE("MDL counts no source in noise and three sources", "[beamforming]") {
  eigstream::ArraySignalConfig noise = two_sources(4);
  noise.sources.clear();
  const SampleEvd<double> empty = scene_of<double>(noise, 500);
  CHECK(eigstream::mdl_sources(empty.w.data(), 8, 500) == 0);

  eigstream::ArraySignalConfig three = two_sources(5);
  three.sources.push_back({5, 5});
  const SampleEvd<double> scene = scene_of<double>(three, 500);
  CHECK(eigstream::mdl_sources(scene.w.data(), 8, 500) == 3);
}

TEMPLATE_TEST_CASE("MVDR beam pattern peaks at the sources; weights are distortionless", "[beamforming]", float,
                   double) {
  const std::vector<double> angles = eigstream::angle_grid(-90, 90, 0.5);
  Beamformer<TestType> beamformer(ArrayGeometry::uniform_linear(8, 0.5), angles);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const SampleEvd<TestType> scene = scene_of<TestType>(two_sources(seed), 200);
    std::vector<TestType> power(angles.size());
    beamformer.mvdr_power(scene.evd(), {}, power.data());
    const std::vector<double> peaks = local_maxima(angles, std::vector<double>(power.begin(), power.end()), 2);
    INFO("seed " << seed);
    REQUIRE(peaks.size() == 2);
    CHECK(std::abs(peaks[0] + 20) <= 2);
    CHECK(std::abs(peaks[1] - 35) <= 2);

    // w^H a = 1 and (R + delta I) w = P a with P = w^H (R + delta I) w, R the covariance itself.
    for (const DiagonalLoading loading : {DiagonalLoading{}, DiagonalLoading::relative(0.1)}) {
      const index_t n = 8;
      double trace = 0;
      for (index_t i = 0; i < n; ++i) trace += double(scene.r(i, i).real());
      const double delta = loading.amount(trace, n);
      std::vector<std::complex<TestType>> w(8), a(8);
      beamformer.mvdr_weights(scene.evd(), 35.0, loading, w.data());
      beamformer.geometry().steering_vector(35.0, a.data());
      std::vector<std::complex<double>> rw(8);
      std::complex<double> response = 0, quadratic = 0;
      for (index_t i = 0; i < n; ++i) {
        const std::complex<double> wi(w[std::size_t(i)]);
        rw[std::size_t(i)] = delta * wi;
        for (index_t j = 0; j < n; ++j)
          rw[std::size_t(i)] += std::complex<double>(scene.r(i, j)) * std::complex<double>(w[std::size_t(j)]);
        response += std::conj(wi) * std::complex<double>(a[std::size_t(i)]);
        quadratic += std::conj(wi) * rw[std::size_t(i)];
      }
      CHECK(std::abs(response - 1.0) < 1e3 * eps<TestType>());
      const double p = quadratic.real();
      double defect = 0;
      for (index_t i = 0; i < n; ++i)
        defect = std::max(defect, std::abs(rw[std::size_t(i)] - p * std::complex<double>(a[std::size_t(i)])));
      INFO("loading " << delta << ": max |(R + delta I) w - P a| = " << defect << ", P = " << p);
      CHECK(defect <= 1e3 * eps<TestType>() * p);
      // The beam power at 35 degrees on the grid, with the same loading, is the same P.
      std::vector<TestType> loaded(angles.size());
      beamformer.mvdr_power(scene.evd(), loading, loaded.data());
      CHECK(double(loaded[std::size_t((35 + 90) * 2)]) == Approx(p).epsilon(1e3 * eps<TestType>()));
    }
  }
}

TEMPLATE_TEST_CASE("eigen-beamforming weights are the principal eigenvector", "[beamforming]", float, double) {
  const SampleEvd<TestType> scene = scene_of<TestType>(two_sources(3), 200);
  Beamformer<TestType> beamformer(ArrayGeometry::uniform_linear(8, 0.5), eigstream::angle_grid(-90, 90, 1));
  std::vector<std::complex<TestType>> w(8);
  beamformer.eigen_weights(scene.evd(), w.data());
  CHECK(w[0].imag() == TestType(0));
  CHECK(w[0].real() >= TestType(0));
  const double lambda = reference_eigenvalues(scene.r).front();
  double norm2 = 0, defect = 0;
  for (index_t i = 0; i < 8; ++i) {
    norm2 += std::norm(std::complex<double>(w[std::size_t(i)]));
    std::complex<double> rw = 0;
    for (index_t j = 0; j < 8; ++j) rw += std::complex<double>(scene.r(i, j)) * std::complex<double>(w[std::size_t(j)]);
    defect = std::max(defect, std::abs(rw - lambda * std::complex<double>(w[std::size_t(i)])));
  }
  CHECK(std::abs(norm2 - 1) < 100 * eps<TestType>());
  CHECK(defect <= 100 * eps<TestType>() * lambda);
  // The same vector as the solver's column 0, up to a unit phase.
  std::complex<double> overlap = 0;
  for (index_t i = 0; i < 8; ++i) overlap += std::conj(std::complex<double>(scene.v(i, 0))) * std::complex<double>(w[std::size_t(i)]);
  CHECK(std::abs(overlap) == Approx(1).margin(100 * eps<TestType>()));
}

TEST_CASE("angle grids include both ends when they fall on the grid", "[beamforming]") {
  const std::vector<double> g = eigstream::angle_grid(-90, 90, 0.1);
  REQUIRE(g.size() == 1801);
  CHECK(g[900] == Approx(0).margin(1e-12));
  CHECK(g.back() == Approx(90).margin(1e-12));
  CHECK(eigstream::angle_grid(0, 1, 0.3).size() == 4);  // 0, 0.3, 0.6, 0.9
  CHECK(eigstream::angle_grid(5, 5, 1).size() == 1);
}

TEST_CASE("beamforming rejects bad calls with clear messages", "[beamforming][errors]") {
  check_error([] { eigstream::angle_grid(0, 10, 0); }, ErrorCode::invalid_argument, {"angle grid", "step 0"});
  check_error([] { eigstream::angle_grid(10, 0, 1); }, ErrorCode::invalid_argument, {"angle grid", "from 10 to 0"});
  check_error([] { ArrayGeometry::uniform_linear(0); }, ErrorCode::invalid_argument, {"at least 1 element", "got 0"});
  check_error([] { ArrayGeometry::uniform_linear(4, 0); }, ErrorCode::invalid_argument, {"spacing", "got 0"});
  check_error([] { ArrayGeometry({}); }, ErrorCode::invalid_argument, {"at least 1 element"});
  const ArrayGeometry ula = ArrayGeometry::uniform_linear(8);
  check_error([&] { Beamformer<float>(ula, {}); }, ErrorCode::invalid_argument, {"angle grid is empty"});
  check_error([&] { Beamformer<float>(ula, {0, 1, 1}); }, ErrorCode::invalid_argument,
              {"strictly increasing", "angle 2 = 1"});

  const SampleEvd<float> scene = scene_of<float>(two_sources(1), 200);
  Beamformer<float> beamformer(ula, eigstream::angle_grid(-90, 90, 1));
  std::vector<float> spectrum(181);
  double doa[8];
  check_error([&] { beamformer.music_spectrum(scene.evd(), 8, spectrum.data()); }, ErrorCode::invalid_argument,
              {"music", "K = 8", "K < N = 8"});
  check_error([&] { beamformer.music_doa(scene.evd(), 0, doa); }, ErrorCode::invalid_argument, {"K = 0"});
  Beamformer<float> two_angles(ula, {0, 1});
  check_error([&] { two_angles.music_doa(scene.evd(), 2, doa); }, ErrorCode::invalid_argument, {"at least 3 angles"});

  const Matrix<std::complex<float>> small(6, 6);
  const std::vector<float> w6(6, 1.0f);
  check_error([&] { beamformer.music_spectrum({w6.data(), small.cview()}, 2, spectrum.data()); },
              ErrorCode::invalid_argument, {"eigenvectors", "6 x 6", "8 x 8"});
  std::vector<float> ascending(scene.w.rbegin(), scene.w.rend());
  check_error([&] { beamformer.music_spectrum({ascending.data(), scene.v.cview()}, 2, spectrum.data()); },
              ErrorCode::invalid_argument, {"descending"});

  std::vector<float> weights(8);
  check_error([&] { beamformer.music_power_weights(scene.evd(), 0, weights.data()); }, ErrorCode::invalid_argument,
              {"music", "K = 0"});
  check_error([&] { beamformer.music_doa(scene.evd(), 8, spectrum.data(), doa); }, ErrorCode::invalid_argument,
              {"music", "K = 8"});

  std::vector<float> singular = scene.w;
  singular.back() = 0;
  check_error([&] { beamformer.mvdr_power_weights({singular.data(), scene.v.cview()}, {}, weights.data()); },
              ErrorCode::invalid_input, {"mvdr", "not positive definite"});
  check_error([&] { beamformer.mvdr_power({singular.data(), scene.v.cview()}, {}, spectrum.data()); },
              ErrorCode::invalid_input, {"mvdr", "not positive definite", "eigenvalue 7", "loading"});
  beamformer.mvdr_power({singular.data(), scene.v.cview()}, DiagonalLoading::absolute(0.1), spectrum.data());
  CHECK(std::isfinite(spectrum[90]));
  check_error([&] { eigstream::mdl_sources(singular.data(), 8, 200); }, ErrorCode::invalid_input,
              {"mdl", "eigenvalue 7", "positive"});
  check_error([&] { eigstream::mdl_sources(scene.w.data(), 8, 0); }, ErrorCode::invalid_argument,
              {"snapshots", "got 0"});
  std::vector<std::complex<float>> a(8);
  check_error([&] { ula.steering_vector(std::nan(""), a.data()); }, ErrorCode::invalid_argument,
              {"angle must be finite"});
}

// The grid computations share one form (what the GPU runs): P = 1 / sum_i weights_i |v_i^H a|^2 with
// MVDR's and MUSIC's weights gives mvdr_power and music_spectrum; checked against the definitions
// evaluated here in double, and MUSIC's DOAs from a given spectrum equal those it computes itself.
TEST_CASE("beamforming: beam powers from weights are MVDR's and MUSIC's", "[beamforming]") {
  const SampleEvd<float> scene = scene_of<float>(two_sources(3), 200);
  const ArrayGeometry ula = ArrayGeometry::uniform_linear(8);
  Beamformer<float> beamformer(ula, eigstream::angle_grid(-90, 90, 0.5));
  const std::size_t angles = beamformer.angles().size();
  const auto loading = DiagonalLoading::relative(1e-2);
  std::vector<float> mvdr_weights(8), music_weights(8), mvdr(angles), music(angles), from_weights(angles);
  beamformer.mvdr_power_weights(scene.evd(), loading, mvdr_weights.data());
  beamformer.music_power_weights(scene.evd(), 2, music_weights.data());
  double trace = 0;
  for (float w : scene.w) trace += w;
  const double delta = loading.amount(trace, 8);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(mvdr_weights[i] == Approx(1 / (double(scene.w[i]) + delta)).epsilon(1e-6));
    CHECK(music_weights[i] == (i < 2 ? 0.0f : 0.125f));
  }
  beamformer.mvdr_power(scene.evd(), loading, mvdr.data());
  beamformer.music_spectrum(scene.evd(), 2, music.data());
  beamformer.beam_power(scene.evd(), mvdr_weights.data(), from_weights.data());
  for (std::size_t g = 0; g < angles; ++g) {
    std::vector<std::complex<double>> a(8);
    ula.steering_vector(beamformer.angles()[g], a.data());
    double inverse_mvdr = 0, noise = 0;
    for (index_t i = 0; i < 8; ++i) {
      std::complex<double> projection = 0;
      for (index_t k = 0; k < 8; ++k) projection += std::conj(std::complex<double>(scene.v(k, i))) * a[std::size_t(k)];
      inverse_mvdr += std::norm(projection) / (double(scene.w[std::size_t(i)]) + delta);
      if (i >= 2) noise += std::norm(projection);
    }
    CHECK(mvdr[g] == Approx(1 / inverse_mvdr).epsilon(1e-5));
    CHECK(music[g] == Approx(8 / noise).epsilon(1e-4));
    CHECK(from_weights[g] == mvdr[g]);
  }
  double doa[2], doa_from_spectrum[2];
  REQUIRE(beamformer.music_doa(scene.evd(), 2, doa) == 2);
  REQUIRE(beamformer.music_doa(scene.evd(), 2, music.data(), doa_from_spectrum) == 2);
  CHECK(doa[0] == doa_from_spectrum[0]);
  CHECK(doa[1] == doa_from_spectrum[1]);
}
