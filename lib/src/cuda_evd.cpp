// The GPU EVD: the device-memory interface of eigstream/cuda.hpp (argument checks, then the kernel
// launcher of kernels/), and the host-memory path behind evd_batched's cuda backend.
#include <cuda_runtime_api.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "cuda_evd.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/cuda.hpp"
#include "eigstream/error.hpp"
#include "eigstream_kernels/evd_batched.hpp"
#include "validate.hpp"

namespace eigstream {

namespace cuda {

bool device_available() {
  static const bool available = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  }();
  return available;
}

index_t max_evd_size() { return kernels::kEvdMaxN; }

bool can_implement_evd(index_t n, const Options& options) {
  return n >= 1 && n <= kernels::kEvdMaxN && options.method == Method::two_sided;
}

namespace detail {

// Whether two batches share memory: their spans, first entry to last, intersect.
template <class T>
bool overlap(BatchView<const T> x, BatchView<T> y) {
  const auto span = [](const auto& v) {
    const auto first = reinterpret_cast<std::uintptr_t>(v.data);
    return std::pair{first, first + sizeof(T) * std::size_t((v.count - 1) * v.stride + (v.cols - 1) * v.ld + v.rows)};
  };
  const auto [x0, x1] = span(x);
  const auto [y0, y1] = span(y);
  return x0 < y1 && y0 < x1;
}

template <class T>
void evd_batched(BatchView<const T> a, VectorBatchView<real_t<T>> values, BatchView<T> vectors, SolveInfo* info,
                 const Options& options, cudaStream_t stream, BatchView<const T> warm_start) {
  using eigstream::detail::check_batch;
  const char* op = "cuda::evd_batched";
  eigstream::detail::check_options(op, options);
  const index_t n = a.rows;
  if (a.rows != a.cols)
    throw Error(ErrorCode::invalid_argument, std::string(op) + ": an eigendecomposition needs a square matrix");
  check_batch(op, "A", a, n, n, a.count, true);
  eigstream::detail::check_vector_batch(op, "values", values, n, a.count);
  check_batch(op, "vectors", vectors, n, n, a.count, false);
  check_batch(op, "warm start V0", warm_start, n, n, a.count, false);
  if (n == 0 || a.count == 0) return;
  // A cold solve may write its start V0 into `vectors` before it reads A (the warm start, read before
  // each matrix's V is written, may share them).
  if (!vectors.empty() && overlap(a, vectors))
    throw Error(ErrorCode::invalid_argument, std::string(op) + ": vectors overlap A; give V its own memory");
  if (!info) throw Error(ErrorCode::invalid_argument, std::string(op) + ": info (device, one per matrix) is missing");
  if (!can_implement_evd(n, options)) {
    std::ostringstream s;
    s << op << ": the kernel takes n <= " << kernels::kEvdMaxN << " with the two-sided method (n = " << n << ")";
    throw Error(ErrorCode::invalid_argument, s.str());
  }
  kernels::EvdBatchedArgs<T> args;
  args.a = a.data, args.lda = a.ld, args.stride_a = a.stride;
  args.values = values.data, args.stride_values = values.stride;
  args.vectors = vectors.data, args.ldv = vectors.ld, args.stride_v = vectors.stride;
  args.warm_start = warm_start.data, args.ldw = warm_start.ld, args.stride_w = warm_start.stride;
  args.info = info;
  args.n = int(n), args.count = a.count;
  args.tol = eigstream::detail::tolerance<T>(options, false, n);
  args.symmetry_tol = eigstream::detail::symmetry_tolerance<T>(options);
  args.max_sweeps = options.max_sweeps;
  args.sort = options.sort;
  args.reorthonormalise = options.reorthonormalise;
  eigstream::detail::check_cuda(kernels::launch_evd_batched(args, stream), "cuda::evd_batched: kernel launch");
}

}  // namespace detail
}  // namespace cuda

namespace detail {

template <class T>
void evd_batched_cuda_from_host(BatchView<const T> a, VectorBatchView<real_t<T>> values, BatchView<T> vectors,
                                SolveInfo* info, const Options& options, BatchView<const T> warm_start) {
  using R = real_t<T>;
  const index_t n = a.rows, count = a.count, nn = n * n;
  std::vector<T> host_a(std::size_t(nn * count)), host_w;
  for (index_t b = 0; b < count; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) host_a[std::size_t(b * nn + i + j * n)] = a[b](i, j);
  // Warm starts are checked and, when drifted, re-orthonormalised here, as on the CPU path.
  std::vector<bool> bad_warm_start(std::size_t(count), false);
  if (!warm_start.empty()) {
    host_w.resize(host_a.size());
    for (index_t b = 0; b < count; ++b) {
      try {
        load_warm_start(matrix_label("evd", b, count), warm_start[b], matrix(&host_w[std::size_t(b * nn)], n, n));
      } catch (const Error&) {
        if (!options.flag_invalid) throw;
        bad_warm_start[std::size_t(b)] = true;
        std::fill_n(&host_w[std::size_t(b * nn)], nn, T(0));
      }
    }
  }

  cudaStream_t stream = cudaStreamPerThread;
  DeviceArray<T> dev_a(host_a.size(), stream), dev_v(vectors.empty() ? 0 : host_a.size(), stream),
      dev_w(host_w.size(), stream);
  DeviceArray<R> dev_values(std::size_t(n * count), stream);
  DeviceArray<SolveInfo> dev_info(std::size_t(count), stream);
  dev_a.upload(host_a, stream);
  if (!host_w.empty()) dev_w.upload(host_w, stream);
  cuda::evd_batched(batch<const T>(dev_a.get(), n, n, count), VectorBatchView<R>{dev_values.get(), n, n, count},
                    vectors.empty() ? BatchView<T>{} : batch<T>(dev_v.get(), n, n, count), dev_info.get(), options,
                    stream, host_w.empty() ? BatchView<const T>{} : batch<const T>(dev_w.get(), n, n, count));
  std::vector<R> host_values;
  std::vector<T> host_v;
  std::vector<SolveInfo> host_info;
  dev_values.download(host_values, stream);
  if (!vectors.empty()) dev_v.download(host_v, stream);
  dev_info.download(host_info, stream);
  check_cuda(cudaStreamSynchronize(stream), "evd: GPU solve");

  const R nan = std::numeric_limits<R>::quiet_NaN();
  for (index_t b = 0; b < count; ++b) {
    SolveInfo& s = host_info[std::size_t(b)];
    if (bad_warm_start[std::size_t(b)]) s = SolveInfo{0, 0.0, false, true};
    if (s.invalid_input && !options.flag_invalid) {
      // The kernel only flags; the host checks name the entry at fault.
      const std::string where = matrix_label("evd", b, count);
      check_finite(where, "A", a[b]);
      check_hermitian(where, a[b], symmetry_tolerance<T>(options));
      throw Error(ErrorCode::invalid_input, where + ": A was rejected by the GPU's input check");
    }
    if (!s.invalid_input && !s.converged && options.throw_on_not_converged) {
      std::ostringstream msg;
      msg << matrix_label("evd", b, count) << ": did not converge in " << options.max_sweeps << " sweeps (off-norm "
          << s.off_norm << ")";
      throw Error(ErrorCode::not_converged, msg.str());
    }
    for (index_t k = 0; k < n; ++k)
      values[b][k] = s.invalid_input ? nan : host_values[std::size_t(b * n + k)];
    if (!vectors.empty())
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i)
          vectors[b](i, j) = s.invalid_input ? T(nan) : host_v[std::size_t(b * nn + i + j * n)];
    if (info) info[b] = s;
  }
}

}  // namespace detail

#define EIGSTREAM_INSTANTIATE(T)                                                                               \
  template void cuda::detail::evd_batched<T>(BatchView<const T>, VectorBatchView<real_t<T>>, BatchView<T>,  \
                                             SolveInfo*, const Options&, cudaStream_t, BatchView<const T>); \
  template void detail::evd_batched_cuda_from_host<T>(BatchView<const T>, VectorBatchView<real_t<T>>,       \
                                                      BatchView<T>, SolveInfo*, const Options&, BatchView<const T>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream
