// Raw sample files or pipes (GNU Radio .cfile style): cf32_le or ci16_le values, channels
// interleaved per sample, no header. The reader can loop (restart at the end) and limit its rate for
// replay; the writer saturates ci16_le. A file whose size is not a whole number of samples is
// reported as truncated (eigstream::Error, code io, naming the file and the byte offset of the
// partial sample) after every whole sample before it has been delivered.
#pragma once

#include <memory>
#include <string>

#include "eigstream/streaming/sample_io.hpp"

namespace eigstream::streaming {

struct FileReaderOptions {
  std::string path;
  SampleFormat format = SampleFormat::cf32_le;
  std::size_t channels = 1;
  double sample_rate = 0;  // Hz, reported by sample_rate(); 0 when unknown
  bool loop = false;       // restart at the end (needs a seekable file with at least one sample)
  double rate_limit = 0;   // deliver at most this many samples per second (replay); 0: as fast as read
};

class FileSampleReader final : public SampleReader {
 public:
  // Opens the file; Error(io) when it cannot be read, Error(invalid_argument) for bad options.
  explicit FileSampleReader(const FileReaderOptions& options);
  ~FileSampleReader() override;

  std::size_t channels() const override;
  double sample_rate() const override;
  // Delivers at most max_samples; end = true only on a read that delivers nothing.
  ReadResult read(sample_t* out, std::size_t max_samples) override;
  void cancel() override;
  ReaderCounters counters() const override;  // bytes: file bytes read (all passes when looping)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class FileSampleWriter final : public SampleWriter {
 public:
  // Creates or truncates the file; Error(io) when it cannot.
  FileSampleWriter(const std::string& path, SampleFormat format, std::size_t channels);
  // Flushes; a failure here is lost: call flush() first to see it.
  ~FileSampleWriter() override;

  std::size_t channels() const override;
  void write(const sample_t* samples, std::size_t count) override;
  void flush() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eigstream::streaming
