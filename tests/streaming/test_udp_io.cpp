// UDP samples over real loopback sockets: hand-built datagrams with sequence gaps, duplicates, late
// and malformed datagrams (each counted exactly, the rest delivered bit-exactly), the writer's
// datagrams, a sender restart, cancellation and option checks. Datagrams are all sent before the
// reader reads them (the socket buffer holds them), so nothing depends on timing.
#include <thread>

#include "eigstream/streaming/sample_format.hpp"
#include "eigstream/streaming/udp_io.hpp"
#include "socket_fixtures.hpp"

using namespace eigstream::streaming;
using namespace sample_io_test;

namespace {

constexpr std::size_t per_datagram = 5;

// Datagram with sequence number seq carrying samples [first, first + count) of `samples`.
Bytes datagram(std::uint64_t seq, const std::vector<sample_t>& samples, std::size_t channels, std::size_t first,
               std::size_t count) {
  Bytes d;
  append_le(d, seq, 8);
  const std::vector<sample_t> part(samples.begin() + static_cast<std::ptrdiff_t>(first * channels),
                                   samples.begin() + static_cast<std::ptrdiff_t>((first + count) * channels));
  const Bytes payload = expected_bytes(part, SampleFormat::cf32_le);
  d.insert(d.end(), payload.begin(), payload.end());
  return d;
}

struct Delivery {
  std::vector<sample_t> samples;
  std::vector<std::pair<std::size_t, std::uint64_t>> gaps;  // (samples delivered before the gap, lost)
};

Delivery read_until_end(SampleReader& reader, std::size_t chunk) {
  Delivery d;
  std::vector<sample_t> buffer(chunk * reader.channels());
  for (;;) {
    const ReadResult r = reader.read(buffer.data(), chunk);
    if (r.lost_before > 0) d.gaps.emplace_back(d.samples.size() / reader.channels(), r.lost_before);
    if (r.end) {
      REQUIRE(r.samples == 0);
      return d;
    }
    REQUIRE(r.samples > 0);
    d.samples.insert(d.samples.end(), buffer.begin(),
                     buffer.begin() + static_cast<std::ptrdiff_t>(r.samples * reader.channels()));
  }
}

}  // namespace

TEST_CASE("udp: gaps, duplicates, late and malformed datagrams are counted exactly; the rest is bit-exact", "[udp]") {
  const std::size_t channels = 2;
  const auto samples = random_samples(9 * per_datagram, channels, SampleFormat::cf32_le, 31);
  UdpReaderOptions options;
  options.channels = channels;
  options.seqnum_header = true;
  options.max_datagram_bytes = 1024;
  UdpSampleReader reader(options);
  REQUIRE(reader.port() != 0);

  // Sequence number s carries samples [5 (s - 1), 5 s), as gr-network's udp_sink numbers from 1.
  auto numbered = [&](std::uint64_t s) { return datagram(s, samples, channels, per_datagram * (s - 1), per_datagram); };
  const Bytes not_whole = [&] {
    Bytes d = numbered(5);
    d.push_back(0);
    return d;
  }();
  const std::vector<Bytes> sent = {
      numbered(1),
      numbered(2),
      numbered(5),         // 3 and 4 missing: 10 samples lost
      not_whole,           // malformed: 81 payload bytes
      Bytes{1, 2, 3, 4},   // malformed: shorter than the header
      Bytes(8, 0),         // malformed: a header and no sample
      Bytes(8 + 1024, 0),  // malformed: longer than max_datagram_bytes
      numbered(6),
      numbered(6),  // a duplicate
      numbered(4),  // late: its samples were already counted lost
      numbered(7),
      datagram(9, samples, channels, 40, 3),  // 8 missing: lost as many as this one holds (3)
      Bytes{},                                // end of stream
  };
  RawSocket sender(SOCK_DGRAM);
  std::uint64_t sent_bytes = 0;
  for (const Bytes& d : sent) {
    send_datagram(sender, reader.port(), d);
    sent_bytes += d.size();
  }

  const Delivery got = read_until_end(reader, 4);  // smaller than a datagram: samples wait for the next read
  std::vector<sample_t> expected;
  for (std::size_t s : {0, 1, 4, 5, 6}) {
    expected.insert(expected.end(), samples.begin() + static_cast<std::ptrdiff_t>(s * per_datagram * channels),
                    samples.begin() + static_cast<std::ptrdiff_t>((s + 1) * per_datagram * channels));
  }
  expected.insert(expected.end(), samples.begin() + 40 * channels, samples.begin() + 43 * channels);
  CHECK(same_samples(got.samples, expected));
  using Gap = std::pair<std::size_t, std::uint64_t>;
  CHECK(got.gaps == std::vector<Gap>{{10, 10}, {25, 3}});
  const ReaderCounters c = reader.counters();
  CHECK(c.samples == 28);
  CHECK(c.lost_samples == 13);
  CHECK(c.malformed == 4);
  CHECK(c.bytes == sent_bytes);
  CHECK(c.late == 2);
  CHECK(c.resyncs == 0);
}

