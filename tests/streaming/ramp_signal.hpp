// The test signal of the streaming tests: sample s of channel c is (s, c + 0.5), exact in float for
// s < 2^24, so every sample says where in the stream it came from.
#pragma once

#include "eigstream/streaming/sample_io.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

inline eigstream::streaming::sample_t ramp_value(std::uint64_t sample, std::size_t channel) {
  return {static_cast<float>(sample), static_cast<float>(channel) + 0.5f};
}

inline std::vector<eigstream::streaming::sample_t> ramp_signal(std::size_t samples, std::size_t channels) {
  std::vector<eigstream::streaming::sample_t> values(samples * channels);
  for (std::size_t s = 0; s < samples; ++s)
    for (std::size_t c = 0; c < channels; ++c) values[s * channels + c] = ramp_value(s, c);
  return values;
}
