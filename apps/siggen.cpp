// siggen: synthetic multichannel recordings. `siggen array` (narrowband sources on a uniform linear
// array, eigstream::ArraySignal) and `siggen mixture` (channels mixing latent signals,
// eigstream::MixtureSignal), written to a raw file, a SigMF recording (with the spatial extension's
// ground truth for array mode), or streamed over UDP or TCP at a given rate. A JSON summary line on
// stdout at the end. Exit codes: 0 success, 1 internal error, 2 bad usage or bad input, 128 + the
// signal when SIGINT or SIGTERM interrupts it (an unfinished file output is removed).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "eigstream/eigstream.hpp"
#include "eigstream/streaming/file_io.hpp"
#include "eigstream/streaming/sample_format.hpp"
#include "eigstream/streaming/sigmf.hpp"
#include "eigstream/streaming/sigmf_spatial.hpp"
#include "eigstream/streaming/tcp_io.hpp"
#include "eigstream/streaming/udp_io.hpp"
#include "app_main.hpp"
#include "pending_output.hpp"
#include "stream_input.hpp"

namespace {

using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::index_t;
using eigstream::sample_t;
namespace io = eigstream::streaming;
using eigstream::apps::parse_endpoint;

// The SNRs a source or a mixture may have: the samples' power then stays far inside float's range,
// and a ci16 recording's automatic scale (0.25 / the RMS) above its smallest step.
constexpr double kMaxSnrDb = 100;

struct Args {
  // array
  index_t elements = 8;
  double spacing = 0.5;
  std::vector<std::string> sources;
  double correlation = 0;
  // mixture
  index_t channels = 16;
  index_t latent = 4;
  double snr_db = 40;
  // common
  std::uint64_t samples = 100000;
  double sample_rate = 1e6;
  double frequency = 1e9;
  std::uint64_t seed = 1;
  std::size_t block = 4096;
  double scale = 0;
  std::string format = "cf32";
  std::string out, sigmf, udp, tcp;
  bool seqnum = false;
  double rate = 0;
  bool status = false;
};

const char* kProgramHelp =
    "siggen: seeded synthetic multichannel recordings for eigstream: narrowband sources on a uniform\n"
    "linear array (siggen array) or channels mixing latent signals (siggen mixture).";

const char* kOutputHelp =
    "Output (exactly one):\n"
    "  --out FILE         raw samples, no header: --format cf32 (float32 I, Q) or ci16 (int16 I, Q,\n"
    "                     value x 32768 rounded and saturated), channels interleaved per sample;\n"
    "                     size = samples x channels x 8 (cf32) or 4 (ci16) bytes\n"
    "  --sigmf BASE       SigMF recording BASE.sigmf-meta + BASE.sigmf-data: core:datatype,\n"
    "                     core:sample_rate, core:num_channels, a capture with core:frequency; array\n"
    "                     mode adds the spatial extension (below)\n"
    "  --udp HOST:PORT    datagrams of whole samples (at most 1472 bytes), --seqnum prepends a\n"
    "                     little-endian uint64 sequence number from 1 (GNU Radio gr-network style);\n"
    "                     three empty datagrams mark the end\n"
    "  --tcp HOST:PORT    a byte stream of samples to a listening reader\n"
    "  --rate R paces the stream at R samples per second (0: as fast as possible), for any output.\n"
    "Files are written under a temporary name (NAME.partial) and renamed when complete; on any\n"
    "error nothing is left under the final name.\n";

const char* kSpatialHelp =
    "SigMF spatial ground truth (array mode): eigstream angles are degrees from broadside, positive\n"
    "toward the array axis (+x). SigMF spatial puts the boresight on +X and turns azimuths clockwise\n"
    "seen from above (from +X toward -Y). siggen writes the array on SigMF's -Y axis (element n at\n"
    "Y = -n x spacing x wavelength, wavelength = c / --frequency), so each source's\n"
    "spatial:signal_bearing azimuth (one annotation per source) equals its eigstream angle.\n"
    "eigstream/streaming/sigmf_spatial.hpp converts back (sigmf_array_geometry, sigmf_source_angles)\n"
    "for any geometry.\n";

const char* kSummaryHelp =
    "On success one JSON line on stdout: mode, samples, channels, format, scale, bytes (sample bytes\n"
    "written or sent), output (the file, BASE.sigmf-data, or udp:/tcp: HOST:PORT), seconds.\n"
    "A status line on stderr every half second when stderr is a terminal, or with --status.\n"
    "Output is identical for a seed whatever --block is.\n\n"
    "Exit codes:\n"
    "  0  success\n"
    "  1  internal error\n"
    "  2  bad usage or bad input: unknown option, bad value, K >= N sources, an unwritable path,\n"
    "     an unreachable peer (the message on stderr starts with 'siggen: ')\n"
    "  128 + the signal: interrupted (SIGINT, SIGTERM); an unfinished --out or --sigmf is removed\n";

std::string footer(const char* mode_text, bool spatial) {
  return std::string("\n") + mode_text + "\n\n" + kOutputHelp + (spatial ? std::string("\n") + kSpatialHelp : "") +
         "\n" + kSummaryHelp;
}

void add_common_options(CLI::App* cmd, Args& a) {
  cmd->add_option("--samples", a.samples, "Samples (snapshots) to generate")
      ->check(eigstream::apps::non_negative())  // before the conversion, which would wrap "-5" around
      ->capture_default_str();
  cmd->add_option("--sample-rate", a.sample_rate, "Sample rate in Hz, written to SigMF core:sample_rate")
      ->check(eigstream::apps::positive())
      ->capture_default_str();
  cmd->add_option("--frequency", a.frequency,
                  "Carrier frequency in Hz (SigMF core:frequency; sets the wavelength of the geometry)")
      ->check(eigstream::apps::positive())
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Random seed: the same seed gives the same samples")->capture_default_str();
  cmd->add_option("--block", a.block, "Samples generated per chunk (does not change the output)")
      ->check(CLI::Range(std::size_t(1), std::size_t(1) << 24))
      ->capture_default_str();
  cmd->add_option("--scale", a.scale,
                  "Multiply every value by this; 0: 1 for cf32, and for ci16 0.25 / sqrt(mean power per "
                  "channel), so that ci16 rarely saturates")
      ->check(eigstream::apps::non_negative())
      ->capture_default_str();
  cmd->add_option("--format", a.format, "Sample format of --out, --sigmf, --udp and --tcp")
      ->check(CLI::IsMember({"cf32", "ci16"}))
      ->capture_default_str();
  CLI::Option* out = cmd->add_option("--out", a.out, "Write a raw sample file")->type_name("FILE");
  CLI::Option* sigmf = cmd->add_option("--sigmf", a.sigmf, "Write a SigMF recording BASE.sigmf-{meta,data}")
                           ->type_name("BASE");
  CLI::Option* udp = cmd->add_option("--udp", a.udp, "Stream UDP datagrams to HOST:PORT")->type_name("HOST:PORT");
  CLI::Option* tcp = cmd->add_option("--tcp", a.tcp, "Stream to a TCP listener at HOST:PORT")->type_name("HOST:PORT");
  out->excludes(sigmf)->excludes(udp)->excludes(tcp);
  sigmf->excludes(udp)->excludes(tcp);
  udp->excludes(tcp);
  cmd->add_flag("--seqnum", a.seqnum, "UDP: prepend a uint64 sequence number to each datagram");
  cmd->add_option("--rate", a.rate, "Pace the output at this many samples per second; 0: as fast as possible")
      ->check(eigstream::apps::non_negative())
      ->capture_default_str();
  cmd->add_flag("--status", a.status, "Print the status line on stderr even when it is not a terminal");
}

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

// Error(invalid_argument) unless snr_db is within +-kMaxSnrDb; `what` names the flag and its text.
void check_snr(const std::string& what, double snr_db) {
  if (!(std::abs(snr_db) <= kMaxSnrDb))
    bad(what + ": the SNR must be within [-" + std::to_string(int(kMaxSnrDb)) + ", " + std::to_string(int(kMaxSnrDb)) +
        "] dB");
}

// "ANGLE:SNR_DB" -> SourceSpec.
eigstream::SourceSpec parse_source(const std::string& text) {
  const std::size_t colon = text.find(':');
  eigstream::SourceSpec s;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    std::size_t used = 0;
    s.angle_deg = std::stod(text.substr(0, colon), &used);
    if (used != colon) throw std::invalid_argument("trailing text");
    const std::string snr = text.substr(colon + 1);
    s.snr_db = std::stod(snr, &used);
    if (used != snr.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    bad("--source " + text + ": expected ANGLE:SNR_DB in degrees and dB, for example -20:10");
  }
  if (!std::isfinite(s.angle_deg) || s.angle_deg < -90 || s.angle_deg > 90)
    bad("--source " + text + ": the angle must be within [-90, 90] degrees from broadside");
  check_snr("--source " + text, s.snr_db);
  return s;
}

// The signal of either mode behind one interface for the generation loop.
struct Generator {
  std::unique_ptr<eigstream::ArraySignal> array;
  std::unique_ptr<eigstream::MixtureSignal> mixture;
  index_t channels() const { return array ? array->channels() : mixture->channels(); }
  void generate(eigstream::MatrixView<sample_t> block) { array ? array->generate(block) : mixture->generate(block); }
};

// Where the samples go: a file (committed at the end) or a stream.
struct Output {
  std::unique_ptr<eigstream::apps::PendingSampleFile> file;
  std::unique_ptr<io::SampleWriter> stream;
  io::UdpSampleWriter* udp = nullptr;
  std::string name;
  io::SampleWriter& writer() { return file ? file->writer() : *stream; }
};

Output open_output(const Args& a, const Generator& g, io::SampleFormat format, const std::vector<eigstream::SourceSpec>& sources) {
  Output o;
  const std::size_t channels = std::size_t(g.channels());
  if (!a.out.empty()) {
    o.file = eigstream::apps::PendingSampleFile::raw(a.out, format, channels, "siggen");
    o.name = a.out;
  } else if (!a.sigmf.empty()) {
    io::SigmfMetadata m;
    m.datatype = format;
    m.sample_rate = a.sample_rate;
    m.num_channels = channels;
    io::SigmfCapture capture;
    capture.frequency = a.frequency;
    if (g.array) {
      m.description = "siggen array: " + std::to_string(g.channels()) + "-element uniform linear array, spacing " +
                      std::to_string(a.spacing) + " wavelengths, seed " + std::to_string(a.seed);
      io::SigmfSpatial spatial;
      spatial.num_elements = channels;
      m.spatial = spatial;
      capture.element_geometry = io::sigmf_element_geometry(g.array->config().geometry, a.frequency);
      for (std::size_t k = 0; k < sources.size(); ++k) {
        io::SigmfAnnotation note;
        note.sample_count = a.samples;
        note.label = "source " + std::to_string(k);
        note.description = "snr_db " + std::to_string(sources[k].snr_db);
        io::SigmfBearing bearing;
        bearing.azimuth = sources[k].angle_deg;
        note.signal_bearing = bearing;
        m.annotations.push_back(note);
      }
    } else {
      m.description = "siggen mixture: " + std::to_string(a.channels) + " channels mixing " + std::to_string(a.latent) +
                      " latent signals at " + std::to_string(a.snr_db) + " dB SNR, seed " + std::to_string(a.seed);
    }
    m.captures.push_back(capture);
    o.file = eigstream::apps::PendingSampleFile::sigmf(a.sigmf, m, "siggen");
    o.name = o.file->data_path();
  } else if (!a.udp.empty()) {
    const auto [host, port] = parse_endpoint("--udp", a.udp);
    io::UdpWriterOptions u;
    u.address = host;
    u.port = port;
    u.format = format;
    u.channels = channels;
    u.seqnum_header = a.seqnum;
    auto writer = std::make_unique<io::UdpSampleWriter>(u);
    o.udp = writer.get();
    o.stream = std::move(writer);
    o.name = "udp:" + a.udp;
  } else {
    const auto [host, port] = parse_endpoint("--tcp", a.tcp);
    io::TcpWriterOptions t;
    t.address = host;
    t.port = port;
    t.format = format;
    t.channels = channels;
    o.stream = std::make_unique<io::TcpSampleWriter>(t);
    o.name = "tcp:" + a.tcp;
  }
  return o;
}

void print_status(std::uint64_t done, std::uint64_t total, double seconds, bool final) {
  std::fprintf(stderr, "\rsiggen: %llu / %llu samples (%.0f%%), %.1f s, %.3g samples/s%s",
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
               total ? 100.0 * double(done) / double(total) : 100.0, seconds, seconds > 0 ? double(done) / seconds : 0.0,
               final ? "\n" : "");
  std::fflush(stderr);
}

int run(const std::string& mode, const Args& a) {
  if (a.seqnum && a.udp.empty()) bad("--seqnum applies to --udp only");
  if (a.out.empty() && a.sigmf.empty() && a.udp.empty() && a.tcp.empty())
    bad("no output: give one of --out FILE, --sigmf BASE, --udp HOST:PORT, --tcp HOST:PORT");
  const io::SampleFormat format = a.format == "ci16" ? io::SampleFormat::ci16_le : io::SampleFormat::cf32_le;

  Generator g;
  std::vector<eigstream::SourceSpec> sources;
  double mean_power = 1;  // per channel, before scaling
  if (mode == "array") {
    if (a.elements < 1) bad("--elements must be >= 1");
    for (const std::string& s : a.sources) sources.push_back(parse_source(s));
    if (index_t(sources.size()) >= a.elements)
      bad(std::to_string(sources.size()) + " sources on " + std::to_string(a.elements) +
          " elements: an N-element array resolves at most N - 1 sources (K < N)");
    eigstream::ArraySignalConfig c;
    c.geometry = eigstream::ArrayGeometry::uniform_linear(a.elements, a.spacing);
    c.sources = sources;
    c.correlation = a.correlation;
    c.seed = a.seed;
    g.array = std::make_unique<eigstream::ArraySignal>(c);
    for (const auto& s : sources) mean_power += std::pow(10.0, s.snr_db / 10);
  } else {
    check_snr("--snr " + std::to_string(a.snr_db), a.snr_db);
    if (a.latent >= a.channels)
      bad("--latent " + std::to_string(a.latent) + " must be < --channels " + std::to_string(a.channels));
    eigstream::MixtureSignalConfig c;
    c.channels = a.channels;
    c.latent = a.latent;
    c.snr_db = a.snr_db;
    c.seed = a.seed;
    g.mixture = std::make_unique<eigstream::MixtureSignal>(c);
    mean_power += std::pow(10.0, -a.snr_db / 10);
  }
  const float scale = float(a.scale > 0 ? a.scale : format == io::SampleFormat::ci16_le ? 0.25 / std::sqrt(mean_power) : 1.0);

  const auto start = std::chrono::steady_clock::now();
  Output o = open_output(a, g, format, sources);
  const bool status = a.status || ::isatty(STDERR_FILENO);
  const index_t channels = g.channels();
  std::vector<sample_t> block(std::size_t(channels) * a.block);
  std::uint64_t done = 0;
  auto next_status = start;
  while (done < a.samples) {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(a.block, a.samples - done));
    g.generate(eigstream::matrix(block.data(), channels, index_t(n)));
    if (scale != 1)
      for (std::size_t i = 0; i < n * std::size_t(channels); ++i) block[i] *= scale;
    o.writer().write(block.data(), n);
    done += n;
    const auto now = std::chrono::steady_clock::now();
    if (a.rate > 0) std::this_thread::sleep_until(start + std::chrono::duration<double>(double(done) / a.rate));
    if (status && now >= next_status) {
      print_status(done, a.samples, std::chrono::duration<double>(now - start).count(), false);
      next_status = now + std::chrono::milliseconds(500);
    }
  }
  if (o.file) {
    o.file->commit();
  } else {
    if (o.udp)
      o.udp->send_end();
    else
      o.stream->flush();
    o.stream.reset();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status) print_status(done, a.samples, seconds, true);

