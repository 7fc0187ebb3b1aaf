// Eigendecomposition of Hermitian (real symmetric) matrices: A = V diag(w) V^H.
//
// Scalars: float, double, std::complex<float>, std::complex<double>. Only the lower triangle of A is
// used once A has passed the Hermitian check. Eigenvalues are real, sorted as Options::sort says
// (descending by default), eigenvectors are the columns of V, permuted alike.
// warm_start (optional): an orthonormal V0 from a nearby matrix; the solver diagonalises
// V0^H A V0 and returns V = V0 J, which takes far fewer sweeps when A moved little.
#pragma once

#include <type_traits>

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream {
namespace detail {
template <class T>
void evd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> values, BatchView<T> vectors,
                 SolveInfo* info, const Options& options, BatchView<const T> warm_start);
}  // namespace detail

// The backend evd_batched runs for this problem under these options: Backend::cpu or Backend::cuda.
// Backend::automatic takes the GPU when one is present, the kernel takes the problem (n <= 64,
// two-sided) and the batch holds at least 16 matrices. Throws Error(cuda) when backend cuda cannot run.
Backend evd_backend(index_t n, index_t count, const Options& options);

// A batch of n x n matrices. values: count vectors of n; vectors: empty, or count n x n matrices;
// info: empty or count entries; warm_start: empty or count n x n matrices.
template <class A>
void evd_batched(BatchView<A> a, VectorBatchView<real_t<A>> values,
                 BatchView<std::remove_const_t<A>> vectors = {}, SolveInfo* info = nullptr,
                 const Options& options = {}, BatchView<const std::remove_const_t<A>> warm_start = {}) {
  detail::evd_batched<std::remove_const_t<A>>(a, values, vectors, info, options, warm_start);
}

// One n x n matrix. values: n entries; vectors: empty or n x n.
template <class A>
SolveInfo evd(MatrixView<A> a, real_t<A>* values, MatrixView<std::remove_const_t<A>> vectors = {},
              const Options& options = {}, MatrixView<const std::remove_const_t<A>> warm_start = {}) {
  using T = std::remove_const_t<A>;
  SolveInfo info;
  detail::evd_batched<T>(BatchView<const T>{a.data, a.rows, a.cols, a.ld, a.ld * a.cols, 1},
                         VectorBatchView<real_t<T>>{values, a.rows, a.rows, 1},
                         BatchView<T>{vectors.data, vectors.rows, vectors.cols, vectors.ld,
                                      vectors.ld * vectors.cols, 1},
                         &info, options,
                         BatchView<const T>{warm_start.data, warm_start.rows, warm_start.cols,
                                            warm_start.ld, warm_start.ld * warm_start.cols, 1});
  return info;
}

}  // namespace eigstream
