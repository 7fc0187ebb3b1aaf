// eigbench: eigstream's GPU kernels against cuSOLVER, on identical inputs in the same run.
//
// Cases (see --help): cold batches of covariance matrices, against syevjBatched (n <= 32) and
// XsyevBatched; a warm stream of slowly varying covariances, against cuSOLVER recomputing each step;
// the persistent solver's latency, one matrix at a time, against cuSOLVER's per-call path; and its
// throughput with several host submitters, against the batched kernel; and the cold batch and warm
// stream for the SVD of data blocks (m x n), against gesvdjBatched (m, n <= 32) and
// gesvdaStridedBatched (cuSOLVER's only batched SVD for larger sizes). Batched paths are timed with
// CUDA events (warm-up first, median of repeats), host-to-host paths with the host's steady clock.
// Every path is checked for accuracy on a sample (residual, orthogonality, eigenvalue error against
// eigstream's CPU solver in double); device memory is measured with cudaMemGetInfo. Writes JSON
// (--json) and markdown tables (--markdown).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "eigstream/cuda.hpp"
#include "eigstream/eigstream.hpp"
#include "eigstream/persistent.hpp"

using eigstream::index_t;
using eigstream::real_t;
using json = nlohmann::json;

namespace {

void check(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(s));
}
void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cusolver status " + std::to_string(int(s)));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cublas status " + std::to_string(int(s)));
}

template <class T> struct Traits;
template <> struct Traits<float> {
  static constexpr const char* name = "float";
  static constexpr cudaDataType type = CUDA_R_32F, real = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};
template <> struct Traits<double> {
  static constexpr const char* name = "double";
  static constexpr cudaDataType type = CUDA_R_64F, real = CUDA_R_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
};
template <> struct Traits<std::complex<float>> {
  static constexpr const char* name = "complex float";
  static constexpr cudaDataType type = CUDA_C_32F, real = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};
template <> struct Traits<std::complex<double>> {
  static constexpr const char* name = "complex double";
  static constexpr cudaDataType type = CUDA_C_64F, real = CUDA_R_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
};

// syevjBatched for each scalar type.
cusolverStatus_t syevj_batched_size(cusolverDnHandle_t h, int n, const float* a, const float* w, int* lwork, syevjInfo_t p, int count) {
  return cusolverDnSsyevjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lwork, p, count);
}
cusolverStatus_t syevj_batched_size(cusolverDnHandle_t h, int n, const double* a, const double* w, int* lwork, syevjInfo_t p, int count) {
  return cusolverDnDsyevjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lwork, p, count);
}
cusolverStatus_t syevj_batched_size(cusolverDnHandle_t h, int n, const std::complex<float>* a, const float* w, int* lwork, syevjInfo_t p, int count) {
  return cusolverDnCheevjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<const cuComplex*>(a), n, w, lwork, p, count);
}
cusolverStatus_t syevj_batched_size(cusolverDnHandle_t h, int n, const std::complex<double>* a, const double* w, int* lwork, syevjInfo_t p, int count) {
  return cusolverDnZheevjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<const cuDoubleComplex*>(a), n, w, lwork, p, count);
}
cusolverStatus_t syevj_batched(cusolverDnHandle_t h, int n, float* a, float* w, float* work, int lwork, int* info, syevjInfo_t p, int count) {
  return cusolverDnSsyevjBatched(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, work, lwork, info, p, count);
}
cusolverStatus_t syevj_batched(cusolverDnHandle_t h, int n, double* a, double* w, double* work, int lwork, int* info, syevjInfo_t p, int count) {
  return cusolverDnDsyevjBatched(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, work, lwork, info, p, count);
}
cusolverStatus_t syevj_batched(cusolverDnHandle_t h, int n, std::complex<float>* a, float* w, std::complex<float>* work, int lwork, int* info, syevjInfo_t p, int count) {
  return cusolverDnCheevjBatched(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuComplex*>(a), n, w, reinterpret_cast<cuComplex*>(work), lwork, info, p, count);
}
cusolverStatus_t syevj_batched(cusolverDnHandle_t h, int n, std::complex<double>* a, double* w, std::complex<double>* work, int lwork, int* info, syevjInfo_t p, int count) {
  return cusolverDnZheevjBatched(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex*>(a), n, w, reinterpret_cast<cuDoubleComplex*>(work), lwork, info, p, count);
}

// gesvdjBatched (m, n <= 32) and gesvdaStridedBatched (m >= n) for each scalar type.
#define EIGBENCH_GESVD(T, X, C)                                                                                        \
  cusolverStatus_t gesvdj_batched_size(cusolverDnHandle_t h, int m, int n, const T* a, const real_t<T>* s, const T* u, \
                                       const T* v, int* lwork, gesvdjInfo_t p, int count) {                            \
    return cusolverDn##X##gesvdjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, m, n, reinterpret_cast<const C*>(a), m, s, \
                                                   reinterpret_cast<const C*>(u), m, reinterpret_cast<const C*>(v), n, \
                                                   lwork, p, count);                                                    \
  }                                                                                                                     \
  cusolverStatus_t gesvdj_batched(cusolverDnHandle_t h, int m, int n, T* a, real_t<T>* s, T* u, T* v, T* work,         \
                                  int lwork, int* info, gesvdjInfo_t p, int count) {                                    \
    return cusolverDn##X##gesvdjBatched(h, CUSOLVER_EIG_MODE_VECTOR, m, n, reinterpret_cast<C*>(a), m, s,              \
                                        reinterpret_cast<C*>(u), m, reinterpret_cast<C*>(v), n,                        \
                                        reinterpret_cast<C*>(work), lwork, info, p, count);                            \
  }                                                                                                                     \
  cusolverStatus_t gesvda_batched_size(cusolverDnHandle_t h, int m, int n, const T* a, const real_t<T>* s, const T* u, \
                                       const T* v, int* lwork, int count) {                                             \
    return cusolverDn##X##gesvdaStridedBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, n, m, n,                         \
                                                          reinterpret_cast<const C*>(a), m, (long long)m * n, s, n,    \
                                                          reinterpret_cast<const C*>(u), m, (long long)m * n,           \
                                                          reinterpret_cast<const C*>(v), n, (long long)n * n, lwork,    \
                                                          count);                                                        \
  }                                                                                                                     \
  cusolverStatus_t gesvda_batched(cusolverDnHandle_t h, int m, int n, const T* a, real_t<T>* s, T* u, T* v, T* work,   \
                                  int lwork, int* info, double* residuals, int count) {                                 \
    return cusolverDn##X##gesvdaStridedBatched(h, CUSOLVER_EIG_MODE_VECTOR, n, m, n, reinterpret_cast<const C*>(a), m,  \
                                               (long long)m * n, s, n, reinterpret_cast<C*>(u), m, (long long)m * n,   \
                                               reinterpret_cast<C*>(v), n, (long long)n * n,                            \
                                               reinterpret_cast<C*>(work), lwork, info, residuals, count);              \
  }
