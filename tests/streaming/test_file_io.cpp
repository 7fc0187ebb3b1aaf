// Raw sample files: writer output against the expected bytes, round trips, chunked reads against one
// read, truncation, looping, rate-limited replay and its cancellation, ci16 saturation, bad input.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "eigstream/streaming/file_io.hpp"
#include "eigstream/streaming/sample_format.hpp"
#include "sample_io_fixtures.hpp"

using namespace eigstream::streaming;
using namespace sample_io_test;

namespace {

// Reads everything left, in chunks of random sizes in [1, max_chunk].
std::vector<sample_t> read_all(SampleReader& reader, std::size_t max_chunk, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> size(1, max_chunk);
  std::vector<sample_t> all, chunk(max_chunk * reader.channels());
  for (;;) {
    const ReadResult r = reader.read(chunk.data(), size(rng));
    if (r.end) {
      REQUIRE(r.samples == 0);
      return all;
    }
    all.insert(all.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(r.samples * reader.channels()));
  }
}

}  // namespace

TEST_CASE("file: the writer's bytes are the expected encoding and read back bit-exactly", "[file]") {
  const SampleFormat format = GENERATE(SampleFormat::cf32_le, SampleFormat::ci16_le);
  const std::size_t channels = GENERATE(1, 3);
  const std::size_t count = 1000;
  const auto samples = random_samples(count, channels, format, 7);
  ScratchDir dir;
  const std::string path = dir.file("x.cfile");
  {
    FileSampleWriter writer(path, format, channels);
    REQUIRE(writer.channels() == channels);
    std::size_t done = 0;
    for (std::size_t step : {1, 17, 300, 682}) {
      writer.write(samples.data() + done * channels, step);
      done += step;
    }
    REQUIRE(done == count);
    writer.flush();
  }
  REQUIRE(read_bytes(path) == expected_bytes(samples, format));

  FileSampleReader reader({path, format, channels, 48000.0});
  CHECK(reader.channels() == channels);
  CHECK(reader.sample_rate() == 48000.0);
  CHECK(same_samples(read_all(reader, 64, 1), samples));
  const ReaderCounters c = reader.counters();
  CHECK(c.samples == count);
  CHECK(c.bytes == count * channels * value_bytes(format));
  CHECK(c.lost_samples == 0);
  CHECK(c.malformed == 0);
}

TEST_CASE("file: reads in random chunk sizes give exactly what one read of the whole file gives", "[file]") {
  const SampleFormat format = GENERATE(SampleFormat::cf32_le, SampleFormat::ci16_le);
  const std::size_t channels = 3, count = 5000;  // 120 kB at most: one read takes it all
  ScratchDir dir;
  const std::string path = dir.file("x.raw");
  write_bytes(path, expected_bytes(random_samples(count, channels, format, 11), format));

  FileSampleReader whole({path, format, channels});
  std::vector<sample_t> one(count * channels);
  REQUIRE(whole.read(one.data(), count + 10).samples == count);
  REQUIRE(whole.read(one.data(), 1).end);

  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    FileSampleReader chunked({path, format, channels});
    CHECK(same_samples(read_all(chunked, 97, seed), one));
  }
}

