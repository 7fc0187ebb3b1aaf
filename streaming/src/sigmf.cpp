// SigMF metadata: parsing with a check of every field eigstream uses (the message names the file and
// the field as "global.core:num_channels" or "captures[2].spatial:element_geometry[1]"), writing,
// and the SigMF reader and writer, which put a raw sample file behind the metadata.
#include "eigstream/streaming/sigmf.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "eigstream/error.hpp"
#include "eigstream/streaming/file_io.hpp"
#include "eigstream/streaming/sample_format.hpp"

namespace eigstream::streaming {
namespace {

using json = nlohmann::json;

constexpr const char* spatial_extension_version = "1.1.0";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads fields of one metadata file, failing with the file and the field's path in the message.
class FieldReader {
 public:
  explicit FieldReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error(ErrorCode::io, file_ + ": " + field + ": " + what);
  }

  const json* find(const json& object, const std::string& key) const {
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  void expect(const json& value, bool ok, const std::string& field, const char* expected) const {
    if (!ok) fail(field, std::string("expected ") + expected + ", found " + value.dump());
  }

  std::optional<double> number(const json& object, const std::string& where, const std::string& key) const {
    const json* value = find(object, key);
    if (!value) return std::nullopt;
    expect(*value, value->is_number() && std::isfinite(value->get<double>()), where + "." + key, "a number");
    return value->get<double>();
  }

  std::optional<std::uint64_t> count(const json& object, const std::string& where, const std::string& key) const {
    const json* value = find(object, key);
    if (!value) return std::nullopt;
    const std::string field = where + "." + key;
    if (value->is_number_unsigned()) return value->get<std::uint64_t>();
    // Some writers store integers as floats (48000.0); accept those that are whole and in range.
    const bool whole = value->is_number() && value->get<double>() >= 0 && value->get<double>() < 1.8e19 &&
                       std::floor(value->get<double>()) == value->get<double>();
    expect(*value, whole, field, "a non-negative integer");
    return static_cast<std::uint64_t>(value->get<double>());
  }

  std::string text(const json& object, const std::string& where, const std::string& key) const {
    const json* value = find(object, key);
    if (!value) return {};
    expect(*value, value->is_string(), where + "." + key, "a string");
    return value->get<std::string>();
  }

  const json* object(const json& parent, const std::string& where, const std::string& key) const {
    const json* value = find(parent, key);
    if (value) expect(*value, value->is_object(), where + "." + key, "an object");
    return value;
  }

  const json* array(const json& parent, const std::string& where, const std::string& key) const {
    const json* value = find(parent, key);
    if (value) expect(*value, value->is_array(), where + "." + key, "an array");
    return value;
  }

  std::optional<SigmfBearing> bearing(const json& parent, const std::string& where, const std::string& key) const {
    const json* value = object(parent, where, key);
    if (!value) return std::nullopt;
    const std::string field = where + "." + key;
    SigmfBearing b;
    b.azimuth = number(*value, field, "azimuth");
    b.elevation = number(*value, field, "elevation");
    b.range = number(*value, field, "range");
    b.range_rate = number(*value, field, "range_rate");
    b.az_error = number(*value, field, "az_error");
    b.el_error = number(*value, field, "el_error");
    b.range_error = number(*value, field, "range_error");
    b.range_rate_error = number(*value, field, "range_rate_error");
    return b;
  }

  std::vector<SigmfPoint> geometry(const json& parent, const std::string& where, const std::string& key) const {
    std::vector<SigmfPoint> points;
    const json* list = array(parent, where, key);
    if (!list) return points;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string field = where + "." + key + "[" + std::to_string(i) + "]";
      const json& entry = (*list)[i];
      expect(entry, entry.is_object(), field, "a cartesian_point object");
      SigmfPoint p;
      if (const json* xyz = array(entry, field, "point")) {
        const bool three = xyz->size() == 3 && std::all_of(xyz->begin(), xyz->end(), [](const json& v) {
                             return v.is_number() && std::isfinite(v.get<double>());
                           });
        expect(*xyz, three, field + ".point", "three numbers [x, y, z]");
        p.x = (*xyz)[0].get<double>();
        p.y = (*xyz)[1].get<double>();
        p.z = (*xyz)[2].get<double>();
      } else {
        const json* unknown = find(entry, "unknown");
        if (!unknown) fail(field, "a cartesian_point needs 'point' or 'unknown'");
        expect(*unknown, unknown->is_boolean() && unknown->get<bool>(), field + ".unknown", "true");
        p.known = false;
      }
      points.push_back(p);
    }
    return points;
  }

