// svd_batched: thin SVD by one-sided Jacobi. Per matrix (in parallel over the host's cores): checks
// the input, forms G = A (m >= n) or A^H (m < n: A^H = V S U^H, so the roles of U and V swap),
// scaled by a power of two, applies the warm start (G <- G W0), orthogonalises the columns of G,
// and reads singular values as column norms and the long-side vectors as normalised columns;
// columns of rounding noise (see negligible_norm2) are completed to an orthonormal set instead.
// With the cuda backend the same steps run in kernels/jacobi_svd_batched.cu (cuda_svd.cpp).
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <vector>

#include "backend.hpp"
#include "batch.hpp"
#if defined(EIGSTREAM_HAVE_CUDA)
#include "cuda_svd.hpp"
#include "eigstream/cuda.hpp"
#endif
#include "dense.hpp"
#include "eigstream/error.hpp"
#include "eigstream/svd.hpp"
#include "jacobi.hpp"
#include "scalar.hpp"
#include "validate.hpp"

namespace eigstream::detail {
namespace {

// Fills the columns of x listed in `missing` with unit vectors orthogonal to all other columns: each
// time the coordinate vector with the largest component outside the columns done so far, which is
// at least sqrt((m - k) / m) for k columns done, so Gram-Schmidt on it is well conditioned.
template <class T>
void complete_orthonormal(MatrixView<T> x, const std::vector<index_t>& missing) {
  using R = real_t<T>;
  std::vector<index_t> done;
  for (index_t j = 0; j < x.cols; ++j)
    if (std::find(missing.begin(), missing.end(), j) == missing.end()) done.push_back(j);
  for (index_t j : missing) {
    index_t best = 0;
    R best_outside = -1;
    for (index_t i = 0; i < x.rows; ++i) {  // |(I - Q Q^H) e_i|^2 = 1 - sum_c |Q(i, c)|^2
      R inside = 0;
      for (index_t c : done) inside += abs2(x(i, c));
      if (1 - inside > best_outside) best_outside = 1 - inside, best = i;
    }
    for (index_t i = 0; i < x.rows; ++i) x(i, j) = T(i == best ? 1 : 0);
    orthonormalise_column(x, j, done);
    done.push_back(j);
  }
}

template <class T>
struct SvdCall {
  BatchView<const T> a;
  VectorBatchView<real_t<T>> s;
  BatchView<T> u;
  BatchView<T> v;
  BatchView<const T> warm_start;
  const Options& options;
  double tol;

  SolveInfo solve(index_t b) const;
  void poison(index_t b) const;
};

template <class T>
SolveInfo SvdCall<T>::solve(index_t b) const {
  using R = real_t<T>;
  const std::string where = matrix_label("svd", b, a.count);
  const MatrixView<const T> in = a[b];
  check_finite(where, "A", in);
  const bool transposed = in.rows < in.cols;
  const index_t rows = transposed ? in.cols : in.rows;  // of G
  const index_t k = transposed ? in.rows : in.cols;
  const BatchView<T>& short_side = transposed ? u : v;  // k x k: the Jacobi rotations' product
  const BatchView<T>& long_side = transposed ? v : u;   // rows x k: normalised columns of G

  const int exponent = scale_exponent(max_abs(in));
  const R scale = std::ldexp(R(1), exponent);
  std::vector<T> g_buf(rows * k);
  MatrixView<T> g = matrix(g_buf.data(), rows, k);
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i < rows; ++i) g(i, j) = transposed ? conj_of(in(j, i)) * scale : in(i, j) * scale;

  const bool keep_w = !short_side.empty() || !warm_start.empty();
  std::vector<T> w_buf(keep_w ? k * k : 0);
  MatrixView<T> w = keep_w ? matrix(w_buf.data(), k, k) : MatrixView<T>{};
  if (!warm_start.empty()) {
    load_warm_start(where, warm_start[b], w);
    std::vector<T> gw_buf(rows * k);
    multiply<T>(g, w, matrix(gw_buf.data(), rows, k), false);
    g_buf.swap(gw_buf);
    g = matrix(g_buf.data(), rows, k);
  } else if (keep_w) {
    set_identity(w);
  }

  const SolveInfo info = jacobi_one_sided(g, w, options.ordering, tol, options.max_sweeps);
  if (keep_w) normalise_columns(w);

