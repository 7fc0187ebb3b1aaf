// Pipelines end to end: lossless back-pressure with a slow consumer, exact drop counts under the
// drop policies, draining at the end of the input, stopping while running, errors, statistics
// (busy time included).
#include <catch2/catch.hpp>

#include "ramp_signal.hpp"

#include "eigstream/error.hpp"
#include "eigstream/streaming/streaming.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <sys/stat.h>

namespace es = eigstream::streaming;
using namespace std::chrono_literals;

namespace {

// A one-shot signal between threads.
class Gate {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Emits `total` one-sample blocks whose sample is their number. Before the second it waits at
// `before_rest`; after the last it opens `after_last`.
class NumberSource : public es::Source<es::Block> {
 public:
  NumberSource(std::string name, int total, Gate* before_rest = nullptr, Gate* after_last = nullptr)
      : es::Source<es::Block>(std::move(name)), total_(total), before_rest_(before_rest), after_last_(after_last) {}

 protected:
  void configure(es::StageContext& context) override { pool_ = &context.make_pool<es::Block>(context.items_in_flight(), 1, 1); }
  bool process() override {
    if (next_ == total_) {
      if (after_last_) after_last_->open();
      return false;
    }
    if (next_ == 1 && before_rest_) before_rest_->wait();
    es::Handle<es::Block> block = pool_->acquire();
    block->samples = 1;
    block->data()[0] = {static_cast<float>(next_++), 0};
    emit(std::move(block));
    return true;
  }

 private:
  int total_;
  Gate* before_rest_;
  Gate* after_last_;
  es::Pool<es::Block>* pool_ = nullptr;
  int next_ = 0;
};

int number(const es::Block& block) { return static_cast<int>(block.data()[0].real()); }

}  // namespace

TEST_CASE("pipeline: block policy is lossless with a slow consumer", "[streaming]") {
  const std::size_t channels = 2, count = 4000, block_samples = 50;  // 80 blocks
  const std::vector<es::sample_t> signal = ramp_signal(count, channels);
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(signal.data(), count, channels), es::ReaderSourceOptions{block_samples});
  auto& stage = pipeline.add<es::PassThrough<es::Block>>("stage");
  std::vector<std::uint64_t> first_samples;
  bool values_right = true;
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block& b) {
    std::this_thread::sleep_for(500us);
    first_samples.push_back(b.first_sample);
    for (std::size_t s = 0; s < b.samples; ++s)
      for (std::size_t c = 0; c < channels; ++c) values_right &= b.data()[s * channels + c] == ramp_value(b.first_sample + s, c);
  });
  pipeline.connect(source, stage, {2, es::FullPolicy::block});
  pipeline.connect(stage, sink, {2, es::FullPolicy::block});
  pipeline.start();
  pipeline.wait();
  REQUIRE(first_samples.size() == count / block_samples);
  for (std::size_t b = 0; b < first_samples.size(); ++b) CHECK(first_samples[b] == b * block_samples);
  CHECK(values_right);
  for (const es::StageStats& s : pipeline.stats()) {
    CHECK(s.dropped == 0);
    CHECK(s.items == count / block_samples);
    CHECK(s.queue_high_water <= 2);
    CHECK(s.kernel_seconds == 0);
    CHECK(s.copy_seconds == 0);
  }
  // Busy time: the sink sleeps 80 x 500 us in process(); the source and the pass-through stage spend
  // that time waiting for room downstream, which does not count.
  const std::vector<es::StageStats> stats = pipeline.stats();
  CHECK(stats[2].busy_seconds >= 0.04);
  CHECK(stats[0].busy_seconds < 0.25 * stats[2].busy_seconds);
  CHECK(stats[1].busy_seconds < 0.25 * stats[2].busy_seconds);
}

// With few blocks in its pool and long queues, the source waits for blocks to come back from a slow
// consumer rather than for room in a queue: that wait is not busy time either.
TEST_CASE("pipeline: waiting for a pool item is not busy time", "[streaming]") {
  const std::size_t channels = 2, count = 2000, block_samples = 50;  // 40 blocks
  const std::vector<es::sample_t> signal = ramp_signal(count, channels);
  es::Pipeline pipeline;
  es::ReaderSourceOptions options{block_samples};
  options.pool_blocks = 3;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(signal.data(), count, channels), options);
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block&) { std::this_thread::sleep_for(1ms); });
  pipeline.connect(source, sink, {16, es::FullPolicy::block});
  pipeline.start();
  pipeline.wait();
  const std::vector<es::StageStats> stats = pipeline.stats();
  REQUIRE(stats[1].items == count / block_samples);
  CHECK(stats[1].busy_seconds >= 0.04);
  CHECK(stats[0].busy_seconds < 0.25 * stats[1].busy_seconds);
}

