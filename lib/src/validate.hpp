// Checks of calls and inputs shared by evd and svd, and the preparation of inputs for the solvers:
// each check throws eigstream::Error naming the operation, the matrix in the batch and the entry.
#pragma once

#include <string>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::detail {

// "evd" for a single matrix, "evd: matrix 3 of 16" in a batch: the prefix of every message.
std::string matrix_label(const char* op, index_t b, index_t count);

// Argument checks (ErrorCode::invalid_argument). `required` false accepts an empty view.
template <class T>
void check_batch(const char* op, const char* name, BatchView<T> x, index_t rows, index_t cols, index_t count,
                 bool required);
template <class T>
void check_vector_batch(const char* op, const char* name, VectorBatchView<T> x, index_t size, index_t count);
void check_options(const char* op, const Options& options);
// One matrix, as a batch of one: rows x cols expected (cols = -1 accepts any number of columns).
template <class T>
void check_matrix(const char* op, const char* name, MatrixView<T> x, index_t rows, index_t cols) {
  check_batch<T>(op, name, BatchView<T>{x.data, x.rows, x.cols, x.ld, x.ld * x.cols, 1}, rows,
                 cols < 0 && x.cols >= 0 ? x.cols : cols, 1, true);
}

// Input checks (ErrorCode::invalid_input).
template <class T>
void check_finite(const std::string& where, const char* name, MatrixView<const T> a);
template <class T>
void check_hermitian(const std::string& where, MatrixView<const T> a, double symmetry_tol);

// Eigenvalues handed to a consumer (klt, beamforming): n >= 1, values present, finite (else
// invalid_input naming the index) and in descending order (else invalid_argument).
template <class R>
void check_eigenvalues(const char* op, const R* values, index_t n);

// Copies an orthonormal warm start into v (n x n), rejects it as not orthonormal when
// ||V0^H V0 - I||_F > 0.1, and re-orthonormalises it (two Gram-Schmidt passes): a previous result
// is orthonormal only to about n * epsilon, and one-sided Jacobi's tolerance (sqrt(m) * epsilon,
// relative) would spend a sweep on that drift.
template <class T>
void load_warm_start(const std::string& where, MatrixView<const T> v0, MatrixView<T> v);

// Default tolerances (see Options::tol) and symmetry tolerance.
template <class T>
double tolerance(const Options& options, bool one_sided, index_t rows);
template <class T>
double symmetry_tolerance(const Options& options);

// Largest |entry| of a, and the power of two that brings it to [1, 2): solvers run on scaled copies.
template <class T>
real_t<T> max_abs(MatrixView<const T> a);
template <class R>
int scale_exponent(R amax) {
  return amax > 0 ? -std::ilogb(amax) : 0;
}

}  // namespace eigstream::detail
