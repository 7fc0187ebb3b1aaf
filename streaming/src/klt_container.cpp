// The KLT container's writer and reader (format in klt_container.hpp).
#include "eigstream/streaming/klt_container.hpp"

#include "eigstream/error.hpp"
#include "eigstream/streaming/sample_format.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace eigstream::streaming {
namespace {

constexpr char kMagic[8] = {'E', 'I', 'G', 'K', 'L', 'T', '\r', '\n'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 32;
constexpr std::uint32_t kMaxPayload = 1u << 30;

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), table-driven.
std::uint32_t crc32(const unsigned char* data, std::size_t size, std::uint32_t crc = 0) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

void put_u32(std::vector<unsigned char>& out, std::uint32_t x) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(x >> (8 * i)));
}
void put_u64(std::vector<unsigned char>& out, std::uint64_t x) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(x >> (8 * i)));
}
void put_f32(std::vector<unsigned char>& out, float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  put_u32(out, bits);
}
void put_f64(std::vector<unsigned char>& out, double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, 8);
  put_u64(out, bits);
}
void put_i16(std::vector<unsigned char>& out, std::int16_t x) {
  const auto u = static_cast<std::uint16_t>(x);
  out.push_back(static_cast<unsigned char>(u));
  out.push_back(static_cast<unsigned char>(u >> 8));
}

// Reads little-endian fields from a payload, refusing to run past its end.
class Fields {
 public:
  Fields(const std::vector<unsigned char>& data, std::size_t size) : data_(data), size_(size) {}
  bool has(std::size_t bytes) const { return at_ + bytes <= size_; }
  std::size_t left() const { return size_ - at_; }
  std::uint64_t u(int bytes) {
    std::uint64_t x = 0;
    for (int i = 0; i < bytes; ++i) x |= std::uint64_t(data_[at_ + std::size_t(i)]) << (8 * i);
    at_ += std::size_t(bytes);
    return x;
  }
  float f32() {
    const auto bits = static_cast<std::uint32_t>(u(4));
    float x;
    std::memcpy(&x, &bits, 4);
    return x;
  }
  double f64() {
    const std::uint64_t bits = u(8);
    double x;
    std::memcpy(&x, &bits, 8);
    return x;
  }
  std::int16_t i16() { return static_cast<std::int16_t>(static_cast<std::uint16_t>(u(2))); }

 private:
  const std::vector<unsigned char>& data_;
  std::size_t size_, at_ = 0;
};

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

// ---- writer -----------------------------------------------------------------------------------------

KltWriter::KltWriter(std::string path, const KltHeader& header)
    : path_(std::move(path)), partial_(path_ + ".partial"), header_(header) {
  if (header.channels == 0 || header.channels > max_channels)
    throw Error(ErrorCode::invalid_argument, "KLT container " + path_ + ": " + std::to_string(header.channels) +
                                                 " channels, not between 1 and " + std::to_string(max_channels));
  file_ = std::fopen(partial_.c_str(), "wb");
  if (!file_) throw Error(ErrorCode::io, system_error("KLT container: cannot create " + partial_));
  std::vector<unsigned char> h(kMagic, kMagic + 8);
  put_u32(h, kVersion);
  put_u32(h, header.channels);
  put_f64(h, header.sample_rate);
  put_u32(h, static_cast<std::uint32_t>(header.coefficients));
  put_u32(h, crc32(h.data(), h.size()));
  if (std::fwrite(h.data(), 1, h.size(), file_) != h.size())
    throw Error(ErrorCode::io, system_error("KLT container: cannot write " + partial_));
  bytes_ = h.size();
}

KltWriter::~KltWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(partial_.c_str());
  }
}

void KltWriter::write_record(const char tag[4], const std::vector<unsigned char>& payload) {
  std::vector<unsigned char> head(tag, tag + 4);
  put_u32(head, static_cast<std::uint32_t>(payload.size()));
  std::vector<unsigned char> crc;
  put_u32(crc, crc32(payload.data(), payload.size(), crc32(head.data(), head.size())));
  using Bytes = const std::vector<unsigned char>*;
  for (Bytes part : {Bytes(&head), Bytes(&payload), Bytes(&crc)})
    if (std::fwrite(part->data(), 1, part->size(), file_) != part->size())
      throw Error(ErrorCode::io, system_error("KLT container: cannot write " + partial_));
  bytes_ += head.size() + payload.size() + crc.size();
}

void KltWriter::write_basis(const std::complex<float>* basis, std::uint32_t k) {
  if (k == 0 || k > header_.channels)
    throw Error(ErrorCode::invalid_argument, "KLT container " + path_ + ": a basis of " + std::to_string(k) +
                                                 " components for " + std::to_string(header_.channels) + " channels");
  payload_.clear();
  put_u32(payload_, k);
  for (std::size_t i = 0; i < std::size_t(header_.channels) * k; ++i) {
    put_f32(payload_, basis[i].real());
    put_f32(payload_, basis[i].imag());
  }
  write_record("BASE", payload_);
  components_ = k;
  ++totals_.basis_updates;
}