TEST_CASE("pipeline: drop policies drop exactly the items that do not fit", "[streaming]") {
  // The sink holds item 0 until the source has emitted everything, so items 1..total-1 meet a queue
  // of `capacity`: drop_newest keeps 1..capacity, drop_oldest the last `capacity`.
  const int total = 50, capacity = 8;
  const auto policy = GENERATE(es::FullPolicy::drop_newest, es::FullPolicy::drop_oldest);
  Gate sink_holds_first, source_done;
  es::Pipeline pipeline;
  auto& source = pipeline.add<NumberSource>("source", total, &sink_holds_first, &source_done);
  std::vector<int> received;
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block& b) {
    received.push_back(number(b));
    if (number(b) == 0) {
      sink_holds_first.open();
      source_done.wait();
    }
  });
  pipeline.connect(source, sink, {capacity, policy});
  pipeline.start();
  pipeline.wait();
  std::vector<int> expected = {0};
  const int first_kept = policy == es::FullPolicy::drop_newest ? 1 : total - capacity;
  for (int i = 0; i < capacity; ++i) expected.push_back(first_kept + i);
  CHECK(received == expected);
  const std::vector<es::StageStats> stats = pipeline.stats();
  CHECK(stats[0].items == total);
  CHECK(stats[1].items == capacity + 1);
  CHECK(stats[1].dropped == total - 1 - capacity);
  CHECK(stats[1].queue_high_water == capacity);
}

TEST_CASE("pipeline: output queue sink hands items to the program, its own policy counted", "[streaming]") {
  const int total = 40, capacity = 5;
  es::Pipeline pipeline;
  auto& source = pipeline.add<NumberSource>("source", total);
  auto& out = pipeline.add<es::OutputQueueSink<es::Block>>("out", es::EdgeOptions{capacity, es::FullPolicy::drop_oldest});
  pipeline.connect(source, out);
  pipeline.start();
  pipeline.wait();  // nothing popped yet: the queue kept the last `capacity`
  std::vector<int> popped;
  while (es::Handle<es::Block> block = out.pop()) popped.push_back(number(*block));
  std::vector<int> expected;
  for (int i = total - capacity; i < total; ++i) expected.push_back(i);
  CHECK(popped == expected);
  CHECK(pipeline.stats()[1].dropped == total - capacity);
}

TEST_CASE("pipeline: output queue sink with the block policy, popped while running", "[streaming]") {
  const int total = 300;
  es::Pipeline pipeline;
  auto& source = pipeline.add<NumberSource>("source", total);
  auto& stage = pipeline.add<es::PassThrough<es::Block>>("stage");
  auto& out = pipeline.add<es::OutputQueueSink<es::Block>>("out", es::EdgeOptions{3, es::FullPolicy::block});
  pipeline.connect(source, stage, {3});
  pipeline.connect(stage, out, {3});
  pipeline.start();
  int next = 0;
  bool in_order = true;
  while (es::Handle<es::Block> block = out.pop()) in_order &= number(*block) == next++;
  pipeline.wait();
  CHECK(next == total);
  CHECK(in_order);
}

TEST_CASE("pipeline: at the end of the input everything in flight is processed before wait returns", "[streaming]") {
  const int total = 60;
  es::Pipeline pipeline;
  auto& source = pipeline.add<NumberSource>("source", total);
  auto& slow = pipeline.add<es::CallbackSink<es::Block>>("slow", [](const es::Block&) { std::this_thread::sleep_for(1ms); });
  pipeline.connect(source, slow, {32});
  pipeline.start();
  pipeline.wait();  // the source ends almost at once; most blocks are still queued then
  CHECK(pipeline.stats()[1].items == total);
}

