// SigMF: round trips with the spatial extension, the metadata file's field names read back with a
// plain JSON parser, a hand-written recording in the spec's style, and clear errors for unreadable
// metadata, other datatypes, mistyped fields and missing data files.
#include <functional>
#include <nlohmann/json.hpp>

#include "eigstream/streaming/sample_format.hpp"
#include "eigstream/streaming/sigmf.hpp"
#include "sample_io_fixtures.hpp"

using namespace eigstream::streaming;
using namespace sample_io_test;
using eigstream::ErrorCode;

namespace {

SigmfMetadata array_metadata(SampleFormat format) {
  SigmfMetadata m;
  m.datatype = format;
  m.sample_rate = 1e6;
  m.num_channels = 4;
  m.description = "4-element ULA, half-wavelength spacing";
  m.spatial = SigmfSpatial{4, 0};
  SigmfCapture c;
  c.sample_start = 0;
  c.frequency = 2.4e9;
  c.datetime = "2026-11-22T06:00:00Z";
  c.aperture_azimuth = 90.0;
  for (int i = 0; i < 4; ++i) c.element_geometry.push_back({true, 0.0, 0.0625 * i, 0.0});
  c.element_geometry[3] = SigmfPoint{false, 0, 0, 0};
  SigmfBearing truth;
  truth.azimuth = -20.0;
  truth.az_error = 0.0;
  c.emitter_bearing = truth;
  m.captures.push_back(c);
  SigmfCapture second;
  second.sample_start = 300;
  m.captures.push_back(second);
  for (double azimuth : {-20.0, 35.0}) {
    SigmfAnnotation a;
    a.sample_start = 0;
    a.sample_count = 500;
    a.label = "emitter";
    SigmfBearing b;
    b.azimuth = azimuth;
    b.elevation = 0.0;
    a.signal_bearing = b;
    m.annotations.push_back(a);
  }
  m.annotations[1].signal_azimuth = 35.0;
  return m;
}

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const eigstream::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("sigmf: a recording round-trips samples and metadata, spatial extension included", "[sigmf]") {
  const SampleFormat format = GENERATE(SampleFormat::cf32_le, SampleFormat::ci16_le);
  const SigmfMetadata m = array_metadata(format);
  const auto samples = random_samples(500, m.num_channels, format, 21);
  ScratchDir dir;
  const std::string base = dir.file("array");
  {
    SigmfWriter writer(base + ".sigmf-meta", m);
    CHECK(writer.channels() == 4);
    writer.write(samples.data(), 123);
    writer.write(samples.data() + 123 * 4, 377);
  }
  CHECK(read_bytes(base + ".sigmf-data") == expected_bytes(samples, format));

  // The field names, as another SigMF tool would look them up.
  const auto j = nlohmann::json::parse(read_bytes(base + ".sigmf-meta"));
  CHECK(j["global"]["core:datatype"] == to_string(format));
  CHECK(j["global"]["core:num_channels"] == 4);
  CHECK(j["global"]["core:sample_rate"] == 1e6);
  CHECK(j["global"]["spatial:num_elements"] == 4);
  CHECK(j["global"]["spatial:channel_index"] == 0);
  CHECK(j["global"]["core:extensions"][0]["name"] == "spatial");
  CHECK(j["captures"][0]["spatial:element_geometry"][2]["point"][1] == 0.125);
  CHECK(j["captures"][0]["spatial:element_geometry"][3]["unknown"] == true);
  CHECK(j["captures"][0]["spatial:emitter_bearing"]["azimuth"] == -20.0);
  CHECK(j["captures"][1]["core:sample_start"] == 300);
  CHECK(j["annotations"][1]["spatial:signal_bearing"]["azimuth"] == 35.0);
  CHECK(j["annotations"][1]["core:sample_count"] == 500);

  SigmfReader reader({base});  // the base name works as well as either file's name
  const SigmfMetadata& r = reader.metadata();
  CHECK(reader.paths().data == base + ".sigmf-data");
  CHECK(reader.channels() == 4);
  CHECK(reader.sample_rate() == 1e6);
  CHECK(r.datatype == format);
  CHECK(r.description == m.description);
  REQUIRE(r.spatial);
  CHECK(r.spatial->num_elements == 4);
  REQUIRE(r.captures.size() == 2);
  CHECK(r.captures[0].frequency == 2.4e9);
  CHECK(r.captures[0].datetime == "2026-11-22T06:00:00Z");
  CHECK(r.captures[0].aperture_azimuth == 90.0);
  REQUIRE(r.captures[0].element_geometry.size() == 4);
  CHECK(r.captures[0].element_geometry[1].y == 0.0625);
  CHECK_FALSE(r.captures[0].element_geometry[3].known);
  REQUIRE(r.captures[0].emitter_bearing);
  CHECK(r.captures[0].emitter_bearing->azimuth == -20.0);
  CHECK(r.captures[0].emitter_bearing->az_error == 0.0);
  CHECK_FALSE(r.captures[0].emitter_bearing->elevation);
  CHECK(r.captures[1].sample_start == 300);
  CHECK_FALSE(r.captures[1].frequency);
  REQUIRE(r.annotations.size() == 2);
  CHECK(r.annotations[0].signal_bearing->azimuth == -20.0);
  CHECK(r.annotations[1].signal_azimuth == 35.0);
  CHECK(r.annotations[1].label == "emitter");

  std::vector<sample_t> got(samples.size());
  REQUIRE(reader.read(got.data(), 1000).samples == 500);
  CHECK(same_samples(got, samples));
  CHECK(reader.read(got.data(), 1).end);
}

TEST_CASE("sigmf: a hand-written recording in the spec's style is read field by field", "[sigmf]") {
  ScratchDir dir;
  const std::string base = dir.file("spec");
  write_text(base + ".sigmf-meta", R"({
    "global": {"core:datatype": "ci16_le", "core:sample_rate": 40000000, "core:version": "1.0.0",
               "spatial:num_elements": 6, "spatial:channel_index": 4},
    "captures": [{"core:sample_start": 0, "core:frequency": 1260000000.0,
                  "spatial:aperture_bearing": {"azimuth": 1.13124},
                  "spatial:element_geometry": [{"point": [0, 0.1, 0.05]}, {"point": [0, 0, 0.05]},
                    {"point": [0, -0.1, 0.05]}, {"point": [0, 0.1, -0.05]}, {"point": [0, 0, -0.05]},
                    {"point": [0, -0.1, -0.05]}]}],
    "annotations": [{"core:sample_start": 8, "core:sample_count": 2, "core:description": "burst",
                     "spatial:signal_bearing": {"azimuth": 59.431, "elevation": 13.681, "az_error": 1.3421}}]
  })");
  // Two samples of one channel (num_channels defaults to 1): (1, -2), (32767, -32768) as int16.
  write_bytes(base + ".sigmf-data", {1, 0, 0xfe, 0xff, 0xff, 0x7f, 0x00, 0x80});
  SigmfReader reader({base + ".sigmf-data"});
  const SigmfMetadata& m = reader.metadata();
  CHECK(m.datatype == SampleFormat::ci16_le);
  CHECK(m.sample_rate == 40e6);
  CHECK(m.num_channels == 1);
  CHECK(m.version == "1.0.0");
  CHECK(m.spatial->num_elements == 6);
  CHECK(m.spatial->channel_index == 4);
  CHECK(m.captures[0].aperture_bearing->azimuth == 1.13124);
  CHECK(m.captures[0].element_geometry[5].y == -0.1);
  CHECK(m.captures[0].element_geometry[5].z == -0.05);
  CHECK(m.annotations[0].sample_start == 8);
  CHECK(m.annotations[0].sample_count == 2u);
  CHECK(m.annotations[0].description == "burst");
  CHECK(m.annotations[0].signal_bearing->elevation == 13.681);
  CHECK(m.annotations[0].signal_bearing->az_error == 1.3421);
  sample_t got[2];
  REQUIRE(reader.read(got, 2).samples == 2);
  CHECK(got[0] == sample_t(1.0f / 32768, -2.0f / 32768));
  CHECK(got[1] == sample_t(32767.0f / 32768, -1.0f));
}

