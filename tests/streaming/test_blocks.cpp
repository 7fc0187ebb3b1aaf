// Block forming by ReaderSource: blocks depend only on the samples and the gaps, never on how the
// reader chunks its reads; checked against the block list computed directly from the stream.
#include <catch2/catch.hpp>

#include "ramp_signal.hpp"

#include "eigstream/error.hpp"
#include "eigstream/streaming/streaming.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <vector>

namespace es = eigstream::streaming;

namespace {

// A reader that reports gaps: before stream sample gaps[i].first it says gaps[i].second samples
// were lost (those are skipped in the underlying signal). It never returns samples across a gap.
class GapReader : public es::SampleReader {
 public:
  GapReader(std::unique_ptr<es::SampleReader> inner, std::map<std::uint64_t, std::uint64_t> gaps)
      : inner_(std::move(inner)), gaps_(std::move(gaps)) {}
  std::size_t channels() const override { return inner_->channels(); }
  double sample_rate() const override { return 0; }
  es::ReadResult read(es::sample_t* out, std::size_t max_samples) override {
    std::uint64_t lost = 0;
    auto gap = gaps_.find(position_);
    if (gap != gaps_.end()) {
      lost = gap->second;
      std::vector<es::sample_t> skipped(lost * channels());
      for (std::uint64_t got = 0; got < lost;) got += inner_->read(skipped.data(), lost - got).samples;
      position_ += lost;
    }
    auto next = gaps_.upper_bound(position_);
    if (next != gaps_.end()) max_samples = std::min<std::size_t>(max_samples, next->first - position_);
    es::ReadResult result = inner_->read(out, max_samples);
    result.lost_before = lost;
    position_ += result.samples;
    return result;
  }
  void cancel() override { inner_->cancel(); }
  es::ReaderCounters counters() const override { return inner_->counters(); }

 private:
  std::unique_ptr<es::SampleReader> inner_;
  std::map<std::uint64_t, std::uint64_t> gaps_;  // position in the underlying signal -> lost
  std::uint64_t position_ = 0;
};

struct SeenBlock {
  std::uint64_t sequence, first_sample, lost_before;
  std::size_t samples;
  std::uint32_t flags;
  std::vector<es::sample_t> data;
  bool operator==(const SeenBlock& o) const {
    return sequence == o.sequence && first_sample == o.first_sample && lost_before == o.lost_before &&
           samples == o.samples && flags == o.flags && data == o.data;
  }
};

std::vector<SeenBlock> run_source(std::unique_ptr<es::SampleReader> reader, std::size_t block_samples) {
  std::vector<SeenBlock> seen;
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>("source", std::move(reader), es::ReaderSourceOptions{block_samples});
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block& b) {
    seen.push_back({b.stamp.sequence, b.first_sample, b.lost_before, b.samples, b.stamp.flags,
                    std::vector<es::sample_t>(b.data(), b.data() + b.samples * b.channels())});
  });
  pipeline.connect(source, sink, {4, es::FullPolicy::block});
  pipeline.start();
  pipeline.wait();
  return seen;
}

}  // namespace

TEST_CASE("source: random chunk sizes give exactly the blocks one read of everything gives", "[streaming]") {
  const std::size_t channels = 3, count = 10007, block_samples = 256;
  const std::vector<es::sample_t> signal = ramp_signal(count, channels);
  const std::vector<SeenBlock> whole =
      run_source(std::make_unique<es::MemoryReader>(signal.data(), count, channels), block_samples);

  // Oracle: 39 full blocks then one of 10007 - 39 * 256 = 23 samples, flagged partial.
  REQUIRE(whole.size() == 40);
  for (std::size_t b = 0; b < whole.size(); ++b) {
    CHECK(whole[b].sequence == b);
    CHECK(whole[b].first_sample == b * block_samples);
    CHECK(whole[b].lost_before == 0);
    CHECK(whole[b].samples == (b < 39 ? block_samples : 23));
    CHECK(whole[b].flags == ((b < 39 ? 0u : es::block_partial) | es::block_finite_checked));
    bool values_right = true;
    for (std::size_t s = 0; s < whole[b].samples; ++s)
      for (std::size_t c = 0; c < channels; ++c)
        values_right &= whole[b].data[s * channels + c] == ramp_value(whole[b].first_sample + s, c);
    CHECK(values_right);
  }

  for (const std::size_t max_chunk : {1, 7, 255, 256, 257, 1000}) {
    es::MemoryReaderOptions options;
    options.max_chunk = max_chunk;
    options.chunk_seed = 1000 + max_chunk;
    const std::vector<SeenBlock> chunked =
        run_source(std::make_unique<es::MemoryReader>(signal.data(), count, channels, options), block_samples);
    INFO("max_chunk " << max_chunk);
    CHECK(chunked == whole);
  }
}

