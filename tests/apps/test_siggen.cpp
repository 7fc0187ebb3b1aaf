// siggen's outputs read back with the library's readers: SigMF metadata and spatial ground truth
// (sigmf_spatial.hpp round trips, and the recorded phases agree with the recovered geometry and
// angle), ci16 against cf32, and UDP streaming into a UdpSampleReader against the file path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <sys/wait.h>
#include <string>
#include <thread>
#include <vector>

#include "eigstream/streaming/file_io.hpp"
#include "eigstream/streaming/sigmf.hpp"
#include "eigstream/streaming/sigmf_spatial.hpp"
#include "eigstream/streaming/tcp_io.hpp"
#include "eigstream/streaming/udp_io.hpp"

namespace io = eigstream::streaming;
using eigstream::ArrayGeometry;
using io::sample_t;

namespace {

const double pi = std::acos(-1.0);

std::string work(const std::string& name) { return std::string(APPS_WORK_DIR) + "/" + name; }

// Runs siggen with these arguments (stdout and stderr to a log file); returns its exit status.
int siggen(const std::string& arguments) {
  const std::string command = std::string(SIGGEN_PATH) + " " + arguments + " >" + work("siggen.log") + " 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<sample_t> read_all(io::SampleReader& reader) {
  std::vector<sample_t> all, chunk(4096 * reader.channels());
  for (;;) {
    const io::ReadResult r = reader.read(chunk.data(), 4096);
    REQUIRE(r.lost_before == 0);
    if (r.end) return all;
    all.insert(all.end(), chunk.begin(), chunk.begin() + std::ptrdiff_t(r.samples * reader.channels()));
  }
}

std::vector<sample_t> read_raw(const std::string& path, io::SampleFormat format, std::size_t channels) {
  io::FileReaderOptions o;
  o.path = path;
  o.format = format;
  o.channels = channels;
  io::FileSampleReader reader(o);
  return read_all(reader);
}

}  // namespace

TEST_CASE("sigmf_spatial: geometry and angles round trip through SigMF", "[apps][siggen]") {
  const double frequency = 2.4e9, lambda = io::speed_of_light / frequency;
  const ArrayGeometry geometry({{0, 0}, {0.5, 0.1}, {-0.3, 0.7}, {1.2, -0.4}});
  io::SigmfMetadata m;
  m.num_channels = 4;
  io::SigmfCapture capture;
  capture.frequency = frequency;
  capture.element_geometry = io::sigmf_element_geometry(geometry, frequency);
  m.captures.push_back(capture);
  // SigMF's frame: boresight +X (eigstream's +y), eigstream's +x on SigMF's -Y.
  CHECK(capture.element_geometry[1].x == Approx(0.1 * lambda));
  CHECK(capture.element_geometry[1].y == Approx(-0.5 * lambda));
  const ArrayGeometry back = io::sigmf_array_geometry(m, "test.sigmf-meta");
  REQUIRE(back.elements() == 4);
  for (std::size_t n = 0; n < 4; ++n) {
    CHECK(back.positions()[n].x == Approx(geometry.positions()[n].x).margin(1e-12));
    CHECK(back.positions()[n].y == Approx(geometry.positions()[n].y).margin(1e-12));
  }
  CHECK(io::angle_from_sigmf_azimuth(350) == Approx(-10));
  CHECK(io::angle_from_sigmf_azimuth(-190) == Approx(170));
  CHECK(io::angle_from_sigmf_azimuth(180) == Approx(180));
  CHECK(io::angle_from_sigmf_azimuth(-180) == Approx(180));
  CHECK(io::angle_from_sigmf_azimuth(-20) == Approx(-20));

  m.num_channels = 5;
  CHECK_THROWS_WITH(io::sigmf_array_geometry(m, "test.sigmf-meta"),
                    Catch::Contains("test.sigmf-meta") && Catch::Contains("core:num_channels is 5"));
  m.num_channels = 4;
  m.captures[0].frequency.reset();
  CHECK_THROWS_WITH(io::sigmf_array_geometry(m, "test.sigmf-meta"), Catch::Contains("captures[0].core:frequency"));
}

TEST_CASE("siggen array --sigmf: metadata, ground truth and data agree", "[apps][siggen]") {
  REQUIRE(siggen("array --elements 8 --spacing 0.5 --source -20:10 --source 35:10 --samples 3000 --block 700 "
                 "--sample-rate 2e6 --frequency 1e9 --seed 5 --sigmf " + work("truth")) == 0);
  io::SigmfReaderOptions o;
  o.path = work("truth");
  io::SigmfReader reader(o);
  const io::SigmfMetadata& m = reader.metadata();
  CHECK(m.datatype == io::SampleFormat::cf32_le);
  CHECK(m.num_channels == 8);
  CHECK(m.sample_rate == 2e6);
  REQUIRE(m.spatial);
  CHECK(m.spatial->num_elements == 8);
  const ArrayGeometry geometry = io::sigmf_array_geometry(m, reader.paths().meta);
  const ArrayGeometry expected = ArrayGeometry::uniform_linear(8, 0.5);
  REQUIRE(geometry.elements() == 8);
  for (std::size_t n = 0; n < 8; ++n) {
    CHECK(geometry.positions()[n].x == Approx(expected.positions()[n].x).margin(1e-12));
    CHECK(geometry.positions()[n].y == Approx(0).margin(1e-12));
  }
  const std::vector<double> angles = io::sigmf_source_angles(m);
  REQUIRE(angles.size() == 2);
  CHECK(angles[0] == Approx(-20));
  CHECK(angles[1] == Approx(35));

  // The same seed as a raw file gives the same samples.
  const std::vector<sample_t> data = read_all(reader);
  REQUIRE(siggen("array --elements 8 --spacing 0.5 --source -20:10 --source 35:10 --samples 3000 --seed 5 --out " +
                 work("truth.cf32")) == 0);
  CHECK(data == read_raw(work("truth.cf32"), io::SampleFormat::cf32_le, 8));
  CHECK(data.size() == 3000 * 8);
}

