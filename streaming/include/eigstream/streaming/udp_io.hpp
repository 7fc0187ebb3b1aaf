// UDP samples: each datagram holds whole samples (cf32_le or ci16_le, channels interleaved),
// optionally after a leading uint64 sequence number, little-endian, one per datagram (the GNU
// Radio gr-network udp_sink/udp_source "seqnum" header; its udp_sink numbers datagrams from 1).
//
// The reader, per datagram:
// - empty: the sender's end of stream (gr-network's "send EOF" packets), when end_on_empty;
// - shorter than the header plus one sample, longer than max_datagram_bytes, or a payload that is
//   not a whole number of samples: malformed, counted in ReaderCounters::malformed, skipped;
// - with sequence numbers: the first datagram received sets the expected number. A datagram ahead
//   of it by at most max_gap_datagrams is a gap: (missing datagrams) x (its own sample count)
//   samples are counted as lost and reported in ReadResult::lost_before of the read that delivers
//   its samples. A datagram behind it by at most reorder_window arrived late or twice: its place in
//   the stream has passed, so it is skipped and counted in ReaderCounters::late. One further behind, or
//   further ahead than max_gap_datagrams (a sender that restarted its numbering, or a corrupt
//   number), is a resync: the reader follows the new numbering, counts it in
//   ReaderCounters::resyncs, and reports no loss (a reported loss becomes that many samples of zeros
//   downstream).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "eigstream/streaming/sample_io.hpp"

namespace eigstream::streaming {

// The largest UDP payload over IPv4.
inline constexpr std::size_t max_udp_payload = 65507;

struct UdpReaderOptions {
  std::string address = "127.0.0.1";  // local address to bind ("0.0.0.0" for every interface)
  std::uint16_t port = 0;             // 0: the system picks one; see UdpSampleReader::port()
  SampleFormat format = SampleFormat::cf32_le;
  std::size_t channels = 1;
  double sample_rate = 0;  // Hz, reported by sample_rate(); 0 when unknown
  bool seqnum_header = false;
  std::size_t max_datagram_bytes = 9000;  // at most max_udp_payload
  bool end_on_empty = true;
  std::uint64_t reorder_window = 64;   // datagrams
  std::uint64_t max_gap_datagrams = 65536;  // the largest jump ahead taken as lost datagrams
  int receive_buffer_bytes = 4 << 20;  // SO_RCVBUF asked for (the kernel may grant less)
  int idle_timeout_ms = -1;            // end the stream after this long without a datagram; < 0: never
};

class UdpSampleReader final : public SampleReader {
 public:
  // Binds the socket; Error(invalid_argument) for bad options, Error(io) when it cannot bind.
  explicit UdpSampleReader(const UdpReaderOptions& options);
  ~UdpSampleReader() override;

  std::uint16_t port() const;  // the bound port

  std::size_t channels() const override;
  double sample_rate() const override;
  // Returns once it has delivered the samples of at least one datagram (and of any further ones
  // already waiting, up to max_samples and up to the next gap), or a gap, or the end (end = true
  // only on a read that delivers nothing). Samples of a datagram that do not fit wait for the next read.
  ReadResult read(sample_t* out, std::size_t max_samples) override;
  void cancel() override;
  ReaderCounters counters() const override;  // bytes: all datagram bytes received, headers included

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct UdpWriterOptions {
  std::string address = "127.0.0.1";  // destination
  std::uint16_t port = 0;             // destination port (required)
  SampleFormat format = SampleFormat::cf32_le;
  std::size_t channels = 1;
  std::size_t samples_per_datagram = 0;  // 0: as many as fit in 1472 bytes (one Ethernet frame)
  bool seqnum_header = false;
  std::uint64_t first_seqnum = 1;
  std::size_t max_datagram_bytes = max_udp_payload;  // header + samples must fit
};

class UdpSampleWriter final : public SampleWriter {
 public:
  explicit UdpSampleWriter(const UdpWriterOptions& options);
  ~UdpSampleWriter() override;  // sends what is buffered (errors are lost: call flush() first)

  std::size_t channels() const override;
  std::size_t samples_per_datagram() const;
  std::uint64_t datagrams_sent() const;
  // Sends a datagram each time samples_per_datagram samples are buffered.
  void write(const sample_t* samples, std::size_t count) override;
  // Sends the buffered samples as a shorter datagram.
  void flush() override;
  // flush(), then three empty datagrams: the end of stream for a reader with end_on_empty
  // (three, as gr-network does, in case one is lost).
  void send_end();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eigstream::streaming
