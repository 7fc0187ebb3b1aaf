// Non-owning views of column-major matrices, batches of matrices and batches of vectors.
// Element (i, j) of a matrix lies at data[i + j * ld]; matrix b of a batch starts at data + b * stride.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

namespace eigstream {

using index_t = std::int64_t;

// One complex sample of one channel. A block of samples is a MatrixView of sample_t, channels x
// snapshots: element (c, t) at data[c + t * ld], channels interleaved per snapshot as in files.
using sample_t = std::complex<float>;

template <class T> struct real_type { using type = T; };
template <class T> struct real_type<std::complex<T>> { using type = T; };
// The real type behind a scalar: float for std::complex<float>, and so on.
template <class T> using real_t = typename real_type<std::remove_const_t<T>>::type;

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<std::remove_const_t<T>>::value;

template <class T>
struct MatrixView {
  T* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;
  index_t ld = 0;  // leading dimension: distance between columns, >= rows

  T& operator()(index_t i, index_t j) const { return data[i + j * ld]; }
  bool empty() const { return data == nullptr; }
  operator MatrixView<const T>() const { return {data, rows, cols, ld}; }
};

template <class T>
struct BatchView {
  T* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;
  index_t ld = 0;
  index_t stride = 0;  // distance between consecutive matrices, >= ld * cols
  index_t count = 0;

  MatrixView<T> operator[](index_t b) const { return {data + b * stride, rows, cols, ld}; }
  bool empty() const { return data == nullptr; }
  operator BatchView<const T>() const { return {data, rows, cols, ld, stride, count}; }
};

template <class T>
struct VectorBatchView {
  T* data = nullptr;
  index_t size = 0;
  index_t stride = 0;  // distance between consecutive vectors, >= size
  index_t count = 0;

  T* operator[](index_t b) const { return data + b * stride; }
  bool empty() const { return data == nullptr; }
};

// Helpers with the common defaults: ld = rows, stride = ld * cols (packed).
template <class T>
MatrixView<T> matrix(T* data, index_t rows, index_t cols, index_t ld = 0) {
  return {data, rows, cols, ld ? ld : rows};
}
template <class T>
BatchView<T> batch(T* data, index_t rows, index_t cols, index_t count, index_t ld = 0, index_t stride = 0) {
  const index_t l = ld ? ld : rows;
  return {data, rows, cols, l, stride ? stride : l * cols, count};
}
template <class T>
VectorBatchView<T> vectors(T* data, index_t size, index_t count, index_t stride = 0) {
  return {data, size, stride ? stride : size, count};
}

}  // namespace eigstream
