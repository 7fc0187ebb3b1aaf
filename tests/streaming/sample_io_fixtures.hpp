// What the sample I/O tests share: a scratch directory, reproducible random samples, the expected
// bytes of cf32_le / ci16_le encodings built value by value (the oracle the codecs are checked
// against), whole-file reads and writes, and a check that an Error's message holds given parts.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "eigstream/error.hpp"
#include "eigstream/streaming/sample_io.hpp"

namespace sample_io_test {

using eigstream::streaming::sample_t;
using eigstream::streaming::SampleFormat;
using Bytes = std::vector<unsigned char>;

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    static std::mt19937_64 names(std::random_device{}());
    path_ = std::filesystem::temp_directory_path() / ("eigstream_sample_io_" + std::to_string(names()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// count samples of `channels` values: random floats, or exact multiples of 1/32768 for ci16_le.
inline std::vector<sample_t> random_samples(std::size_t count, std::size_t channels, SampleFormat format,
                                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> i16(-32768, 32767);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<sample_t> v(count * channels);
  for (sample_t& x : v) {
    x = format == SampleFormat::ci16_le ? sample_t(i16(rng) / 32768.0f, i16(rng) / 32768.0f)
                                        : sample_t(normal(rng), normal(rng));
  }
  return v;
}

inline void append_le(Bytes& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}

// The expected encoding, built one little-endian field at a time.
inline Bytes expected_bytes(const std::vector<sample_t>& values, SampleFormat format) {
  Bytes out;
  for (const sample_t& x : values) {
    for (float part : {x.real(), x.imag()}) {
      if (format == SampleFormat::cf32_le) {
        std::uint32_t bits;
        std::memcpy(&bits, &part, 4);
        append_le(out, bits, 4);
      } else {
        const long scaled = std::lround(static_cast<double>(part) * 32768.0);
        append_le(out, static_cast<std::uint16_t>(static_cast<std::int16_t>(scaled)), 2);
      }
    }
  }
  return out;
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Bit-exact equality of sample vectors (NaN-free inputs, so == on the values is the same).
inline bool same_samples(const std::vector<sample_t>& a, const std::vector<sample_t>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(sample_t)) == 0;
}

// Runs f, which must throw eigstream::Error with `code` and a message containing every part.
template <class F>
void require_error(F&& f, eigstream::ErrorCode code, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const eigstream::Error& e) {
    INFO("message: " << e.what());
    CHECK(e.code() == code);
    for (const std::string& part : parts) CHECK(std::string(e.what()).find(part) != std::string::npos);
    return;
  }
  FAIL("no eigstream::Error was thrown");
}

}  // namespace sample_io_test
