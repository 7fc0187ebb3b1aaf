// Beamforming and direction finding from the EVD of an array covariance: array geometry and steering
// vectors, eigen-beamforming, MVDR weights and beam powers, the MUSIC pseudospectrum with peak
// picking, and the MDL estimate of the number of sources.
//
// Angles are in degrees from broadside, in the plane of the array. Element n sits at (x_n, y_n)
// wavelengths; the x axis is the array axis of a linear array, broadside is +y, and positive angles
// turn toward +x. A plane wave from theta (unit vector u = (sin theta, cos theta), pointing from the
// array to the source) reaches element n earlier than the origin by (x_n sin theta + y_n cos theta)
// wavelengths, so with carrier e^{+j 2 pi f t} the steering vector is
//   a_n(theta) = exp(+j 2 pi (x_n sin theta + y_n cos theta)),   |a_n| = 1.
// A uniform linear array has x_n = n d, y_n = 0 (element 0 at the origin): a_n = exp(j 2 pi n d sin theta).
//
// The EVD comes from evd() with the default descending order: values w_1 >= ... >= w_N, vectors V
// (N x N, column i the eigenvector of w_i).
#pragma once

#include <complex>
#include <vector>

#include "eigstream/covariance.hpp"
#include "eigstream/views.hpp"

namespace eigstream {

class ArrayGeometry {
 public:
  struct Position {
    double x = 0;  // wavelengths, along the array axis
    double y = 0;  // wavelengths, toward broadside
  };

  // N elements spaced `spacing` wavelengths along x. Throws Error(invalid_argument) for N < 1 or a
  // spacing that is not finite and > 0.
  static ArrayGeometry uniform_linear(index_t elements, double spacing = 0.5);
  // Any element positions (at least one, all finite).
  explicit ArrayGeometry(std::vector<Position> positions);

  index_t elements() const { return index_t(positions_.size()); }
  const std::vector<Position>& positions() const { return positions_; }

  // a(theta) as above into out (elements() values). Throws Error(invalid_argument) for a non-finite angle.
  template <class R>
  void steering_vector(double angle_deg, std::complex<R>* out) const;

 private:
  std::vector<Position> positions_;
};

// from_deg, from_deg + step_deg, ... up to to_deg (included when it falls on the grid, to 1e-9 of a
// step). Throws Error(invalid_argument) for non-finite bounds, to_deg < from_deg or step_deg <= 0.
std::vector<double> angle_grid(double from_deg, double to_deg, double step_deg);

// The EVD of an N x N covariance, eigenvalues descending.
template <class R>
struct EvdView {
  const R* values = nullptr;
  MatrixView<const std::complex<R>> vectors;
};

// The number of sources by the minimum description length criterion (Wax & Kailath, "Detection of
// signals by information theoretic criteria", IEEE Trans. ASSP 33(2), 1985): for k = 0..N-1
//   MDL(k) = -L (N - k) log( g(k) / a(k) ) + k (2N - k) log(L) / 2,
// g(k), a(k) the geometric and arithmetic means of the N - k smallest eigenvalues, L the number of
// snapshots behind the covariance (with forgetting, the effective count:
// Covariance::effective_snapshots()); returns the k that minimises it (ties: the smaller k). Needs
// eigenvalues > 0 (Error(invalid_input) naming the first that is not) and snapshots >= 1.
template <class R>
index_t mdl_sources(const R* values, index_t n, double snapshots);

// Beamformer<R>: for one geometry and one grid of angles, the per-block computations from the EVD.
// The steering vectors of the grid and all workspace are made at construction; the calls allocate
// nothing (one Beamformer per thread: the calls share its workspace).
template <class R>
class Beamformer {
 public:
  using value_type = std::complex<R>;

  // angles_deg: the scan grid, finite and strictly increasing (at least one angle for beam powers,
  // three for MUSIC peaks). Throws Error(invalid_argument) otherwise.
  Beamformer(ArrayGeometry geometry, std::vector<double> angles_deg);