TEST_CASE("udp: a sender that restarts its numbering is followed without a loss", "[udp]") {
  const auto samples = random_samples(4 * per_datagram, 1, SampleFormat::cf32_le, 33);
  UdpReaderOptions options;
  options.seqnum_header = true;
  UdpSampleReader reader(options);
  RawSocket sender(SOCK_DGRAM);
  for (const Bytes& d : {datagram(1000, samples, 1, 0, 5), datagram(1001, samples, 1, 5, 5),
                         datagram(1, samples, 1, 10, 5), datagram(2, samples, 1, 15, 5), Bytes{}}) {
    send_datagram(sender, reader.port(), d);
  }
  const Delivery got = read_until_end(reader, 100);
  CHECK(same_samples(got.samples, samples));
  CHECK(got.gaps.empty());
  CHECK(reader.counters().resyncs == 1);
  CHECK(reader.counters().lost_samples == 0);
}

TEST_CASE("udp: a number far ahead is a resync, not a loss", "[udp]") {
  // A corrupt or restarted number far ahead would otherwise stand for that many lost datagrams,
  // each a block of zeros downstream; 2^64 - 1 would overflow the sample count.
  const auto samples = random_samples(5 * per_datagram, 1, SampleFormat::cf32_le, 34);
  UdpReaderOptions options;
  options.seqnum_header = true;
  options.max_gap_datagrams = 100;
  UdpSampleReader reader(options);
  RawSocket sender(SOCK_DGRAM);
  for (const Bytes& d : {datagram(1, samples, 1, 0, 5), datagram(102, samples, 1, 5, 5),  // 100 missing: a gap
                         datagram(204, samples, 1, 10, 5),                                // 101 ahead: a resync
                         datagram(~std::uint64_t{0}, samples, 1, 15, 5), datagram(0, samples, 1, 20, 5), Bytes{}}) {
    send_datagram(sender, reader.port(), d);
  }
  const Delivery got = read_until_end(reader, 100);
  CHECK(same_samples(got.samples, samples));
  using Gap = std::pair<std::size_t, std::uint64_t>;
  CHECK(got.gaps == std::vector<Gap>{{5, 500}});
  CHECK(reader.counters().lost_samples == 500);
  CHECK(reader.counters().resyncs == 2);  // to 204, and to 2^64 - 1; 0 then follows it (the number wraps)
}

TEST_CASE("udp: the reader refuses a gap bound it cannot count in", "[udp]") {
  UdpReaderOptions options;
  options.seqnum_header = true;
  options.max_gap_datagrams = (std::uint64_t{1} << 32) + 1;
  CHECK_THROWS_WITH(UdpSampleReader(options), Catch::Contains("max_gap_datagrams"));
}

TEST_CASE("udp: the writer's datagrams read back bit-exactly, with or without sequence numbers", "[udp]") {
  const SampleFormat format = GENERATE(SampleFormat::cf32_le, SampleFormat::ci16_le);
  const bool seqnum = GENERATE(false, true);
  const std::size_t channels = 3, count = 50;
  const auto samples = random_samples(count, channels, format, 35);
  UdpReaderOptions in;
  in.format = format;
  in.channels = channels;
  in.seqnum_header = seqnum;
  UdpSampleReader reader(in);

  UdpWriterOptions out;
  out.port = reader.port();
  out.format = format;
  out.channels = channels;
  out.samples_per_datagram = 7;
  out.seqnum_header = seqnum;
  UdpSampleWriter writer(out);
  std::size_t done = 0;
  for (std::size_t step : {3, 11, 20, 16}) {
    writer.write(samples.data() + done * channels, step);
    done += step;
  }
  writer.send_end();
  CHECK(writer.datagrams_sent() == 8);  // 7 full and one of 1

  const Delivery got = read_until_end(reader, 64);
  CHECK(same_samples(got.samples, samples));
  CHECK(got.gaps.empty());
  CHECK(reader.counters().malformed == 0);
  CHECK(reader.counters().bytes == count * sample_bytes(format, channels) + (seqnum ? 8 * 8 : 0));
}

TEST_CASE("udp: cancel() ends a read that waits for datagrams; an idle timeout ends the stream", "[udp]") {
  UdpSampleReader reader(UdpReaderOptions{});
  sample_t buffer[4];
  std::thread canceller([&] { reader.cancel(); });
  const ReadResult r = reader.read(buffer, 4);
  canceller.join();
  CHECK(r.end);
  CHECK(r.samples == 0);

  UdpReaderOptions idle;
  idle.idle_timeout_ms = 20;
  UdpSampleReader quiet(idle);
  CHECK(quiet.read(buffer, 4).end);
}

TEST_CASE("udp: bad options are clear errors", "[udp]") {
  UdpReaderOptions big;
  big.max_datagram_bytes = 70000;
  require_error([&] { UdpSampleReader{big}; }, eigstream::ErrorCode::invalid_argument,
                {"max_datagram_bytes", "65507", "70000"});
  UdpReaderOptions small;
  small.seqnum_header = true;
  small.channels = 4;
  small.max_datagram_bytes = 39;
  require_error([&] { UdpSampleReader{small}; }, eigstream::ErrorCode::invalid_argument, {"between 40"});

  UdpWriterOptions writer;
  writer.port = 9;
  writer.samples_per_datagram = 1000;
  writer.max_datagram_bytes = 1472;
  require_error([&] { UdpSampleWriter{writer}; }, eigstream::ErrorCode::invalid_argument, {"1000 samples", "1472"});
  writer.samples_per_datagram = 0;  // as many as fit in 1472 bytes: 184 cf32 samples
  CHECK(UdpSampleWriter(writer).samples_per_datagram() == 184);
  writer.port = 0;
  require_error([&] { UdpSampleWriter{writer}; }, eigstream::ErrorCode::invalid_argument, {"port"});
}
