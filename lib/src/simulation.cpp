// ComplexGaussian, ArraySignal and MixtureSignal (see simulation.hpp).
#include "eigstream/simulation.hpp"

#include <cmath>
#include <sstream>

#include "eigstream/error.hpp"
#include "validate.hpp"

namespace eigstream {
namespace {

constexpr double kTwoPi = 6.28318530717958647692;

}  // namespace

double ComplexGaussian::uniform() {
  // (k + 0.5) / 2^53 for k in [0, 2^53): never 0 or 1.
  return (double(engine_() >> 11) + 0.5) * 0x1p-53;
}

std::complex<double> ComplexGaussian::operator()() {
  const double radius = std::sqrt(-std::log(uniform()));
  const double angle = kTwoPi * uniform();
  return {radius * std::cos(angle), radius * std::sin(angle)};
}

ArraySignal::ArraySignal(ArraySignalConfig config) : config_(std::move(config)), gaussian_(config_.seed) {
  if (!(config_.correlation >= 0 && config_.correlation <= 1)) {
    std::ostringstream s;
    s << "array signal: the source correlation must be in [0, 1], got " << config_.correlation;
    throw Error(ErrorCode::invalid_argument, s.str());
  }
  const std::size_t n = std::size_t(channels());
  steering_.resize(n * config_.sources.size());
  for (std::size_t k = 0; k < config_.sources.size(); ++k) {
    const SourceSpec& source = config_.sources[k];
    if (!std::isfinite(source.snr_db) || !std::isfinite(source.angle_deg)) {
      std::ostringstream s;
      s << "array signal: source " << k << " has a non-finite angle or SNR (" << source.angle_deg << " degrees, "
        << source.snr_db << " dB)";
      throw Error(ErrorCode::invalid_argument, s.str());
    }
    std::complex<double>* a = steering_.data() + k * n;
    config_.geometry.steering_vector(source.angle_deg, a);
    const double amplitude = std::pow(10.0, source.snr_db / 20);
    for (std::size_t i = 0; i < n; ++i) a[i] *= amplitude;
  }
  waveforms_.resize(config_.sources.size());
}

void ArraySignal::generate(MatrixView<sample_t> block) {
  const index_t n = channels();
  detail::check_matrix("array signal", "block", block, n, -1);
  const double shared = std::sqrt(config_.correlation), own = std::sqrt(1 - config_.correlation);
  const std::size_t sources = config_.sources.size();
  for (index_t t = 0; t < block.cols; ++t) {
    const std::complex<double> common = gaussian_();
    for (std::complex<double>& s : waveforms_) s = shared * common + own * gaussian_();
    for (index_t i = 0; i < n; ++i) {
      std::complex<double> x = 0;
      for (std::size_t k = 0; k < sources; ++k) x += steering_[std::size_t(i) + k * std::size_t(n)] * waveforms_[k];
      block(i, t) = sample_t(x + gaussian_());
    }
  }
}

MixtureSignal::MixtureSignal(MixtureSignalConfig config)
    : config_(config), noise_amplitude_(std::pow(10.0, -config.snr_db / 20)), gaussian_(config.seed) {
  std::ostringstream s;
  s << "mixture signal: ";
  if (config.channels < 1)
    s << "channels must be >= 1, got " << config.channels;
  else if (config.latent < 1)
    s << "the number of latent signals must be >= 1, got " << config.latent;
  else if (!std::isfinite(config.snr_db))
    s << "the SNR must be finite, got " << config.snr_db << " dB";
  else
    s.str("");
  if (!s.str().empty()) throw Error(ErrorCode::invalid_argument, s.str());
  mixing_.resize(std::size_t(config.channels * config.latent));
  double norm2 = 0;
  for (std::complex<double>& m : mixing_) {
    m = gaussian_();
    norm2 += std::norm(m);
  }
  const double scale = std::sqrt(double(config.channels) / norm2);
  for (std::complex<double>& m : mixing_) m *= scale;
  latent_.resize(std::size_t(config.latent));
}

void MixtureSignal::generate(MatrixView<sample_t> block) {
  const index_t c = config_.channels, r = config_.latent;
  detail::check_matrix("mixture signal", "block", block, c, -1);
  for (index_t t = 0; t < block.cols; ++t) {
    for (std::complex<double>& s : latent_) s = gaussian_();
    for (index_t i = 0; i < c; ++i) {
      std::complex<double> x = 0;
      for (index_t j = 0; j < r; ++j) x += mixing_[std::size_t(i + j * c)] * latent_[std::size_t(j)];
      block(i, t) = sample_t(x + noise_amplitude_ * gaussian_());
    }
  }
}

}  // namespace eigstream