  const ArrayGeometry& geometry() const { return geometry_; }
  const std::vector<double>& angles() const { return angles_; }
  index_t elements() const { return geometry_.elements(); }

  // Eigen-beamforming: the principal eigenvector (column 0), its phase turned so that weight 0 is
  // real and >= 0.
  void eigen_weights(EvdView<R> evd, value_type* weights) const;

  // MVDR (Capon, Proc. IEEE 57(8), 1969) toward angle_deg: w = R^-1 a / (a^H R^-1 a), R^-1 = V diag(1 / (w_i + delta)) V^H, delta the
  // loading (relative to the trace = sum of eigenvalues). Throws Error(invalid_input) when a loaded
  // eigenvalue is not > 0.
  void mvdr_weights(EvdView<R> evd, double angle_deg, const DiagonalLoading& loading, value_type* weights);

  // MVDR beam powers P(theta_g) = 1 / (a^H R^-1 a) over the grid (angles().size() values).
  void mvdr_power(EvdView<R> evd, const DiagonalLoading& loading, R* power);

  // MUSIC (Schmidt, IEEE Trans. AP 34(3), 1986) pseudospectrum over the grid with `sources` signal eigenvectors (1 <= sources < N):
  // P(theta) = a^H a / sum_{i > sources} |v_i^H a|^2 (the noise subspace is columns sources..N-1).
  void music_spectrum(EvdView<R> evd, index_t sources, R* spectrum);

  // Both grid computations above have one form, P(theta_g) = 1 / sum_i weights_i |v_i^H a(theta_g)|^2,
  // which a GPU can run for many EVDs at once (eigstream::cuda::beam_power_batched): the N weights
  // of MVDR are 1 / (w_i + delta) (checked as mvdr_power does), those of MUSIC 1 / N on the noise
  // subspace and 0 on the signal subspace (a^H a = N: every steering entry has modulus 1).
  void mvdr_power_weights(EvdView<R> evd, const DiagonalLoading& loading, R* weights) const;
  void music_power_weights(EvdView<R> evd, index_t sources, R* weights) const;
  void beam_power(EvdView<R> evd, const R* weights, R* power) const;
  // The grid's steering vectors, a(theta_g) in column g (N x angles().size()).
  MatrixView<const value_type> steering() const {
    return {steering_.data(), elements(), index_t(angles_.size()), elements()};
  }

  // Directions of arrival by MUSIC: the `sources` largest local maxima of the grid spectrum (interior
  // grid points, higher than the left neighbour and not lower than the right one), each refined by a
  // golden-section search of the continuous spectrum between its two grid neighbours. Writes them to
  // angles_deg in ascending order and returns how many were found (fewer than `sources` when the
  // spectrum has fewer local maxima).
  index_t music_doa(EvdView<R> evd, index_t sources, double* angles_deg);
  // The same from the grid's spectrum computed already (by music_spectrum, or on the GPU).
  index_t music_doa(EvdView<R> evd, index_t sources, const R* spectrum, double* angles_deg);

 private:
  void check_evd(const char* op, EvdView<R> evd) const;
  double mvdr_loading(EvdView<R> evd, const DiagonalLoading& loading) const;  // checked delta
  void check_sources(index_t sources) const;
  R music_at(EvdView<R> evd, index_t sources, const value_type* a) const;
  double refine_peak(EvdView<R> evd, index_t sources, index_t g);

  ArrayGeometry geometry_;
  std::vector<double> angles_;
  std::vector<value_type> steering_;  // N x G: a(theta_g) in column g
  std::vector<value_type> work_;      // N: a steering vector off the grid, or V^H a
  std::vector<R> spectrum_;           // G
  std::vector<R> weights_;            // N: beam_power's weights
  std::vector<index_t> peaks_;        // capacity G
};

extern template class Beamformer<float>;
extern template class Beamformer<double>;

}  // namespace eigstream
