// Encoding and decoding of samples in the on-disk / on-the-wire formats of SampleFormat:
// cf32_le (float32 I, Q) and ci16_le (int16 I, Q, scaled by 1/32768). Values are interleaved
// I, Q per channel, channels interleaved per sample.
#pragma once

#include <cstddef>
#include <string>

#include "eigstream/streaming/sample_io.hpp"

namespace eigstream::streaming {

// "cf32_le" or "ci16_le": the SigMF core:datatype names.
const char* to_string(SampleFormat format) noexcept;

// The format named by a SigMF core:datatype string, or false for any other name.
bool parse_sample_format(const std::string& name, SampleFormat& format) noexcept;

// Bytes of one complex value (8 for cf32_le, 4 for ci16_le).
std::size_t value_bytes(SampleFormat format) noexcept;

// The most channels a reader or writer takes.
inline constexpr std::size_t max_channels = 65536;

// Bytes of one sample of `channels` channels; Error(invalid_argument) unless 1 <= channels <= max_channels.
std::size_t sample_bytes(SampleFormat format, std::size_t channels);

// Decodes `values` complex values from `bytes` (value_bytes(format) each) into out.
void decode_values(const unsigned char* bytes, std::size_t values, SampleFormat format, sample_t* out) noexcept;

// Encodes `count` complex values into `bytes`. ci16_le rounds value * 32768 to nearest (ties to
// even) and saturates to [-32768, 32767]; NaN becomes 0.
void encode_values(const sample_t* values, std::size_t count, SampleFormat format, unsigned char* bytes) noexcept;

}  // namespace eigstream::streaming