 private:
  const std::string& file_;
};

json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::io, path + ": cannot open for reading: " + std::strerror(errno));
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(ErrorCode::io, path + ": not valid JSON: " + e.what());
  }
}

SigmfCapture read_capture(const FieldReader& r, const json& entry, const std::string& where) {
  r.expect(entry, entry.is_object(), where, "an object");
  SigmfCapture c;
  const auto start = r.count(entry, where, "core:sample_start");
  if (!start) r.fail(where + ".core:sample_start", "missing");
  c.sample_start = *start;
  const auto header_bytes = r.count(entry, where, "core:header_bytes");
  if (header_bytes && *header_bytes != 0)
    r.fail(where + ".core:header_bytes", "headers inside the dataset are not supported");
  c.frequency = r.number(entry, where, "core:frequency");
  c.datetime = r.text(entry, where, "core:datetime");
  c.aperture_azimuth = r.number(entry, where, "spatial:aperture_azimuth");
  c.aperture_bearing = r.bearing(entry, where, "spatial:aperture_bearing");
  c.emitter_bearing = r.bearing(entry, where, "spatial:emitter_bearing");
  c.element_geometry = r.geometry(entry, where, "spatial:element_geometry");
  return c;
}

SigmfAnnotation read_annotation(const FieldReader& r, const json& entry, const std::string& where) {
  r.expect(entry, entry.is_object(), where, "an object");
  SigmfAnnotation a;
  const auto start = r.count(entry, where, "core:sample_start");
  if (!start) r.fail(where + ".core:sample_start", "missing");
  a.sample_start = *start;
  a.sample_count = r.count(entry, where, "core:sample_count");
  a.label = r.text(entry, where, "core:label");
  a.description = r.text(entry, where, "core:description");
  a.signal_azimuth = r.number(entry, where, "spatial:signal_azimuth");
  a.signal_bearing = r.bearing(entry, where, "spatial:signal_bearing");
  return a;
}

void put(json& object, const char* key, const std::optional<double>& value) {
  if (value) object[key] = *value;
}

json bearing_json(const SigmfBearing& b) {
  json j = json::object();
  put(j, "azimuth", b.azimuth);
  put(j, "elevation", b.elevation);
  put(j, "range", b.range);
  put(j, "range_rate", b.range_rate);
  put(j, "az_error", b.az_error);
  put(j, "el_error", b.el_error);
  put(j, "range_error", b.range_error);
  put(j, "range_rate_error", b.range_rate_error);
  return j;
}

json geometry_json(const std::vector<SigmfPoint>& points) {
  json list = json::array();
  for (const SigmfPoint& p : points) {
    list.push_back(p.known ? json{{"point", {p.x, p.y, p.z}}} : json{{"unknown", true}});
  }
  return list;
}

}  // namespace

SigmfPaths sigmf_paths(const std::string& path) {
  std::string base = path;
  for (const char* suffix : {".sigmf-meta", ".sigmf-data"}) {
    if (ends_with(path, suffix)) base = path.substr(0, path.size() - std::strlen(suffix));
  }
  return {base + ".sigmf-meta", base + ".sigmf-data"};
}

