// The stream apps' input flags and the readers they open (see stream_input.hpp).
#include "stream_input.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <string>
#include <system_error>

#include "app_main.hpp"
#include "eigstream/error.hpp"
#include "eigstream/streaming/file_io.hpp"
#include "eigstream/streaming/sample_format.hpp"
#include "eigstream/streaming/tcp_io.hpp"
#include "eigstream/streaming/udp_io.hpp"

namespace eigstream::apps {
namespace {

namespace io = streaming;

constexpr double kMaxIdleSeconds = 1e6;  // about 11 days, so that its milliseconds fit an int

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

io::SampleFormat format_of(const InputFlags& flags) {
  io::SampleFormat format = io::SampleFormat::cf32_le;
  if (!flags.format.empty() && !io::parse_sample_format(flags.format + "_le", format))
    bad("--format " + flags.format + ": expected cf32 or ci16");
  return format;
}

std::size_t channels_of(const InputFlags& flags, const std::string& what) {
  if (flags.channels == 0) bad(what + " needs --channels (the samples do not say how many there are)");
  return flags.channels;
}

// Error(invalid_argument) for a raw-input flag given with a SigMF recording that says otherwise
// (--sample-rate may give the rate of a recording that states none).
void check_against_metadata(const InputFlags& flags, const io::SigmfMetadata& meta, const std::string& meta_path) {
  const auto disagree = [&](const std::string& flag, const std::string& field, const std::string& says) {
    bad(flag + " but " + meta_path + " says " + says + " (" + field + ")");
  };
  if (flags.channels != 0 && flags.channels != meta.num_channels)
    disagree("--channels " + std::to_string(flags.channels), "core:num_channels",
             std::to_string(meta.num_channels) + " channels");
  if (!flags.format.empty() && format_of(flags) != meta.datatype)
    disagree("--format " + flags.format, "core:datatype", io::to_string(meta.datatype));
  const auto hz = [](double rate) {
    std::ostringstream text;
    text << std::setprecision(12) << rate;
    return text.str();
  };
  if (flags.sample_rate != 0 && meta.sample_rate != 0 && flags.sample_rate != meta.sample_rate)
    disagree("--sample-rate " + hz(flags.sample_rate), "core:sample_rate", hz(meta.sample_rate) + " Hz");
}

// At least 1 ms: a shorter wait would end the stream at once.
int idle_ms(const InputFlags& flags) {
  return flags.idle_seconds > 0 ? std::max(1, int(std::ceil(flags.idle_seconds * 1000))) : -1;
}

}  // namespace

void add_input_flags(CLI::App& app, InputFlags& flags) {
  auto* group = app.add_option_group("Input (exactly one of --in, --udp, --tcp-listen, --tcp-connect)");
  group->add_option("--in", flags.in, "A raw file (channels interleaved per sample) or a SigMF recording "
                                      "(NAME.sigmf-meta or NAME.sigmf-data)")
      ->type_name("FILE");
  group->add_option("--udp", flags.udp, "Receive datagrams of whole samples on [HOST:]PORT (HOST 127.0.0.1 "
                                        "unless given); three empty datagrams end the stream")
      ->type_name("[HOST:]PORT");
  group->add_option("--tcp-listen", flags.tcp_listen, "Accept one sender on [HOST:]PORT (HOST 127.0.0.1 unless given)")
      ->type_name("[HOST:]PORT");
  group->add_option("--tcp-connect", flags.tcp_connect, "Connect to a sender at HOST:PORT")->type_name("HOST:PORT");
  group->require_option(1);
  app.add_option("--format", flags.format,
                 "Raw file, UDP, TCP: sample format, cf32 (default) or ci16 (SigMF says it itself; another is "
                 "refused)")
      ->check(CLI::IsMember({"cf32", "ci16"}));
  app.add_option("--channels", flags.channels,
                 "Raw file, UDP, TCP: channels per sample (SigMF says it itself; another count is refused)")
      ->check(CLI::Range(std::size_t(1), io::max_channels));
  app.add_option("--sample-rate", flags.sample_rate,
                 "Raw file, UDP, TCP: sample rate in Hz, for the summary (SigMF says it itself where it can; "
                 "another is refused)")
      ->check(non_negative());
  app.add_flag("--seqnum", flags.seqnum, "UDP: each datagram starts with a little-endian uint64 sequence number");
  app.add_option("--idle-seconds", flags.idle_seconds, "UDP, TCP: end the stream after this long without data (0: never)")
      ->check(CLI::Range(0.0, kMaxIdleSeconds))
      ->each([&flags](const std::string&) { flags.idle_seconds_given = true; })
      ->capture_default_str();
}

Input open_input(const InputFlags& flags) {
  if (flags.seqnum && flags.udp.empty()) bad("--seqnum applies to --udp only");
  if (flags.idle_seconds_given && !flags.in.empty())
    bad("--idle-seconds applies to --udp, --tcp-listen and --tcp-connect, not to a file (--in)");
  Input input;
  if (!flags.in.empty()) {
    if (ends_with(flags.in, ".sigmf-meta") || ends_with(flags.in, ".sigmf-data")) {
      io::SigmfReaderOptions o;
      o.path = flags.in;
      o.sample_rate = flags.sample_rate;  // a rate the metadata lacks
      auto reader = std::make_unique<io::SigmfReader>(o);
      input.sigmf = reader->metadata();
      check_against_metadata(flags, *input.sigmf, reader->paths().meta);
      input.bytes_per_sample = io::sample_bytes(input.sigmf->datatype, input.sigmf->num_channels);
      input.description = "SigMF " + reader->paths().data + " (" + io::to_string(input.sigmf->datatype) + ", " +
                          std::to_string(input.sigmf->num_channels) + " channels)";
      input.files = {reader->paths().meta, reader->paths().data};
      input.reader = std::move(reader);
      return input;
    }
    io::FileReaderOptions o;
    o.path = flags.in;
    o.format = format_of(flags);
    o.channels = channels_of(flags, "--in " + flags.in);
    o.sample_rate = flags.sample_rate;
    input.reader = std::make_unique<io::FileSampleReader>(o);
    input.bytes_per_sample = io::sample_bytes(o.format, o.channels);
    input.description = "file " + flags.in + " (" + io::to_string(o.format) + ", " + std::to_string(o.channels) + " channels)";
    input.files = {flags.in};
    return input;
  }
  const io::SampleFormat format = format_of(flags);
  if (!flags.udp.empty()) {
    io::UdpReaderOptions o;
    std::tie(o.address, o.port) = parse_endpoint("--udp", flags.udp, "127.0.0.1");
    o.format = format;
    o.channels = channels_of(flags, "--udp");
    o.sample_rate = flags.sample_rate;
    o.seqnum_header = flags.seqnum;
    o.idle_timeout_ms = idle_ms(flags);
    input.reader = std::make_unique<io::UdpSampleReader>(o);
    input.bytes_per_sample = io::sample_bytes(format, o.channels);
    input.description = "udp " + o.address + ":" + std::to_string(o.port);
    return input;
  }
  io::TcpReaderOptions o;
  const bool listen = !flags.tcp_listen.empty();
  o.mode = listen ? io::TcpMode::listen : io::TcpMode::connect;
  std::tie(o.address, o.port) = listen ? parse_endpoint("--tcp-listen", flags.tcp_listen, "127.0.0.1")
                                       : parse_endpoint("--tcp-connect", flags.tcp_connect);
  o.format = format;
  o.channels = channels_of(flags, listen ? "--tcp-listen" : "--tcp-connect");
  o.sample_rate = flags.sample_rate;
  o.reconnect = false;  // one sender: its close ends the stream
  o.idle_timeout_ms = idle_ms(flags);
  input.reader = std::make_unique<io::TcpSampleReader>(o);
  input.bytes_per_sample = io::sample_bytes(format, o.channels);
  input.description = std::string("tcp ") + (listen ? "listening on " : "from ") + o.address + ":" + std::to_string(o.port);
  return input;
}

void refuse_input_as_output(const Input& input, const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  std::error_code error;
  for (const std::string& file : input.files)
    if (std::filesystem::equivalent(file, path, error))
      bad(flag + " " + path + " is the input " + file + ": writing it would destroy the samples being read");
}

std::pair<std::string, std::uint16_t> parse_endpoint(const std::string& flag, const std::string& text,
                                                     const std::string& default_host) {
  const std::size_t colon = text.rfind(':');
  const bool bare_port = colon == std::string::npos && !default_host.empty();
  if (!bare_port && (colon == std::string::npos || colon == 0 || colon + 1 == text.size()))
    bad(flag + " " + text + ": expected HOST:PORT, for example 127.0.0.1:5000");
  const std::string port = bare_port ? text : text.substr(colon + 1);
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoul(port) < 1 || std::stoul(port) > 65535)
    bad(flag + " " + text + ": the port must be a number from 1 to 65535");
  return {bare_port ? default_host : text.substr(0, colon), static_cast<std::uint16_t>(std::stoul(port))};
}

}  // namespace eigstream::apps