  nlohmann::ordered_json j;
  j["mode"] = mode;
  j["samples"] = a.samples;
  j["channels"] = channels;
  j["format"] = io::to_string(format);
  j["scale"] = scale;
  j["bytes"] = a.samples * io::sample_bytes(format, std::size_t(channels));
  j["output"] = o.name;
  j["seconds"] = seconds;
  std::cout << j.dump() << std::endl;
  return eigstream::apps::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{kProgramHelp, "siggen"};
  app.footer(std::string("\n") + kOutputHelp + "\n" + kSpatialHelp + "\n" + kSummaryHelp +
             "\nExamples:\n"
             "  siggen array --elements 8 --source -20:10 --source 35:10 --samples 20000 --sigmf doa\n"
             "  siggen mixture --channels 16 --latent 4 --snr 40 --samples 100000 --out mix.cf32\n"
             "  siggen array --source 10:0 --udp 127.0.0.1:5000 --seqnum --rate 1e6\n");
  app.require_subcommand(1);

  CLI::App* array = app.add_subcommand("array", "K narrowband sources on an N-element uniform linear array, white noise");
  array->footer(footer(
      "x(t) = sum_k sqrt(10^(snr_k/10)) a(theta_k) s_k(t) + n(t): unit-power noise per element, unit-power\n"
      "complex Gaussian source waveforms with pairwise correlation --correlation (s_k = sqrt(rho) c +\n"
      "sqrt(1 - rho) z_k), steering a_n(theta) = exp(j 2 pi n d sin theta), theta in degrees from\n"
      "broadside, positive toward increasing element index.",
      true));
  array->add_option("--elements", a.elements, "N, the number of array elements (channels)")
      ->check(CLI::Range(index_t(1), index_t(65536)))
      ->capture_default_str();
  array->add_option("--spacing", a.spacing, "Element spacing d in wavelengths")
      ->check(eigstream::apps::positive())
      ->capture_default_str();
  array->add_option("--source", a.sources,
                    "A source as ANGLE:SNR_DB (degrees from broadside in [-90, 90], per-element SNR in dB); "
                    "repeat for K < N sources")
      ->type_name("ANGLE:SNR_DB");
  array->add_option("--correlation", a.correlation, "Correlation coefficient rho in [0, 1] between sources (1: coherent)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  add_common_options(array, a);

  CLI::App* mixture = app.add_subcommand("mixture", "C channels mixing R latent signals plus noise (for compression tests)");
  mixture->footer(footer(
      "x(t) = M s(t) + n(t): R unit-power complex Gaussian latent signals, M a seeded complex Gaussian\n"
      "C x R matrix scaled to mean signal power 1 per channel, noise power 10^(-snr/10) per channel.",
      false));
  mixture->add_option("--channels", a.channels, "C, the number of channels")
      ->check(CLI::Range(index_t(1), index_t(65536)))
      ->capture_default_str();
  mixture->add_option("--latent", a.latent, "R, the number of latent signals (R < C)")
      ->check(CLI::Range(index_t(1), index_t(65536)))
      ->capture_default_str();
  mixture->add_option("--snr", a.snr_db, "Signal-to-noise ratio per channel in dB")->capture_default_str();
  add_common_options(mixture, a);

  return eigstream::apps::run_app(app, argc, argv, [&] { return run(array->parsed() ? "array" : "mixture", a); });
}