TEST_CASE("file: a pipe delivering samples split at odd byte boundaries reads back bit-exactly", "[file]") {
  const std::size_t tail = GENERATE(0, 3);  // bytes of an incomplete last sample
  const std::size_t channels = 3, count = 3000;
  const auto samples = random_samples(count, channels, SampleFormat::ci16_le, 13);
  Bytes bytes = expected_bytes(samples, SampleFormat::ci16_le);
  bytes.insert(bytes.end(), tail, 0x55);
  ScratchDir dir;
  const std::string path = dir.file("pipe");
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);

  bool written = true;
  std::thread writer([&] {
    const int fd = ::open(path.c_str(), O_WRONLY);  // waits for the reader to open the other end
    const std::size_t pieces[] = {1, 5, 2, 11, 4093, 7, 64};
    for (std::size_t at = 0, i = 0; fd >= 0 && at < bytes.size(); ++i) {
      const std::size_t n = std::min(pieces[i % 7], bytes.size() - at);
      written = written && ::write(fd, bytes.data() + at, n) == static_cast<ssize_t>(n);
      at += n;
    }
    written = written && fd >= 0 && ::close(fd) == 0;
  });
  FileSampleReader reader({path, SampleFormat::ci16_le, channels});
  std::vector<sample_t> got, chunk(50 * channels);
  std::string error = "(none)";
  try {
    for (ReadResult r; !(r = reader.read(chunk.data(), 50)).end;) {
      got.insert(got.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(r.samples * channels));
    }
  } catch (const eigstream::Error& e) {
    error = e.what();
  }
  writer.join();
  REQUIRE(written);
  CHECK(same_samples(got, samples));
  if (tail == 0) {
    CHECK(error == "(none)");
  } else {
    CHECK(error.find(path + ": truncated: the last 3 bytes, at byte offset 36000") != std::string::npos);
  }
}

TEST_CASE("file: cancel() ends a read waiting on a pipe that stays silent", "[file]") {
  ScratchDir dir;
  const std::string path = dir.file("silent");
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  std::promise<void> read_returned;
  std::thread writer([&, done = read_returned.get_future()] {
    const int fd = ::open(path.c_str(), O_WRONLY);  // open, write nothing, close after the read returned
    done.wait();
    if (fd >= 0) ::close(fd);
  });
  FileSampleReader reader({path, SampleFormat::cf32_le, 1});
  std::thread canceller([&] { reader.cancel(); });
  sample_t buffer[8];
  const ReadResult r = reader.read(buffer, 8);
  canceller.join();
  read_returned.set_value();
  writer.join();
  CHECK(r.end);
  CHECK(r.samples == 0);
}

TEST_CASE("file: a truncated file delivers every whole sample, then an error naming the file and offset", "[file]") {
  const std::size_t channels = 2, count = 10;  // 16-byte samples
  const auto samples = random_samples(count, channels, SampleFormat::cf32_le, 3);
  ScratchDir dir;
  const std::string path = dir.file("cut.cfile");
  Bytes bytes = expected_bytes(samples, SampleFormat::cf32_le);
  bytes.insert(bytes.end(), {1, 2, 3, 4, 5});
  write_bytes(path, bytes);

  FileSampleReader reader({path, SampleFormat::cf32_le, channels});
  std::vector<sample_t> got, chunk(3 * channels);
  bool threw = false;
  while (!threw) {
    try {
      const ReadResult r = reader.read(chunk.data(), 3);
      REQUIRE_FALSE(r.end);
      got.insert(got.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(r.samples * channels));
    } catch (const eigstream::Error& e) {
      threw = true;
      const std::string message = e.what();
      INFO(message);
      CHECK(e.code() == eigstream::ErrorCode::io);
      CHECK(message.find(path) != std::string::npos);
      CHECK(message.find("truncated") != std::string::npos);
      CHECK(message.find("the last 5 bytes, at byte offset 160") != std::string::npos);
    }
  }
  CHECK(same_samples(got, samples));
  CHECK(reader.read(chunk.data(), 3).end);
}

TEST_CASE("file: looping restarts at the first sample", "[file]") {
  const std::size_t count = 7;
  const auto samples = random_samples(count, 1, SampleFormat::ci16_le, 5);
  ScratchDir dir;
  const std::string path = dir.file("loop.raw");
  write_bytes(path, expected_bytes(samples, SampleFormat::ci16_le));
  FileReaderOptions options{path, SampleFormat::ci16_le, 1};
  options.loop = true;
  FileSampleReader reader(options);
  std::vector<sample_t> got, chunk(5);
  while (got.size() < 30) {
    const ReadResult r = reader.read(chunk.data(), 5);
    REQUIRE_FALSE(r.end);
    got.insert(got.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(r.samples));
  }
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == samples[i % count]);
}

