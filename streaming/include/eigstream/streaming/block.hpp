// Block: the item sources emit, a run of consecutive samples of all channels, channels interleaved
// per sample (value of channel c at sample s is data()[s * channels() + c]). Its storage is allocated
// once, when the pool is made; `samples` says how much of it holds data.
#pragma once

#include "eigstream/streaming/host_memory.hpp"
#include "eigstream/streaming/sample_io.hpp"
#include "eigstream/streaming/stamp.hpp"

#include <cstddef>
#include <cstdint>

namespace eigstream::streaming {

// Bits of Block::stamp.flags.
enum BlockFlag : std::uint32_t {
  block_gap = 1u << 0,      // samples were lost just before this block (lost_before > 0)
  block_partial = 1u << 1,  // fewer samples than the block size: the input ended, or a gap followed
  // ReaderSource checks every sample for NaN and infinity as it reads it (while it is in cache) and
  // says so, so that stages need not read the block again to check it. A stage that changes the
  // samples of a block it passes on clears both bits.
  block_finite_checked = 1u << 2,  // every sample was checked: finite unless block_non_finite
  block_non_finite = 1u << 3,      // (with block_finite_checked) a sample is NaN or infinite
};


class Block {
 public:
  Block(std::size_t channels, std::size_t capacity);

  std::size_t channels() const noexcept { return channels_; }
  std::size_t capacity() const noexcept { return capacity_; }  // samples the storage holds
  sample_t* data() noexcept { return data_; }
  const sample_t* data() const noexcept { return data_; }
  bool pinned() const noexcept { return storage_.pinned(); }
  std::size_t bytes() const noexcept { return samples * channels_ * sizeof(sample_t); }

  Stamp stamp;
  std::size_t samples = 0;         // samples held (capacity() except in a partial block)
  std::uint64_t first_sample = 0;  // index in the stream of the first sample (lost samples count)
  std::uint64_t lost_before = 0;   // samples known lost between the previous block and this one

 private:
  std::size_t channels_;
  std::size_t capacity_;
  HostBuffer storage_;
  sample_t* data_;
};

// Whether every sample of the block is finite: from the source's check when it made one, else by
// reading the samples (eigstream::find_non_finite).
bool block_is_finite(const Block& block);

}  // namespace eigstream::streaming
