// The KLT container: what klt_compress writes and klt_decompress reads. A self-describing,
// little-endian file of a header and records; every record carries its length and a CRC-32, and an
// end record closes a complete file, so truncation and corruption are detected and named.
//
//   header  magic "EIGKLT\r\n" (8 bytes), u32 version (1), u32 channels (1 to max_channels of
//           sample_format.hpp, 65536), f64 sample_rate (0: unknown),
//           u32 coefficients (0: complex float32, 1: complex int16 with a per-block scale),
//           u32 CRC-32 of the 28 bytes before it (32 bytes in all)
//   record  u32 tag, u32 payload bytes, payload, u32 CRC-32 of tag, length and payload
//     'BASE'  a new basis, in force from the next block on: u32 k, then channels x k complex float32
//             (column-major; column i is the i-th kept eigenvector)
//     'COEF'  one block: u64 first_sample (>= the end of the block before; a gap holds samples the
//             input lost), u32 snapshots, u32 k (the basis in force's), then
//             float32: k x snapshots complex float32 (column-major: snapshot j's k coefficients);
//             int16: f32 scale, then k x snapshots pairs of int16, coefficient = scale * value
//     'END.'  u64 samples, u64 blocks, u64 basis updates: the totals of the file
// Samples of a block are reconstructed as basis * coefficients (klt_reconstruct of lib/klt.hpp).
#pragma once

#include <complex>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace eigstream::streaming {

enum class CoefficientFormat : std::uint32_t { float32 = 0, int16 = 1 };

struct KltHeader {
  std::uint32_t channels = 0;
  double sample_rate = 0;
  CoefficientFormat coefficients = CoefficientFormat::float32;
};

// One block's coefficients as stored: k x snapshots, dequantised (int16: scale * value, exactly as
// the reader computes it), so the writer's caller reconstructs from the very numbers a reader gets.
struct KltBlock {
  std::uint64_t first_sample = 0;
  std::uint32_t snapshots = 0;
  std::uint32_t components = 0;
  std::vector<std::complex<float>> coefficients;
};

struct KltTotals {
  std::uint64_t samples = 0;
  std::uint64_t blocks = 0;
  std::uint64_t basis_updates = 0;
};

// Writes a container to `path` under the temporary name path + ".partial", renamed by finish(): a
// failed or abandoned write leaves nothing under the final name. Errors throw eigstream::Error (io).
class KltWriter {
 public:
  KltWriter(std::string path, const KltHeader& header);
  ~KltWriter();  // without finish(): removes the partial file
  KltWriter(const KltWriter&) = delete;
  KltWriter& operator=(const KltWriter&) = delete;

  // A new basis (channels x k, column-major), in force for the blocks written after it.
  void write_basis(const std::complex<float>* basis, std::uint32_t k);
  // Quantises (int16) and writes block `coefficients` (k x snapshots, k of the basis in force), and
  // replaces them with what a reader will get back. Error(invalid_argument) for a block that starts
  // before the end of the last one, or runs past sample 2^64 - 1.
  void write_block(std::uint64_t first_sample, std::uint32_t snapshots, std::vector<std::complex<float>>& coefficients);
  // Writes the end record, closes and renames the file.
  void finish();

  std::uint64_t bytes() const noexcept { return bytes_; }
  const KltTotals& totals() const noexcept { return totals_; }

 private:
  void write_record(const char tag[4], const std::vector<unsigned char>& payload);

  std::string path_, partial_;
  KltHeader header_;
  std::FILE* file_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::uint32_t components_ = 0;  // of the basis in force
  std::uint64_t next_sample_ = 0;  // the end of the last block: the next may not start before it
  KltTotals totals_;
  std::vector<unsigned char> payload_;
};

// Reads a container record by record. Errors throw eigstream::Error(io): a file that cannot be read,
// or a bad container, naming the file, the byte offset and what was wrong (truncated, corrupt).
class KltReader {
 public:
  explicit KltReader(std::string path);
  ~KltReader();
  KltReader(const KltReader&) = delete;
  KltReader& operator=(const KltReader&) = delete;

  const KltHeader& header() const noexcept { return header_; }
  // The next block, with the basis in force for it in `basis` (channels x block.components) and
  // `basis_changed` set when a basis record came before it; false at the end record (after which
  // totals() holds the file's totals, checked against what was read).
  bool next(KltBlock& block, std::vector<std::complex<float>>& basis, bool& basis_changed);
  const KltTotals& totals() const noexcept { return totals_; }

 private:
  [[noreturn]] void bad(std::uint64_t offset, const std::string& what) const;
  bool read_exact(void* data, std::size_t bytes);

  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t offset_ = 0;
  KltHeader header_;
  std::vector<std::complex<float>> basis_;
  std::uint32_t components_ = 0;
  KltTotals read_, totals_;
  std::uint64_t next_sample_ = 0;  // the end of the last block: blocks do not overlap (gaps are lost samples)
  std::vector<unsigned char> payload_;
};

}  // namespace eigstream::streaming
