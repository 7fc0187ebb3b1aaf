// Array geometry and steering vectors, MDL, and Beamformer<R>: eigen-beamforming, MVDR and MUSIC
// from the EVD of a covariance (see beamforming.hpp for the conventions).
#include "eigstream/beamforming.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "eigstream/error.hpp"
#include "validate.hpp"

namespace eigstream {
namespace {

constexpr double kPi = 3.14159265358979323846;

[[noreturn]] void fail_argument(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

}  // namespace

ArrayGeometry ArrayGeometry::uniform_linear(index_t elements, double spacing) {
  std::ostringstream s;
  s << "uniform linear array: ";
  if (elements < 1)
    s << "needs at least 1 element, got " << elements;
  else if (!(std::isfinite(spacing) && spacing > 0))
    s << "the element spacing must be finite and > 0 wavelengths, got " << spacing;
  else
    s.str("");
  if (!s.str().empty()) fail_argument(s.str());
  std::vector<Position> positions(static_cast<std::size_t>(elements));
  for (index_t n = 0; n < elements; ++n) positions[std::size_t(n)].x = double(n) * spacing;
  return ArrayGeometry(std::move(positions));
}

ArrayGeometry::ArrayGeometry(std::vector<Position> positions) : positions_(std::move(positions)) {
  if (positions_.empty()) fail_argument("array geometry: needs at least 1 element");
  for (std::size_t n = 0; n < positions_.size(); ++n)
    if (!std::isfinite(positions_[n].x) || !std::isfinite(positions_[n].y)) {
      std::ostringstream s;
      s << "array geometry: element " << n << " has a non-finite position (" << positions_[n].x << ", "
        << positions_[n].y << ") wavelengths";
      fail_argument(s.str());
    }
}

template <class R>
void ArrayGeometry::steering_vector(double angle_deg, std::complex<R>* out) const {
  if (!std::isfinite(angle_deg)) {
    std::ostringstream s;
    s << "steering vector: the angle must be finite, got " << angle_deg;
    fail_argument(s.str());
  }
  const double theta = angle_deg * kPi / 180;
  const double ux = std::sin(theta), uy = std::cos(theta);
  for (std::size_t n = 0; n < positions_.size(); ++n) {
    const double phase = 2 * kPi * (positions_[n].x * ux + positions_[n].y * uy);
    out[n] = std::complex<R>(R(std::cos(phase)), R(std::sin(phase)));
  }
}

std::vector<double> angle_grid(double from_deg, double to_deg, double step_deg) {
  if (!(std::isfinite(from_deg) && std::isfinite(to_deg) && to_deg >= from_deg && std::isfinite(step_deg) &&
        step_deg > 0)) {
    std::ostringstream s;
    s << "angle grid: needs finite bounds from <= to and a step > 0, got from " << from_deg << " to " << to_deg
      << " step " << step_deg;
    fail_argument(s.str());
  }
  const index_t count = index_t(std::floor((to_deg - from_deg) / step_deg + 1e-9)) + 1;
  std::vector<double> angles(static_cast<std::size_t>(count));
  for (index_t g = 0; g < count; ++g) angles[std::size_t(g)] = from_deg + double(g) * step_deg;
  return angles;
}

template <class R>
index_t mdl_sources(const R* values, index_t n, double snapshots) {
  detail::check_eigenvalues("mdl", values, n);
  if (!(std::isfinite(snapshots) && snapshots >= 1)) {
    std::ostringstream s;
    s << "mdl: the number of snapshots must be finite and >= 1, got " << snapshots;
    fail_argument(s.str());
  }
  if (!(values[n - 1] > 0)) {
    index_t first = n - 1;
    while (first > 0 && !(values[first - 1] > 0)) --first;
    std::ostringstream s;
    s << "mdl: needs positive eigenvalues, and eigenvalue " << first << " is " << values[first]
      << "; add diagonal loading";
    throw Error(ErrorCode::invalid_input, s.str());
  }
  // Sums over the m = N - k smallest eigenvalues, grown from the smallest one up.
  const double log_l = std::log(snapshots);
  index_t best = n - 1;
  double best_mdl = 0;
  double sum = 0, sum_log = 0;
  for (index_t k = n - 1; k >= 0; --k) {
    const double w = double(values[k]);
    sum += w;
    sum_log += std::log(w);
    const double m = double(n - k);
    const double log_ratio = sum_log / m - std::log(sum / m);  // log(geometric / arithmetic mean) <= 0
    const double mdl = -snapshots * m * log_ratio + 0.5 * double(k) * double(2 * n - k) * log_l;
    if (k == n - 1 || mdl <= best_mdl) best_mdl = mdl, best = k;
  }
  return best;
}

template <class R>
Beamformer<R>::Beamformer(ArrayGeometry geometry, std::vector<double> angles_deg)
    : geometry_(std::move(geometry)), angles_(std::move(angles_deg)) {
  if (angles_.empty()) fail_argument("beamformer: the angle grid is empty");
  for (std::size_t g = 0; g < angles_.size(); ++g) {
    std::ostringstream s;
    if (!std::isfinite(angles_[g]))
      s << "beamformer: grid angle " << g << " is not finite (" << angles_[g] << ")";
    else if (g > 0 && !(angles_[g] > angles_[g - 1]))
      s << "beamformer: the angle grid must be strictly increasing, but angle " << g << " = " << angles_[g]
        << " follows " << angles_[g - 1];
    if (!s.str().empty()) fail_argument(s.str());
  }
  const std::size_t n = std::size_t(elements()), count = angles_.size();
  steering_.resize(n * count);
  for (std::size_t g = 0; g < count; ++g) geometry_.steering_vector(angles_[g], steering_.data() + g * n);
  work_.resize(n);
  weights_.resize(n);
  spectrum_.resize(count);
  peaks_.reserve(count);
}

template <class R>
void Beamformer<R>::check_evd(const char* op, EvdView<R> evd) const {
  const index_t n = elements();
  detail::check_matrix(op, "eigenvectors", evd.vectors, n, n);
  detail::check_eigenvalues(op, evd.values, n);
}

template <class R>
double Beamformer<R>::mvdr_loading(EvdView<R> evd, const DiagonalLoading& loading) const {
  check_evd("mvdr", evd);
  const index_t n = elements();
  double trace = 0;
  for (index_t i = 0; i < n; ++i) trace += double(evd.values[i]);
  const double delta = loading.amount(trace, n);
  const double smallest = double(evd.values[n - 1]) + delta;
  if (!(smallest > 0)) {
    std::ostringstream s;
    s << "mvdr: the covariance is not positive definite: eigenvalue " << n - 1 << " is " << smallest
      << " after loading; add diagonal loading";
    throw Error(ErrorCode::invalid_input, s.str());
  }
  return delta;
}

template <class R>
void Beamformer<R>::eigen_weights(EvdView<R> evd, value_type* weights) const {
  check_evd("eigen-beamforming", evd);
  const value_type v0 = evd.vectors(0, 0);
  const R magnitude = std::abs(v0);
  const value_type turn = magnitude > 0 ? std::conj(v0) / magnitude : value_type(1);
  for (index_t i = 0; i < elements(); ++i) weights[i] = evd.vectors(i, 0) * turn;
  weights[0] = magnitude > 0 ? value_type(magnitude) : v0;  // exactly real, not v0 * conj(v0) / |v0|
}

template <class R>
void Beamformer<R>::mvdr_weights(EvdView<R> evd, double angle_deg, const DiagonalLoading& loading,
                                 value_type* weights) {
  const double delta = mvdr_loading(evd, loading);
  const index_t n = elements();
  geometry_.steering_vector(angle_deg, weights);  // a, overwritten below
  // work = diag(1 / (w_i + delta)) V^H a, denominator = a^H R^-1 a.
  double denominator = 0;
  for (index_t i = 0; i < n; ++i) {
    const double w = double(evd.values[i]) + delta;
    value_type projection = 0;
    for (index_t k = 0; k < n; ++k) projection += std::conj(evd.vectors(k, i)) * weights[k];
    denominator += std::norm(projection) / w;
    work_[std::size_t(i)] = projection / R(w);
  }
  for (index_t k = 0; k < n; ++k) {
    value_type sum = 0;
    for (index_t i = 0; i < n; ++i) sum += evd.vectors(k, i) * work_[std::size_t(i)];
    weights[k] = sum / R(denominator);
  }
}

template <class R>
void Beamformer<R>::mvdr_power_weights(EvdView<R> evd, const DiagonalLoading& loading, R* weights) const {
  const double delta = mvdr_loading(evd, loading);
  for (index_t i = 0; i < elements(); ++i) weights[i] = R(1 / (double(evd.values[i]) + delta));
}

template <class R>
void Beamformer<R>::check_sources(index_t sources) const {
  const index_t n = elements();
  if (sources < 1 || sources >= n) {
    std::ostringstream s;
    s << "music: the number of sources K = " << sources << " must be in [1, " << n - 1
      << "]: the noise subspace needs K < N = " << n << " elements";
    fail_argument(s.str());
  }
}

template <class R>
void Beamformer<R>::music_power_weights(EvdView<R> evd, index_t sources, R* weights) const {
  check_evd("music", evd);
  check_sources(sources);
  const index_t n = elements();
  for (index_t i = 0; i < n; ++i) weights[i] = i < sources ? R(0) : R(1) / R(n);
}

template <class R>
void Beamformer<R>::beam_power(EvdView<R> evd, const R* weights, R* power) const {
  check_evd("beam power", evd);
  const index_t n = elements();
  for (std::size_t g = 0; g < angles_.size(); ++g) {
    const value_type* a = steering_.data() + g * std::size_t(n);
    double denominator = 0;
    for (index_t i = 0; i < n; ++i) {
      if (weights[i] == 0) continue;
      value_type projection = 0;
      for (index_t k = 0; k < n; ++k) projection += std::conj(evd.vectors(k, i)) * a[k];
      denominator += double(weights[i]) * std::norm(projection);
    }
    power[g] = R(1 / denominator);  // +infinity on an exact null
  }
}

template <class R>
void Beamformer<R>::mvdr_power(EvdView<R> evd, const DiagonalLoading& loading, R* power) {
  mvdr_power_weights(evd, loading, weights_.data());
  beam_power(evd, weights_.data(), power);
}

template <class R>
R Beamformer<R>::music_at(EvdView<R> evd, index_t sources, const value_type* a) const {
  const index_t n = elements();
  R noise = 0, length = 0;
  for (index_t k = 0; k < n; ++k) length += std::norm(a[k]);
  for (index_t i = sources; i < n; ++i) {
    value_type projection = 0;
    for (index_t k = 0; k < n; ++k) projection += std::conj(evd.vectors(k, i)) * a[k];
    noise += std::norm(projection);
  }
  return length / noise;  // +infinity on an exact null
}

template <class R>
void Beamformer<R>::music_spectrum(EvdView<R> evd, index_t sources, R* spectrum) {
  music_power_weights(evd, sources, weights_.data());
  beam_power(evd, weights_.data(), spectrum);
}

template <class R>
double Beamformer<R>::refine_peak(EvdView<R> evd, index_t sources, index_t g) {
  // Golden-section search for the maximum of the spectrum on [theta_{g-1}, theta_{g+1}].
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  auto value = [&](double angle) {
    geometry_.steering_vector(angle, work_.data());
    return music_at(evd, sources, work_.data());
  };
  double lo = angles_[std::size_t(g - 1)], hi = angles_[std::size_t(g + 1)];
  double x1 = hi - ratio * (hi - lo), x2 = lo + ratio * (hi - lo);
  R f1 = value(x1), f2 = value(x2);
  for (int step = 0; step < 50; ++step) {  // the bracket shrinks to 0.618^50 = 3e-11 of its width
    if (f1 < f2) {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + ratio * (hi - lo), f2 = value(x2);
    } else {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - ratio * (hi - lo), f1 = value(x1);
    }
  }
  return (lo + hi) / 2;
}

template <class R>
index_t Beamformer<R>::music_doa(EvdView<R> evd, index_t sources, double* angles_deg) {
  if (angles_.size() < 3) fail_argument("music: peak picking needs a grid of at least 3 angles");
  music_spectrum(evd, sources, spectrum_.data());
  return music_doa(evd, sources, spectrum_.data(), angles_deg);
}

template <class R>
index_t Beamformer<R>::music_doa(EvdView<R> evd, index_t sources, const R* spectrum, double* angles_deg) {
  if (angles_.size() < 3) fail_argument("music: peak picking needs a grid of at least 3 angles");
  check_evd("music", evd);
  check_sources(sources);
  peaks_.clear();
  for (std::size_t g = 1; g + 1 < angles_.size(); ++g)
    if (spectrum[g] > spectrum[g - 1] && spectrum[g] >= spectrum[g + 1]) peaks_.push_back(index_t(g));
  const std::size_t found = std::min(peaks_.size(), std::size_t(sources));
  std::partial_sort(peaks_.begin(), peaks_.begin() + std::ptrdiff_t(found), peaks_.end(),
                    [&](index_t p, index_t q) { return spectrum[std::size_t(p)] > spectrum[std::size_t(q)]; });
  for (std::size_t i = 0; i < found; ++i) angles_deg[i] = refine_peak(evd, sources, peaks_[i]);
  std::sort(angles_deg, angles_deg + found);
  return index_t(found);
}

template void ArrayGeometry::steering_vector<float>(double, std::complex<float>*) const;
template void ArrayGeometry::steering_vector<double>(double, std::complex<double>*) const;
template index_t mdl_sources<float>(const float*, index_t, double);
template index_t mdl_sources<double>(const double*, index_t, double);
template class Beamformer<float>;
template class Beamformer<double>;

}  // namespace eigstream
