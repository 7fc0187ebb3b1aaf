// TCP samples over real loopback sockets: samples split at odd byte boundaries, a peer that goes
// away mid-sample or resets its connection and a new one that carries on (listen and connect mode),
// the writer, cancellation and a refused connection. Peers run in a second thread; the reader's progress, not time, decides
// when the test ends (the ctest timeout is only a safety net).
#include <chrono>
#include <thread>

#include "eigstream/streaming/sample_format.hpp"
#include "eigstream/streaming/tcp_io.hpp"
#include "socket_fixtures.hpp"

using namespace eigstream::streaming;
using namespace sample_io_test;

namespace {

// Reads exactly `count` samples in chunks of varying size.
std::vector<sample_t> read_samples(SampleReader& reader, std::size_t count) {
  std::vector<sample_t> all, buffer(37 * reader.channels());
  std::size_t chunk = 1;
  while (all.size() < count * reader.channels()) {
    const std::size_t want = std::min(chunk, count - all.size() / reader.channels());
    const ReadResult r = reader.read(buffer.data(), want);
    REQUIRE_FALSE(r.end);
    CHECK(r.lost_before == 0);
    all.insert(all.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(r.samples * reader.channels()));
    chunk = (chunk * 7 + 3) % 37 + 1;  // 1 to 37, the room in buffer
  }
  return all;
}

// What the peer sends: samples [0, split) and 5 bytes of sample `split` on the first connection; all
// of samples [split, count) on the second, both in odd-sized pieces.
struct Plan {
  std::size_t channels = 3, count = 400, split = 150;
  std::vector<sample_t> samples = random_samples(count, channels, SampleFormat::cf32_le, 41);
  Bytes bytes = expected_bytes(samples, SampleFormat::cf32_le);
  std::size_t sample_size = channels * 8;

  bool first(const RawSocket& s) const {
    return send_pieces(s, bytes, 0, split * sample_size + 5, {1, 3, 7, 13, 29, 61});
  }
  bool second(const RawSocket& s) const {
    return send_pieces(s, bytes, split * sample_size, bytes.size(), {5, 11, 2, 97});
  }
  std::uint64_t bytes_sent() const { return bytes.size() + 5; }
};

}  // namespace

TEST_CASE("tcp listen: a peer leaving mid-sample and the next one carrying on give bit-exact samples", "[tcp]") {
  const Plan plan;
  TcpReaderOptions options;
  options.channels = plan.channels;
  TcpSampleReader reader(options);
  REQUIRE(reader.port() != 0);

  bool sent = true;
  std::thread peer([&] {
    {
      RawSocket s(SOCK_STREAM);
      sent = tcp_connect(s, reader.port()) && plan.first(s);
    }
    RawSocket s(SOCK_STREAM);
    sent = sent && tcp_connect(s, reader.port()) && plan.second(s);
  });
  const std::vector<sample_t> got = read_samples(reader, plan.count);
  peer.join();
  REQUIRE(sent);
  CHECK(same_samples(got, plan.samples));
  const ReaderCounters c = reader.counters();
  CHECK(c.samples == plan.count);
  CHECK(c.reconnects == 1);
  CHECK(c.malformed == 1);  // the 5 bytes of sample 150 on the first connection
  CHECK(c.bytes == plan.bytes_sent());
}

TEST_CASE("tcp listen: a peer that resets its connection counts a broken connection, and the next carries on",
          "[tcp]") {
  const Plan plan;
  TcpReaderOptions options;
  options.channels = plan.channels;
  TcpSampleReader reader(options);

  bool sent = true;
  std::thread peer([&] {
    {
      RawSocket s(SOCK_STREAM);
      sent = tcp_connect(s, reader.port()) && send_pieces(s, plan.bytes, 0, plan.split * plan.sample_size, {7, 61});
      // Once the reader has every sample sent, a close with a zero linger time resets the connection.
      for (int wait_ms = 0; sent && reader.counters().samples < plan.split && wait_ms < 20000; ++wait_ms)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      sent = sent && reader.counters().samples == plan.split;  // else the reader stalled
      const linger reset{1, 0};
      sent = sent && ::setsockopt(s.fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset) == 0;
    }
    RawSocket s(SOCK_STREAM);
    sent = sent && tcp_connect(s, reader.port()) && plan.second(s);
  });
  const std::vector<sample_t> got = read_samples(reader, plan.count);
  peer.join();
  REQUIRE(sent);
  CHECK(same_samples(got, plan.samples));
  const ReaderCounters c = reader.counters();
  CHECK(c.broken_connections == 1);
  CHECK(c.reconnects == 1);
  CHECK(c.malformed == 0);
}

