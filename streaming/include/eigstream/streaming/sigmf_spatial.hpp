// Array geometry and source angles between SigMF's `spatial` extension and eigstream's convention,
// in one place for every program that writes or reads them (siggen writes, beamform reads).
//
// SigMF spatial: element positions are {"point": [X, Y, Z]} in meters, the aperture boresight is +X,
// and a bearing azimuth turns clockwise seen from above (+Z up), from +X toward -Y.
// eigstream (beamforming.hpp): positions (x, y) in wavelengths, broadside +y, angles from broadside
// turning toward +x. The two frames are the same physical frame under the rotation
//   x = -Y / lambda,  y = X / lambda   (lambda = c / core:frequency),
// under which a SigMF azimuth is the eigstream angle itself (wrapped to (-180, 180]). A uniform
// linear array therefore sits on SigMF's -Y axis (element n at Y = -n d lambda), and the emitter
// bearings written are the eigstream angles unchanged.
#pragma once

#include <vector>

#include "eigstream/beamforming.hpp"
#include "eigstream/streaming/sigmf.hpp"

namespace eigstream::streaming {

inline constexpr double speed_of_light = 299792458.0;  // m/s

// The SigMF element geometry of `geometry` at carrier frequency_hz (> 0 and finite, else
// Error(invalid_argument)).
std::vector<SigmfPoint> sigmf_element_geometry(const ArrayGeometry& geometry, double frequency_hz);

// The eigstream geometry of a recording: the first capture's spatial:element_geometry, converted with
// that capture's core:frequency. Error(invalid_input) naming the meta file's field when the capture,
// the geometry or the frequency is missing, a point is unknown or off the Z = 0 plane, or the number
// of points differs from core:num_channels.
ArrayGeometry sigmf_array_geometry(const SigmfMetadata& metadata, const std::string& meta_path);

// An eigstream angle in degrees from a SigMF azimuth: the same angle, wrapped to (-180, 180].
double angle_from_sigmf_azimuth(double azimuth_deg);

// The ground-truth source angles of a recording in eigstream's convention, in the order of the file:
// each annotation's spatial:signal_bearing azimuth (or else spatial:signal_azimuth), then each
// capture's spatial:emitter_bearing azimuth. Empty when the recording has none.
std::vector<double> sigmf_source_angles(const SigmfMetadata& metadata);

}  // namespace eigstream::streaming