  std::vector<R> sigma(k);
  R frobenius2 = 0;
  for (index_t j = 0; j < k; ++j) {
    R norm2 = 0;
    for (index_t i = 0; i < rows; ++i) norm2 += abs2(g(i, j));
    sigma[j] = std::sqrt(norm2);
    frobenius2 += norm2;
  }
  const R negligible = negligible_norm2<T>(rows, frobenius2);
  const std::vector<index_t> order = sort_order(sigma, options.sort);
  for (index_t c = 0; c < k; ++c) s[b][c] = std::ldexp(sigma[order[c]], -exponent);
  if (!short_side.empty()) copy_columns<T>(w, order, short_side[b]);
  if (!long_side.empty()) {
    // In solver order, so that the completion does not depend on the requested sort.
    std::vector<T> x_buf(rows * k);
    const MatrixView<T> x = matrix(x_buf.data(), rows, k);
    std::vector<index_t> missing;
    for (index_t j = 0; j < k; ++j) {
      if (sigma[j] * sigma[j] < negligible) {
        missing.push_back(j);
        continue;
      }
      for (index_t i = 0; i < rows; ++i) x(i, j) = g(i, j) / sigma[j];
    }
    complete_orthonormal(x, missing);
    copy_columns<T>(x, order, long_side[b]);
  }

  if (!info.converged && options.throw_on_not_converged) {
    std::ostringstream msg;
    msg << where << ": did not converge in " << options.max_sweeps << " sweeps (max |gamma|/sqrt(alpha beta) "
        << info.off_norm << ", tolerance " << tol << ")";
    throw Error(ErrorCode::not_converged, msg.str());
  }
  return info;
}

template <class T>
void SvdCall<T>::poison(index_t b) const {
  const real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (index_t c = 0; c < s.size; ++c) s[b][c] = nan;
  for (const BatchView<T>* x : {&u, &v}) {
    if (x->empty()) continue;
    const MatrixView<T> m = (*x)[b];
    for (index_t j = 0; j < m.cols; ++j)
      for (index_t i = 0; i < m.rows; ++i) m(i, j) = T(nan);
  }
}

}  // namespace

template <class T>
void svd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> s, BatchView<T> u, BatchView<T> v,
                 SolveInfo* info, const Options& options, BatchView<const T> warm_start) {
  const char* op = "svd";
  check_options(op, options);
  const index_t m = a.rows, n = a.cols, k = std::min(m, n);
  check_batch(op, "A", a, m, n, a.count, true);
  check_vector_batch(op, "singular values", s, k, a.count);
  check_batch(op, "U", u, m, k, a.count, false);
  check_batch(op, "V", v, n, k, a.count, false);
  check_batch(op, m >= n ? "warm start V0" : "warm start U0", warm_start, k, k, a.count, false);
  [[maybe_unused]] const Backend backend = svd_backend(m, n, a.count, options);
  if (k == 0 || a.count == 0) {
    // Nothing to rotate: an empty matrix is trivially converged.
    if (info) std::fill_n(info, a.count, SolveInfo{0, 0.0, true, false});
    return;
  }
#if defined(EIGSTREAM_HAVE_CUDA)
  if (backend == Backend::cuda) return svd_batched_cuda_from_host(a, s, u, v, info, options, warm_start);
#endif

  const SvdCall<T> call{a, s, u, v, warm_start, options, tolerance<T>(options, true, std::max(m, n))};
  run_batch(
      a.count, options.flag_invalid, info, [&](index_t b) { return call.solve(b); },
      [&](index_t b) { call.poison(b); });
}

#define EIGSTREAM_INSTANTIATE(T)                                                                       \
  template void svd_batched<T>(BatchView<const T>, VectorBatchView<real_t<T>>, BatchView<T>, BatchView<T>, \
                               SolveInfo*, const Options&, BatchView<const T>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream::detail

namespace eigstream {

Backend svd_backend(index_t m, index_t n, index_t count, const Options& options) {
#if defined(EIGSTREAM_HAVE_CUDA)
  const bool fits = cuda::can_implement_svd(m, n, options);
#else
  const bool fits = false;
  (void)m, (void)n;
#endif
  return detail::resolve_backend("svd", options.backend, fits, "min(m, n) <= 64 and max(m, n) <= 1024", count);
}

}  // namespace eigstream