TEST_CASE("tcp connect: the reader reconnects after the server drops it mid-sample", "[tcp]") {
  const Plan plan;
  std::uint16_t port = 0;
  const RawSocket server = tcp_listener(port);

  TcpReaderOptions options;
  options.mode = TcpMode::connect;
  options.port = port;
  options.channels = plan.channels;
  TcpSampleReader reader(options);

  bool sent = true;
  std::thread peer([&] {
    for (int connection = 0; connection < 2; ++connection) {
      const RawSocket accepted = RawSocket::accept_from(server);
      sent = sent && accepted.fd() >= 0 && (connection == 0 ? plan.first(accepted) : plan.second(accepted));
    }
  });
  const std::vector<sample_t> got = read_samples(reader, plan.count);
  peer.join();
  REQUIRE(sent);
  CHECK(same_samples(got, plan.samples));
  CHECK(reader.counters().reconnects == 1);
  CHECK(reader.counters().malformed == 1);
}

TEST_CASE("tcp: the writer's stream reads back bit-exactly and its close ends a reader that does not reconnect",
          "[tcp]") {
  const SampleFormat format = GENERATE(SampleFormat::cf32_le, SampleFormat::ci16_le);
  const std::size_t channels = 3, count = 20000;  // more than one writer buffer
  const auto samples = random_samples(count, channels, format, 43);
  TcpReaderOptions options;
  options.format = format;
  options.channels = channels;
  options.reconnect = false;
  TcpSampleReader reader(options);

  std::thread writer_thread([&] {
    TcpSampleWriter writer({"127.0.0.1", reader.port(), format, channels});
    std::size_t done = 0;
    for (std::size_t step = 1; done < count; step = step * 3 % 4099 + 1) {
      const std::size_t n = std::min(step, count - done);
      writer.write(samples.data() + done * channels, n);
      done += n;
    }
  });
  std::vector<sample_t> got, buffer(1000 * channels);
  for (;;) {
    const ReadResult r = reader.read(buffer.data(), 1000);
    if (r.end) break;
    got.insert(got.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(r.samples * channels));
  }
  writer_thread.join();
  CHECK(same_samples(got, samples));
  CHECK(reader.counters().reconnects == 0);
  CHECK(reader.counters().malformed == 0);
}

TEST_CASE("tcp: cancel() ends a read that waits for a peer; a refused writer is a clear error", "[tcp]") {
  TcpSampleReader reader(TcpReaderOptions{});
  sample_t buffer[2];
  std::thread canceller([&] { reader.cancel(); });
  const ReadResult r = reader.read(buffer, 2);
  canceller.join();
  CHECK(r.end);

  std::uint16_t closed_port;
  {
    TcpSampleReader gone(TcpReaderOptions{});  // a port that was just listening and is closed now
    closed_port = gone.port();
  }
  TcpWriterOptions options;
  options.port = closed_port;
  options.connect_timeout_ms = 0;
  require_error([&] { TcpSampleWriter{options}; }, eigstream::ErrorCode::io,
                {"tcp 127.0.0.1:" + std::to_string(closed_port), "cannot connect", "refused"});
}

TEST_CASE("tcp connect: a reader that never reaches its peer fails with an error naming it", "[tcp]") {
  std::uint16_t closed_port;
  {
    TcpSampleReader gone(TcpReaderOptions{});  // a port that was just listening and is closed now
    closed_port = gone.port();
  }
  TcpReaderOptions options;
  options.mode = TcpMode::connect;
  options.port = closed_port;
  options.idle_timeout_ms = 100;
  TcpSampleReader reader(options);
  std::vector<sample_t> out(16);
  require_error([&] { reader.read(out.data(), 16); }, eigstream::ErrorCode::io,
                {"tcp 127.0.0.1:" + std::to_string(closed_port), "cannot connect", "refused", "tried for 100 ms"});
}

TEST_CASE("tcp: a writer whose peer has gone fails with an error naming the peer", "[tcp]") {
  std::uint16_t port = 0;
  const RawSocket server = tcp_listener(port);

  TcpSampleWriter writer({"127.0.0.1", port, SampleFormat::cf32_le, 1});
  { const RawSocket accepted = RawSocket::accept_from(server); }  // accepted, then closed at once
  const std::vector<sample_t> samples(1000, sample_t(1, 2));
  // The first sends may still be taken by the kernel; one soon fails (reset or broken pipe).
  require_error(
      [&] {
        for (int i = 0; i < 10000; ++i) {
          writer.write(samples.data(), samples.size());
          writer.flush();
        }
      },
      eigstream::ErrorCode::io, {"tcp 127.0.0.1:" + std::to_string(port), "write failed"});
}