SigmfMetadata read_sigmf_metadata(const std::string& meta_path) {
  const json root = parse_file(meta_path);
  const FieldReader r(meta_path);
  if (!root.is_object()) r.fail("(top level)", "expected an object, found " + std::string(root.type_name()));
  const json* global = r.object(root, "(top level)", "global");
  if (!global) r.fail("global", "missing");

  SigmfMetadata m;
  const json* datatype = r.find(*global, "core:datatype");
  if (!datatype) r.fail("global.core:datatype", "missing");
  r.expect(*datatype, datatype->is_string(), "global.core:datatype", "a string");
  if (!parse_sample_format(datatype->get<std::string>(), m.datatype)) {
    r.fail("global.core:datatype",
           "\"" + datatype->get<std::string>() + "\" is not supported (eigstream reads cf32_le and ci16_le)");
  }
  if (const auto rate = r.number(*global, "global", "core:sample_rate")) {
    if (*rate <= 0) r.fail("global.core:sample_rate", "must be positive, found " + std::to_string(*rate));
    m.sample_rate = *rate;
  }
  if (const auto channels = r.count(*global, "global", "core:num_channels")) {
    if (*channels == 0 || *channels > max_channels) {
      r.fail("global.core:num_channels",
             "must be between 1 and " + std::to_string(max_channels) + ", found " + std::to_string(*channels));
    }
    m.num_channels = static_cast<std::size_t>(*channels);
  }
  m.version = r.text(*global, "global", "core:version");
  m.description = r.text(*global, "global", "core:description");
  const auto elements = r.count(*global, "global", "spatial:num_elements");
  const auto channel_index = r.count(*global, "global", "spatial:channel_index");
  if (channel_index && !elements) r.fail("global.spatial:num_elements", "missing (spatial:channel_index is given)");
  if (elements) m.spatial = SigmfSpatial{*elements, channel_index.value_or(0)};

  if (const json* captures = r.array(root, "(top level)", "captures")) {
    for (std::size_t i = 0; i < captures->size(); ++i) {
      const std::string where = "captures[" + std::to_string(i) + "]";
      m.captures.push_back(read_capture(r, (*captures)[i], where));
      if (i > 0 && m.captures[i].sample_start < m.captures[i - 1].sample_start) {
        r.fail(where + ".core:sample_start", "decreases (captures must be in sample order)");
      }
      const std::size_t points = m.captures[i].element_geometry.size();
      if (points != 0 && points != m.num_channels && !(m.spatial && points == m.spatial->num_elements)) {
        r.fail(where + ".spatial:element_geometry",
               std::to_string(points) + " points, but core:num_channels is " + std::to_string(m.num_channels) +
                   (m.spatial ? " and spatial:num_elements is " + std::to_string(m.spatial->num_elements) : ""));
      }
    }
  }
  if (const json* annotations = r.array(root, "(top level)", "annotations")) {
    for (std::size_t i = 0; i < annotations->size(); ++i) {
      m.annotations.push_back(read_annotation(r, (*annotations)[i], "annotations[" + std::to_string(i) + "]"));
    }
  }
  return m;
}

