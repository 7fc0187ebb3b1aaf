// Matrix Market files in array (dense) format: real or complex; general, symmetric or hermitian;
// and plain value files (one number per line). A file is written through a temporary renamed into
// place, so a failed write leaves no half file; an existing device or pipe is written directly.
// Errors are eigstream::Error with code io, naming the file and line at fault.
#pragma once

#include <complex>
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

}  // namespace eigstream