TEST_CASE("pipeline: stop while running ends the source and drains what it emitted", "[streaming]") {
  const std::size_t channels = 4, count = 1000;
  const std::vector<es::sample_t> signal = ramp_signal(count, channels);
  es::MemoryReaderOptions endless;
  endless.loop = true;
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(signal.data(), count, channels, endless), es::ReaderSourceOptions{64});
  auto& stage = pipeline.add<es::PassThrough<es::Block>>("stage");
  std::atomic<int> seen{0};
  std::uint64_t expected_first = 0;
  bool contiguous = true;
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block& b) {
    contiguous &= b.first_sample == expected_first;
    expected_first += b.samples;
    std::this_thread::sleep_for(100us);
    seen.fetch_add(1);
  });
  pipeline.connect(source, stage, {2});
  pipeline.connect(stage, sink, {2});
  pipeline.start();
  while (seen.load() < 20) std::this_thread::sleep_for(1ms);
  pipeline.stop();
  const std::vector<es::StageStats> stats = pipeline.stats();
  CHECK(contiguous);
  CHECK(stats[0].items >= 20);
  CHECK(stats[2].items == stats[0].items);  // nothing emitted was left behind
  CHECK(stats[2].dropped == 0);
}

TEST_CASE("pipeline: a stage that throws stops the pipeline, and wait rethrows its error", "[streaming]") {
  const std::size_t channels = 1, count = 100;
  const std::vector<es::sample_t> signal = ramp_signal(count, channels);
  es::MemoryReaderOptions endless;
  endless.loop = true;
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(signal.data(), count, channels, endless), es::ReaderSourceOptions{10});
  auto& stage = pipeline.add<es::PassThrough<es::Block>>("stage");
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [](const es::Block& b) {
    if (b.stamp.sequence == 5) throw eigstream::Error(eigstream::ErrorCode::invalid_input, "block 5 is bad");
  });
  pipeline.connect(source, stage, {4});
  pipeline.connect(stage, sink, {4});
  pipeline.start();
  CHECK_THROWS_WITH(pipeline.wait(), "block 5 is bad");
  const std::vector<es::StageStats> stats = pipeline.stats();
  CHECK(stats[2].items == 5);
  CHECK(stats[2].items + stats[2].dropped == stats[0].items);  // every block accounted for
}

TEST_CASE("pipeline: wiring mistakes are clear errors", "[streaming]") {
  es::Pipeline pipeline;
  auto& source = pipeline.add<NumberSource>("source", 3);
  auto& a = pipeline.add<es::CallbackSink<es::Block>>("a", [](const es::Block&) {});
  auto& b = pipeline.add<es::CallbackSink<es::Block>>("b", [](const es::Block&) {});
  pipeline.connect(source, a);
  CHECK_THROWS_WITH(pipeline.connect(source, b), Catch::Contains("'source' is already connected"));
  CHECK_THROWS_WITH(pipeline.start(), Catch::Contains("stage 'b' has no input connected"));
}

TEST_CASE("pipeline: statistics count every item, and latency grows along the chain", "[streaming]") {
  const std::size_t channels = 64, block_samples = 64, blocks = 300;
  const std::vector<es::sample_t> signal = ramp_signal(block_samples * blocks, channels);
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(signal.data(), block_samples * blocks, channels),
      es::ReaderSourceOptions{block_samples});
  auto& one = pipeline.add<es::PassThrough<es::Block>>("one");
  auto& two = pipeline.add<es::PassThrough<es::Block>>("two");
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [](const es::Block&) { std::this_thread::sleep_for(50us); });
  pipeline.connect(source, one, {8});
  pipeline.connect(one, two, {8});
  pipeline.connect(two, sink, {8});
  pipeline.start();
  pipeline.wait();
  const std::vector<es::StageStats> stats = pipeline.stats();
  REQUIRE(stats.size() == 4);
  for (std::size_t i = 0; i < stats.size(); ++i) {
    INFO(stats[i].name);
    CHECK(stats[i].items == blocks);
    CHECK(stats[i].bytes == blocks * block_samples * channels * sizeof(es::sample_t));
    CHECK(stats[i].dropped == 0);
    CHECK(stats[i].malformed == 0);
    CHECK(stats[i].lost_samples == 0);
    CHECK(stats[i].resyncs == 0);
    CHECK(stats[i].late == 0);
    CHECK(stats[i].broken_connections == 0);
    CHECK(stats[i].items_per_second > 0);
    CHECK(stats[i].bytes_per_second == Approx(stats[i].items_per_second * block_samples * channels * 8));
    CHECK(stats[i].latency_p50_seconds <= stats[i].latency_p99_seconds);
    CHECK(stats[i].latency_p99_seconds < 60);
    CHECK(stats[i].queue_capacity == (i == 0 ? 0 : 8));
    CHECK(stats[i].queue_high_water <= stats[i].queue_capacity);
    if (i > 0) {
      CHECK(stats[i].queue_high_water >= 1);
      CHECK(stats[i].latency_p99_seconds > 0);
      // Each block reaches a later stage later, so its latency quantiles are no smaller.
      CHECK(stats[i].latency_p50_seconds >= stats[i - 1].latency_p50_seconds);
      CHECK(stats[i].latency_p99_seconds >= stats[i - 1].latency_p99_seconds);
    }
  }
}

