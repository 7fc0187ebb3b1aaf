// EncodeBuffer: samples encoded into a fixed byte buffer (allocated once) that is handed to a
// send function each time it fills and on flush. Shared by the file, TCP and UDP writers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "eigstream/streaming/sample_format.hpp"

namespace eigstream::streaming {

class EncodeBuffer {
 public:
  EncodeBuffer(SampleFormat format, std::size_t channels, std::size_t capacity_samples)
      : format_(format),
        channels_(channels),
        sample_bytes_(sample_bytes(format, channels)),
        capacity_samples_(capacity_samples),
        bytes_(capacity_samples * sample_bytes_) {}

  std::size_t channels() const noexcept { return channels_; }
  std::size_t buffered_samples() const noexcept { return used_samples_; }

  // send(const unsigned char* bytes, std::size_t size) gets whole samples only.
  template <class Send>
  void write(const sample_t* samples, std::size_t count, Send&& send) {
    while (count > 0) {
      const std::size_t n = std::min(count, capacity_samples_ - used_samples_);
      encode_values(samples, n * channels_, format_, bytes_.data() + used_samples_ * sample_bytes_);
      used_samples_ += n;
      samples += n * channels_;
      count -= n;
      if (used_samples_ == capacity_samples_) flush(send);
    }
  }

  template <class Send>
  void flush(Send&& send) {
    if (used_samples_ == 0) return;
    const std::size_t size = used_samples_ * sample_bytes_;
    used_samples_ = 0;  // dropped even if send throws: a failed write is not retried
    send(bytes_.data(), size);
  }

 private:
  SampleFormat format_;
  std::size_t channels_;
  std::size_t sample_bytes_;
  std::size_t capacity_samples_;
  std::vector<unsigned char> bytes_;
  std::size_t used_samples_ = 0;
};

}  // namespace eigstream::streaming
