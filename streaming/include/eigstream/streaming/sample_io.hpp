// Readers and writers of multichannel complex samples, the I/O behind the streaming runtime's
// sources and sinks. A sample is one complex<float> per channel, channels interleaved per sample
// (GNU Radio / SigMF convention). Readers and writers know nothing of blocks, pools or stages: the
// runtime wraps them into source and sink stages.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

#include "eigstream/views.hpp"

namespace eigstream::streaming {

using eigstream::sample_t;  // one complex<float> of one channel (views.hpp)

// On-the-wire or on-disk encodings of one complex value.
enum class SampleFormat {
  cf32_le,  // two little-endian IEEE float32: I, Q
  ci16_le,  // two little-endian int16: I, Q (scaled to [-1, 1) by 1/32768 when read)
};

// What one read delivered.
struct ReadResult {
  std::size_t samples = 0;        // samples written to the caller's buffer (each channels() values)
  std::uint64_t lost_before = 0;  // samples known lost just before these (for example UDP gaps)
  bool end = false;               // nothing more will come: end of input, or cancelled
};

// Running totals of a reader, safe to read from another thread.
struct ReaderCounters {
  std::uint64_t samples = 0;       // samples delivered
  std::uint64_t bytes = 0;         // payload bytes consumed
  std::uint64_t lost_samples = 0;  // samples known lost (sequence gaps)
  std::uint64_t resyncs = 0;       // sequence numberings followed anew, no loss counted (UDP)
  std::uint64_t late = 0;          // datagrams that came late or twice, skipped (UDP)
  std::uint64_t malformed = 0;     // datagrams / frames rejected as malformed and skipped
  std::uint64_t reconnects = 0;    // connections re-established after the peer went away
  std::uint64_t broken_connections = 0;  // connections that ended in an error (reset by the peer), not
                                         // an orderly close: what was in flight is lost
};

class SampleReader {
 public:
  virtual ~SampleReader() = default;
  virtual std::size_t channels() const = 0;
  virtual double sample_rate() const = 0;  // Hz; 0 when the input does not say
  // Writes up to max_samples samples to out (room for max_samples * channels() values). Blocks
  // until it can return samples, a gap (lost_before > 0) or the end. Throws eigstream::Error
  // (io or invalid_input) for faults that end the input, naming the file or peer and the offset.
  virtual ReadResult read(sample_t* out, std::size_t max_samples) = 0;
  // Thread-safe: a blocked or later read() returns with end = true.
  virtual void cancel() = 0;
  virtual ReaderCounters counters() const = 0;
};

class SampleWriter {
 public:
  virtual ~SampleWriter() = default;
  virtual std::size_t channels() const = 0;
  // Writes count samples (count * channels() values). Throws eigstream::Error (io) on failure.
  virtual void write(const sample_t* samples, std::size_t count) = 0;
  virtual void flush() = 0;
};

}  // namespace eigstream::streaming
