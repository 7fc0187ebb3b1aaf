// Thin singular value decomposition of m x n matrices: A = U diag(s) V^H, k = min(m, n),
// U m x k, s k values, V n x k, by one-sided (Hestenes) Jacobi. m < n is handled by transposition.
//
// Singular values are sorted as Options::sort says (descending by default), with U and V permuted
// alike. For a rank-deficient A, the columns of U that belong to zero singular values are an
// orthonormal completion, never NaN.
// warm_start (optional): the k x k orthonormal basis of the smaller side from a nearby matrix:
// V0 (n x n) when m >= n, U0 (m x m) when m < n.
#pragma once

#include <type_traits>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream {
namespace detail {
template <class T>
void svd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> s, BatchView<T> u, BatchView<T> v,
                 SolveInfo* info, const Options& options, BatchView<const T> warm_start);
}  // namespace detail

// The backend svd_batched runs: the GPU kernel (eigstream/cuda.hpp) for Backend::cuda, and for
// Backend::automatic with a GPU, min(m, n) <= 64, max(m, n) <= 1024 and a batch of at least 16;
// else the CPU.
Backend svd_backend(index_t m, index_t n, index_t count, const Options& options);

// A batch of m x n matrices. s: count vectors of k; u: empty or count m x k; v: empty or count n x k.
template <class A>
void svd_batched(BatchView<A> a, VectorBatchView<real_t<A>> s, BatchView<std::remove_const_t<A>> u = {},
                 BatchView<std::remove_const_t<A>> v = {}, SolveInfo* info = nullptr,
                 const Options& options = {}, BatchView<const std::remove_const_t<A>> warm_start = {}) {
  detail::svd_batched<std::remove_const_t<A>>(a, s, u, v, info, options, warm_start);
}

template <class A>
SolveInfo svd(MatrixView<A> a, real_t<A>* s, MatrixView<std::remove_const_t<A>> u = {},
              MatrixView<std::remove_const_t<A>> v = {}, const Options& options = {},
              MatrixView<const std::remove_const_t<A>> warm_start = {}) {
  using T = std::remove_const_t<A>;
  auto one = [](auto m) {
    return BatchView<std::remove_pointer_t<decltype(m.data)>>{m.data, m.rows, m.cols, m.ld, m.ld * m.cols, 1};
  };
  const index_t k = a.rows < a.cols ? a.rows : a.cols;
  SolveInfo info;
  detail::svd_batched<T>(one(a), VectorBatchView<real_t<T>>{s, k, k, 1}, one(u), one(v), &info, options,
                         one(warm_start));
  return info;
}

}  // namespace eigstream