TEST_CASE("latency histogram: quantiles within 1/16 of the exact order statistics", "[streaming]") {
  std::mt19937_64 random(7);
  std::vector<std::uint64_t> values;
  es::LatencyHistogram histogram;
  for (int i = 0; i < 20000; ++i) {
    // Log-uniform over 1 ns .. 10 s, like latencies.
    const std::uint64_t v = static_cast<std::uint64_t>(std::exp(std::uniform_real_distribution<double>(0, 23)(random)));
    values.push_back(v);
    histogram.record(v);
  }
  std::sort(values.begin(), values.end());
  CHECK(histogram.count() == values.size());
  for (const double q : {0.01, 0.5, 0.9, 0.99, 0.999}) {
    const double exact = static_cast<double>(values[static_cast<std::size_t>(std::ceil(q * values.size())) - 1]);
    INFO("q " << q << " exact " << exact);
    CHECK(std::abs(histogram.quantile(q) - exact) <= exact / 16 + 0.5);
  }
  for (std::uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 1000ull, 123456789ull, ~0ull}) {
    const std::size_t b = es::LatencyHistogram::bucket(v);
    CHECK(es::LatencyHistogram::bucket_low(b) <= v);
    if (v < ~0ull) CHECK(es::LatencyHistogram::bucket(es::LatencyHistogram::bucket_low(b)) == b);
  }
  CHECK(es::LatencyHistogram().quantile(0.99) == 0);
}

TEST_CASE("status line: every stage, drops, losses, and the O marker on overflow", "[streaming]") {
  es::StageStats source, sink;
  source.name = "source";
  source.items_per_second = 12345;
  source.bytes_per_second = 6.4e9;
  sink.name = "sink";
  sink.items = 10;
  sink.queue_capacity = 16;
  sink.queue_high_water = 16;
  sink.dropped = 3;
  sink.latency_p99_seconds = 0.0025;
  const std::string line = es::format_status({source, sink}, true);
  CHECK(line == "source 12.3k/s 6.40GB/s | sink 0.00/s 0.00B/s q<=16/16 p99 2.5ms drop 3 O");
  CHECK(es::format_status({source}, false) == "source 12.3k/s 6.40GB/s");
  source.lost_samples = 11;
  source.resyncs = 2;
  source.late = 3;
  source.broken_connections = 1;
  CHECK(es::format_status({source}, false) == "source 12.3k/s 6.40GB/s lost 11 resync 2 late 3 broken 1");
}

TEST_CASE("writer sink: blocks reach the writer in order, a channel mismatch is a clear error", "[streaming]") {
  class CollectingWriter : public es::SampleWriter {
   public:
    CollectingWriter(std::size_t channels, std::vector<es::sample_t>& out, bool& flushed)
        : channels_(channels), out_(out), flushed_(flushed) {}
    std::size_t channels() const override { return channels_; }
    void write(const es::sample_t* samples, std::size_t count) override {
      out_.insert(out_.end(), samples, samples + count * channels_);
    }
    void flush() override { flushed_ = true; }

   private:
    std::size_t channels_;
    std::vector<es::sample_t>& out_;
    bool& flushed_;
  };
  const std::size_t channels = 3, count = 1001;
  const std::vector<es::sample_t> signal = ramp_signal(count, channels);
  for (const std::size_t writer_channels : {channels, channels + 1}) {
    std::vector<es::sample_t> written;
    bool flushed = false;
    es::Pipeline pipeline;
    auto& source = pipeline.add<es::ReaderSource>(
        "source", std::make_unique<es::MemoryReader>(signal.data(), count, channels), es::ReaderSourceOptions{100});
    auto& sink = pipeline.add<es::WriterSink>("file", std::make_unique<CollectingWriter>(writer_channels, written, flushed));
    pipeline.connect(source, sink);
    pipeline.start();
    if (writer_channels == channels) {
      pipeline.wait();
      CHECK(written == signal);
      CHECK(flushed);
    } else {
      CHECK_THROWS_WITH(pipeline.wait(), Catch::Contains("sink 'file'") && Catch::Contains("block 0 has 3 channels"));
    }
  }
}

