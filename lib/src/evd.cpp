// evd_batched: validates the call, then per matrix (in parallel over the host's cores): checks the
// input, copies its lower triangle into a Hermitian work matrix scaled by a power of two (largest
// entry in [1, 2): no overflow or underflow in squares for entries from 1e-30 to 1e30 in float),
// applies the warm start (B = V0^H A V0), runs the two-sided or one-sided Jacobi solver, then
// unscales, sorts and writes the outputs.
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <vector>

#include "backend.hpp"
#include "batch.hpp"
#if defined(EIGSTREAM_HAVE_CUDA)
#include "cuda_evd.hpp"
#include "eigstream/cuda.hpp"
#endif
#include "dense.hpp"
#include "eigstream/error.hpp"
#include "eigstream/evd.hpp"
#include "jacobi.hpp"
#include "scalar.hpp"
#include "validate.hpp"

namespace eigstream::detail {
namespace {

template <class T>
struct EvdCall {
  BatchView<const T> a;
  VectorBatchView<real_t<T>> values;
  BatchView<T> vectors;
  BatchView<const T> warm_start;
  const Options& options;
  double tol;
  double symmetry_tol;

  SolveInfo solve(index_t b) const;
  void poison(index_t b) const;
};

template <class T>
SolveInfo EvdCall<T>::solve(index_t b) const {
  using R = real_t<T>;
  const std::string where = matrix_label("evd", b, a.count);
  const MatrixView<const T> in = a[b];
  const index_t n = in.rows;
  check_finite(where, "A", in);
  check_hermitian(where, in, symmetry_tol);

  const bool one_sided = options.method == Method::one_sided;
  const bool keep_v = !vectors.empty() || one_sided || !warm_start.empty();
  std::vector<T> work_buf(n * n), v_buf(keep_v ? n * n : 0);
  MatrixView<T> work = matrix(work_buf.data(), n, n);
  MatrixView<T> v = keep_v ? matrix(v_buf.data(), n, n) : MatrixView<T>{};
  if (!warm_start.empty())
    load_warm_start(where, warm_start[b], v);
  else if (keep_v)
    set_identity(v);

  // Lower triangle, scaled, in full Hermitian storage.
  const int exponent = scale_exponent(max_abs(in));
  for (index_t j = 0; j < n; ++j) {
    work(j, j) = T(std::ldexp(real_of(in(j, j)), exponent));
    for (index_t i = j + 1; i < n; ++i) {
      const T x = in(i, j) * std::ldexp(R(1), exponent);
      work(i, j) = x;
      work(j, i) = conj_of(x);
    }
  }
  if (!warm_start.empty()) {
    // G = A V0; one-sided iterates on G, two-sided on B = V0^H G (made exactly Hermitian).
    std::vector<T> g_buf(n * n);
    MatrixView<T> g = matrix(g_buf.data(), n, n);
    multiply<T>(work, v, g, false);
    if (one_sided) {
      work_buf.swap(g_buf);
      work = matrix(work_buf.data(), n, n);
    } else {
      multiply<T>(v, g, work, true);
      for (index_t j = 0; j < n; ++j) {
        work(j, j) = T(real_of(work(j, j)));
        for (index_t i = j + 1; i < n; ++i) work(j, i) = conj_of(work(i, j));
      }
    }
  }

  const SolveInfo info = one_sided ? jacobi_one_sided(work, v, options.ordering, tol, options.max_sweeps)
                                   : jacobi_two_sided(work, v, options.ordering, tol, options.max_sweeps);

  if (keep_v) normalise_columns(v);
  std::vector<R> w(n);
  if (one_sided) {
    // At convergence column j of G = A V is lambda_j v_j: |lambda_j| = ||g_j||, and the sign is that
    // of the Rayleigh quotient v_j^H g_j, which must not be negative for this method.
    R norm2 = 0;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) norm2 += abs2(work(i, j));
    const R slack = std::sqrt(std::numeric_limits<R>::epsilon()) * std::sqrt(norm2);
    for (index_t j = 0; j < n; ++j) {
      R length2 = 0;
      T rayleigh = 0;
      for (index_t i = 0; i < n; ++i) {
        length2 += abs2(work(i, j));
        rayleigh += conj_of(v(i, j)) * work(i, j);
      }
      if (real_of(rayleigh) < -slack) {
        std::ostringstream s;
        s << where << ": the one-sided method needs a positive semi-definite matrix, and A has eigenvalue "
          << std::ldexp(real_of(rayleigh), -exponent) << "; use the two-sided method";
        throw Error(ErrorCode::invalid_input, s.str());
      }
      w[j] = std::sqrt(length2);
    }
  } else {
    for (index_t j = 0; j < n; ++j) w[j] = real_of(work(j, j));
  }
  for (R& x : w) x = std::ldexp(x, -exponent);