TEST_CASE("sigmf: unreadable metadata, other datatypes and missing files are clear errors", "[sigmf]") {
  ScratchDir dir;
  const std::string meta = dir.file("bad.sigmf-meta");
  write_bytes(dir.file("bad.sigmf-data"), {});
  auto open = [&] { SigmfReader({meta}); };
  auto with_global = [&](const std::string& global) {
    write_text(meta, R"({"global": )" + global + R"(, "captures": [], "annotations": []})");
  };

  SECTION("not JSON") {
    write_text(meta, R"({"global": {"core:datatype": "cf32_le",})");
    require_error(open, ErrorCode::io, {meta, "not valid JSON"});
  }
  SECTION("no global object") {
    write_text(meta, R"({"captures": []})");
    require_error(open, ErrorCode::io, {meta, "global: missing"});
  }
  SECTION("missing datatype") {
    with_global(R"({"core:sample_rate": 1000})");
    require_error(open, ErrorCode::io, {meta, "global.core:datatype: missing"});
  }
  SECTION("datatypes eigstream does not read") {
    const std::string datatype = GENERATE("cf32_be", "ri16_le", "cu8", "cf64_le");
    with_global(R"({"core:datatype": ")" + datatype + R"("})");
    require_error(open, ErrorCode::io, {meta, "global.core:datatype", "\"" + datatype + "\" is not supported"});
  }
  SECTION("a datatype that is not a string") {
    with_global(R"({"core:datatype": 5})");
    require_error(open, ErrorCode::io, {meta, "global.core:datatype: expected a string, found 5"});
  }
  SECTION("mistyped and out-of-range global fields") {
    with_global(R"({"core:datatype": "cf32_le", "core:sample_rate": "fast"})");
    require_error(open, ErrorCode::io, {meta, "global.core:sample_rate: expected a number, found \"fast\""});
    with_global(R"({"core:datatype": "cf32_le", "core:sample_rate": -5})");
    require_error(open, ErrorCode::io, {meta, "global.core:sample_rate: must be positive"});
    with_global(R"({"core:datatype": "cf32_le", "core:num_channels": 0})");
    require_error(open, ErrorCode::io, {meta, "global.core:num_channels: must be between 1 and"});
    with_global(R"({"core:datatype": "cf32_le", "core:num_channels": 2.5})");
    require_error(open, ErrorCode::io, {meta, "global.core:num_channels: expected a non-negative integer"});
  }
  SECTION("bad captures") {
    write_text(meta, R"({"global": {"core:datatype": "cf32_le"}, "captures": [{"core:frequency": 1e9}]})");
    require_error(open, ErrorCode::io, {meta, "captures[0].core:sample_start: missing"});
    write_text(meta, R"({"global": {"core:datatype": "cf32_le"},
                         "captures": [{"core:sample_start": 5}, {"core:sample_start": 2}]})");
    require_error(open, ErrorCode::io, {meta, "captures[1].core:sample_start: decreases"});
    write_text(meta, R"({"global": {"core:datatype": "cf32_le"}, "captures": [{"core:sample_start": 0,
                         "spatial:element_geometry": [{"point": [0, 1]}]}]})");
    require_error(open, ErrorCode::io, {meta, "captures[0].spatial:element_geometry[0].point: expected three numbers"});
    write_text(meta, R"({"global": {"core:datatype": "cf32_le", "core:num_channels": 2},
                         "captures": [{"core:sample_start": 0, "spatial:element_geometry": [{"point": [0, 0, 0]}]}]})");
    require_error(open, ErrorCode::io,
                  {meta, "captures[0].spatial:element_geometry: 1 points, but core:num_channels is 2"});
    write_text(
        meta,
        R"({"global": {"core:datatype": "cf32_le"}, "captures": [{"core:sample_start": 0, "core:header_bytes": 16}]})");
    require_error(open, ErrorCode::io,
                  {meta, "captures[0].core:header_bytes: headers inside the dataset are not supported"});
    write_text(meta, R"({"global": {"core:datatype": "cf32_le"}, "captures": {"core:sample_start": 0}})");
    require_error(open, ErrorCode::io, {meta, "captures: expected an array"});
  }
  SECTION("bad annotations") {
    write_text(meta, R"({"global": {"core:datatype": "cf32_le"}, "annotations": [{"core:sample_start": 0,
                         "spatial:signal_bearing": {"azimuth": "north"}}]})");
    require_error(open, ErrorCode::io, {meta, "annotations[0].spatial:signal_bearing.azimuth: expected a number"});
  }
  SECTION("missing metadata or data file") {
    const std::string lonely = dir.file("lonely");
    require_error([&] { SigmfReader({lonely}); }, ErrorCode::io, {lonely + ".sigmf-meta", "cannot open for reading"});
    write_text(lonely + ".sigmf-meta", R"({"global": {"core:datatype": "cf32_le"}})");
    require_error([&] { SigmfReader({lonely}); }, ErrorCode::io,
                  {lonely + ".sigmf-data", "cannot open for reading", "the dataset of " + lonely + ".sigmf-meta"});
  }
  SECTION("a truncated dataset") {
    with_global(R"({"core:datatype": "ci16_le", "core:num_channels": 2})");
    write_bytes(dir.file("bad.sigmf-data"), {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6});
    SigmfReader reader({meta});
    sample_t got[4];
    REQUIRE(reader.read(got, 2).samples == 1);
    CHECK(got[1] == sample_t(3.0f / 32768, 4.0f / 32768));
    CHECK(error_message([&] {
            reader.read(got, 2);
          }).find("bad.sigmf-data: truncated: the last 3 bytes, at byte offset 8") != std::string::npos);
  }
}

TEST_CASE("sigmf: the two file names follow from either one or the base name", "[sigmf]") {
  for (const std::string p : {"dir/rec", "dir/rec.sigmf-meta", "dir/rec.sigmf-data"}) {
    const SigmfPaths paths = sigmf_paths(p);
    CHECK(paths.meta == "dir/rec.sigmf-meta");
    CHECK(paths.data == "dir/rec.sigmf-data");
  }
}