void KltWriter::write_block(std::uint64_t first_sample, std::uint32_t snapshots,
                            std::vector<std::complex<float>>& coefficients) {
  if (components_ == 0) throw Error(ErrorCode::invalid_argument, "KLT container " + path_ + ": a block before any basis");
  if (first_sample < next_sample_ || first_sample > std::numeric_limits<std::uint64_t>::max() - snapshots)
    throw Error(ErrorCode::invalid_argument, "KLT container " + path_ + ": a block of " + std::to_string(snapshots) +
                                                 " samples from sample " + std::to_string(first_sample) +
                                                 ", when the last ended at " + std::to_string(next_sample_) +
                                                 ": blocks must be in order and end by sample 2^64 - 1");
  if (coefficients.size() != std::size_t(components_) * snapshots)
    throw Error(ErrorCode::invalid_argument, "KLT container " + path_ + ": block at sample " +
                                                 std::to_string(first_sample) + " has " +
                                                 std::to_string(coefficients.size()) + " coefficients, not " +
                                                 std::to_string(components_) + " x " + std::to_string(snapshots));
  payload_.clear();
  put_u64(payload_, first_sample);
  put_u32(payload_, snapshots);
  put_u32(payload_, components_);
  if (header_.coefficients == CoefficientFormat::float32) {
    for (const auto& c : coefficients) put_f32(payload_, c.real()), put_f32(payload_, c.imag());
  } else {
    float peak = 0;
    for (const auto& c : coefficients) peak = std::max({peak, std::abs(c.real()), std::abs(c.imag())});
    const float scale = peak > 0 ? peak / 32767.0f : 1.0f;
    put_f32(payload_, scale);
    auto quantise = [&](float x) {
      return static_cast<std::int16_t>(std::clamp(std::lround(x / scale), -32767L, 32767L));
    };
    for (auto& c : coefficients) {
      const std::int16_t re = quantise(c.real()), im = quantise(c.imag());
      put_i16(payload_, re), put_i16(payload_, im);
      c = {scale * float(re), scale * float(im)};
    }
  }
  write_record("COEF", payload_);
  next_sample_ = first_sample + snapshots;
  totals_.samples += snapshots;
  ++totals_.blocks;
}

void KltWriter::finish() {
  payload_.clear();
  put_u64(payload_, totals_.samples);
  put_u64(payload_, totals_.blocks);
  put_u64(payload_, totals_.basis_updates);
  write_record("END.", payload_);
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!closed || std::rename(partial_.c_str(), path_.c_str()) != 0) {
    const std::string message = system_error("KLT container: cannot complete " + path_);
    std::remove(partial_.c_str());
    throw Error(ErrorCode::io, message);
  }
}

// ---- reader -----------------------------------------------------------------------------------------

KltReader::KltReader(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (!file_) throw Error(ErrorCode::io, system_error("KLT container: cannot open " + path_));
  payload_.resize(kHeaderBytes);
  if (!read_exact(payload_.data(), kHeaderBytes)) bad(0, "shorter than the 32-byte header");
  if (std::memcmp(payload_.data(), kMagic, 8) != 0) bad(0, "not a KLT container (bad magic)");
  Fields f(payload_, kHeaderBytes);
  f.u(8);
  const auto version = static_cast<std::uint32_t>(f.u(4));
  header_.channels = static_cast<std::uint32_t>(f.u(4));
  header_.sample_rate = f.f64();
  const auto coefficients = static_cast<std::uint32_t>(f.u(4));
  const auto crc = static_cast<std::uint32_t>(f.u(4));
  if (crc != crc32(payload_.data(), kHeaderBytes - 4)) bad(28, "header CRC mismatch (corrupt header)");
  if (version != kVersion) bad(8, "version " + std::to_string(version) + " (this reader reads version 1)");
  if (header_.channels == 0 || header_.channels > max_channels)
    bad(12, std::to_string(header_.channels) + " channels, not between 1 and " + std::to_string(max_channels));
  if (coefficients > 1) bad(24, "unknown coefficient format " + std::to_string(coefficients));
  header_.coefficients = static_cast<CoefficientFormat>(coefficients);
  offset_ = kHeaderBytes;
}

KltReader::~KltReader() {
  if (file_) std::fclose(file_);
}

void KltReader::bad(std::uint64_t offset, const std::string& what) const {
  throw Error(ErrorCode::io, "KLT container " + path_ + ", byte " + std::to_string(offset) + ": " + what);
}