TEST_CASE("file: looping an empty file ends instead of spinning", "[file]") {
  ScratchDir dir;
  const std::string path = dir.file("empty.raw");
  write_bytes(path, {});
  FileReaderOptions options{path, SampleFormat::cf32_le, 4};
  options.loop = true;
  FileSampleReader reader(options);
  std::vector<sample_t> chunk(4);
  CHECK(reader.read(chunk.data(), 1).end);
}

TEST_CASE("file: rate-limited replay delivers the same samples; cancel() ends a read waiting its turn", "[file]") {
  const std::size_t count = 200;
  const auto samples = random_samples(count, 2, SampleFormat::cf32_le, 9);
  ScratchDir dir;
  const std::string path = dir.file("replay.cfile");
  write_bytes(path, expected_bytes(samples, SampleFormat::cf32_le));

  FileReaderOptions fast{path, SampleFormat::cf32_le, 2};
  fast.rate_limit = 1e6;
  FileSampleReader paced(fast);
  CHECK(same_samples(read_all(paced, 50, 2), samples));

  // One sample per 1000 s: the first is due at once, the second only if cancel() never comes.
  FileReaderOptions slow = fast;
  slow.rate_limit = 1e-3;
  FileSampleReader reader(slow);
  std::vector<sample_t> chunk(2 * 10);
  const ReadResult first = reader.read(chunk.data(), 10);
  CHECK(first.samples == 1);
  CHECK(chunk[0] == samples[0]);
  std::thread canceller([&] { reader.cancel(); });
  const ReadResult second = reader.read(chunk.data(), 10);
  canceller.join();
  CHECK(second.end);
  CHECK(second.samples == 0);
}

TEST_CASE("file: ci16_le rounds to nearest and saturates", "[file]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<sample_t> values = {
      {1.0f, -1.0f}, {1.5f, -2.0f}, {nan, 0.25f}, {0.5f / 32768, 1.5f / 32768}, {100.4f / 32768, -100.6f / 32768}};
  // I, Q as int16: 1.0 -> 32767 (saturated), -1.0 -> -32768, NaN -> 0, ties to even.
  const std::int16_t expected[] = {32767, -32768, 32767, -32768, 0, 8192, 0, 2, 100, -101};
  ScratchDir dir;
  const std::string path = dir.file("sat.raw");
  {
    FileSampleWriter writer(path, SampleFormat::ci16_le, 1);
    writer.write(values.data(), values.size());
  }
  const Bytes bytes = read_bytes(path);
  REQUIRE(bytes.size() == sizeof expected);
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    const auto v = static_cast<std::int16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
    CHECK(v == expected[i]);
  }
}

TEST_CASE("file: unreadable paths and bad options are clear errors", "[file]") {
  ScratchDir dir;
  const std::string missing = dir.file("missing.cfile");
  require_error(
      [&] {
        FileSampleReader({missing, SampleFormat::cf32_le, 1});
      },
      eigstream::ErrorCode::io, {missing, "cannot open for reading", "No such file"});
  require_error([&] { FileSampleWriter(dir.file("no/such/dir.cfile"), SampleFormat::cf32_le, 1); },
                eigstream::ErrorCode::io, {"no/such/dir.cfile", "cannot open for writing"});
  write_bytes(dir.file("x.raw"), {});
  require_error(
      [&] {
        FileSampleReader({dir.file("x.raw"), SampleFormat::cf32_le, 0});
      },
      eigstream::ErrorCode::invalid_argument, {"channels", "not 0"});
  FileReaderOptions negative{dir.file("x.raw"), SampleFormat::cf32_le, 1};
  negative.rate_limit = -1;
  require_error([&] { FileSampleReader{negative}; }, eigstream::ErrorCode::invalid_argument, {"rate_limit"});
}