namespace {

// Bytes written to the file so far (the status thread flushes each line).
off_t stream_size(std::FILE* stream) {
  struct stat status {};
  fstat(fileno(stream), &status);
  return status.st_size;
}

}  // namespace

TEST_CASE("pipeline: the periodic status line names the stages and marks drops with O", "[streaming]") {
  std::FILE* stream = std::tmpfile();
  REQUIRE(stream);
  {
    const int total = 30, capacity = 4;
    Gate sink_holds_first, source_done;
    es::PipelineOptions options;
    options.status_interval_seconds = 0.02;
    options.status_stream = stream;
    es::Pipeline pipeline(options);
    auto& source = pipeline.add<NumberSource>("radio", total, &sink_holds_first, &source_done);
    auto& sink = pipeline.add<es::CallbackSink<es::Block>>("beams", [&](const es::Block& b) {
      if (number(b) == 0) {
        sink_holds_first.open();
        source_done.wait();
        // The drops are done. Wait until two more lines are out: the second was surely computed
        // after the drops (the first may have been under way).
        for (int grown = 0; grown < 2;) {
          const off_t size = stream_size(stream);
          const auto give_up = std::chrono::steady_clock::now() + 20s;
          while (stream_size(stream) == size && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
          ++grown;
        }
      }
    });
    pipeline.connect(source, sink, {capacity, es::FullPolicy::drop_newest});
    pipeline.start();
    pipeline.wait();
  }
  std::rewind(stream);
  std::vector<std::string> lines;
  char text[1024];
  while (std::fgets(text, sizeof text, stream)) lines.emplace_back(text);
  std::fclose(stream);
  REQUIRE(lines.size() >= 2);
  int marked = 0;
  for (const std::string& line : lines) {
    CHECK(line.find("radio ") == 0);
    CHECK(line.find(" | beams ") != std::string::npos);
    marked += line.find(" drop ") != std::string::npos && line.find(" O\n") != std::string::npos;
  }
  CHECK(marked >= 1);  // the line after the drops
  // The last line, printed long after the drops, counts all 30 - 1 - 4 of them, and none are new.
  CHECK(lines.back().find("drop 25") != std::string::npos);
  CHECK(lines.back().find(" O\n") == std::string::npos);
}

namespace {

// An item that is not a block: the mean power of one block.
struct Power {
  es::Stamp stamp;
  std::uint64_t first_sample = 0;
  double value = 0;
  std::size_t bytes() const { return sizeof value; }
};

// Turns blocks into Power items from a pool of its own; a block holding NaN is malformed and skipped.
class PowerStage : public es::Transform<es::Block, Power> {
 public:
  using es::Transform<es::Block, Power>::Transform;

 protected:
  void configure(es::StageContext& context) override { pool_ = &context.make_pool<Power>(context.items_in_flight()); }
  void process(es::Handle<es::Block> block) override {
    double sum = 0;
    for (std::size_t i = 0; i < block->samples * block->channels(); ++i) sum += std::norm(block->data()[i]);
    if (std::isnan(sum)) {
      count_malformed();
      return;
    }
    es::Handle<Power> power = pool_->acquire();
    power->stamp = block->stamp;
    power->first_sample = block->first_sample;
    power->value = sum / static_cast<double>(block->samples * block->channels());
    emit(std::move(power));
  }

 private:
  es::Pool<Power>* pool_ = nullptr;
};

}  // namespace

TEST_CASE("pipeline: a transform to another item type, skipping malformed blocks", "[streaming]") {
  const std::size_t channels = 3, block_samples = 40, blocks = 25;
  std::vector<es::sample_t> signal = ramp_signal(block_samples * blocks, channels);
  signal[(3 * block_samples + 5) * channels + 1] = {std::nanf(""), 0};  // blocks 3 and 7 are bad
  signal[(7 * block_samples) * channels] = {0, std::nanf("")};
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(signal.data(), block_samples * blocks, channels),
      es::ReaderSourceOptions{block_samples});
  auto& power = pipeline.add<PowerStage>("power");
  auto& out = pipeline.add<es::OutputQueueSink<Power>>("out");
  pipeline.connect(source, power, {4});
  pipeline.connect(power, out, {4});
  pipeline.start();
  std::vector<std::uint64_t> sequences;
  bool values_right = true;
  while (es::Handle<Power> p = out.pop()) {
    sequences.push_back(p->stamp.sequence);
    // Oracle: sum over the block of s^2 + (c + 0.5)^2, in long double.
    long double sum = 0;
    for (std::size_t s = 0; s < block_samples; ++s)
      for (std::size_t c = 0; c < channels; ++c) {
        const long double re = p->first_sample + s, im = c + 0.5L;
        sum += re * re + im * im;
      }
    values_right &= std::abs(p->value - static_cast<double>(sum / (block_samples * channels))) <= 1e-12 * p->value;
  }
  pipeline.wait();
  std::vector<std::uint64_t> expected;
  for (std::uint64_t b = 0; b < blocks; ++b)
    if (b != 3 && b != 7) expected.push_back(b);
  CHECK(sequences == expected);
  CHECK(values_right);
  const std::vector<es::StageStats> stats = pipeline.stats();
  CHECK(stats[1].malformed == 2);
  CHECK(stats[1].items == blocks - 2);
  CHECK(stats[1].bytes == (blocks - 2) * sizeof(double));
  CHECK(stats[2].items == blocks - 2);
}

