// MemoryReader: a SampleReader over samples in the caller's memory (which must outlive it), for
// tests, benchmarks and replaying a recording already loaded. It can return random chunk sizes (to
// check that what reads it does not depend on them) and loop over the samples forever.
#pragma once

#include "eigstream/streaming/sample_io.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>

namespace eigstream::streaming {

struct MemoryReaderOptions {
  double sample_rate = 0;          // what sample_rate() reports
  std::size_t max_chunk = 0;       // > 0: each read returns between 1 and max_chunk samples (random)
  std::uint64_t chunk_seed = 1;    // seed of those random sizes
  bool loop = false;               // start again at the first sample after the last, forever
};

class MemoryReader : public SampleReader {
 public:
  // samples: count samples of `channels` interleaved values each.
  MemoryReader(const sample_t* samples, std::size_t count, std::size_t channels, MemoryReaderOptions options = {});

  std::size_t channels() const override { return channels_; }
  double sample_rate() const override { return options_.sample_rate; }
  ReadResult read(sample_t* out, std::size_t max_samples) override;
  void cancel() override { cancelled_.store(true, std::memory_order_release); }
  ReaderCounters counters() const override;

 private:
  const sample_t* samples_;
  std::size_t count_;
  std::size_t channels_;
  MemoryReaderOptions options_;
  std::mt19937_64 chunk_random_;
  std::size_t position_ = 0;
  std::atomic<std::uint64_t> delivered_{0};
  std::atomic<bool> cancelled_{false};
};

}  // namespace eigstream::streaming