TEST_CASE("source: a gap ends the block, and the next block records it", "[streaming]") {
  const std::size_t channels = 2, count = 1000, block_samples = 100;
  const std::vector<es::sample_t> signal = ramp_signal(count, channels);
  // 5 samples lost before the first, 30 at stream index 250, 20 at 400.
  const std::map<std::uint64_t, std::uint64_t> gaps = {{0, 5}, {250, 30}, {400, 20}};

  // Expected blocks: samples [5, 250), [280, 400) and [420, 1000) arrive, in blocks of 100 that
  // restart after each gap.
  struct Expected {
    std::uint64_t first_sample, lost_before;
    std::size_t samples;
    std::uint32_t flags;
  };
  const std::vector<Expected> expected = {
      {5, 5, 100, es::block_gap},   {105, 0, 100, 0},
      {205, 0, 45, es::block_partial},  // the gap at 250 ends it
      {280, 30, 100, es::block_gap}, {380, 0, 20, es::block_partial},
      {420, 20, 100, es::block_gap}, {520, 0, 100, 0}, {620, 0, 100, 0}, {720, 0, 100, 0}, {820, 0, 100, 0},
      {920, 0, 80, es::block_partial},
  };
  for (const std::size_t max_chunk : {0, 1, 13, 99, 100, 333}) {
    es::MemoryReaderOptions options;
    options.max_chunk = max_chunk;
    auto reader = std::make_unique<GapReader>(
        std::make_unique<es::MemoryReader>(signal.data(), count, channels, options), gaps);
    const std::vector<SeenBlock> seen = run_source(std::move(reader), block_samples);
    INFO("max_chunk " << max_chunk);
    REQUIRE(seen.size() == expected.size());
    for (std::size_t b = 0; b < seen.size(); ++b) {
      INFO("block " << b);
      CHECK(seen[b].sequence == b);
      CHECK(seen[b].first_sample == expected[b].first_sample);
      CHECK(seen[b].lost_before == expected[b].lost_before);
      CHECK(seen[b].samples == expected[b].samples);
      CHECK(seen[b].flags == (expected[b].flags | es::block_finite_checked));
      bool values_right = true;
      for (std::size_t s = 0; s < seen[b].samples; ++s)
        for (std::size_t c = 0; c < channels; ++c)
          values_right &= seen[b].data[s * channels + c] == ramp_value(seen[b].first_sample + s, c);
      CHECK(values_right);
    }
  }
}


// The source checks each chunk as it reads it: a NaN or infinity marks exactly the block it lands in,
// also when a gap moves the chunk holding it into the next block; block_is_finite trusts the mark,
// and reads the samples of a block no source checked.
TEST_CASE("source: blocks holding a NaN or infinity are marked, whatever the chunks and gaps", "[streaming]") {
  const std::size_t channels = 2, count = 1000, block_samples = 100;
  std::vector<es::sample_t> signal = ramp_signal(count, channels);
  signal[140 * channels + 1] = {std::numeric_limits<float>::quiet_NaN(), 0};  // block [105, 205)
  signal[300 * channels] = {0, -std::numeric_limits<float>::infinity()};     // block [280, 380), after a gap
  const std::map<std::uint64_t, std::uint64_t> gaps = {{0, 5}, {250, 30}, {400, 20}};
  for (const std::size_t max_chunk : {0, 1, 13, 99, 100, 333}) {
    es::MemoryReaderOptions options;
    options.max_chunk = max_chunk;
    auto reader = std::make_unique<GapReader>(
        std::make_unique<es::MemoryReader>(signal.data(), count, channels, options), gaps);
    const std::vector<SeenBlock> seen = run_source(std::move(reader), block_samples);
    INFO("max_chunk " << max_chunk);
    REQUIRE(seen.size() == 11);
    for (std::size_t b = 0; b < seen.size(); ++b) {
      INFO("block " << b << " from sample " << seen[b].first_sample);
      CHECK((seen[b].flags & es::block_finite_checked) != 0);
      CHECK(((seen[b].flags & es::block_non_finite) != 0) == (b == 1 || b == 3));
    }
  }
  es::Block unchecked(channels, 4);
  unchecked.samples = 4;
  std::fill_n(unchecked.data(), 8, es::sample_t(1, 1));
  CHECK(es::block_is_finite(unchecked));
  unchecked.data()[5] = {std::numeric_limits<float>::infinity(), 0};
  CHECK_FALSE(es::block_is_finite(unchecked));
  unchecked.stamp.flags = es::block_finite_checked;  // a source's word is taken
  CHECK(es::block_is_finite(unchecked));
}
TEST_CASE("source: bad settings are clear errors at start", "[streaming]") {
  const std::vector<es::sample_t> signal = ramp_signal(10, 2);
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>("radio", std::make_unique<es::MemoryReader>(signal.data(), 10, 2),
                                                es::ReaderSourceOptions{0});
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [](const es::Block&) {});
  pipeline.connect(source, sink);
  CHECK_THROWS_WITH(pipeline.start(), Catch::Contains("source 'radio'") && Catch::Contains("samples_per_block is 0"));
}
