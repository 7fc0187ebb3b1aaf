// Matrix Market array (dense) files: reading real, integer or complex matrices stored general,
// symmetric or hermitian (expanded to full column-major storage), and writing general ones with
// round-trip precision through a temporary file renamed into place, several at once all or nothing.
//
// Every fault is an eigstream::Error with code io whose message starts with the path, then, for
// malformed content, ", line <n>: ". NaN and Inf entries are read as such: rejecting them is the
// solvers' validation.
#include "eigstream/matrix_market.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string_view>

#include "eigstream/error.hpp"

namespace eigstream {
namespace {

[[noreturn]] void fail_at(const std::string& path, long line, const std::string& what) {
  throw Error(ErrorCode::io, path + ", line " + std::to_string(line) + ": " + what);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

// A whole token as a number (decimal, hexadecimal, nan, inf), or false.
bool parse_number(const std::string& token, double& value) {
  if (token.empty()) return false;
  const char* begin = token.c_str();
  char* end = nullptr;
  errno = 0;
  value = std::strtod(begin, &end);
  // Overflow to +-inf and underflow to 0 / subnormals are accepted as the nearest value.
  return end == begin + token.size();
}

// A whole token as a non-negative integer that fits index_t, or false.
bool parse_size(const std::string& token, index_t& value) {
  if (token.empty() || !std::all_of(token.begin(), token.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(token.c_str(), &end, 10);
  if (errno == ERANGE || end != token.c_str() + token.size()) return false;
  value = static_cast<index_t>(v);
  return true;
}

// Reads lines, counting them, with a trailing '\r' (CRLF files) removed.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) {}
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    ++number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  long number() const { return number_; }

 private:
  std::istream& in_;
  long number_ = 0;
};

const char* kSupported =
    "supported: '%%MatrixMarket matrix array real|integer|complex general|symmetric|hermitian'";

struct Banner {
  bool is_complex = false;
  MatrixSymmetry symmetry = MatrixSymmetry::general;
};

Banner parse_banner(const std::string& path, const std::string& line) {
  const std::vector<std::string> w = split_words(line);
  if (w.empty() || lower(w[0]) != "%%matrixmarket")
    fail_at(path, 1, "not a Matrix Market file: the first line must start with '%%MatrixMarket' (" +
                         std::string(kSupported) + ")");
  if (w.size() != 5)
    fail_at(path, 1, "the banner must have 5 words, '%%MatrixMarket matrix <format> <field> <symmetry>'; " +
                         std::string(kSupported));
  if (lower(w[1]) != "matrix")
    fail_at(path, 1, "object '" + w[1] + "' is not supported, only 'matrix'; " + kSupported);
  const std::string format = lower(w[2]);
  if (format == "coordinate")
    fail_at(path, 1, "the coordinate (sparse) format is not supported, only 'array' (dense); " +
                         std::string(kSupported));
  if (format != "array") fail_at(path, 1, "unknown format '" + w[2] + "'; " + kSupported);

  Banner b;
  const std::string field = lower(w[3]);
  if (field == "complex") {
    b.is_complex = true;
  } else if (field == "pattern") {
    fail_at(path, 1, "the pattern field is not supported (it has no values); " + std::string(kSupported));
  } else if (field != "real" && field != "integer" && field != "double") {
    fail_at(path, 1, "unknown field '" + w[3] + "'; " + kSupported);
  }

  const std::string symmetry = lower(w[4]);
  if (symmetry == "general") {
    b.symmetry = MatrixSymmetry::general;
  } else if (symmetry == "symmetric") {
    b.symmetry = MatrixSymmetry::symmetric;
  } else if (symmetry == "hermitian") {
    b.symmetry = MatrixSymmetry::hermitian;  // for a real field the same as symmetric
  } else if (symmetry == "skew-symmetric") {
    fail_at(path, 1, "skew-symmetric storage is not supported; " + std::string(kSupported));
  } else {
    fail_at(path, 1, "unknown symmetry '" + w[4] + "'; " + kSupported);
  }
  return b;
}

const char* symmetry_name(MatrixSymmetry s) {
  switch (s) {
    case MatrixSymmetry::general: return "general";
    case MatrixSymmetry::symmetric: return "symmetric";
    case MatrixSymmetry::hermitian: return "hermitian";
  }
  return "?";
}

std::string format_real(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// Where a file is written: a regular file (or a new one) to a temporary beside it, renamed over it
// once complete, a symbolic link being followed first; an existing non-regular file (a device, a
// pipe) in place.
struct Destination {
  const OutputFile* file = nullptr;
  std::string target;     // the file renamed over or written in place
  std::string temporary;  // empty: written in place
};

Destination destination_of(const OutputFile& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(file.path, ec);
  Destination d{&file, file.path, ""};
  if (fs::exists(status) && !fs::is_regular_file(status)) return d;
  if (fs::is_symlink(fs::symlink_status(file.path, ec))) {
    const fs::path resolved = fs::weakly_canonical(file.path, ec);
    if (!ec) d.target = resolved.string();
  }
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp-%08x", static_cast<unsigned>(rd()));
  d.temporary = d.target + suffix;
  return d;
}

// Writes `file` to `path` (its temporary or its target); Error(io) naming the file's path.
void write_to(const std::string& path, const OutputFile& file) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int err = errno;
    throw Error(ErrorCode::io, file.path + ": cannot open for writing: " + (err ? std::strerror(err) : "unknown error"));
  }
  file.write(out);
  out.flush();
  const bool written = static_cast<bool>(out);
  out.close();
  if (!written || out.fail()) throw Error(ErrorCode::io, file.path + ": write failed (disk full?)");
}

}  // namespace

MatrixFile read_matrix_market(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(ErrorCode::io, path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw Error(ErrorCode::io, path + ": cannot open for reading: " + (err ? std::strerror(err) : "unknown error"));
  }
  LineReader reader(in);
  std::string line;

  if (!reader.next(line)) fail_at(path, 1, "the file is empty; expected a '%%MatrixMarket' banner");
  const Banner banner = parse_banner(path, line);

  MatrixFile file;
  file.is_complex = banner.is_complex;
  file.symmetry = banner.symmetry;

  // Comments, then the size line "rows cols".
  bool have_size = false;
  while (reader.next(line)) {
    if (is_blank(line) || line.front() == '%') continue;
    const std::vector<std::string> w = split_words(line);
    if (w.size() != 2 || !parse_size(w[0], file.rows) || !parse_size(w[1], file.cols))
      fail_at(path, reader.number(),
              "bad size line '" + line + "': expected two non-negative integers 'rows cols' (array format)");
    have_size = true;
    break;
  }
  if (!have_size) fail_at(path, reader.number() + 1, "unexpected end of file: the size line 'rows cols' is missing");

  const index_t rows = file.rows, cols = file.cols;
  const long size_line = reader.number();
  if (file.symmetry != MatrixSymmetry::general && rows != cols)
    fail_at(path, size_line,
            std::string(symmetry_name(file.symmetry)) + " matrix must be square, but the size line says " +
                std::to_string(rows) + " x " + std::to_string(cols));
  if (cols != 0 && rows > std::numeric_limits<index_t>::max() / 2 / cols)
    fail_at(path, size_line, "matrix size " + std::to_string(rows) + " x " + std::to_string(cols) + " is too large");

  const bool packed = file.symmetry != MatrixSymmetry::general;
  const index_t expected = packed ? rows * (rows + 1) / 2 : rows * cols;
  const std::size_t numbers_per_entry = file.is_complex ? 2 : 1;
  const std::string storage = std::to_string(rows) + " x " + std::to_string(cols) + " " +
                              symmetry_name(file.symmetry) +
                              (packed ? " matrix (lower triangle, column by column)" : " matrix");

  // Entries in file order, grown as they are read so that a lying size line cannot make us
  // allocate more than the file holds.
  std::vector<std::complex<double>> entries;
  index_t i = 0, j = 0;  // position of the next entry (packed: i >= j)
  while (reader.next(line)) {
    if (is_blank(line) || line.front() == '%') continue;
    const long at = reader.number();
    const index_t k = static_cast<index_t>(entries.size());
    if (k >= expected)
      fail_at(path, at,
              "too many entries: expected " + std::to_string(expected) + " for a " + storage +
                  ", this line holds entry " + std::to_string(k + 1));
    const std::vector<std::string> w = split_words(line);
    if (w.size() != numbers_per_entry)
      fail_at(path, at,
              std::string(file.is_complex ? "expected one complex entry 're im' (2 numbers) per line"
                                          : "expected one real entry (1 number) per line") +
                  ", found " + std::to_string(w.size()) + " in '" + line + "'");
    double re = 0, im = 0;
    if (!parse_number(w[0], re)) fail_at(path, at, "'" + w[0] + "' is not a number");
    if (file.is_complex && !parse_number(w[1], im)) fail_at(path, at, "'" + w[1] + "' is not a number");
    if (file.symmetry == MatrixSymmetry::hermitian && i == j && im != 0 && !std::isnan(im))
      fail_at(path, at,
              "diagonal entry (" + std::to_string(i + 1) + "," + std::to_string(j + 1) +
                  ") of a hermitian matrix has a nonzero imaginary part (" + w[1] + ")");
    entries.emplace_back(re, im);
    if (++i == rows) {
      ++j;
      i = packed ? j : 0;
    }
  }
  if (static_cast<index_t>(entries.size()) != expected)
    fail_at(path, reader.number(),
            "unexpected end of file (truncated?): expected " + std::to_string(expected) + " entries for a " +
                storage + ", found " + std::to_string(entries.size()));

  if (!packed) {
    file.data = std::move(entries);
    return file;
  }
  file.data.assign(static_cast<std::size_t>(rows * cols), std::complex<double>());
  const bool conjugate = file.symmetry == MatrixSymmetry::hermitian;
  std::size_t k = 0;
  for (index_t c = 0; c < cols; ++c) {
    for (index_t r = c; r < rows; ++r, ++k) {
      const std::complex<double> x = entries[k];
      file.data[static_cast<std::size_t>(r + c * rows)] = x;
      file.data[static_cast<std::size_t>(c + r * rows)] = conjugate ? std::conj(x) : x;
    }
  }
  if (conjugate) {  // the diagonal is real (a NaN imaginary part is left for validation to report)
    for (index_t d = 0; d < rows; ++d) {
      auto& x = file.data[static_cast<std::size_t>(d + d * rows)];
      if (!std::isnan(x.imag())) x.imag(0);
    }
  }
  return file;
}

template <class T>
OutputFile matrix_market_file(const std::string& path, MatrixView<const T> a, const std::string& comment) {
  using R = real_t<T>;
  if (a.rows < 0 || a.cols < 0 || a.ld < a.rows ||
      (a.data == nullptr && a.rows * a.cols > 0))
    throw Error(ErrorCode::invalid_argument,
                path + ": cannot write a bad matrix view (" + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                    ", ld " + std::to_string(a.ld) + ")");

  const auto write = [a, comment](std::ostream& out) {
    const int digits = std::numeric_limits<R>::max_digits10;
    out << "%%MatrixMarket matrix array " << (is_complex_v<T> ? "complex" : "real") << " general\n";
    if (!comment.empty()) {
      std::istringstream lines(comment);
      for (std::string l; std::getline(lines, l);) out << "% " << l << '\n';
    }
    out << a.rows << ' ' << a.cols << '\n';
    for (index_t j = 0; j < a.cols; ++j) {
      for (index_t i = 0; i < a.rows; ++i) {
        const T x = a(i, j);
        if constexpr (is_complex_v<T>) {
          out << format_real(x.real(), digits) << ' ' << format_real(x.imag(), digits) << '\n';
        } else {
          out << format_real(x, digits) << '\n';
        }
      }
    }
  };
  return {path, write};
}

template <class R>
OutputFile values_file(const std::string& path, const R* values, index_t count) {
  const auto write = [values, count](std::ostream& out) {
    for (index_t i = 0; i < count; ++i) out << format_real(values[i], std::numeric_limits<R>::max_digits10) << '\n';
  };
  return {path, write};
}

void write_files(const std::vector<OutputFile>& files) {
  std::vector<Destination> destinations;
  for (const OutputFile& file : files) destinations.push_back(destination_of(file));
  const auto remove_temporaries = [&](std::size_t from) {
    std::error_code ignored;
    for (std::size_t i = from; i < destinations.size(); ++i)
      if (!destinations[i].temporary.empty()) std::filesystem::remove(destinations[i].temporary, ignored);
  };
  try {
    for (const Destination& d : destinations)
      if (!d.temporary.empty()) write_to(d.temporary, *d.file);
    for (const Destination& d : destinations)
      if (d.temporary.empty()) write_to(d.target, *d.file);
  } catch (...) {
    remove_temporaries(0);
    throw;
  }
  for (std::size_t i = 0; i < destinations.size(); ++i) {
    const Destination& d = destinations[i];
    if (d.temporary.empty()) continue;
    std::error_code ec;
    std::filesystem::rename(d.temporary, d.target, ec);
    if (ec) {
      remove_temporaries(i);
      throw Error(ErrorCode::io, d.file->path + ": cannot replace the file: " + ec.message());
    }
  }
}

template <class T>
void write_matrix_market(const std::string& path, MatrixView<const T> a, const std::string& comment) {
  write_files({matrix_market_file(path, a, comment)});
}

template <class R>
void write_values(const std::string& path, const R* values, index_t count) {
  write_files({values_file(path, values, count)});
}

template void write_values<float>(const std::string&, const float*, index_t);
template void write_values<double>(const std::string&, const double*, index_t);
template void write_matrix_market<float>(const std::string&, MatrixView<const float>, const std::string&);
template void write_matrix_market<double>(const std::string&, MatrixView<const double>, const std::string&);
template void write_matrix_market<std::complex<float>>(const std::string&, MatrixView<const std::complex<float>>,
                                                       const std::string&);
template void write_matrix_market<std::complex<double>>(const std::string&, MatrixView<const std::complex<double>>,
                                                        const std::string&);
template OutputFile values_file<float>(const std::string&, const float*, index_t);
template OutputFile values_file<double>(const std::string&, const double*, index_t);
template OutputFile matrix_market_file<float>(const std::string&, MatrixView<const float>, const std::string&);
template OutputFile matrix_market_file<double>(const std::string&, MatrixView<const double>, const std::string&);
template OutputFile matrix_market_file<std::complex<float>>(const std::string&, MatrixView<const std::complex<float>>,
                                                            const std::string&);
template OutputFile matrix_market_file<std::complex<double>>(const std::string&, MatrixView<const std::complex<double>>,
                                                             const std::string&);

}  // namespace eigstream