EIGBENCH_GESVD(float, S, float)
EIGBENCH_GESVD(double, D, double)
EIGBENCH_GESVD(std::complex<float>, C, cuComplex)
EIGBENCH_GESVD(std::complex<double>, Z, cuDoubleComplex)
#undef EIGBENCH_GESVD

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count = 0) { resize(count); }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) { other.data_ = nullptr; }
  void resize(std::size_t count) {
    cudaFree(data_);
    data_ = nullptr;
    count_ = count;
    if (count) check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)), "cudaMalloc");
  }
  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  std::vector<T> download() const {
    std::vector<T> h(count_);
    check(cudaMemcpy(h.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return h;
  }
  void upload(const std::vector<T>& h) {
    check(cudaMemcpy(data_, h.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// One of cuSOLVER's batched Hermitian EVD routines with its buffers: solve() overwrites a() (count
// packed n x n matrices, lower triangle read) with the eigenvectors and fills w().
template <class T>
class CusolverEvd {
 public:
  // syevjBatched takes n <= 32; XsyevBatched any n.
  static std::vector<std::string> routines(int n) {
    if (n <= 32) return {"syevjBatched", "XsyevBatched"};
    return {"XsyevBatched"};
  }
  // What a cuSOLVER user calls for one matrix at a time: syevjBatched with a batch of one (n <= 32),
  // and the divide-and-conquer Xsyevd.
  static std::vector<std::string> single_routines(int n) {
    if (n <= 32) return {"syevjBatched", "Xsyevd"};
    return {"Xsyevd"};
  }

  CusolverEvd(cusolverDnHandle_t handle, const std::string& routine, int n, index_t count)
      : handle_(handle), syevj_(routine == "syevjBatched"), syevd_(routine == "Xsyevd"), n_(n), count_(count),
        a_(std::size_t(index_t(n) * n * count)), w_(std::size_t(n * count)), info_(std::size_t(count)) {
    if (syevj_) {
      check(cusolverDnCreateSyevjInfo(&syevj_params_), "syevj info");
      check(syevj_batched_size(handle_, n_, a_.get(), w_.get(), &lwork_, syevj_params_, int(count_)), "syevjBatched_bufferSize");
      work_.resize(std::size_t(lwork_));
    } else if (syevd_) {
      if (count != 1) throw std::invalid_argument("Xsyevd solves one matrix");
      check(cusolverDnCreateParams(&params_), "params");
      check(cusolverDnXsyevd_bufferSize(handle_, params_, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n_,
                                        Traits<T>::type, a_.get(), n_, Traits<T>::real, w_.get(), Traits<T>::type,
                                        &device_bytes_, &host_bytes_),
            "Xsyevd_bufferSize");
      device_work_.resize(device_bytes_);
      host_work_.resize(host_bytes_);
    } else {
      check(cusolverDnCreateParams(&params_), "params");
      check(cusolverDnXsyevBatched_bufferSize(handle_, params_, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n_,
                                              Traits<T>::type, a_.get(), n_, Traits<T>::real, w_.get(), Traits<T>::type,
                                              &device_bytes_, &host_bytes_, count_),
            "XsyevBatched_bufferSize");
      device_work_.resize(device_bytes_);
      host_work_.resize(host_bytes_);
    }
  }
  ~CusolverEvd() {
    if (syevj_params_) cusolverDnDestroySyevjInfo(syevj_params_);
    if (params_) cusolverDnDestroyParams(params_);
  }
  CusolverEvd(const CusolverEvd&) = delete;
  CusolverEvd& operator=(const CusolverEvd&) = delete;

  T* a() const { return a_.get(); }
  const DeviceBuffer<T>& vectors() const { return a_; }
  const DeviceBuffer<real_t<T>>& values() const { return w_; }

  void solve() {
    if (syevj_)
      check(syevj_batched(handle_, n_, a_.get(), w_.get(), work_.get(), lwork_, info_.get(), syevj_params_, int(count_)),
            "syevjBatched");
    else if (syevd_)
      check(cusolverDnXsyevd(handle_, params_, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n_, Traits<T>::type,
                             a_.get(), n_, Traits<T>::real, w_.get(), Traits<T>::type, device_work_.get(), device_bytes_,
                             host_work_.data(), host_bytes_, info_.get()),
            "Xsyevd");
    else
      check(cusolverDnXsyevBatched(handle_, params_, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n_, Traits<T>::type,
                                   a_.get(), n_, Traits<T>::real, w_.get(), Traits<T>::type, device_work_.get(),
                                   device_bytes_, host_work_.data(), host_bytes_, info_.get(), count_),
            "XsyevBatched");
  }

 private:
  cusolverDnHandle_t handle_;
  bool syevj_, syevd_;
  int n_;
  index_t count_;
  DeviceBuffer<T> a_;
  DeviceBuffer<real_t<T>> w_;
  DeviceBuffer<int> info_;
  syevjInfo_t syevj_params_ = nullptr;
  int lwork_ = 0;
  DeviceBuffer<T> work_;
  cusolverDnParams_t params_ = nullptr;
  std::size_t device_bytes_ = 0, host_bytes_ = 0;
  DeviceBuffer<char> device_work_;
  std::vector<char> host_work_;
};

// One of cuSOLVER's batched SVD routines with its buffers, for count packed m x n matrices (m >= n):
// solve() reads a() (gesvdjBatched overwrites it) and fills values() (n per matrix), u() (m x n
// leading block of each matrix's U, ld m) and v() (n x n).
template <class T>
class CusolverSvd {
 public:
  static std::vector<std::string> routines(int m, int n) {
    if (m <= 32 && n <= 32) return {"gesvdjBatched", "gesvdaStridedBatched"};
    return {"gesvdaStridedBatched"};
  }

  CusolverSvd(cusolverDnHandle_t handle, const std::string& routine, int m, int n, index_t count)
      : handle_(handle), gesvdj_(routine == "gesvdjBatched"), m_(m), n_(n), count_(count),
        a_(std::size_t(index_t(m) * n * count)), s_(std::size_t(index_t(n) * count)),
        u_(std::size_t(index_t(m) * (gesvdj_ ? m : n) * count)), v_(std::size_t(index_t(n) * n * count)),
        info_(std::size_t(count)), residuals_(std::size_t(count)) {
    if (gesvdj_) {
      check(cusolverDnCreateGesvdjInfo(&params_), "gesvdj info");
      check(gesvdj_batched_size(handle_, m, n, a_.get(), s_.get(), u_.get(), v_.get(), &lwork_, params_, int(count)),
            "gesvdjBatched_bufferSize");
    } else {
      check(gesvda_batched_size(handle_, m, n, a_.get(), s_.get(), u_.get(), v_.get(), &lwork_, int(count)),
            "gesvdaStridedBatched_bufferSize");
    }
    work_.resize(std::size_t(lwork_));
  }
  ~CusolverSvd() {
    if (params_) cusolverDnDestroyGesvdjInfo(params_);
  }
  CusolverSvd(const CusolverSvd&) = delete;
  CusolverSvd& operator=(const CusolverSvd&) = delete;

  T* a() const { return a_.get(); }
  const DeviceBuffer<real_t<T>>& values() const { return s_; }
  // U's first n columns of each matrix, packed m x n (gesvdjBatched writes m x m).
  std::vector<T> thin_u() const {
    const std::vector<T> all = u_.download();
    if (!gesvdj_) return all;
    const std::size_t mn = std::size_t(m_) * n_, mm = std::size_t(m_) * m_;
    std::vector<T> thin(mn * std::size_t(count_));
    for (index_t b = 0; b < count_; ++b) std::copy_n(all.begin() + b * mm, mn, thin.begin() + b * mn);
    return thin;
  }
  std::vector<T> v() const { return v_.download(); }

  void solve() {
    if (gesvdj_)
      check(gesvdj_batched(handle_, m_, n_, a_.get(), s_.get(), u_.get(), v_.get(), work_.get(), lwork_, info_.get(),
                           params_, int(count_)),
            "gesvdjBatched");
    else  // the residual norms it returns on the host make this call synchronous
      check(gesvda_batched(handle_, m_, n_, a_.get(), s_.get(), u_.get(), v_.get(), work_.get(), lwork_, info_.get(),
                           residuals_.data(), int(count_)),
            "gesvdaStridedBatched");
  }

 private:
  cusolverDnHandle_t handle_;
  bool gesvdj_;
  int m_, n_;
  index_t count_;
  DeviceBuffer<T> a_;
  DeviceBuffer<real_t<T>> s_;
  DeviceBuffer<T> u_, v_;
  DeviceBuffer<int> info_;
  std::vector<double> residuals_;
  gesvdjInfo_t params_ = nullptr;
  int lwork_ = 0;
  DeviceBuffer<T> work_;
};

std::size_t device_used() {
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return total - free;
}

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
};

// Runs prepare() then times solve() with events on `stream`, `repeat` times after one warm-up.
Timing time_it(cudaStream_t stream, int repeat, const std::function<void()>& prepare, const std::function<void()>& solve) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event"), check(cudaEventCreate(&stop), "event");
  std::vector<double> ms;
  for (int r = 0; r <= repeat; ++r) {
    prepare();
    check(cudaEventRecord(start, stream), "record");
    solve();
    check(cudaEventRecord(stop, stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    if (r > 0) ms.push_back(t);  // r == 0 is the warm-up
  }
  cudaEventDestroy(start), cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

template <class T> T gaussian(std::mt19937_64& rng) {
  std::normal_distribution<double> d;
  if constexpr (eigstream::is_complex_v<T>) return T(real_t<T>(d(rng)), real_t<T>(d(rng)));
  else return T(d(rng));
}

// Covariance-like inputs generated on the GPU: A_b = M_b Z Z^H M_b^H / L, with M_b a fixed random
// mixing whose column j is scaled by 0.85^j (a spread, realistic spectrum) and Z Gaussian n x L.
template <class T>
class CovarianceSource {
 public:
  CovarianceSource(cublasHandle_t blas, int n, index_t count, std::uint64_t seed)
      : blas_(blas), n_(n), count_(count), rng_(seed), mixing_(std::size_t(n) * n * count),
        snapshots_(std::size_t(n) * n * count), block_(std::size_t(n) * n * count) {
    std::vector<T> m(mixing_.size());
    for (index_t b = 0; b < count; ++b)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) m[std::size_t(b * n * n + i + j * n)] = gaussian<T>(rng_) * real_t<T>(std::pow(0.85, j));
    mixing_.upload(m);
  }

  // a = forget * a + (1 - forget) * (new block's covariance); forget = 0 gives a fresh covariance.
  void next(T* a, double forget) {
    std::vector<T> z(snapshots_.size());
    for (auto& x : z) x = gaussian<T>(rng_);
    snapshots_.upload(z);
    const int n = n_;
    const long long nn = (long long)n * n;
    const T one(1), zero(0);
    // X = M Z, then A = forget A + (1 - forget) / L X X^H with L = n snapshots.
    check(cublasGemmStridedBatchedEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, mixing_.get(), Traits<T>::type, n, nn,
                                     snapshots_.get(), Traits<T>::type, n, nn, &zero, block_.get(), Traits<T>::type, n, nn,
                                     int(count_), Traits<T>::compute, CUBLAS_GEMM_DEFAULT), "gemm M Z");
    const T alpha{real_t<T>((1 - forget) / n)}, beta{real_t<T>(forget)};
    check(cublasGemmStridedBatchedEx(blas_, CUBLAS_OP_N, eigstream::is_complex_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T, n, n, n,
                                     &alpha, block_.get(), Traits<T>::type, n, nn, block_.get(), Traits<T>::type, n, nn,
                                     &beta, a, Traits<T>::type, n, nn, int(count_), Traits<T>::compute, CUBLAS_GEMM_DEFAULT),
          "gemm X X^H");
    check(cudaDeviceSynchronize(), "generate");
  }

 private:
  cublasHandle_t blas_;
  int n_;
  index_t count_;
  std::mt19937_64 rng_;
  DeviceBuffer<T> mixing_, snapshots_, block_;
};

struct Accuracy {
  double residual = 0, orthogonality = 0, value_error = 0;  // worst over the sample
  json to_json() const { return {{"residual", residual}, {"orthogonality", orthogonality}, {"value_error", value_error}}; }
};

// Worst residual, orthogonality, and eigenvalue error relative to ||A||_2 against eigstream's CPU
// solver in double, over the first `sample` matrices. Values may come in any order (sorted here).
template <class T>
Accuracy measure(const std::vector<T>& a, const std::vector<real_t<T>>& w, const std::vector<T>& v, int n, index_t sample) {
  using D = std::conditional_t<eigstream::is_complex_v<T>, std::complex<double>, double>;
  Accuracy acc;
  const index_t nn = index_t(n) * n;
  for (index_t b = 0; b < sample; ++b) {
    const T* ab = a.data() + b * nn;
    std::vector<real_t<T>> wb(w.begin() + b * n, w.begin() + (b + 1) * n);
    acc.residual = std::max(acc.residual, eigstream::evd_residual<T>(eigstream::matrix(ab, n, n), wb.data(),
                                                                      eigstream::matrix(v.data() + b * nn, n, n)));
    acc.orthogonality = std::max(acc.orthogonality, eigstream::orthogonality<T>(eigstream::matrix(v.data() + b * nn, n, n)));
    std::vector<D> ad(ab, ab + nn);
    std::vector<double> ref(static_cast<std::size_t>(n));
    eigstream::Options cpu;
    cpu.backend = eigstream::Backend::cpu;
    cpu.symmetry_tol = 1e-4;  // the float input is Hermitian to float precision
    eigstream::evd(eigstream::matrix<const D>(ad.data(), n, n), ref.data(), {}, cpu);
    std::sort(wb.begin(), wb.end(), std::greater<>());
    const double norm2 = std::max(std::abs(ref.front()), std::abs(ref.back()));
    for (int i = 0; i < n; ++i)
      acc.value_error = std::max(acc.value_error, std::abs(double(wb[std::size_t(i)]) - ref[std::size_t(i)]) / (norm2 > 0 ? norm2 : 1));
  }
  return acc;
}

// Floating-point operations of one two-sided Jacobi sweep on an n x n matrix with vectors:
// n(n-1)/2 rotations, each updating two columns of A, two rows of A and two columns of V (6n real
// multiply-adds... 18n flops real; a complex multiply-add is 4 real ones, so 4x for complex).
template <class T>
double flops_per_sweep(int n) {
  return (eigstream::is_complex_v<T> ? 4.0 : 1.0) * 9.0 * n * n * (n - 1);
}

// The best of cuSOLVER's routines in one case by the number at `key` (a JSON pointer): the lowest
// when `lowest` (times), else the highest (rates). `results` is an array of objects that name their
// "routine", or an object keyed by routine; a routine without the number (it failed) is passed over,
// and with none left the best is "none".
struct BestRoutine {
  std::string name = "none";
  double value = 0;
  // Ours against it: `ours` over the best for rates, the best over `ours` for times; 0 without one.
  double ratio(double ours, bool lowest) const { return name == "none" ? 0.0 : lowest ? value / ours : ours / value; }
};

BestRoutine best_routine(const json& results, const std::string& key, bool lowest) {
  const json::json_pointer at(key);
  BestRoutine best;
  for (const auto& [name, r] : results.items()) {
    if (!r.contains(at)) continue;
    const double v = r.at(at).get<double>();
    if (best.name == "none" || (lowest ? v < best.value : v > best.value))
      best = {r.contains("routine") ? r["routine"].get<std::string>() : name, v};
  }
  return best;
}

struct Context {
  cusolverDnHandle_t solver;
  cublasHandle_t blas;
  cudaStream_t stream;
  int repeat;
  index_t sample;
  int reorthonormalise_every;  // EVD warm stream and latency: the Newton-Schulz step on one link in this many
  int idle_sleep_ns;           // latency and submitters: the persistent solver's idle_sleep_ns; 0: its default
};

template <class T>
json cold_case(Context& ctx, int n, index_t count) {
  using R = real_t<T>;
  const index_t nn = index_t(n) * n;
  DeviceBuffer<T> a{std::size_t(nn * count)};
  CovarianceSource<T>(ctx.blas, n, count, 1234 + n).next(a.get(), 0.0);
  const std::vector<T> host_a = a.download();
  json out = {{"case", "cold batch"}, {"type", Traits<T>::name}, {"n", n}, {"count", count}};

  {  // eigstream
    const std::size_t before = device_used();
    DeviceBuffer<R> w{std::size_t(n * count)};
    DeviceBuffer<T> v{std::size_t(nn * count)};
    DeviceBuffer<eigstream::SolveInfo> info{std::size_t(count)};
    eigstream::Options o;
    auto run = [&] {
      eigstream::cuda::evd_batched(eigstream::batch<const T>(a.get(), n, n, count), eigstream::vectors(w.get(), n, count),
                                   eigstream::batch(v.get(), n, n, count), info.get(), o, ctx.stream);
    };
    const Timing t = time_it(ctx.stream, ctx.repeat, [] {}, run);
    check(cudaGetLastError(), "eigstream kernel");
    const std::size_t bytes = device_used() - before;
    const auto infos = info.download();
    double sweeps = 0;
    index_t converged = 0;
    for (const auto& i : infos) sweeps += i.sweeps, converged += i.converged;
    sweeps /= double(count);
    const Accuracy acc = measure<T>(host_a, w.download(), v.download(), n, ctx.sample);
    out["eigstream"] = {{"ms", t.median_ms}, {"min_ms", t.min_ms}, {"us_per_matrix", 1e3 * t.median_ms / count},
                        {"mean_sweeps", sweeps}, {"converged", converged}, {"device_bytes", bytes},
                        {"gflops", flops_per_sweep<T>(n) * sweeps * count / (t.median_ms * 1e6)},
                        {"accuracy", acc.to_json()}};
  }
  json cusolver = json::array();
  for (const std::string& routine : CusolverEvd<T>::routines(n)) {
    const std::size_t before = device_used();
    CusolverEvd<T> solver(ctx.solver, routine, n, count);
    auto copy_in = [&] {
      check(cudaMemcpyAsync(solver.a(), a.get(), nn * count * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream), "copy");
    };
    const Timing t = time_it(ctx.stream, ctx.repeat, copy_in, [&] { solver.solve(); });
    const std::size_t bytes = device_used() - before;
    const Accuracy acc = measure<T>(host_a, solver.values().download(), solver.vectors().download(), n, ctx.sample);
    cusolver.push_back({{"routine", routine}, {"ms", t.median_ms}, {"min_ms", t.min_ms},
                        {"us_per_matrix", 1e3 * t.median_ms / count}, {"device_bytes", bytes}, {"accuracy", acc.to_json()}});
  }
  out["cusolver"] = cusolver;
  const BestRoutine best = best_routine(cusolver, "/ms", true);
  out["best_cusolver"] = best.name;
  out["speedup"] = best.ratio(out["eigstream"]["ms"].get<double>(), true);
  return out;
}

// Times steps 1..steps of a stream, each step's solve(s) between two events on `stream` (what
// prepare(s) enqueues before it is not timed); returns the sum of the steps' spans in ms. Waiting
// for each step before the next (back_to_back false) counts the launch's latency in every step, as a
// caller pays who needs each result on the host first; back to back, every step is enqueued before
// the host waits once, as a stream runs whose steps depend on each other only on the GPU.
double time_steps(cudaStream_t stream, int steps, bool back_to_back, const std::function<void(int)>& prepare,
                  const std::function<void(int)>& solve) {
  std::vector<cudaEvent_t> events(std::size_t(2 * steps));
  for (auto& e : events) check(cudaEventCreate(&e), "event");
  for (int s = 1; s <= steps; ++s) {
    prepare(s);
    check(cudaEventRecord(events[std::size_t(2 * s - 2)], stream), "record");
    solve(s);
    check(cudaEventRecord(events[std::size_t(2 * s - 1)], stream), "record");
    if (!back_to_back) check(cudaEventSynchronize(events[std::size_t(2 * s - 1)]), "sync");
  }
  check(cudaStreamSynchronize(stream), "sync");
  double ms = 0;
  for (int s = 0; s < steps; ++s) {
    float t = 0;
    check(cudaEventElapsedTime(&t, events[std::size_t(2 * s)], events[std::size_t(2 * s + 1)]), "elapsed");
    ms += t;
  }
  for (auto& e : events) cudaEventDestroy(e);
  return ms;
}

// A stream of covariances with exponential forgetting, each step warm-started from the last V; timed
// step by step (the host waiting for each) and back to back (time_steps).
template <class T>
json warm_case(Context& ctx, int n, index_t count, int steps) {
  using R = real_t<T>;
  const index_t nn = index_t(n) * n;
  CovarianceSource<T> source(ctx.blas, n, count, 99 + n);
  std::vector<DeviceBuffer<T>> a;
  a.reserve(std::size_t(steps + 1));
  a.emplace_back(std::size_t(nn * count));
  source.next(a[0].get(), 0.0);
  for (int s = 1; s <= steps; ++s) {
    a.emplace_back(std::size_t(nn * count));
    check(cudaMemcpy(a[s].get(), a[s - 1].get(), nn * count * sizeof(T), cudaMemcpyDeviceToDevice), "copy");
    source.next(a[s].get(), 0.95);
  }
  json out = {{"case", "warm stream"}, {"type", Traits<T>::name}, {"n", n}, {"count", count}, {"steps", steps},
              {"forgetting", 0.95}, {"reorthonormalise_every", ctx.reorthonormalise_every}};
  DeviceBuffer<R> w{std::size_t(n * count)};
  DeviceBuffer<T> v[2] = {DeviceBuffer<T>(std::size_t(nn * count)), DeviceBuffer<T>(std::size_t(nn * count))};
  DeviceBuffer<eigstream::SolveInfo> info{std::size_t(count * (steps + 1))};  // step s's at s * count
  auto solve = [&](int s) {
    eigstream::Options o;
    o.reorthonormalise = s % ctx.reorthonormalise_every == 0;
    eigstream::cuda::evd_batched(eigstream::batch<const T>(a[s].get(), n, n, count), eigstream::vectors(w.get(), n, count),
                                 eigstream::batch(v[s % 2].get(), n, n, count), info.get() + s * count, o, ctx.stream,
                                 s > 0 ? eigstream::batch<const T>(v[(s + 1) % 2].get(), n, n, count)
                                       : eigstream::BatchView<const T>{});
  };
  auto no_prepare = [](int) {};
  solve(0), solve(1);  // untimed, as every timed path starts: the first launch of a kernel loads it
  double ms[2];  // step by step, back to back
  for (bool back_to_back : {false, true}) {
    solve(0);  // cold; every run of the stream starts from it
    check(cudaStreamSynchronize(ctx.stream), "sync");
    ms[back_to_back] = time_steps(ctx.stream, steps, back_to_back, no_prepare, solve);
  }
  // Mean sweeps, and the mean over steps of a step's most: a batch that fits the GPU in one wave
  // takes as long as its slowest matrix.
  double sweeps = 0, most_sweeps = 0;
  const std::vector<eigstream::SolveInfo> infos = info.download();
  for (int s = 1; s <= steps; ++s) {
    int most = 0;
    for (index_t k = s * count; k < (s + 1) * count; ++k) {
      sweeps += infos[std::size_t(k)].sweeps;
      most = std::max(most, infos[std::size_t(k)].sweeps);
    }
    most_sweeps += most;
  }
  sweeps /= double(count) * steps;
  most_sweeps /= steps;
  const Accuracy acc = measure<T>(a[steps].download(), w.download(), v[steps % 2].download(), n, ctx.sample);
  const double matrices = double(count) * steps;
  out["eigstream"] = {{"matrices_per_second", matrices / (ms[0] * 1e-3)},
                      {"back_to_back_matrices_per_second", matrices / (ms[1] * 1e-3)},
                      {"mean_sweeps", sweeps}, {"mean_most_sweeps", most_sweeps}, {"accuracy_last_step", acc.to_json()}};

  // cuSOLVER recomputes every step cold: the faster of its batched routines. Its input is copied
  // into place before each step's span (the routines overwrite it).
  json routines = json::object();
  for (const std::string& routine : CusolverEvd<T>::routines(n)) {
    CusolverEvd<T> solver(ctx.solver, routine, n, count);
    auto copy_in = [&](int s) {
      check(cudaMemcpyAsync(solver.a(), a[s].get(), nn * count * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream), "copy");
    };
    // One untimed solve first, as every other timed path has: the first call loads the routine's
    // kernels (lazy module loading), which made this path half as fast when no earlier case had
    // run it.
    copy_in(0);
    solver.solve();
    check(cudaStreamSynchronize(ctx.stream), "sync");
    double cusolver_ms[2];
    for (bool back_to_back : {false, true})
      cusolver_ms[back_to_back] = time_steps(ctx.stream, steps, back_to_back, copy_in, [&](int) { solver.solve(); });
    routines[routine] = {{"matrices_per_second", matrices / (cusolver_ms[0] * 1e-3)},
                         {"back_to_back_matrices_per_second", matrices / (cusolver_ms[1] * 1e-3)}};
  }
  const BestRoutine best = best_routine(routines, "/matrices_per_second", false);
  const BestRoutine best_back_to_back = best_routine(routines, "/back_to_back_matrices_per_second", false);
  out["cusolver_cold"] = routines;
  out["best_cusolver"] = best.name;
  out["speedup"] = best.ratio(out["eigstream"]["matrices_per_second"].get<double>(), false);
  out["best_cusolver_back_to_back"] = best_back_to_back.name;
  out["speedup_back_to_back"] = best_back_to_back.ratio(out["eigstream"]["back_to_back_matrices_per_second"].get<double>(), false);
  return out;
}

// Pinned host memory mapped into the device's address space (the persistent solver reads its inputs
// and writes its outputs there). Allocate before a PersistentSolver starts: cudaFreeHost waits for the
// whole device, so these must be freed after the solver has stopped.
template <class X>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    check(cudaHostAlloc(reinterpret_cast<void**>(&data_), count * sizeof(X), cudaHostAllocMapped), "cudaHostAlloc");
  }
  ~PinnedBuffer() { cudaFreeHost(data_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  X* get() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  X* data_ = nullptr;
  std::size_t count_;
};

// A slowly varying covariance on the host: A <- forget A + (1 - forget) X X^H / L, X = M Z with Z
// Gaussian n x L (L = 8 snapshots per step), M the same spread mixing as CovarianceSource. The first
// matrix is a fresh covariance of 4n snapshots.
template <class T>
class DriftingCovariance {
 public:
  DriftingCovariance(int n, std::uint64_t seed) : n_(n), rng_(seed), m_(std::size_t(n) * n), a_(std::size_t(n) * n) {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) m_[std::size_t(i + j * n)] = gaussian<T>(rng_) * real_t<T>(std::pow(0.85, j));
    update(4 * n, 0.0);
  }
  const std::vector<T>& next() {
    update(8, 0.95);
    return a_;
  }
  const std::vector<T>& current() const { return a_; }

 private:
  void update(int snapshots, double forget) {
    const int n = n_;
    std::vector<T> x(std::size_t(n) * snapshots, T(0));
    for (int k = 0; k < snapshots; ++k)
      for (int j = 0; j < n; ++j) {
        const T z = gaussian<T>(rng_);
        for (int i = 0; i < n; ++i) x[std::size_t(i + k * n)] += m_[std::size_t(i + j * n)] * z;
      }
    const real_t<T> keep = real_t<T>(forget), add = real_t<T>((1 - forget) / snapshots);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        T sum(0);
        for (int k = 0; k < snapshots; ++k) sum += x[std::size_t(i + k * n)] * conj_of(x[std::size_t(j + k * n)]);
        T& aij = a_[std::size_t(i + j * n)];
        aij = keep * aij + add * sum;
        if (i == j) aij = T(std::real(aij));
        a_[std::size_t(j + i * n)] = conj_of(aij);
      }
  }
  static T conj_of(T x) {
    if constexpr (eigstream::is_complex_v<T>) return std::conj(x); else return x;
  }
  int n_;
  std::mt19937_64 rng_;
  std::vector<T> m_, a_;
};

struct Percentiles {
  double p50_us = 0, p99_us = 0, max_us = 0;
  json to_json() const { return {{"p50_us", p50_us}, {"p99_us", p99_us}, {"max_us", max_us}}; }
};
Percentiles percentiles(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  const std::size_t n = us.size();
  return {us[n / 2], us[std::min(n - 1, std::size_t(std::ceil(0.99 * double(n))) - 1)], us.back()};
}

double microseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// One matrix at a time, warm-started from the previous result: latency from host submit to the
// result visible on the host, persistent solver (inputs and outputs in mapped pinned memory) against
// the per-call path a cuSOLVER user writes (copy in, solve cold, copy out, synchronise).
template <class T>
json latency_case(Context& ctx, int n, int items, int warmup) {
  using R = real_t<T>;
  const std::size_t nn = std::size_t(n) * n;
  json out = {{"case", "latency"}, {"type", Traits<T>::name}, {"n", n}, {"items", items},
              {"reorthonormalise_every", ctx.reorthonormalise_every}};
  const int total = warmup + items;
  std::vector<T> inputs(nn * std::size_t(total));  // the same sequence for every path
  {
    DriftingCovariance<T> source(n, 4242 + n);
    for (int k = 0; k < total; ++k) std::copy_n(source.next().begin(), nn, inputs.begin() + std::ptrdiff_t(nn * k));
  }
  const int sample_every = std::max(1, items / int(ctx.sample));
  auto is_sample = [&](int k) { return k >= warmup && (k - warmup) % sample_every == 0; };
  PinnedBuffer<T> a{nn}, v{2 * nn};
  PinnedBuffer<R> w{static_cast<std::size_t>(n)};
  PinnedBuffer<eigstream::SolveInfo> info{1};
  std::vector<T> sample_a, sample_v;
  std::vector<R> sample_w;
  auto keep_sample = [&](int k, const T* vk) {
    sample_a.insert(sample_a.end(), inputs.begin() + std::ptrdiff_t(nn * k), inputs.begin() + std::ptrdiff_t(nn * (k + 1)));
    sample_w.insert(sample_w.end(), w.get(), w.get() + n);
    sample_v.insert(sample_v.end(), vk, vk + nn);
  };

  // eigstream's persistent solver, in the latency mapping (a block per item) and the throughput one.
  auto persistent = [&](bool block_per_item) {
    sample_a.clear(), sample_w.clear(), sample_v.clear();
    eigstream::cuda::PersistentOptions o;
    o.max_n = n;
    o.block_per_item = block_per_item;
    if (ctx.idle_sleep_ns > 0) o.idle_sleep_ns = ctx.idle_sleep_ns;
    eigstream::cuda::PersistentSolver<T> solver(o);
    std::vector<double> us;
    double sweeps = 0;
    for (int k = 0; k < total; ++k) {
      std::copy_n(inputs.begin() + std::ptrdiff_t(nn * k), nn, a.get());
      T* v_out = v.get() + nn * std::size_t(k % 2);
      eigstream::cuda::EvdItem<T> item;
      item.a = a.get(), item.lda = n, item.values = w.get(), item.vectors = v_out, item.ldv = n;
      if (k > 0) item.warm_start = v.get() + nn * std::size_t((k + 1) % 2), item.ldw = n;
      item.reorthonormalise = k % ctx.reorthonormalise_every == 0;
      item.info = info.get(), item.n = n;
      const auto t0 = std::chrono::steady_clock::now();
      const auto ticket = solver.submit(item);
      solver.wait(*ticket);
      const double t = microseconds_since(t0);
      if (k < warmup) continue;
      us.push_back(t);
      sweeps += info.get()->sweeps;
      if (is_sample(k)) keep_sample(k, v_out);
    }
    const auto c = solver.counters();
    solver.shutdown();
    const index_t samples = index_t(sample_w.size() / std::size_t(n));
    return json{{"path", std::string("PersistentSolver, mapped pinned memory, ") +
                             (block_per_item ? "a block per item" : "lanes of a warp per item (n <= 32)")},
                {"latency", percentiles(us).to_json()}, {"mean_sweeps", sweeps / items}, {"failed", c.failed},
                {"consumers", solver.consumers()}, {"idle_sleep_ns", o.idle_sleep_ns},
                {"accuracy", measure<T>(sample_a, sample_w, sample_v, n, samples).to_json()}};
  };
  out["eigstream"] = persistent(true);
  out["eigstream_throughput_mapping"] = persistent(false);
  json cusolver = json::array();
  for (const std::string& routine : CusolverEvd<T>::single_routines(n)) {
    CusolverEvd<T> solver(ctx.solver, routine, n, 1);
    sample_a.clear(), sample_w.clear(), sample_v.clear();
    std::vector<double> us;
    for (int k = 0; k < total; ++k) {
      std::copy_n(inputs.begin() + std::ptrdiff_t(nn * k), nn, a.get());
      const auto t0 = std::chrono::steady_clock::now();
      check(cudaMemcpyAsync(solver.a(), a.get(), nn * sizeof(T), cudaMemcpyHostToDevice, ctx.stream), "copy in");
      solver.solve();
      check(cudaMemcpyAsync(w.get(), solver.values().get(), std::size_t(n) * sizeof(R), cudaMemcpyDeviceToHost, ctx.stream),
            "copy out");
      check(cudaMemcpyAsync(v.get(), solver.vectors().get(), nn * sizeof(T), cudaMemcpyDeviceToHost, ctx.stream), "copy out");
      check(cudaStreamSynchronize(ctx.stream), "sync");
      const double t = microseconds_since(t0);
      if (k < warmup) continue;
      us.push_back(t);
      if (is_sample(k)) keep_sample(k, v.get());
    }
    const index_t samples = index_t(sample_w.size() / std::size_t(n));
    cusolver.push_back({{"routine", routine}, {"path", "copy in, solve cold, copy out, synchronise"},
                        {"latency", percentiles(us).to_json()},
                        {"accuracy", measure<T>(sample_a, sample_w, sample_v, n, samples).to_json()}});
  }
  out["cusolver"] = cusolver;
  const BestRoutine best = best_routine(cusolver, "/latency/p99_us", true);
  out["best_cusolver"] = best.name;
  out["p99_ratio"] = best.ratio(out["eigstream"]["latency"]["p99_us"].get<double>(), true);
  return out;
}

// How the submitters case feeds the persistent solver (eigbench's options of the same names).
struct Submitters {
  int threads = 4;
  int matrices_per_submit = 64;  // the items' count
  int rounds = 8;                // passes over the batch in one timed run
  int sms = 0;                   // the solver's option; 0: its default
  int park_after_us = -1;        // -1: the solver's default
};

// Throughput with many host submitters: `threads` threads submit the matrices of a cold batch (in
// device memory) to a persistent solver in items of `matrices_per_submit`, `rounds` times over (each
// pass rewrites the same outputs with the same results, so only the last is checked); against the
// batched kernel on the same batch. The threads start before the clock. At the default 8 rounds a
// float 8 run lasts about 0.5 ms, of which the first and last items' trips take about 15%; more
// rounds measure the steady rate (bench/results/2026-11-26-h200-submitters-run-length.md). The ring holds every item of a run,
// so a submit never waits for room, and the rate of the submits alone (until the last returned) shows
// whether the host or the device limits.
template <class T>
json submitters_case(Context& ctx, int n, index_t count, const Submitters& how) {
  using R = real_t<T>;
  const index_t nn = index_t(n) * n;
  DeviceBuffer<T> a{std::size_t(nn * count)}, v{std::size_t(nn * count)};
  DeviceBuffer<R> w{std::size_t(n * count)};
  DeviceBuffer<eigstream::SolveInfo> info{std::size_t(count)};
  CovarianceSource<T>(ctx.blas, n, count, 777 + n).next(a.get(), 0.0);
  const index_t per_item = std::min<index_t>(how.matrices_per_submit, count);
  const index_t items = (count + per_item - 1) / per_item;
  json out = {{"case", "submitters"}, {"type", Traits<T>::name}, {"n", n}, {"count", count}, {"threads", how.threads},
              {"matrices_per_submit", per_item}, {"rounds", how.rounds}};
  eigstream::Options o;
  const Timing batched = time_it(ctx.stream, ctx.repeat, [] {}, [&] {
    eigstream::cuda::evd_batched(eigstream::batch<const T>(a.get(), n, n, count), eigstream::vectors(w.get(), n, count),
                                 eigstream::batch(v.get(), n, n, count), info.get(), o, ctx.stream);
  });
  out["batched_matrices_per_second"] = count / (batched.median_ms * 1e-3);

  eigstream::cuda::PersistentOptions po;
  po.max_n = n;
  po.sms = how.sms;
  po.capacity = std::uint64_t(items * how.rounds);  // room for a whole run: submits never wait for a slot
  if (ctx.idle_sleep_ns > 0) po.idle_sleep_ns = ctx.idle_sleep_ns;
  if (how.park_after_us >= 0) po.park_after_us = how.park_after_us;
  // Cleared on eigbench's stream, not the legacy default stream, which would wait for the resident
  // kernel to park (and, with parking off, forever); cleared once before the solver starts so that
  // nothing is loaded while it runs.
  const auto clear_info = [&] {
    check(cudaMemsetAsync(info.get(), 0, std::size_t(count) * sizeof(eigstream::SolveInfo), ctx.stream), "clear");
    check(cudaStreamSynchronize(ctx.stream), "clear");
  };
  clear_info();
  eigstream::cuda::PersistentSolver<T> solver(po);
  std::vector<double> rates, submit_rates;
  // When the last run's items (in tickets, in any order) were a tenth, two tenths, ... all finished:
  // whether a run is slow to start, slow throughout, or slow to end.
  std::vector<double> finished_us;
  double submitted_last = 0;  // when the last run's last submit returned
  const std::uint64_t run_items = std::uint64_t(items * how.rounds);
  for (int r = 0; r <= ctx.repeat; ++r) {
    clear_info();
    // The threads are started before the clock and wait for `go`: a stream's submitters live long,
    // and starting them is no part of the solver's rate.
    std::chrono::steady_clock::time_point t0;
    std::atomic<bool> go{false};
    const auto wait_for_go = [&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    };
    std::thread watch;
    if (r == ctx.repeat)
      watch = std::thread([&, first = std::uint64_t(r) * run_items] {
        wait_for_go();
        std::vector<bool> done(run_items);
        std::uint64_t finished = 0;
        while (finished < run_items) {
          for (std::uint64_t k = 0; k < run_items; ++k)
            if (!done[k] && solver.poll(eigstream::cuda::Ticket{first + k, false}) != eigstream::cuda::ItemState::pending)
              done[k] = true, ++finished;
          while (finished_us.size() < 10 && finished * 10 >= (finished_us.size() + 1) * run_items)
            finished_us.push_back(microseconds_since(t0));
        }
      });
    std::vector<double> submitted_us(static_cast<std::size_t>(how.threads));  // when each thread's last submit returned
    std::vector<std::thread> pool;
    for (int t = 0; t < how.threads; ++t)
      pool.emplace_back([&, t] {
        std::vector<eigstream::cuda::Ticket> tickets;
        tickets.reserve(std::size_t(run_items / std::uint64_t(how.threads) + 1));
        wait_for_go();
        for (int round = 0; round < how.rounds; ++round)
          for (index_t k = t; k < items; k += how.threads) {
            const index_t first = k * per_item;
            eigstream::cuda::EvdItem<T> item;
            item.a = a.get() + first * nn, item.lda = n, item.stride_a = nn;
            item.values = w.get() + first * n, item.stride_values = n;
            item.vectors = v.get() + first * nn, item.ldv = n, item.stride_vectors = nn;
            item.info = info.get() + first, item.n = n;
            item.count = int(std::min(per_item, count - first));
            tickets.push_back(*solver.submit(item));
          }
        submitted_us[std::size_t(t)] = microseconds_since(t0);
        for (const auto& ticket : tickets) solver.wait(ticket);  // items finish in any order
      });
    t0 = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
    const double seconds = microseconds_since(t0) * 1e-6;
    if (watch.joinable()) watch.join();
    submitted_last = *std::max_element(submitted_us.begin(), submitted_us.end());
    if (r == 0) continue;  // the warm-up
    rates.push_back(double(count) * how.rounds / seconds);
    submit_rates.push_back(double(run_items) / (submitted_last * 1e-6));
  }
  std::sort(rates.begin(), rates.end());
  std::sort(submit_rates.begin(), submit_rates.end());
  const auto c = solver.counters();
  solver.shutdown();
  index_t converged = 0;
  for (const auto& i : info.download()) converged += i.converged;
  const Accuracy acc = measure<T>(a.download(), w.download(), v.download(), n, ctx.sample);
  out["eigstream"] = {{"matrices_per_second", rates[rates.size() / 2]},
                      {"submits_per_second", submit_rates[submit_rates.size() / 2]}, {"consumers", solver.consumers()},
                      {"last_run_tenths_finished_us", finished_us}, {"last_run_submitted_us", submitted_last},
                      {"completed", c.completed}, {"launches", c.launches}, {"park_after_us", po.park_after_us},
                      {"converged_last_run", converged}, {"accuracy", acc.to_json()}};
  out["ratio_to_batched"] = rates[rates.size() / 2] / out["batched_matrices_per_second"].get<double>();
  return out;
}

// Data blocks (channels x snapshots, or the reverse): Gaussian m x n with column j scaled by 0.85^j,
// a spread spectrum; generated on the host, count packed matrices.
template <class T>
std::vector<T> data_blocks(int m, int n, index_t count, std::mt19937_64& rng) {
  std::vector<T> a(std::size_t(index_t(m) * n * count));
  std::vector<real_t<T>> scale(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) scale[std::size_t(j)] = real_t<T>(std::pow(0.85, j));
  for (std::size_t idx = 0; idx < a.size(); ++idx) a[idx] = gaussian<T>(rng) * scale[idx / std::size_t(m) % std::size_t(n)];
  return a;
}

// Worst residual ||A V - U S||_F / ||A||_F, orthogonality of U and V (the worse), and singular value
// error relative to ||A||_2 against eigstream's CPU solver in double, over the first `sample` matrices.
template <class T>
Accuracy measure_svd(const std::vector<T>& a, const std::vector<real_t<T>>& s, const std::vector<T>& u,
                     const std::vector<T>& v, int m, int n, index_t sample) {
  using D = std::conditional_t<eigstream::is_complex_v<T>, std::complex<double>, double>;
  Accuracy acc;
  const index_t mn = index_t(m) * n, nn = index_t(n) * n;
  for (index_t b = 0; b < sample; ++b) {
    const auto ab = eigstream::matrix(a.data() + b * mn, m, n);
    const auto ub = eigstream::matrix(u.data() + b * mn, m, n);
    const auto vb = eigstream::matrix(v.data() + b * nn, n, n);
    acc.residual = std::max(acc.residual, eigstream::svd_residual<T>(ab, s.data() + b * n, ub, vb));
    acc.orthogonality = std::max({acc.orthogonality, eigstream::orthogonality<T>(ub), eigstream::orthogonality<T>(vb)});
    std::vector<D> ad(a.begin() + b * mn, a.begin() + (b + 1) * mn);
    std::vector<double> ref(static_cast<std::size_t>(n));
    eigstream::Options cpu;
    cpu.backend = eigstream::Backend::cpu;
    eigstream::svd(eigstream::matrix<const D>(ad.data(), m, n), ref.data(), {}, {}, cpu);
    std::vector<real_t<T>> sb(s.begin() + b * n, s.begin() + (b + 1) * n);
    std::sort(sb.begin(), sb.end(), std::greater<>());
    for (int i = 0; i < n; ++i)
      acc.value_error = std::max(acc.value_error, std::abs(double(sb[std::size_t(i)]) - ref[std::size_t(i)]) / (ref[0] > 0 ? ref[0] : 1));
  }
  return acc;
}

// Floating-point operations of one one-sided Jacobi sweep on m x n with V: n(n-1)/2 pairs, each
// three dot products over m (6m flops, real) and the rotation of two columns of G (6m) and of V
// (6n); a complex multiply-add is 4 real ones.
template <class T>
double svd_flops_per_sweep(int m, int n) {
  return (eigstream::is_complex_v<T> ? 4.0 : 1.0) * 0.5 * n * (n - 1) * (12.0 * m + 6.0 * n);
}

// eigstream's batched SVD on device memory: U m x n and V n x n (so no workspace is needed).
template <class T>
struct OurSvd {
  int m, n;
  index_t count;
  DeviceBuffer<real_t<T>> s;
  DeviceBuffer<T> u, v;
  DeviceBuffer<eigstream::SolveInfo> info;
  OurSvd(int m_, int n_, index_t count_)
      : m(m_), n(n_), count(count_), s(std::size_t(index_t(n) * count)), u(std::size_t(index_t(m) * n * count)),
        v(std::size_t(index_t(n) * n * count)), info(std::size_t(count)) {}
  void solve(const T* a, cudaStream_t stream, const T* warm = nullptr) {
    eigstream::cuda::svd_batched(eigstream::batch<const T>(a, m, n, count), eigstream::vectors(s.get(), n, count),
                                 eigstream::batch(u.get(), m, n, count), eigstream::batch(v.get(), n, n, count), info.get(),
                                 eigstream::Options{}, stream,
                                 warm ? eigstream::batch<const T>(warm, n, n, count) : eigstream::BatchView<const T>{});
  }
  // Mean sweeps and the number converged.
  std::pair<double, index_t> sweeps() const {
    double total = 0;
    index_t converged = 0;
    for (const auto& i : info.download()) total += i.sweeps, converged += i.converged;
    return {total / double(count), converged};
  }
};

template <class T>
json svd_cold_case(Context& ctx, int m, int n, index_t count) {
  const index_t mn = index_t(m) * n;
  std::mt19937_64 rng(4321 + std::uint64_t(m) * 131 + std::uint64_t(n));
  const std::vector<T> host_a = data_blocks<T>(m, n, count, rng);
  DeviceBuffer<T> a{host_a.size()};
  a.upload(host_a);
  json out = {{"case", "svd cold batch"}, {"type", Traits<T>::name}, {"m", m}, {"n", n}, {"count", count}};
  {
    const std::size_t before = device_used();
    OurSvd<T> ours(m, n, count);
    const Timing t = time_it(ctx.stream, ctx.repeat, [] {}, [&] { ours.solve(a.get(), ctx.stream); });
    check(cudaGetLastError(), "eigstream kernel");
    const std::size_t bytes = device_used() - before;
    const auto [sweeps, converged] = ours.sweeps();
    const Accuracy acc = measure_svd<T>(host_a, ours.s.download(), ours.u.download(), ours.v.download(), m, n, ctx.sample);
    out["eigstream"] = {{"ms", t.median_ms}, {"min_ms", t.min_ms}, {"us_per_matrix", 1e3 * t.median_ms / count},
                        {"mean_sweeps", sweeps}, {"converged", converged}, {"device_bytes", bytes},
                        {"gflops", svd_flops_per_sweep<T>(m, n) * sweeps * count / (t.median_ms * 1e6)},
                        {"accuracy", acc.to_json()}};
  }
  // A cuSOLVER routine that refuses the problem is recorded with its error, and the run goes on.
  json cusolver = json::array();
  for (const std::string& routine : CusolverSvd<T>::routines(m, n)) {
    try {
      const std::size_t before = device_used();
      CusolverSvd<T> solver(ctx.solver, routine, m, n, count);
      auto copy_in = [&] {
        check(cudaMemcpyAsync(solver.a(), a.get(), mn * count * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream), "copy");
      };
      const Timing t = time_it(ctx.stream, ctx.repeat, copy_in, [&] { solver.solve(); });
      const std::size_t bytes = device_used() - before;
      const Accuracy acc = measure_svd<T>(host_a, solver.values().download(), solver.thin_u(), solver.v(), m, n, ctx.sample);
      cusolver.push_back({{"routine", routine}, {"ms", t.median_ms}, {"min_ms", t.min_ms},
                          {"us_per_matrix", 1e3 * t.median_ms / count}, {"device_bytes", bytes}, {"accuracy", acc.to_json()}});
    } catch (const std::exception& e) {
      std::cerr << "  " << routine << ": " << e.what() << "\n";
      cusolver.push_back({{"routine", routine}, {"error", e.what()}});
    }
  }
  out["cusolver"] = cusolver;
  const BestRoutine best = best_routine(cusolver, "/ms", true);
  out["best_cusolver"] = best.name;
  out["speedup"] = best.ratio(out["eigstream"]["ms"].get<double>(), true);
  return out;
}

// A stream of slowly varying data blocks, A_s = A_{s-1} + 0.01 E (E one of three fixed Gaussian
// innovations, column-scaled as the blocks), each step warm-started from the last V.
template <class T>
json svd_warm_case(Context& ctx, int m, int n, index_t count, int steps) {
  const index_t mn = index_t(m) * n;
  std::mt19937_64 rng(8765 + std::uint64_t(m) * 131 + std::uint64_t(n));
  std::vector<DeviceBuffer<T>> a;
  a.reserve(std::size_t(steps + 1));
  a.emplace_back(std::size_t(mn * count));
  a[0].upload(data_blocks<T>(m, n, count, rng));
  DeviceBuffer<T> innovations[3];
  for (auto& e : innovations) {
    e.resize(std::size_t(mn * count));
    e.upload(data_blocks<T>(m, n, count, rng));
  }
  const T step_size(real_t<T>(0.01));
  for (int s = 1; s <= steps; ++s) {
    a.emplace_back(std::size_t(mn * count));
    check(cudaMemcpy(a[s].get(), a[s - 1].get(), mn * count * sizeof(T), cudaMemcpyDeviceToDevice), "copy");
    check(cublasAxpyEx(ctx.blas, int(mn * count), &step_size, Traits<T>::type, innovations[s % 3].get(), Traits<T>::type, 1,
                       a[s].get(), Traits<T>::type, 1, Traits<T>::type),
          "axpy");
  }
  check(cudaDeviceSynchronize(), "generate");
  json out = {{"case", "svd warm stream"}, {"type", Traits<T>::name}, {"m", m}, {"n", n}, {"count", count},
              {"steps", steps}, {"innovation", 0.01}};
  OurSvd<T> ours[2] = {OurSvd<T>(m, n, count), OurSvd<T>(m, n, count)};
  ours[0].solve(a[0].get(), ctx.stream);
  check(cudaStreamSynchronize(ctx.stream), "sync");
  double warm_ms = 0, sweeps = 0;
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event"), check(cudaEventCreate(&stop), "event");
  for (int s = 1; s <= steps; ++s) {  // time_steps does not fit: each step's sweeps are read before the next overwrites them
    check(cudaEventRecord(start, ctx.stream), "record");
    ours[s % 2].solve(a[s].get(), ctx.stream, ours[(s + 1) % 2].v.get());
    check(cudaEventRecord(stop, ctx.stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    warm_ms += t;
    sweeps += ours[s % 2].sweeps().first;
  }
  cudaEventDestroy(start), cudaEventDestroy(stop);
  sweeps /= steps;
  const OurSvd<T>& last = ours[steps % 2];
  const Accuracy acc = measure_svd<T>(a[steps].download(), last.s.download(), last.u.download(), last.v.download(), m, n,
                                      ctx.sample);
  out["eigstream"] = {{"matrices_per_second", count * steps / (warm_ms * 1e-3)}, {"mean_sweeps", sweeps},
                      {"accuracy_last_step", acc.to_json()}};
  json routines = json::object();
  for (const std::string& routine : CusolverSvd<T>::routines(m, n)) {
    try {
      CusolverSvd<T> solver(ctx.solver, routine, m, n, count);
      auto copy_in = [&](int s) {
        check(cudaMemcpyAsync(solver.a(), a[s].get(), mn * count * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream), "copy");
      };
      // One untimed solve first, as in warm_case.
      copy_in(0);
      solver.solve();
      check(cudaStreamSynchronize(ctx.stream), "sync");
      const double ms = time_steps(ctx.stream, steps, false, copy_in, [&](int) { solver.solve(); });
      routines[routine] = {{"matrices_per_second", count * steps / (ms * 1e-3)}};
    } catch (const std::exception& e) {
      std::cerr << "  " << routine << ": " << e.what() << "\n";
      routines[routine] = {{"error", e.what()}};
    }
  }
  const BestRoutine best = best_routine(routines, "/matrices_per_second", false);
  out["cusolver_cold"] = routines;
  out["best_cusolver"] = best.name;
  out["speedup"] = best.ratio(out["eigstream"]["matrices_per_second"].get<double>(), false);
  return out;
}

std::string fmt(double x, int digits = 3) {
  std::ostringstream s;
  s.precision(digits);
  s << x;
  return s.str();
}

std::string markdown(const json& report) {
  std::ostringstream md;
  md << "# eigbench on " << report["gpu"].get<std::string>() << "\n\n"
     << "CUDA runtime " << report["cuda_runtime"] << ", cuSOLVER " << report["cusolver_version"] << ". "
     << "Times are medians of " << report["repeat"] << " runs after a warm-up (CUDA events). Accuracy is the worst over "
     << report["sample"] << " matrices: residual ||AV - VL||_F/||A||_F, orthogonality ||V^H V - I||_F, eigenvalue error "
     << "/ ||A||_2 against eigstream's CPU solver in double (for the SVD: ||AV - US||_F/||A||_F, the worse of U's "
     << "and V's orthogonality, singular value error / ||A||_2).\n\n";
  auto has = [&](const char* name) {
    for (const auto& c : report["cases"])
      if (c["case"] == name) return true;
    return false;
  };
  if (has("cold batch"))
    md << "## Cold batch (covariance inputs, vectors computed)\n\n"
       << "| type | n | batch | eigstream us/matrix | sweeps | GFLOP/s | best cuSOLVER | us/matrix | speedup | residual ours / cuSOLVER | orthogonality ours / cuSOLVER | device MiB ours / cuSOLVER |\n"
       << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : report["cases"]) {
    if (c["case"] != "cold batch") continue;
    const auto& e = c["eigstream"];
    json best;
    for (const auto& r : c["cusolver"])
      if (r["routine"] == c["best_cusolver"]) best = r;
    md << "| " << c["type"].get<std::string>() << " | " << c["n"] << " | " << c["count"] << " | "
       << fmt(e["us_per_matrix"].get<double>()) << " | " << fmt(e["mean_sweeps"].get<double>()) << " | "
       << fmt(e["gflops"].get<double>()) << " | " << best["routine"].get<std::string>() << " | "
       << fmt(best["us_per_matrix"].get<double>()) << " | " << fmt(c["speedup"].get<double>()) << "x | "
       << fmt(e["accuracy"]["residual"].get<double>(), 2) << " / " << fmt(best["accuracy"]["residual"].get<double>(), 2) << " | "
       << fmt(e["accuracy"]["orthogonality"].get<double>(), 2) << " / " << fmt(best["accuracy"]["orthogonality"].get<double>(), 2)
       << " | " << fmt(e["device_bytes"].get<double>() / 1048576.0) << " / " << fmt(best["device_bytes"].get<double>() / 1048576.0)
       << " |\n";
  }
  if (has("warm stream"))
    md << "\n## Warm stream (forgetting 0.95, each step warm-started from the last V; cuSOLVER recomputes cold)\n\n"
       << "Step by step: the host waits for each step before the next, so each step's span holds a launch's latency. "
          "Back to back: every step enqueued first, the host waiting once; the sum of the steps' spans.\n\n"
       << "| type | n | batch | steps | Newton-Schulz step every | mean sweeps (a step's most, mean) | orthogonality, last step | eigstream matrices/s, step by step | best cuSOLVER cold | matrices/s | speedup | eigstream matrices/s, back to back | best cuSOLVER | matrices/s | speedup |\n"
       << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : report["cases"]) {
    if (c["case"] != "warm stream") continue;
    const std::string best = c["best_cusolver"], best_b2b = c["best_cusolver_back_to_back"];
    md << "| " << c["type"].get<std::string>() << " | " << c["n"] << " | " << c["count"] << " | " << c["steps"] << " | "
       << c["reorthonormalise_every"] << " | " << fmt(c["eigstream"]["mean_sweeps"].get<double>()) << " ("
       << fmt(c["eigstream"]["mean_most_sweeps"].get<double>()) << ") | "
       << fmt(c["eigstream"]["accuracy_last_step"]["orthogonality"].get<double>(), 2) << " | "
       << fmt(c["eigstream"]["matrices_per_second"].get<double>(), 4) << " | " << best << " | "
       << fmt(c["cusolver_cold"][best]["matrices_per_second"].get<double>(), 4) << " | "
       << fmt(c["speedup"].get<double>()) << "x | "
       << fmt(c["eigstream"]["back_to_back_matrices_per_second"].get<double>(), 4) << " | " << best_b2b << " | "
       << fmt(c["cusolver_cold"][best_b2b]["back_to_back_matrices_per_second"].get<double>(), 4) << " | "
       << fmt(c["speedup_back_to_back"].get<double>()) << "x |\n";
  }
  if (has("latency"))
    md << "\n## Latency (one matrix at a time, warm-started from the previous result; host submit to result on the host)\n\n"
     << "| type | n | items | Newton-Schulz step every | eigstream p50 / p99 us (block per item) | mean sweeps | orthogonality | p50 / p99 us (lanes of a warp per item) | cuSOLVER routine | p50 / p99 us | p99 ratio |\n"
     << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : report["cases"]) {
    if (c["case"] != "latency") continue;
    const auto& e = c["eigstream"]["latency"];
    const auto& t = c["eigstream_throughput_mapping"]["latency"];
    for (const auto& r : c["cusolver"])
      md << "| " << c["type"].get<std::string>() << " | " << c["n"] << " | " << c["items"] << " | "
         << c["reorthonormalise_every"] << " | " << fmt(e["p50_us"].get<double>()) << " / " << fmt(e["p99_us"].get<double>()) << " | "
         << fmt(c["eigstream"]["mean_sweeps"].get<double>()) << " | "
         << fmt(c["eigstream"]["accuracy"]["orthogonality"].get<double>(), 2) << " | "
         << fmt(t["p50_us"].get<double>()) << " / " << fmt(t["p99_us"].get<double>()) << " | "
         << r["routine"].get<std::string>() << " | "
         << fmt(r["latency"]["p50_us"].get<double>()) << " / " << fmt(r["latency"]["p99_us"].get<double>()) << " | "
         << fmt(r["latency"]["p99_us"].get<double>() / e["p99_us"].get<double>()) << "x |\n";
  }
  if (has("submitters"))
    md << "\n## Many submitters (host threads submit a cold batch to the persistent solver, in items of a few matrices)\n\n"
     << "| type | n | matrices | threads | matrices a submit | rounds | host submits/s | persistent matrices/s | batched kernel matrices/s | ratio |\n"
     << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : report["cases"]) {
    if (c["case"] != "submitters") continue;
    md << "| " << c["type"].get<std::string>() << " | " << c["n"] << " | " << c["count"] << " | " << c["threads"] << " | "
       << c["matrices_per_submit"] << " | " << c["rounds"] << " | "
       << fmt(c["eigstream"]["submits_per_second"].get<double>(), 4) << " | "
       << fmt(c["eigstream"]["matrices_per_second"].get<double>(), 4) << " | "
       << fmt(c["batched_matrices_per_second"].get<double>(), 4) << " | " << fmt(c["ratio_to_batched"].get<double>()) << " |\n";
  }
  if (has("svd cold batch"))
    md << "\n## SVD cold batch (data blocks, U and V computed)\n\n"
       << "| type | m x n | batch | eigstream us/matrix | sweeps | GFLOP/s | best cuSOLVER | us/matrix | speedup | residual ours / cuSOLVER | orthogonality ours / cuSOLVER | value error ours / cuSOLVER | device MiB ours / cuSOLVER |\n"
       << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : report["cases"]) {
    if (c["case"] != "svd cold batch") continue;
    const auto& e = c["eigstream"];
    json best = {{"routine", "none"}, {"us_per_matrix", 0.0}, {"device_bytes", 0.0},
                 {"accuracy", {{"residual", 0.0}, {"orthogonality", 0.0}, {"value_error", 0.0}}}};
    for (const auto& r : c["cusolver"])
      if (r["routine"] == c["best_cusolver"]) best = r;
    md << "| " << c["type"].get<std::string>() << " | " << c["m"] << " x " << c["n"] << " | " << c["count"] << " | "
       << fmt(e["us_per_matrix"].get<double>()) << " | " << fmt(e["mean_sweeps"].get<double>()) << " | "
       << fmt(e["gflops"].get<double>()) << " | " << best["routine"].get<std::string>() << " | "
       << fmt(best["us_per_matrix"].get<double>()) << " | " << fmt(c["speedup"].get<double>()) << "x | "
       << fmt(e["accuracy"]["residual"].get<double>(), 2) << " / " << fmt(best["accuracy"]["residual"].get<double>(), 2) << " | "
       << fmt(e["accuracy"]["orthogonality"].get<double>(), 2) << " / " << fmt(best["accuracy"]["orthogonality"].get<double>(), 2)
       << " | " << fmt(e["accuracy"]["value_error"].get<double>(), 2) << " / " << fmt(best["accuracy"]["value_error"].get<double>(), 2)
       << " | " << fmt(e["device_bytes"].get<double>() / 1048576.0) << " / " << fmt(best["device_bytes"].get<double>() / 1048576.0)
       << " |\n";
  }
  if (has("svd warm stream"))
    md << "\n## SVD warm stream (A_s = A_{s-1} + 0.01 E, each step warm-started from the last V; cuSOLVER recomputes cold)\n\n"
       << "| type | m x n | batch | steps | eigstream matrices/s | mean sweeps | best cuSOLVER cold | matrices/s | speedup |\n"
       << "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : report["cases"]) {
    if (c["case"] != "svd warm stream") continue;
    const std::string best = c["best_cusolver"];
    md << "| " << c["type"].get<std::string>() << " | " << c["m"] << " x " << c["n"] << " | " << c["count"] << " | "
       << c["steps"] << " | " << fmt(c["eigstream"]["matrices_per_second"].get<double>(), 4) << " | "
       << fmt(c["eigstream"]["mean_sweeps"].get<double>()) << " | " << best << " | "
       << (best == "none" ? std::string("n/a") : fmt(c["cusolver_cold"][best]["matrices_per_second"].get<double>(), 4)) << " | "
       << fmt(c["speedup"].get<double>()) << "x |\n";
  }
  return md.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"eigbench: eigstream's GPU kernels against cuSOLVER on identical inputs, in one run. Cases:\n"
               "  cold: batches of covariance matrices (n = 8, 16, 32: 16384 matrices; 64: 4096) against\n"
               "        syevjBatched and XsyevBatched;\n"
               "  warm: a stream of covariances (batch 1024, forgetting 0.95), each step warm-started, against\n"
               "        cuSOLVER recomputing cold; timed step by step and back to back;\n"
               "  latency: one matrix at a time through the persistent solver, warm-started, against the\n"
               "        per-call cuSOLVER path (syevjBatched batch 1, Xsyevd): p50/p99 host to host;\n"
               "  submitters: host threads feeding the persistent solver items of a few matrices (a cold\n"
               "        batch, several times over), against the batched kernel on the same matrices;\n"
               "  svd: the batched SVD of data blocks (8x8, 16x16, 32x32: 16384 matrices; 64x64: 4096;\n"
               "        1024x64: 256) against gesvdjBatched (m, n <= 32) and gesvdaStridedBatched, cold and\n"
               "        as a warm stream.\n"
               "Prints markdown tables; --json and --markdown write the full results."};
  std::string json_path, md_path, cases = "all";  // all: every case
  std::vector<int> sizes = {8, 16, 32, 64};
  std::vector<std::string> svd_shapes = {"8x8", "16x16", "32x32", "64x64", "1024x64"};
  std::vector<std::string> types = {"float", "complex-float", "double"};
  Context ctx{};
  ctx.repeat = 5;
  ctx.sample = 32;
  ctx.reorthonormalise_every = 1;
  int steps = 20;
  app.add_option("--json", json_path, "write the results as JSON to this file");
  app.add_option("--markdown", md_path, "write the markdown table to this file");
  int latency_items = 10000;
  Submitters submitters;
  app.add_option("--cases", cases, "cold, warm, latency, submitters, svd, or all")
      ->check(CLI::IsMember({"cold", "warm", "latency", "submitters", "svd", "all"}));
  app.add_option("--latency-items", latency_items, "matrices timed one at a time in the latency case")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", submitters.threads, "host threads submitting in the submitters case")->check(CLI::PositiveNumber);
  app.add_option("--matrices-per-submit", submitters.matrices_per_submit,
                 "matrices in each item the submitters case submits (1: one matrix a submit)")
      ->check(CLI::Range(1, eigstream::cuda::kMaxItemMatrices));
  app.add_option("--rounds", submitters.rounds, "passes over the batch in each timed run of the submitters case")
      ->check(CLI::PositiveNumber);
  app.add_option("--sms", submitters.sms, "SMs the persistent solver occupies in the submitters case (0: its default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--idle-sleep-ns", ctx.idle_sleep_ns,
                 "the persistent solver's idle_sleep_ns in the latency and submitters cases (0: its default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--park-after-us", submitters.park_after_us,
                 "the persistent solver's park_after_us in the submitters case (0: never parks; -1: its default)")
      ->check(CLI::Range(-1, 10000000));
  app.add_option("--sizes", sizes, "matrix sizes n (<= 64)")->delimiter(',');
  app.add_option("--svd-shapes", svd_shapes, "SVD shapes m x n (m >= n, n <= 64, m <= 1024)")->delimiter(',');
  app.add_option("--types", types, "float, complex-float, double, complex-double")->delimiter(',');
  app.add_option("--repeat", ctx.repeat, "timed repeats per path (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--sample", ctx.sample, "matrices per case checked for accuracy")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "warm stream steps")->check(CLI::PositiveNumber);
  app.add_option("--reorthonormalise-every", ctx.reorthonormalise_every,
                 "EVD warm stream and latency cases: the Newton-Schulz step that keeps a chain of warm starts "
                 "orthonormal on one link in this many (Options::reorthonormalise)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  try {
    if (!eigstream::cuda::device_available()) {
      std::cerr << "eigbench: no CUDA device found; eigbench measures GPU kernels and needs one\n";
      return 2;
    }
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, 0), "device properties");
    check(cudaStreamCreate(&ctx.stream), "stream");
    check(cusolverDnCreate(&ctx.solver), "cusolver");
    check(cusolverDnSetStream(ctx.solver, ctx.stream), "cusolver stream");
    check(cublasCreate(&ctx.blas), "cublas");
    int runtime = 0, major = 0, minor = 0, patch = 0;
    cudaRuntimeGetVersion(&runtime);
    cusolverGetProperty(MAJOR_VERSION, &major), cusolverGetProperty(MINOR_VERSION, &minor), cusolverGetProperty(PATCH_LEVEL, &patch);
    json report = {{"gpu", prop.name}, {"sms", prop.multiProcessorCount}, {"cuda_runtime", runtime},
                   {"cusolver_version", std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)},
                   {"repeat", ctx.repeat}, {"sample", ctx.sample}, {"cases", json::array()}};
    auto run_type = [&](const std::string& type, auto tag) {
      using T = decltype(tag);
      if (std::find(types.begin(), types.end(), type) == types.end()) return;
      for (const std::string& shape : svd_shapes) {
        if (cases != "svd" && cases != "all") break;
        int m = 0, n = 0;
        char x = 0;
        std::istringstream in(shape);
        if (!(in >> m >> x >> n) || x != 'x' || m < n || n < 1 || n > 64 || m > 1024)
          throw std::runtime_error("--svd-shapes: '" + shape + "' is not m x n with 1 <= n <= m, n <= 64, m <= 1024");
        const index_t count = m <= 32 ? 16384 : m <= 64 ? 4096 : 256;
        std::cerr << "svd cold batch " << type << " " << shape << " x " << count << "\n";
        report["cases"].push_back(svd_cold_case<T>(ctx, m, n, count));
        std::cerr << "svd warm stream " << type << " " << shape << "\n";
        report["cases"].push_back(svd_warm_case<T>(ctx, m, n, std::min<index_t>(count, 1024), steps));
      }
      for (int n : sizes) {
        if (cases == "latency" || cases == "all") {
          std::cerr << "latency " << type << " n = " << n << "\n";
          report["cases"].push_back(latency_case<T>(ctx, n, latency_items, 200));
        }
        if (cases == "submitters" || cases == "all") {
          const index_t count = n <= 32 ? 16384 : 4096;
          std::cerr << "submitters " << type << " n = " << n << " x " << count << "\n";
          report["cases"].push_back(submitters_case<T>(ctx, n, count, submitters));
        }
        if (cases == "latency" || cases == "submitters" || cases == "svd") continue;
        if (cases != "warm") {
          const index_t count = n <= 32 ? 16384 : 4096;
          std::cerr << "cold batch " << type << " n = " << n << " x " << count << "\n";
          report["cases"].push_back(cold_case<T>(ctx, n, count));
        }
        if (cases != "cold") {
          std::cerr << "warm stream " << type << " n = " << n << "\n";
          report["cases"].push_back(warm_case<T>(ctx, n, 1024, steps));
        }
      }
    };
    run_type("float", float{});
    run_type("complex-float", std::complex<float>{});
    run_type("double", double{});
    run_type("complex-double", std::complex<double>{});
    const std::string md = markdown(report);
    std::cout << md;
    if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
    if (!md_path.empty()) std::ofstream(md_path) << md;
    cublasDestroy(ctx.blas), cusolverDnDestroy(ctx.solver), cudaStreamDestroy(ctx.stream);
  } catch (const std::exception& e) {
    std::cerr << "eigbench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
