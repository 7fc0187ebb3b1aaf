// SampleFormat names and the cf32_le / ci16_le codecs. Both formats are little-endian on disk and
// on the wire; eigstream builds for little-endian hosts only, so values are copied byte for byte.
#include "eigstream/streaming/sample_format.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "eigstream/error.hpp"

namespace eigstream::streaming {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "eigstream sample I/O assumes a little-endian host");

const char* to_string(SampleFormat format) noexcept {
  switch (format) {
    case SampleFormat::cf32_le:
      return "cf32_le";
    case SampleFormat::ci16_le:
      return "ci16_le";
  }
  return "unknown";
}

bool parse_sample_format(const std::string& name, SampleFormat& format) noexcept {
  for (SampleFormat f : {SampleFormat::cf32_le, SampleFormat::ci16_le}) {
    if (name == to_string(f)) {
      format = f;
      return true;
    }
  }
  return false;
}

std::size_t value_bytes(SampleFormat format) noexcept { return format == SampleFormat::cf32_le ? 8 : 4; }

std::size_t sample_bytes(SampleFormat format, std::size_t channels) {
  if (channels == 0 || channels > max_channels) {
    throw Error(ErrorCode::invalid_argument,
                "channels must be between 1 and " + std::to_string(max_channels) + ", not " + std::to_string(channels));
  }
  return channels * value_bytes(format);
}

void decode_values(const unsigned char* bytes, std::size_t values, SampleFormat format, sample_t* out) noexcept {
  if (format == SampleFormat::cf32_le) {
    std::memcpy(static_cast<void*>(out), bytes, values * 8);
    return;
  }
  constexpr float scale = 1.0f / 32768.0f;
  for (std::size_t i = 0; i < values; ++i) {
    std::int16_t iq[2];
    std::memcpy(iq, bytes + 4 * i, 4);
    out[i] = sample_t(iq[0] * scale, iq[1] * scale);
  }
}

namespace {

std::int16_t to_ci16(float x) noexcept {
  if (std::isnan(x)) return 0;
  const float scaled = std::nearbyint(x * 32768.0f);
  if (scaled >= 32767.0f) return 32767;
  if (scaled <= -32768.0f) return -32768;
  return static_cast<std::int16_t>(scaled);
}

}  // namespace

void encode_values(const sample_t* values, std::size_t count, SampleFormat format, unsigned char* bytes) noexcept {
  if (format == SampleFormat::cf32_le) {
    std::memcpy(bytes, static_cast<const void*>(values), count * 8);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const std::int16_t iq[2] = {to_ci16(values[i].real()), to_ci16(values[i].imag())};
    std::memcpy(bytes + 4 * i, iq, 4);
  }
}

}  // namespace eigstream::streaming
