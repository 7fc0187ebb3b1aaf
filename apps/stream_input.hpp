// What the stream apps (klt_compress, beamform) share about their input: the command-line flags that
// say where multichannel samples come from (a raw file, a SigMF recording, UDP or TCP), opening the
// matching eigstream::streaming::SampleReader, and "HOST:PORT" endpoints (siggen's too).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eigstream/streaming/sample_io.hpp"
#include "eigstream/streaming/sigmf.hpp"

namespace eigstream::apps {

struct InputFlags {
  std::string in;              // a raw file, or a SigMF recording (NAME.sigmf-meta / NAME.sigmf-data)
  std::string format;           // raw file, UDP, TCP: cf32 (when empty) or ci16 (SigMF says it itself)
  std::size_t channels = 0;     // raw file, UDP, TCP (SigMF says it itself: 0 or the same count)
  double sample_rate = 0;       // Hz, for the summary; 0: unknown (SigMF: 0, the same, or one it lacks)
  std::string udp;              // [HOST:]PORT to receive datagrams on
  bool seqnum = false;          // UDP datagrams start with a uint64 sequence number
  std::string tcp_listen;       // [HOST:]PORT to accept a sender on
  std::string tcp_connect;      // HOST:PORT of a sender to connect to
  double idle_seconds = 5;      // UDP, TCP: end the stream after this long without data
  bool idle_seconds_given = false;  // on the command line (a file input refuses it)
};

// Adds --in, --format, --channels, --sample-rate, --udp, --seqnum, --tcp-listen, --tcp-connect,
// --idle-seconds to `app` (exactly one of --in, --udp, --tcp-listen, --tcp-connect is required).
void add_input_flags(CLI::App& app, InputFlags& flags);

struct Input {
  std::unique_ptr<streaming::SampleReader> reader;
  std::string description;                        // "file x.cf32 (cf32, 16 channels)", "udp 127.0.0.1:5000", ...
  std::size_t bytes_per_sample = 0;               // of all channels, as the input encodes them
  std::optional<streaming::SigmfMetadata> sigmf;  // the recording's metadata, for SigMF input
  std::vector<std::string> files;                 // the files read (none for UDP or TCP)
};

// Opens the input the flags name. Throws eigstream::Error: invalid_argument for flags that do not
// fit together or disagree with a SigMF recording's metadata (the message names the flag), io for an
// input that cannot be opened or read.
Input open_input(const InputFlags& flags);

// Error(invalid_argument) naming `flag` when `path` is one of the input's files: an output written
// over its own input would destroy it. An empty path, or one that does not exist yet, passes.
void refuse_input_as_output(const Input& input, const std::string& flag, const std::string& path);

// "HOST:PORT" (or "PORT" with `default_host`) -> host, port; Error(invalid_argument) naming `flag`.
std::pair<std::string, std::uint16_t> parse_endpoint(const std::string& flag, const std::string& text,
                                                     const std::string& default_host = "");

}  // namespace eigstream::apps