TEST_CASE("siggen array: the recorded phases match the geometry and angle read back", "[apps][siggen]") {
  // One strong source: between elements n and n+1 the phase advances by 2 pi (x_{n+1} - x_n) sin(theta)
  // (a plane wave from theta reaches the element further toward +x earlier when theta > 0).
  REQUIRE(siggen("array --elements 6 --spacing 0.4 --source 30:40 --samples 2000 --seed 9 --sigmf " + work("phase")) == 0);
  io::SigmfReaderOptions o;
  o.path = work("phase");
  io::SigmfReader reader(o);
  const ArrayGeometry geometry = io::sigmf_array_geometry(reader.metadata(), reader.paths().meta);
  const std::vector<double> angles = io::sigmf_source_angles(reader.metadata());
  REQUIRE(angles.size() == 1);
  const std::vector<sample_t> x = read_all(reader);
  const std::size_t samples = x.size() / 6;
  for (std::size_t n = 0; n + 1 < 6; ++n) {
    std::complex<double> sum = 0;
    for (std::size_t t = 0; t < samples; ++t)
      sum += std::complex<double>(x[t * 6 + n + 1]) * std::conj(std::complex<double>(x[t * 6 + n]));
    const double dx = geometry.positions()[n + 1].x - geometry.positions()[n].x;
    const double expected = 2 * pi * dx * std::sin(angles[0] * pi / 180);
    CHECK(std::arg(sum * std::polar(1.0, -expected)) == Approx(0).margin(0.01));
  }
}

TEST_CASE("siggen --format ci16: the cf32 samples scaled, rounded to 1/32768", "[apps][siggen]") {
  REQUIRE(siggen("mixture --channels 6 --latent 2 --snr 30 --samples 1500 --seed 3 --out " + work("mix.cf32")) == 0);
  REQUIRE(siggen("mixture --channels 6 --latent 2 --snr 30 --samples 1500 --seed 3 --format ci16 --scale 0.125 --out " +
                 work("mix.ci16")) == 0);
  const std::vector<sample_t> f = read_raw(work("mix.cf32"), io::SampleFormat::cf32_le, 6);
  const std::vector<sample_t> i = read_raw(work("mix.ci16"), io::SampleFormat::ci16_le, 6);
  REQUIRE(f.size() == i.size());
  REQUIRE(f.size() == 1500 * 6);
  double worst = 0;
  for (std::size_t k = 0; k < f.size(); ++k) {
    const sample_t scaled = f[k] * 0.125f;
    REQUIRE(std::abs(scaled.real()) < 1);
    REQUIRE(std::abs(scaled.imag()) < 1);
    worst = std::max({worst, double(std::abs(i[k].real() - scaled.real())), double(std::abs(i[k].imag() - scaled.imag()))});
  }
  CHECK(worst <= 0.5 / 32768 * (1 + 1e-6));
}

TEST_CASE("siggen --udp: a UdpSampleReader receives the samples of the file path", "[apps][siggen]") {
  const std::string flags = "array --elements 4 --source 10:5 --samples 6000 --seed 11 --block 333 ";
  REQUIRE(siggen(flags + "--out " + work("udp_reference.cf32")) == 0);
  const std::vector<sample_t> reference = read_raw(work("udp_reference.cf32"), io::SampleFormat::cf32_le, 4);
  REQUIRE(reference.size() == 6000 * 4);

  io::UdpReaderOptions o;
  o.channels = 4;
  o.seqnum_header = true;
  o.idle_timeout_ms = 10000;  // a safety net: siggen's end-of-stream datagrams end the read
  io::UdpSampleReader reader(o);
  int rc = -1;
  std::thread sender([&] {
    rc = siggen(flags + "--seqnum --rate 300000 --udp 127.0.0.1:" + std::to_string(reader.port()));
  });
  const std::vector<sample_t> received = read_all(reader);
  sender.join();
  CHECK(rc == 0);
  CHECK(reader.counters().lost_samples == 0);
  CHECK(reader.counters().malformed == 0);
  CHECK(received == reference);
}

TEST_CASE("siggen --tcp: a listening TcpSampleReader receives the samples of the file path", "[apps][siggen]") {
  const std::string flags = "mixture --channels 5 --latent 2 --snr 25 --samples 5000 --seed 4 --block 777 --format ci16 ";
  REQUIRE(siggen(flags + "--out " + work("tcp_reference.ci16")) == 0);
  const std::vector<sample_t> reference = read_raw(work("tcp_reference.ci16"), io::SampleFormat::ci16_le, 5);
  REQUIRE(reference.size() == 5000 * 5);

  io::TcpReaderOptions o;
  o.format = io::SampleFormat::ci16_le;
  o.channels = 5;
  o.reconnect = false;        // siggen's close ends the stream
  o.idle_timeout_ms = 10000;  // a safety net
  io::TcpSampleReader reader(o);
  int rc = -1;
  std::thread sender([&] { rc = siggen(flags + "--tcp 127.0.0.1:" + std::to_string(reader.port())); });
  const std::vector<sample_t> received = read_all(reader);
  sender.join();
  CHECK(rc == 0);
  CHECK(received == reference);
}
