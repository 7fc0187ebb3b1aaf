// Matrix Market files in array (dense) format: real or complex; general, symmetric or hermitian;
// and plain value files (one number per line). A file is written through a temporary renamed into
// place, so a failed write leaves no half file; an existing device or pipe is written directly.
// Several files can be written all or nothing (write_files).
// Errors are eigstream::Error with code io, naming the file and line at fault.
#pragma once

#include <complex>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "eigstream/views.hpp"

namespace eigstream {

enum class MatrixSymmetry { general, symmetric, hermitian };

// A dense matrix read from a file, column-major, with symmetric/hermitian storage expanded in full.
struct MatrixFile {
  index_t rows = 0;
  index_t cols = 0;
  bool is_complex = false;
  MatrixSymmetry symmetry = MatrixSymmetry::general;
  std::vector<std::complex<double>> data;  // rows * cols entries, ld = rows

  MatrixView<const std::complex<double>> view() const { return {data.data(), rows, cols, rows}; }
};

MatrixFile read_matrix_market(const std::string& path);

// Writes `a` as a general array matrix (real or complex by T) with full round-trip precision.
template <class T>
void write_matrix_market(const std::string& path, MatrixView<const T> a, const std::string& comment = "");

// Writes real values one per line with full round-trip precision (eigenvalues, singular values).
template <class R>
void write_values(const std::string& path, const R* values, index_t count);

// A file to write: its path and what to write into it. Made by matrix_market_file or values_file,
// it refers to the caller's data until it is written.
struct OutputFile {
  std::string path;
  std::function<void(std::ostream&)> write;
};

// The file write_matrix_market would write (Error(invalid_argument) for a bad view).
template <class T>
OutputFile matrix_market_file(const std::string& path, MatrixView<const T> a, const std::string& comment = "");

// The file write_values would write.
template <class R>
OutputFile values_file(const std::string& path, const R* values, index_t count);

// Writes the files all or nothing: each to a temporary beside it, then, once every one is complete,
// renames them all into place. When one cannot be written (Error(io) naming it), the temporaries are
// removed and no file was replaced or created. An existing device or pipe is written in place after
// the temporaries are complete; what it was sent cannot be taken back. (A rename can fail only when a
// target changed meanwhile, for example into a directory: the files renamed before it stay.)
void write_files(const std::vector<OutputFile>& files);

}  // namespace eigstream
