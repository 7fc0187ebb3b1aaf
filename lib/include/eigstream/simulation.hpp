// Seeded synthetic multichannel signals, for tests and the siggen app: narrowband sources on an array
// (ArraySignal) and mixtures of latent signals (MixtureSignal), in white complex Gaussian noise.
//
// Generators are streams: generate() fills the caller's block (channels x snapshots) and the next
// call continues where it stopped, so a stream made in blocks of any sizes equals one made at once,
// bit for bit. Randomness is std::mt19937_64 with our own uniform and Box-Muller transforms (not
// std::normal_distribution), so a seed gives the same samples with every standard library.
#pragma once

#include <complex>
#include <cstdint>
#include <random>
#include <vector>

#include "eigstream/beamforming.hpp"
#include "eigstream/views.hpp"

namespace eigstream {

// Circular complex Gaussian draws with E|z|^2 = 1: z = sqrt(-ln u1) e^{j 2 pi u2}, u1, u2 uniform on
// (0, 1) from the top 53 bits of one engine draw each.
class ComplexGaussian {
 public:
  explicit ComplexGaussian(std::uint64_t seed) : engine_(seed) {}
  std::complex<double> operator()();

 private:
  double uniform();
  std::mt19937_64 engine_;
};

struct SourceSpec {
  double angle_deg = 0;  // from broadside, as in beamforming.hpp
  double snr_db = 0;     // per element: source power over noise power at one element
};

// x(t) = sum_k sqrt(10^(snr_k / 10)) a(theta_k) s_k(t) + n(t), noise of unit power per element.
// Source waveforms have unit power and pairwise correlation coefficient `correlation` in [0, 1]:
// s_k = sqrt(rho) c + sqrt(1 - rho) z_k with c and z_k independent (rho = 1: coherent sources).
// Per snapshot the draws are c, z_1..z_K, then the N noise values (each value summed in double,
// rounded to sample_t once).
struct ArraySignalConfig {
  ArrayGeometry geometry = ArrayGeometry::uniform_linear(8);
  std::vector<SourceSpec> sources;
  double correlation = 0;
  std::uint64_t seed = 1;
};

class ArraySignal {
 public:
  // Throws Error(invalid_argument) for a non-finite angle or SNR, or a correlation outside [0, 1].
  explicit ArraySignal(ArraySignalConfig config);
  // block: channels() x any number of snapshots.
  void generate(MatrixView<sample_t> block);
  index_t channels() const { return config_.geometry.elements(); }
  const ArraySignalConfig& config() const { return config_; }

 private:
  ArraySignalConfig config_;
  std::vector<std::complex<double>> steering_;   // N x K, column k = amplitude_k a(theta_k)
  std::vector<std::complex<double>> waveforms_;  // one snapshot's s
  ComplexGaussian gaussian_;
};

// x(t) = M s(t) + n(t): `latent` independent unit-power signals s mixed into `channels` channels by M,
// a complex Gaussian matrix drawn from the seed at construction and scaled to ||M||_F^2 = channels
// (mean signal power 1 per channel); noise power 10^(-snr_db / 10) per channel. Per snapshot the
// draws are s_1..s_R, then the C noise values.
struct MixtureSignalConfig {
  index_t channels = 16;
  index_t latent = 4;
  double snr_db = 40;
  std::uint64_t seed = 1;
};

class MixtureSignal {
 public:
  // Throws Error(invalid_argument) for channels < 1, latent < 1 or a non-finite SNR.
  explicit MixtureSignal(MixtureSignalConfig config);
  void generate(MatrixView<sample_t> block);
  index_t channels() const { return config_.channels; }
  const MixtureSignalConfig& config() const { return config_; }
  // M, channels x latent, column-major.
  const std::vector<std::complex<double>>& mixing() const { return mixing_; }

 private:
  MixtureSignalConfig config_;
  std::vector<std::complex<double>> mixing_;
  std::vector<std::complex<double>> latent_;  // one snapshot's s
  double noise_amplitude_;
  ComplexGaussian gaussian_;
};

}  // namespace eigstream
