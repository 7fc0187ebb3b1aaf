// Raw sample files: FileSampleReader reads whole samples through a fixed buffer (the bytes of a
// partial sample wait at its front for the next read(2)), loops by seeking to 0, and paces delivery
// for rate-limited replay; FileSampleWriter encodes through an EncodeBuffer. Files may be pipes.
#include "eigstream/streaming/file_io.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "atomic_counters.hpp"
#include "cancel_signal.hpp"
#include "eigstream/error.hpp"
#include "eigstream/streaming/sample_format.hpp"
#include "encode_buffer.hpp"
#include "posix_io.hpp"

namespace eigstream::streaming {

struct FileSampleReader::Impl {
  using clock = std::chrono::steady_clock;

  FileReaderOptions options;
  std::size_t sample_bytes;
  UniqueFd fd;
  std::vector<unsigned char> buffer;
  std::size_t begin = 0;  // unread bytes are buffer[begin, end)
  std::size_t end = 0;
  std::uint64_t offset = 0;  // file offset of buffer[begin]
  std::uint64_t pass_samples = 0;
  bool ended = false;
  clock::time_point pace_start;
  std::uint64_t paced = 0;  // samples delivered since pace_start
  CancelSignal cancel;
  AtomicCounters counters;

  explicit Impl(const FileReaderOptions& o) : options(o), sample_bytes(streaming::sample_bytes(o.format, o.channels)) {
    if (!(o.rate_limit >= 0) || !std::isfinite(o.rate_limit)) {
      throw Error(ErrorCode::invalid_argument, o.path + ": rate_limit must be a finite number >= 0");
    }
    fd = UniqueFd(::open(o.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) throw Error(ErrorCode::io, errno_message(o.path + ": cannot open for reading"));
    buffer.resize(buffer_samples(sample_bytes) * sample_bytes);
  }

  // Moves the partial sample at the front and reads once more behind it: the bytes read, 0 at the
  // end of the file, -1 when cancelled (a pipe may keep a read waiting, so it is polled first).
  std::ptrdiff_t fill() {
    std::memmove(buffer.data(), buffer.data() + begin, end - begin);
    end -= begin;
    begin = 0;
    if (cancel.wait(fd.get(), POLLIN, -1) == WaitOutcome::cancelled) return -1;
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer.data() + end, buffer.size() - end);
      if (n >= 0) {
        end += static_cast<std::size_t>(n);
        AtomicCounters::add(counters.bytes, static_cast<std::uint64_t>(n));
        return n;
      }
      if (errno != EINTR)
        throw Error(ErrorCode::io, errno_message(options.path + ": read failed at byte offset " +
                                                 std::to_string(offset + (end - begin))));
    }
  }

  [[noreturn]] void throw_truncated() {
    ended = true;
    const std::size_t partial = end - begin;
    throw Error(ErrorCode::io, options.path + ": truncated: the last " + std::to_string(partial) +
                                   " bytes, at byte offset " + std::to_string(offset) + ", are not a whole sample (" +
                                   std::to_string(sample_bytes) + " bytes: " + std::to_string(options.channels) +
                                   " channel(s) of " + to_string(options.format) + ")");
  }

  void rewind() {
    if (::lseek(fd.get(), 0, SEEK_SET) != 0) {
      throw Error(ErrorCode::io, errno_message(options.path + ": cannot loop, the file cannot be rewound"));
    }
    offset = 0;
    pass_samples = 0;
  }

  // How many samples are due now (at most max), waiting for the next one when none is; 0 when cancelled.
  std::size_t pace(std::size_t max) {
    const clock::time_point now = clock::now();
    if (paced == 0) pace_start = now;
    for (;;) {
      const double elapsed = std::chrono::duration<double>(clock::now() - pace_start).count();
      const auto due = static_cast<std::uint64_t>(elapsed * options.rate_limit) + 1;  // sample k is due at k / rate
      if (due > paced) return static_cast<std::size_t>(std::min<std::uint64_t>(max, due - paced));
      const auto next = pace_start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(
                                         static_cast<double>(paced) / options.rate_limit));
      if (!cancel.sleep_until(next)) return 0;
    }
  }

  ReadResult read(sample_t* out, std::size_t max_samples) {
    ReadResult result;
    if (max_samples == 0) return result;
    if (ended || cancel.cancelled()) {
      result.end = true;
      return result;
    }
    std::size_t allowed = max_samples;
    if (options.rate_limit > 0) {
      allowed = pace(max_samples);
      if (allowed == 0) {
        result.end = true;
        return result;
      }
    }
    while (end - begin < sample_bytes) {
      const std::ptrdiff_t got = fill();
      if (got < 0) {
        result.end = true;
        return result;
      }
      if (got > 0) continue;
      if (end - begin > 0) throw_truncated();
      if (options.loop && pass_samples > 0) {
        rewind();
        continue;
      }
      ended = true;
      result.end = true;
      return result;
    }
    const std::size_t n = std::min(allowed, (end - begin) / sample_bytes);
    decode_values(buffer.data() + begin, n * options.channels, options.format, out);
    begin += n * sample_bytes;
    offset += n * sample_bytes;
    pass_samples += n;
    paced += n;
    AtomicCounters::add(counters.samples, n);
    result.samples = n;
    return result;
  }
};

FileSampleReader::FileSampleReader(const FileReaderOptions& options) : impl_(std::make_unique<Impl>(options)) {}
FileSampleReader::~FileSampleReader() = default;
std::size_t FileSampleReader::channels() const { return impl_->options.channels; }
double FileSampleReader::sample_rate() const { return impl_->options.sample_rate; }
ReadResult FileSampleReader::read(sample_t* out, std::size_t max_samples) { return impl_->read(out, max_samples); }
void FileSampleReader::cancel() { impl_->cancel.cancel(); }
ReaderCounters FileSampleReader::counters() const { return impl_->counters.snapshot(); }

struct FileSampleWriter::Impl {
  std::string path;
  UniqueFd fd;
  EncodeBuffer buffer;

  Impl(const std::string& p, SampleFormat format, std::size_t channels)
      : path(p), buffer(format, channels, buffer_samples(sample_bytes(format, channels))) {
    fd = UniqueFd(::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) throw Error(ErrorCode::io, errno_message(p + ": cannot open for writing"));
  }

  auto sender() {
    return [this](const unsigned char* bytes, std::size_t size) { write_all(fd.get(), bytes, size, false, path); };
  }
};

FileSampleWriter::FileSampleWriter(const std::string& path, SampleFormat format, std::size_t channels)
    : impl_(std::make_unique<Impl>(path, format, channels)) {}

FileSampleWriter::~FileSampleWriter() {
  try {
    flush();
  } catch (const Error&) {
  }
}

std::size_t FileSampleWriter::channels() const { return impl_->buffer.channels(); }
void FileSampleWriter::write(const sample_t* samples, std::size_t count) {
  impl_->buffer.write(samples, count, impl_->sender());
}
void FileSampleWriter::flush() { impl_->buffer.flush(impl_->sender()); }

}  // namespace eigstream::streaming