TEST_CASE("pipeline: stopping while the program does not pop its output queue", "[streaming]") {
  const std::size_t count = 100;
  const std::vector<es::sample_t> signal = ramp_signal(count, 1);
  es::MemoryReaderOptions endless;
  endless.loop = true;
  for (const bool stop_first : {true, false}) {
    es::Pipeline pipeline;
    auto& source = pipeline.add<es::ReaderSource>(
        "source", std::make_unique<es::MemoryReader>(signal.data(), count, 1, endless), es::ReaderSourceOptions{10});
    auto& out = pipeline.add<es::OutputQueueSink<es::Block>>("out", es::EdgeOptions{2, es::FullPolicy::block});
    pipeline.connect(source, out, {2});
    pipeline.start();
    while (pipeline.stats()[0].items < 6) std::this_thread::sleep_for(1ms);  // everything is full now
    if (!stop_first) continue;  // destroying the running pipeline must not hang either
    pipeline.stop();
    int popped = 0;
    while (out.pop()) ++popped;
    const std::vector<es::StageStats> stats = pipeline.stats();
    CHECK(popped == 2);
    CHECK(stats[1].dropped > 0);
    CHECK(stats[1].items == popped + stats[1].dropped);
    CHECK(stats[1].items == stats[0].items);
  }
}

namespace {

// Delays items by one: holds each until the next arrives, and emits the last one in flush().
// Records its lifecycle calls and the threads they ran on.
class DelayByOne : public es::Transform<es::Block, es::Block> {
 public:
  using es::Transform<es::Block, es::Block>::Transform;
  std::vector<std::string> calls;
  std::vector<std::thread::id> threads;

 protected:
  void configure(es::StageContext&) override { note("configure"); }
  void start() override { note("start"); }
  void process(es::Handle<es::Block> block) override {
    if (calls.back() != "process") note("process");
    if (held_) emit(std::move(held_));
    held_ = std::move(block);
  }
  void flush() override {
    note("flush");
    if (held_) emit(std::move(held_));
  }
  void stop() override { note("stop"); }

 private:
  void note(const char* call) {
    calls.push_back(call);
    threads.push_back(std::this_thread::get_id());
  }
  es::Handle<es::Block> held_;
};

}  // namespace

TEST_CASE("stage lifecycle: configure, start, process each item, flush, stop, in order", "[streaming]") {
  const int total = 20;
  es::Pipeline pipeline;
  auto& source = pipeline.add<NumberSource>("source", total);
  auto& delay = pipeline.add<DelayByOne>("delay");
  std::vector<int> received;
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block& b) { received.push_back(number(b)); });
  pipeline.connect(source, delay, {4});
  pipeline.connect(delay, sink, {4});
  pipeline.start();
  pipeline.wait();
  CHECK(delay.calls == std::vector<std::string>{"configure", "start", "process", "flush", "stop"});
  REQUIRE(delay.threads.size() == 5);
  CHECK(delay.threads[0] == std::this_thread::get_id());  // configure: on the caller's thread
  for (std::size_t i = 1; i < 5; ++i) {
    CHECK(delay.threads[i] != std::this_thread::get_id());  // the rest: on the stage's own thread
    CHECK(delay.threads[i] == delay.threads[1]);
  }
  std::vector<int> expected(total);
  for (int i = 0; i < total; ++i) expected[i] = i;
  CHECK(received == expected);  // the item held at the end came out of flush()
}
