// CovarianceStage's GPU path: the covariance estimate updated by cuBLAS.
#include "gpu_covariance.hpp"

#include <algorithm>
#include <string>

#include "eigstream/error.hpp"

namespace eigstream::streaming {
namespace {

void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorCode::cuda, std::string("covariance stage: ") + what + ": cuBLAS status " + std::to_string(int(status)));
}

std::size_t window_slots(const CovarianceConfig& config) {
  return config.mode == CovarianceConfig::Mode::sliding_window ? std::size_t(config.window) : 0;
}

}  // namespace

GpuCovariance::GpuCovariance(const CovarianceConfig& config)
    : config_(config), n_(std::size_t(config.channels)), stream_("covariance stage: cudaStreamCreate"),
      timer_(stream_.get()), r_(n_ * n_, stream_.get()), ring_(window_slots(config) * n_ * n_, stream_.get()),
      ring_weights_(window_slots(config), stream_.get()), host_r_(2 * n_ * n_ * sizeof(cfloat)),
      host_ring_weights_(2 * std::max<std::size_t>(1, window_slots(config)) * sizeof(cfloat)),
      ring_snapshots_(window_slots(config), 0) {
  for (cudaEvent_t& event : done_)
    detail::check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "covariance stage: cudaEventCreate");
  check_blas(cublasCreate(&blas_), "cublasCreate");
  check_blas(cublasSetStream(blas_, stream_.get()), "cublasSetStream");
  detail::check_cuda(cudaMemsetAsync(r_.get(), 0, n_ * n_ * sizeof(cfloat), stream_.get()), "covariance stage: clear");
  if (windowed())  // slots not yet written are summed with weight 0: they must hold numbers
    detail::check_cuda(cudaMemsetAsync(ring_.get(), 0, window_slots(config) * n_ * n_ * sizeof(cfloat), stream_.get()),
                       "covariance stage: clear");
}

GpuCovariance::~GpuCovariance() {
  cublasDestroy(blas_);
  for (cudaEvent_t event : done_) cudaEventDestroy(event);
}

void GpuCovariance::update(const sample_t* block, std::size_t snapshots) {
  const std::size_t chunks = (snapshots + kChunk - 1) / kChunk, padded = chunks * kChunk;
  if (chunks > x_chunks_) {
    x_ = std::make_unique<detail::DeviceArray<cfloat>>(n_ * padded, stream_.get());
    chunk_products_ = std::make_unique<detail::DeviceArray<cfloat>>(chunks * n_ * n_, stream_.get());
    ones_ = std::make_unique<detail::DeviceArray<cfloat>>(chunks, stream_.get());
    const std::vector<cfloat> ones(chunks, cfloat(1));
    ones_->upload(ones, stream_.get());
    detail::check_cuda(cudaStreamSynchronize(stream_.get()), "covariance stage: copy to GPU");  // from a local vector
    x_chunks_ = chunks;
  }
  timer_.begin(DeviceTimer::Kind::copy);
  detail::check_cuda(cudaMemcpyAsync(x_->get(), block, n_ * snapshots * sizeof(cfloat), cudaMemcpyHostToDevice,
                                     stream_.get()),
                     "covariance stage: copy to GPU");
  timer_.end();
  float alpha, beta;
  cfloat* out;
  if (windowed()) {
    const std::size_t slot = std::size_t(blocks_ % config_.window);
    ring_snapshots_[slot] = index_t(snapshots);
    alpha = 1, beta = 0, out = ring_.get() + slot * n_ * n_;
    const index_t held = std::min<index_t>(blocks_ + 1, config_.window);
    index_t total = 0;
    for (index_t s = 0; s < held; ++s) total += ring_snapshots_[std::size_t(s)];
    weight_square_sum_ = 1 / double(total);
  } else {
    const ForgettingStep step = forgetting_step(blocks_, config_.lambda);
    alpha = float(step.take) / float(snapshots), beta = float(step.keep), out = r_.get();
    weight_square_sum_ = step.weight_square_sum(weight_square_sum_, index_t(snapshots));
  }
  timer_.begin(DeviceTimer::Kind::kernel);
  if (padded > snapshots)  // the last chunk's padding: zeros, whatever an earlier block left there
    detail::check_cuda(cudaMemsetAsync(x_->get() + n_ * snapshots, 0, n_ * (padded - snapshots) * sizeof(cfloat),
                                       stream_.get()),
                       "covariance stage: clear");
  const cuComplex one{1, 0}, zero{0, 0}, weight{alpha, 0}, keep{beta, 0};
  const auto* x = reinterpret_cast<const cuComplex*>(x_->get());
  const auto n = int(n_), nn = int(n_ * n_);
  const auto chunk_stride = static_cast<long long>(n_ * kChunk);
  check_blas(cublasCgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_C, n, n, int(kChunk), &one, x, n, chunk_stride, x, n,
                                       chunk_stride, &zero, reinterpret_cast<cuComplex*>(chunk_products_->get()), n, nn,
                                       int(chunks)),
             "cublasCgemmStridedBatched");
  check_blas(cublasCgemv(blas_, CUBLAS_OP_N, nn, int(chunks), &weight,
                         reinterpret_cast<const cuComplex*>(chunk_products_->get()), nn,
                         reinterpret_cast<const cuComplex*>(ones_->get()), 1, &keep, reinterpret_cast<cuComplex*>(out), 1),
             "cublasCgemv");
  timer_.end();
  ++blocks_;
}

