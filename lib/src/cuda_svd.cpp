// The GPU SVD: the device-memory interface of eigstream/cuda.hpp (argument checks, then the kernel
// launcher of kernels/), and the host-memory path behind svd_batched's cuda backend.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <sstream>
#include <vector>

#include "cuda_svd.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/cuda.hpp"
#include "eigstream/error.hpp"
#include "eigstream_kernels/svd_batched.hpp"
#include "validate.hpp"

namespace eigstream {
namespace cuda {

index_t max_svd_size() { return kernels::kSvdMaxK; }
index_t max_svd_rows() { return kernels::kSvdMaxRows; }

bool can_implement_svd(index_t m, index_t n, const Options&) {
  const index_t k = std::min(m, n), rows = std::max(m, n);
  return k >= 1 && k <= kernels::kSvdMaxK && rows <= kernels::kSvdMaxRows;
}

template <class T>
std::size_t svd_workspace_size(index_t m, index_t n, index_t count, bool with_u, bool with_v) {
  if (!can_implement_svd(m, n, Options{})) return 0;
  return kernels::svd_workspace_bytes<T>(int(m), int(n), count, with_u, with_v);
}

namespace detail {

template <class T>
void svd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> s, BatchView<T> u, BatchView<T> v, SolveInfo* info,
                 const Options& options, cudaStream_t stream, BatchView<const T> warm_start, void* workspace) {
  using eigstream::detail::check_batch;
  const char* op = "cuda::svd_batched";
  eigstream::detail::check_options(op, options);
  const index_t m = a.rows, n = a.cols, k = std::min(m, n);
  check_batch(op, "A", a, m, n, a.count, true);
  eigstream::detail::check_vector_batch(op, "singular values", s, k, a.count);
  check_batch(op, "U", u, m, k, a.count, false);
  check_batch(op, "V", v, n, k, a.count, false);
  check_batch(op, m >= n ? "warm start V0" : "warm start U0", warm_start, k, k, a.count, false);
  if (k == 0 || a.count == 0) return;
  if (!info) throw Error(ErrorCode::invalid_argument, std::string(op) + ": info (device, one per matrix) is missing");
  if (!can_implement_svd(m, n, options)) {
    std::ostringstream msg;
    msg << op << ": the kernel takes min(m, n) <= " << kernels::kSvdMaxK << " and max(m, n) <= " << kernels::kSvdMaxRows
        << " (A is " << m << " x " << n << ")";
    throw Error(ErrorCode::invalid_argument, msg.str());
  }
  const std::size_t needed = svd_workspace_size<T>(m, n, a.count, !u.empty(), !v.empty());
  if (needed && !workspace) {
    std::ostringstream msg;
    msg << op << ": " << m << " x " << n << " matrices without " << (m >= n ? "U" : "V") << " need a workspace of "
        << needed << " bytes (svd_workspace_size)";
    throw Error(ErrorCode::invalid_argument, msg.str());
  }
  kernels::SvdBatchedArgs<T> args;
  args.a = a.data, args.lda = a.ld, args.stride_a = a.stride;
  args.m = int(m), args.n = int(n);
  args.s = s.data, args.stride_s = s.stride;
  args.u = u.data, args.ldu = u.ld, args.stride_u = u.stride;
  args.v = v.data, args.ldv = v.ld, args.stride_v = v.stride;
  args.warm_start = warm_start.data, args.ldw = warm_start.ld, args.stride_w = warm_start.stride;
  args.workspace = needed ? static_cast<T*>(workspace) : nullptr;
  args.info = info;
  args.count = a.count;
  args.tol = eigstream::detail::tolerance<T>(options, true, std::max(m, n));
  args.max_sweeps = options.max_sweeps;
  args.sort = options.sort;
  args.reorthonormalise = options.reorthonormalise;
  eigstream::detail::check_cuda(kernels::launch_svd_batched(args, stream), "cuda::svd_batched: kernel launch");
}

}  // namespace detail
}  // namespace cuda

