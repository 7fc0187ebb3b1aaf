// TCP samples: a byte stream of whole samples (cf32_le or ci16_le, channels interleaved), no
// framing. The reader reassembles samples split across reads exactly. When the peer goes away it
// waits for the next one (listen mode: accepts the next connection; connect mode: reconnects with
// back-off) and counts ReaderCounters::reconnects, and a connection that ended in an error (reset by
// the peer) in ReaderCounters::broken_connections; a sample the peer left incomplete is dropped and
// counted as one malformed frame (its bytes are in ReaderCounters::bytes), and the stream goes on
// with the next connection's first byte as the start of a sample.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "eigstream/streaming/sample_io.hpp"

namespace eigstream::streaming {

enum class TcpMode {
  listen,   // bind address:port, accept one peer at a time
  connect,  // connect to address:port, retrying with back-off when refused or dropped
};

struct TcpReaderOptions {
  TcpMode mode = TcpMode::listen;
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // listen mode: 0 lets the system pick (see TcpSampleReader::port())
  SampleFormat format = SampleFormat::cf32_le;
  std::size_t channels = 1;
  double sample_rate = 0;     // Hz, reported by sample_rate(); 0 when unknown
  bool reconnect = true;      // false: the stream ends when the first peer goes away
  int retry_initial_ms = 10;  // connect mode: first back-off, doubled after each failure
  int retry_max_ms = 1000;    // connect mode: longest back-off
  int idle_timeout_ms = -1;   // end the stream after this long without a peer or bytes; < 0: never
                              // (connect mode, never connected: Error(io) naming the peer and why)
};

class TcpSampleReader final : public SampleReader {
 public:
  // Listen mode binds and listens at once (Error(io) when it cannot); connect mode connects on the
  // first read.
  explicit TcpSampleReader(const TcpReaderOptions& options);
  ~TcpSampleReader() override;

  std::uint16_t port() const;  // listen mode: the bound port; connect mode: the peer's port

  std::size_t channels() const override;
  double sample_rate() const override;
  // Returns the whole samples of one receive (at least one), or the end (end = true only on a read
  // that delivers nothing). It never receives more bytes than max_samples samples need.
  ReadResult read(sample_t* out, std::size_t max_samples) override;
  void cancel() override;
  ReaderCounters counters() const override;  // bytes: all bytes received

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct TcpWriterOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // required
  SampleFormat format = SampleFormat::cf32_le;
  std::size_t channels = 1;
  int connect_timeout_ms = 5000;  // keep retrying a refused connection this long
};

// Connects to a listening reader (for example siggen streaming to beamform). It does not reconnect:
// a gone peer makes write() or flush() throw Error(io).
class TcpSampleWriter final : public SampleWriter {
 public:
  explicit TcpSampleWriter(const TcpWriterOptions& options);
  ~TcpSampleWriter() override;  // flushes (errors are lost: call flush() first), then closes

  std::size_t channels() const override;
  void write(const sample_t* samples, std::size_t count) override;
  void flush() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eigstream::streaming