void GpuCovariance::request(std::size_t slot, bool read) {
  if (read && windowed()) {
    // R = ring (n^2 x window) times the weights: 1 / (sum of L) for the held slots, 0 for the rest.
    // Their host staging has a part per request slot: a slot's last request is complete by now.
    const auto window = std::size_t(config_.window);
    auto* weights = static_cast<cfloat*>(host_ring_weights_.data()) + slot * window;
    for (std::size_t s = 0; s < window; ++s)
      weights[s] = s < std::size_t(blocks_) ? cfloat(float(weight_square_sum_), 0) : cfloat(0);
    timer_.begin(DeviceTimer::Kind::copy);
    detail::check_cuda(cudaMemcpyAsync(ring_weights_.get(), weights, window * sizeof(cfloat), cudaMemcpyHostToDevice,
                                       stream_.get()),
                       "covariance stage: copy to GPU");
    timer_.end();
    const cuComplex one{1, 0}, zero{0, 0};
    timer_.begin(DeviceTimer::Kind::kernel);
    check_blas(cublasCgemv(blas_, CUBLAS_OP_N, int(n_ * n_), int(window), &one,
                           reinterpret_cast<const cuComplex*>(ring_.get()), int(n_ * n_),
                           reinterpret_cast<const cuComplex*>(ring_weights_.get()), 1, &zero,
                           reinterpret_cast<cuComplex*>(r_.get()), 1),
               "cublasCgemv");
    timer_.end();
  }
  if (read) {
    timer_.begin(DeviceTimer::Kind::copy);
    detail::check_cuda(cudaMemcpyAsync(static_cast<cfloat*>(host_r_.data()) + slot * n_ * n_, r_.get(),
                                       n_ * n_ * sizeof(cfloat), cudaMemcpyDeviceToHost, stream_.get()),
                       "covariance stage: copy from GPU");
    timer_.end();
  }
  detail::check_cuda(cudaEventRecord(done_[slot], stream_.get()), "covariance stage: cudaEventRecord");
}

void GpuCovariance::complete(std::size_t slot, cfloat* out) {
  detail::check_cuda(cudaEventSynchronize(done_[slot]), "covariance stage: covariance on the GPU");
  timer_.collect();
  if (!out) return;
  const cfloat* lower = static_cast<const cfloat*>(host_r_.data()) + slot * n_ * n_;
  for (std::size_t j = 0; j < n_; ++j) {
    out[j + j * n_] = {lower[j + j * n_].real(), 0.0f};
    for (std::size_t i = j + 1; i < n_; ++i) {
      out[i + j * n_] = lower[i + j * n_];
      out[j + i * n_] = std::conj(lower[i + j * n_]);
    }
  }
}

}  // namespace eigstream::streaming