namespace detail {

template <class T>
void svd_batched_cuda_from_host(BatchView<const T> a, VectorBatchView<real_t<T>> s, BatchView<T> u, BatchView<T> v,
                                SolveInfo* info, const Options& options, BatchView<const T> warm_start) {
  using R = real_t<T>;
  const index_t m = a.rows, n = a.cols, k = std::min(m, n), count = a.count, mn = m * n, kk = k * k;
  std::vector<T> host_a(std::size_t(mn * count)), host_w;
  for (index_t b = 0; b < count; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) host_a[std::size_t(b * mn + i + j * m)] = a[b](i, j);
  // Warm starts are checked and re-orthonormalised here, as on the CPU path.
  std::vector<bool> bad_warm_start(std::size_t(count), false);
  if (!warm_start.empty()) {
    host_w.resize(std::size_t(kk * count));
    for (index_t b = 0; b < count; ++b) {
      try {
        load_warm_start(matrix_label("svd", b, count), warm_start[b], matrix(&host_w[std::size_t(b * kk)], k, k));
      } catch (const Error&) {
        if (!options.flag_invalid) throw;
        bad_warm_start[std::size_t(b)] = true;
        std::fill_n(&host_w[std::size_t(b * kk)], kk, T(0));
      }
    }
  }

  cudaStream_t stream = cudaStreamPerThread;
  DeviceArray<T> dev_a(host_a.size(), stream), dev_u(u.empty() ? 0 : std::size_t(m * k * count), stream),
      dev_v(v.empty() ? 0 : std::size_t(n * k * count), stream), dev_w(host_w.size(), stream);
  DeviceArray<R> dev_s(std::size_t(k * count), stream);
  DeviceArray<SolveInfo> dev_info(std::size_t(count), stream);
  DeviceArray<char> dev_workspace(cuda::svd_workspace_size<T>(m, n, count, !u.empty(), !v.empty()), stream);
  dev_a.upload(host_a, stream);
  if (!host_w.empty()) dev_w.upload(host_w, stream);
  cuda::svd_batched(batch<const T>(dev_a.get(), m, n, count), VectorBatchView<R>{dev_s.get(), k, k, count},
                    u.empty() ? BatchView<T>{} : batch<T>(dev_u.get(), m, k, count),
                    v.empty() ? BatchView<T>{} : batch<T>(dev_v.get(), n, k, count), dev_info.get(), options, stream,
                    host_w.empty() ? BatchView<const T>{} : batch<const T>(dev_w.get(), k, k, count),
                    dev_workspace.get());
  std::vector<R> host_s;
  std::vector<T> host_u, host_v;
  std::vector<SolveInfo> host_info;
  dev_s.download(host_s, stream);
  if (!u.empty()) dev_u.download(host_u, stream);
  if (!v.empty()) dev_v.download(host_v, stream);
  dev_info.download(host_info, stream);
  check_cuda(cudaStreamSynchronize(stream), "svd: GPU solve");

  const R nan = std::numeric_limits<R>::quiet_NaN();
  const double tol = tolerance<T>(options, true, std::max(m, n));
  for (index_t b = 0; b < count; ++b) {
    SolveInfo& st = host_info[std::size_t(b)];
    const std::string where = matrix_label("svd", b, count);
    if (bad_warm_start[std::size_t(b)]) st = SolveInfo{0, 0.0, false, true};
    if (st.invalid_input && !options.flag_invalid) {
      // The kernel only flags; the host check names the entry at fault.
      check_finite(where, "A", a[b]);
      throw Error(ErrorCode::invalid_input, where + ": A was rejected by the GPU's input check");
    }
    if (!st.invalid_input && !st.converged && options.throw_on_not_converged) {
      std::ostringstream msg;
      msg << where << ": did not converge in " << options.max_sweeps << " sweeps (max |gamma|/sqrt(alpha beta) "
          << st.off_norm << ", tolerance " << tol << ")";
      throw Error(ErrorCode::not_converged, msg.str());
    }
    for (index_t c = 0; c < k; ++c) s[b][c] = st.invalid_input ? nan : host_s[std::size_t(b * k + c)];
    auto copy_out = [&](const std::vector<T>& from, BatchView<T> to, index_t rows) {
      if (to.empty()) return;
      for (index_t j = 0; j < k; ++j)
        for (index_t i = 0; i < rows; ++i)
          to[b](i, j) = st.invalid_input ? T(nan) : from[std::size_t(b * rows * k + i + j * rows)];
    };
    copy_out(host_u, u, m);
    copy_out(host_v, v, n);
    if (info) info[b] = st;
  }
}

}  // namespace detail

#define EIGSTREAM_INSTANTIATE(T)                                                                                 \
  template std::size_t cuda::svd_workspace_size<T>(index_t, index_t, index_t, bool, bool);                      \
  template void cuda::detail::svd_batched<T>(BatchView<const T>, VectorBatchView<real_t<T>>, BatchView<T>,      \
                                             BatchView<T>, SolveInfo*, const Options&, cudaStream_t,            \
                                             BatchView<const T>, void*);                                        \
  template void detail::svd_batched_cuda_from_host<T>(BatchView<const T>, VectorBatchView<real_t<T>>,           \
                                                      BatchView<T>, BatchView<T>, SolveInfo*, const Options&,   \
                                                      BatchView<const T>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream
