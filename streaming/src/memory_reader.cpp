// MemoryReader: copies samples out of the caller's memory in chunks of the asked (or a random) size.
#include "eigstream/streaming/memory_reader.hpp"

#include "eigstream/error.hpp"

#include <algorithm>
#include <cstring>

namespace eigstream::streaming {

MemoryReader::MemoryReader(const sample_t* samples, std::size_t count, std::size_t channels,
                           MemoryReaderOptions options)
    : samples_(samples), count_(count), channels_(channels), options_(options), chunk_random_(options.chunk_seed) {
  if (channels == 0) throw Error(ErrorCode::invalid_argument, "streaming: a memory reader needs at least one channel");
  if (count > 0 && !samples) throw Error(ErrorCode::invalid_argument, "streaming: a memory reader was given no samples");
}

ReadResult MemoryReader::read(sample_t* out, std::size_t max_samples) {
  ReadResult result;
  if (cancelled_.load(std::memory_order_acquire) || count_ == 0) {
    result.end = true;
    return result;
  }
  if (position_ == count_) {
    if (!options_.loop) {
      result.end = true;
      return result;
    }
    position_ = 0;
  }
  std::size_t n = std::min(max_samples, count_ - position_);
  if (options_.max_chunk > 0) n = std::min<std::size_t>(n, 1 + chunk_random_() % options_.max_chunk);
  std::memcpy(out, samples_ + position_ * channels_, n * channels_ * sizeof(sample_t));
  position_ += n;
  delivered_.store(delivered_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  result.samples = n;
  result.end = !options_.loop && position_ == count_;
  return result;
}

ReaderCounters MemoryReader::counters() const {
  ReaderCounters counters;
  counters.samples = delivered_.load(std::memory_order_relaxed);
  counters.bytes = counters.samples * channels_ * sizeof(sample_t);
  return counters;
}

}  // namespace eigstream::streaming