  const std::vector<index_t> order = sort_order(w, options.sort);
  R* out = values[b];
  for (index_t k = 0; k < n; ++k) out[k] = w[order[k]];
  if (!vectors.empty()) copy_columns<T>(v, order, vectors[b]);

  if (!info.converged && options.throw_on_not_converged) {
    std::ostringstream s;
    s << where << ": did not converge in " << options.max_sweeps << " sweeps (off-norm " << info.off_norm
      << ", tolerance " << tol << ")";
    throw Error(ErrorCode::not_converged, s.str());
  }
  return info;
}

template <class T>
void EvdCall<T>::poison(index_t b) const {
  const real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (index_t k = 0; k < a.rows; ++k) values[b][k] = nan;
  if (vectors.empty()) return;
  const MatrixView<T> v = vectors[b];
  for (index_t j = 0; j < v.cols; ++j)
    for (index_t i = 0; i < v.rows; ++i) v(i, j) = T(nan);
}

}  // namespace

template <class T>
void evd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> values, BatchView<T> vectors, SolveInfo* info,
                 const Options& options, BatchView<const T> warm_start) {
  const char* op = "evd";
  check_options(op, options);
  if (a.rows != a.cols) {
    std::ostringstream s;
    s << op << ": A is " << a.rows << " x " << a.cols << "; an eigendecomposition needs a square matrix";
    throw Error(ErrorCode::invalid_argument, s.str());
  }
  const index_t n = a.rows;
  check_batch(op, "A", a, n, n, a.count, true);
  check_vector_batch(op, "values", values, n, a.count);
  check_batch(op, "vectors", vectors, n, n, a.count, false);
  check_batch(op, "warm start V0", warm_start, n, n, a.count, false);
  [[maybe_unused]] const Backend backend = evd_backend(n, a.count, options);
  if (n == 0 || a.count == 0) {
    // Nothing to rotate: an empty matrix is trivially converged.
    if (info) std::fill_n(info, a.count, SolveInfo{0, 0.0, true, false});
    return;
  }
#if defined(EIGSTREAM_HAVE_CUDA)
  if (backend == Backend::cuda)
    return evd_batched_cuda_from_host(a, values, vectors, info, options, warm_start);
#endif

  const EvdCall<T> call{a,       values, vectors, warm_start, options,
                        tolerance<T>(options, options.method == Method::one_sided, n),
                        symmetry_tolerance<T>(options)};
  run_batch(
      a.count, options.flag_invalid, info, [&](index_t b) { return call.solve(b); },
      [&](index_t b) { call.poison(b); });
}

#define EIGSTREAM_INSTANTIATE(T)                                                                                \
  template void evd_batched<T>(BatchView<const T>, VectorBatchView<real_t<T>>, BatchView<T>, SolveInfo*, \
                               const Options&, BatchView<const T>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream::detail

namespace eigstream {

Backend evd_backend(index_t n, index_t count, const Options& options) {
#if defined(EIGSTREAM_HAVE_CUDA)
  const bool fits = cuda::can_implement_evd(n, options);
#else
  const bool fits = false;
  (void)n;
#endif
  return detail::resolve_backend("evd", options.backend, fits, "n <= 64 with the two-sided method", count);
}

}  // namespace eigstream
