// Conversions between SigMF spatial metadata and eigstream's array geometry and angles.
#include "eigstream/streaming/sigmf_spatial.hpp"

#include <cmath>
#include <string>

#include "eigstream/error.hpp"

namespace eigstream::streaming {

std::vector<SigmfPoint> sigmf_element_geometry(const ArrayGeometry& geometry, double frequency_hz) {
  if (!std::isfinite(frequency_hz) || frequency_hz <= 0)
    throw Error(ErrorCode::invalid_argument,
                "sigmf_element_geometry: the carrier frequency must be finite and > 0, got " +
                    std::to_string(frequency_hz) + " Hz");
  const double lambda = speed_of_light / frequency_hz;
  std::vector<SigmfPoint> points;
  for (const ArrayGeometry::Position& p : geometry.positions()) {
    SigmfPoint point;
    point.x = p.y * lambda;
    point.y = -p.x * lambda;
    points.push_back(point);
  }
  return points;
}

ArrayGeometry sigmf_array_geometry(const SigmfMetadata& metadata, const std::string& meta_path) {
  const auto fail = [&](const std::string& what) { throw Error(ErrorCode::invalid_input, meta_path + ": " + what); };
  if (metadata.captures.empty()) fail("no captures: the array geometry is in captures[0].spatial:element_geometry");
  const SigmfCapture& capture = metadata.captures.front();
  if (capture.element_geometry.empty()) fail("captures[0].spatial:element_geometry is missing");
  if (!capture.frequency || !std::isfinite(*capture.frequency) || *capture.frequency <= 0)
    fail("captures[0].core:frequency is missing or not > 0: it is needed to turn meters into wavelengths");
  if (capture.element_geometry.size() != metadata.num_channels)
    fail("captures[0].spatial:element_geometry has " + std::to_string(capture.element_geometry.size()) +
         " points but core:num_channels is " + std::to_string(metadata.num_channels));
  const double lambda = speed_of_light / *capture.frequency;
  std::vector<ArrayGeometry::Position> positions;
  for (std::size_t n = 0; n < capture.element_geometry.size(); ++n) {
    const SigmfPoint& point = capture.element_geometry[n];
    const std::string field = "captures[0].spatial:element_geometry[" + std::to_string(n) + "]";
    if (!point.known) fail(field + " is unknown");
    if (point.z != 0) fail(field + " is off the Z = 0 plane (only planar arrays are supported)");
    positions.push_back({-point.y / lambda, point.x / lambda});
  }
  return ArrayGeometry(std::move(positions));
}

double angle_from_sigmf_azimuth(double azimuth_deg) {
  double angle = std::fmod(azimuth_deg, 360.0);
  if (angle > 180) angle -= 360;
  if (angle <= -180) angle += 360;
  return angle;
}

std::vector<double> sigmf_source_angles(const SigmfMetadata& metadata) {
  std::vector<double> angles;
  for (const SigmfAnnotation& annotation : metadata.annotations) {
    if (annotation.signal_bearing && annotation.signal_bearing->azimuth)
      angles.push_back(angle_from_sigmf_azimuth(*annotation.signal_bearing->azimuth));
    else if (annotation.signal_azimuth)
      angles.push_back(angle_from_sigmf_azimuth(*annotation.signal_azimuth));
  }
  for (const SigmfCapture& capture : metadata.captures)
    if (capture.emitter_bearing && capture.emitter_bearing->azimuth)
      angles.push_back(angle_from_sigmf_azimuth(*capture.emitter_bearing->azimuth));
  return angles;
}

}  // namespace eigstream::streaming
