// SigMF recordings: a `.sigmf-meta` JSON file beside a `.sigmf-data` file of cf32_le or ci16_le
// samples. Reads and writes the core fields eigstream needs (core:datatype, core:sample_rate,
// core:num_channels, captures, annotations) and the `spatial` extension (array geometry, emitter
// bearings as ground truth). Anything it cannot read (bad JSON, a missing or mistyped field, another
// datatype, a header_bytes capture) is an eigstream::Error (io) naming the file and the field.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eigstream/streaming/sample_io.hpp"

namespace eigstream::streaming {

// spatial `bearing` object: degrees (azimuth clockwise, relative to the aperture boresight for
// emitter and signal bearings; elevation above the horizon) and meters.
struct SigmfBearing {
  std::optional<double> azimuth, elevation, range, range_rate;
  std::optional<double> az_error, el_error, range_error, range_rate_error;
};

// spatial `cartesian_point` object: {"point": [x, y, z]} in meters, or {"unknown": true}.
struct SigmfPoint {
  bool known = true;
  double x = 0, y = 0, z = 0;
};

struct SigmfCapture {
  std::uint64_t sample_start = 0;                // core:sample_start
  std::optional<double> frequency;               // core:frequency, Hz
  std::string datetime;                          // core:datetime, empty when absent
  std::optional<double> aperture_azimuth;        // spatial:aperture_azimuth, degrees east of north
  std::optional<SigmfBearing> aperture_bearing;  // spatial:aperture_bearing
  std::optional<SigmfBearing> emitter_bearing;   // spatial:emitter_bearing: ground truth of the segment
  std::vector<SigmfPoint> element_geometry;      // spatial:element_geometry, empty when absent
};

struct SigmfAnnotation {
  std::uint64_t sample_start = 0;              // core:sample_start
  std::optional<std::uint64_t> sample_count;   // core:sample_count
  std::string label, description;              // core:label, core:description
  std::optional<double> signal_azimuth;        // spatial:signal_azimuth, degrees from boresight
  std::optional<SigmfBearing> signal_bearing;  // spatial:signal_bearing (has priority over the azimuth)
};

struct SigmfSpatial {
  std::uint64_t num_elements = 0;   // spatial:num_elements
  std::uint64_t channel_index = 0;  // spatial:channel_index (0 when the dataset holds every element)
};

struct SigmfMetadata {
  SampleFormat datatype = SampleFormat::cf32_le;  // core:datatype (required)
  double sample_rate = 0;                         // core:sample_rate, Hz; 0 when absent
  std::size_t num_channels = 1;                   // core:num_channels (default 1)
  std::string version = "1.2.0";                  // core:version
  std::string description;                        // core:description
  std::optional<SigmfSpatial> spatial;            // present when spatial:num_elements is
  std::vector<SigmfCapture> captures;             // in the order of the file (sample_start non-decreasing)
  std::vector<SigmfAnnotation> annotations;
};

// The two files of a recording named by its base name or either file's name.
struct SigmfPaths {
  std::string meta, data;
};
SigmfPaths sigmf_paths(const std::string& path);

// Reads and checks a .sigmf-meta file.
SigmfMetadata read_sigmf_metadata(const std::string& meta_path);

// Writes a .sigmf-meta file (through a temporary renamed into place); the `spatial` extension is
// declared in core:extensions when metadata.spatial is set or any spatial field is.
void write_sigmf_metadata(const std::string& meta_path, const SigmfMetadata& metadata);

struct SigmfReaderOptions {
  std::string path;   // base name, .sigmf-meta or .sigmf-data
  bool loop = false;  // as FileReaderOptions
  double rate_limit = 0;
  double sample_rate = 0;  // Hz, the reader's sample_rate() where the metadata states none
};

class SigmfReader final : public SampleReader {
 public:
  explicit SigmfReader(const SigmfReaderOptions& options);
  ~SigmfReader() override;

  const SigmfMetadata& metadata() const;
  const SigmfPaths& paths() const;

  std::size_t channels() const override;
  double sample_rate() const override;
  ReadResult read(sample_t* out, std::size_t max_samples) override;
  void cancel() override;
  ReaderCounters counters() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class SigmfWriter final : public SampleWriter {
 public:
  // Writes the metadata at once, then samples of metadata.datatype and metadata.num_channels to the
  // data file.
  SigmfWriter(const std::string& path, const SigmfMetadata& metadata);
  ~SigmfWriter() override;

  std::size_t channels() const override;
  void write(const sample_t* samples, std::size_t count) override;
  void flush() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eigstream::streaming