bool KltReader::read_exact(void* data, std::size_t bytes) {
  const std::size_t got = std::fread(data, 1, bytes, file_);
  if (got != bytes && std::ferror(file_)) throw Error(ErrorCode::io, system_error("KLT container: cannot read " + path_));
  offset_ += got;
  return got == bytes;
}

bool KltReader::next(KltBlock& block, std::vector<std::complex<float>>& basis, bool& basis_changed) {
  basis_changed = false;
  for (;;) {
    const std::uint64_t start = offset_;
    unsigned char head[8];
    if (!read_exact(head, 8)) bad(start, "truncated: the file ends without its end record");
    const std::uint32_t size = std::uint32_t(head[4]) | std::uint32_t(head[5]) << 8 | std::uint32_t(head[6]) << 16 |
                               std::uint32_t(head[7]) << 24;
    const std::string tag(reinterpret_cast<const char*>(head), 4);
    if (tag != "BASE" && tag != "COEF" && tag != "END.") bad(start, "unknown record tag (corrupt data)");
    if (size > kMaxPayload) bad(start + 4, "record length " + std::to_string(size) + " is implausible (corrupt data)");
    payload_.resize(std::size_t(size) + 4);
    if (!read_exact(payload_.data(), payload_.size())) bad(start, "truncated inside a '" + tag + "' record");
    const std::vector<unsigned char> tail(payload_.end() - 4, payload_.end());
    Fields c(tail, 4);
    if (std::uint32_t(c.u(4)) != crc32(payload_.data(), size, crc32(head, 8)))
      bad(start, "CRC mismatch in a '" + tag + "' record (corrupt data)");
    Fields f(payload_, size);
    const std::size_t channels = header_.channels;
    if (tag == "BASE") {
      if (!f.has(4)) bad(start, "basis record too short");
      const auto k = static_cast<std::uint32_t>(f.u(4));
      if (k == 0 || k > channels || f.left() != channels * k * 8)
        bad(start, "basis record of " + std::to_string(k) + " components does not fit " + std::to_string(channels) +
                       " channels");
      basis_.resize(channels * k);
      for (auto& x : basis_) {
        const float re = f.f32();
        x = {re, f.f32()};
        if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) bad(start, "basis record holds NaN or Inf");
      }
      components_ = k;
      ++read_.basis_updates;
      basis_changed = true;
      continue;
    }
    if (tag == "END.") {
      if (size != 24) bad(start, "end record of " + std::to_string(size) + " bytes, not 24");
      totals_.samples = f.u(8), totals_.blocks = f.u(8), totals_.basis_updates = f.u(8);
      if (totals_.samples != read_.samples || totals_.blocks != read_.blocks ||
          totals_.basis_updates != read_.basis_updates)
        bad(start, "the end record's totals do not match the records read");
      unsigned char extra;
      if (read_exact(&extra, 1)) bad(offset_ - 1, "data after the end record");
      return false;
    }
    if (!f.has(16)) bad(start, "block record too short");
    block.first_sample = f.u(8);
    block.snapshots = static_cast<std::uint32_t>(f.u(4));
    block.components = static_cast<std::uint32_t>(f.u(4));
    if (components_ == 0) bad(start, "a block before any basis");
    if (block.components != components_)
      bad(start, "block of " + std::to_string(block.components) + " components under a basis of " +
                     std::to_string(components_));
    if (block.first_sample < next_sample_)
      bad(start, "block starts at sample " + std::to_string(block.first_sample) + ", before the end of the last one (" +
                     std::to_string(next_sample_) + ")");
    if (block.first_sample > std::numeric_limits<std::uint64_t>::max() - block.snapshots)
      bad(start, "block of samples " + std::to_string(block.first_sample) + " + " + std::to_string(block.snapshots) +
                     " runs past the last sample number 2^64 - 1");
    const std::size_t count = std::size_t(block.components) * block.snapshots;
    const bool int16 = header_.coefficients == CoefficientFormat::int16;
    if (f.left() != (int16 ? 4 + count * 4 : count * 8)) bad(start, "block record size does not match its shape");
    block.coefficients.resize(count);
    if (int16) {
      const float scale = f.f32();
      if (!std::isfinite(scale) || scale <= 0) bad(start + 24, "block scale is not a positive number");
      for (auto& x : block.coefficients) {
        const float re = scale * float(f.i16());
        x = {re, scale * float(f.i16())};
      }
    } else {
      for (auto& x : block.coefficients) {
        const float re = f.f32();
        x = {re, f.f32()};
        if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) bad(start, "block record holds NaN or Inf");
      }
    }
    read_.samples += block.snapshots;
    ++read_.blocks;
    next_sample_ = block.first_sample + block.snapshots;
    basis = basis_;
    return true;
  }
}

}  // namespace eigstream::streaming