void write_sigmf_metadata(const std::string& meta_path, const SigmfMetadata& m) {
  sample_bytes(m.datatype, m.num_channels);  // checks num_channels
  json global = {{"core:datatype", to_string(m.datatype)},
                 {"core:version", m.version.empty() ? "1.2.0" : m.version},
                 {"core:num_channels", m.num_channels},
                 {"core:recorder", "eigstream"}};
  if (m.sample_rate > 0) global["core:sample_rate"] = m.sample_rate;
  if (!m.description.empty()) global["core:description"] = m.description;
  bool spatial = m.spatial.has_value();
  if (m.spatial) {
    global["spatial:num_elements"] = m.spatial->num_elements;
    global["spatial:channel_index"] = m.spatial->channel_index;
  }
  json captures = json::array();
  for (const SigmfCapture& c : m.captures) {
    json j = {{"core:sample_start", c.sample_start}};
    put(j, "core:frequency", c.frequency);
    if (!c.datetime.empty()) j["core:datetime"] = c.datetime;
    put(j, "spatial:aperture_azimuth", c.aperture_azimuth);
    if (c.aperture_bearing) j["spatial:aperture_bearing"] = bearing_json(*c.aperture_bearing);
    if (c.emitter_bearing) j["spatial:emitter_bearing"] = bearing_json(*c.emitter_bearing);
    if (!c.element_geometry.empty()) j["spatial:element_geometry"] = geometry_json(c.element_geometry);
    spatial = spatial || c.aperture_azimuth || c.aperture_bearing || c.emitter_bearing || !c.element_geometry.empty();
    captures.push_back(std::move(j));
  }
  json annotations = json::array();
  for (const SigmfAnnotation& a : m.annotations) {
    json j = {{"core:sample_start", a.sample_start}};
    if (a.sample_count) j["core:sample_count"] = *a.sample_count;
    if (!a.label.empty()) j["core:label"] = a.label;
    if (!a.description.empty()) j["core:description"] = a.description;
    put(j, "spatial:signal_azimuth", a.signal_azimuth);
    if (a.signal_bearing) j["spatial:signal_bearing"] = bearing_json(*a.signal_bearing);
    spatial = spatial || a.signal_azimuth || a.signal_bearing;
    annotations.push_back(std::move(j));
  }
  if (spatial) {
    global["core:extensions"] =
        json::array({{{"name", "spatial"}, {"version", spatial_extension_version}, {"optional", true}}});
  }
  const json root = {{"global", global}, {"captures", captures}, {"annotations", annotations}};

  const std::string temporary = meta_path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorCode::io, temporary + ": cannot open for writing: " + std::strerror(errno));
    out << root.dump(2) << '\n';
    if (!out.flush()) throw Error(ErrorCode::io, temporary + ": write failed (disk full?)");
  }
  if (std::rename(temporary.c_str(), meta_path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw Error(ErrorCode::io, meta_path + ": cannot replace the file: " + reason);
  }
}

struct SigmfReader::Impl {
  SigmfPaths paths;
  SigmfMetadata metadata;
  std::unique_ptr<FileSampleReader> data;

  explicit Impl(const SigmfReaderOptions& o) : paths(sigmf_paths(o.path)), metadata(read_sigmf_metadata(paths.meta)) {
    FileReaderOptions file;
    file.path = paths.data;
    file.format = metadata.datatype;
    file.channels = metadata.num_channels;
    file.sample_rate = metadata.sample_rate != 0 ? metadata.sample_rate : o.sample_rate;
    file.loop = o.loop;
    file.rate_limit = o.rate_limit;
    try {
      data = std::make_unique<FileSampleReader>(file);
    } catch (const Error& e) {
      throw Error(e.code(), std::string(e.what()) + " (the dataset of " + paths.meta + ")");
    }
  }
};

SigmfReader::SigmfReader(const SigmfReaderOptions& options) : impl_(std::make_unique<Impl>(options)) {}
SigmfReader::~SigmfReader() = default;
const SigmfMetadata& SigmfReader::metadata() const { return impl_->metadata; }
const SigmfPaths& SigmfReader::paths() const { return impl_->paths; }
std::size_t SigmfReader::channels() const { return impl_->data->channels(); }
double SigmfReader::sample_rate() const { return impl_->data->sample_rate(); }
ReadResult SigmfReader::read(sample_t* out, std::size_t max_samples) { return impl_->data->read(out, max_samples); }
void SigmfReader::cancel() { impl_->data->cancel(); }
ReaderCounters SigmfReader::counters() const { return impl_->data->counters(); }

struct SigmfWriter::Impl {
  FileSampleWriter data;

  Impl(const SigmfPaths& paths, const SigmfMetadata& m) : data(paths.data, m.datatype, m.num_channels) {
    write_sigmf_metadata(paths.meta, m);
  }
};

SigmfWriter::SigmfWriter(const std::string& path, const SigmfMetadata& metadata)
    : impl_(std::make_unique<Impl>(sigmf_paths(path), metadata)) {}
SigmfWriter::~SigmfWriter() = default;
std::size_t SigmfWriter::channels() const { return impl_->data.channels(); }
void SigmfWriter::write(const sample_t* samples, std::size_t count) { impl_->data.write(samples, count); }
void SigmfWriter::flush() { impl_->data.flush(); }

}  // namespace eigstream::streaming
