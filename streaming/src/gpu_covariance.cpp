// CovarianceStage's GPU path: the covariance estimate updated by cuBLAS.
#include "gpu_covariance.hpp"

#include <algorithm>
#include <string>

#include "eigstream/cuda.hpp"
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

GpuCovariance::GpuCovariance(const CovarianceConfig& config, std::size_t subbands, std::size_t slots,
                             GpuTimeline* timeline)
    : config_(config), n_(std::size_t(config.channels)), subbands_(subbands), slots_(slots),
      stream_("covariance stage: cudaStreamCreate"), copy_stream_("covariance stage: cudaStreamCreate"),
      timer_(stream_.get(), timeline, kSpansPerBlock * slots), copy_timer_(copy_stream_.get(), timeline, 2 * slots),
      blas_workspace_(kBlasWorkspaceBytes, stream_.get()), x_(slots), copied_(slots, nullptr),
      graphs_(slots),
      r_(subbands * n_ * n_, stream_.get()),
      ring_(window_slots(config) * subbands * n_ * n_, stream_.get()), ring_weights_(window_slots(config), stream_.get()),
      host_r_(slots * subbands * n_ * n_ * sizeof(cfloat)),
      host_ring_weights_(slots * std::max<std::size_t>(1, window_slots(config)) * sizeof(cfloat)),
      done_(slots, nullptr), marks_(slots, nullptr), tickets_(slots), slot_request_(slots, kNoRequest), ring_snapshots_(window_slots(config), 0) {
  for (std::vector<cudaEvent_t>* events : {&done_, &copied_})
    for (cudaEvent_t& event : *events)
      detail::check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "covariance stage: cudaEventCreate");
  check_blas(cublasCreate(&blas_), "cublasCreate");
  check_blas(cublasSetStream(blas_, stream_.get()), "cublasSetStream");  // (resets the workspace: set it after)
  // cuBLAS's workspace is ours, allocated now: left to itself, cuBLAS allocates one at its first call.
  check_blas(cublasSetWorkspace(blas_, blas_workspace_.get(), kBlasWorkspaceBytes), "cublasSetWorkspace");
  detail::check_cuda(cudaMemsetAsync(r_.get(), 0, subbands * n_ * n_ * sizeof(cfloat), stream_.get()),
                     "covariance stage: clear");
  if (windowed())  // slots not yet written are summed with weight 0: they must hold numbers
    detail::check_cuda(cudaMemsetAsync(ring_.get(), 0, window_slots(config) * subbands * n_ * n_ * sizeof(cfloat),
                                       stream_.get()),
                       "covariance stage: clear");
}

GpuCovariance::~GpuCovariance() {
  cublasDestroy(blas_);
  for (std::vector<cudaEvent_t>* events : {&done_, &copied_})
    for (cudaEvent_t event : *events)
      if (event) cudaEventDestroy(event);
}

void GpuCovariance::lay_out_chunks(std::size_t chunks) {
  const std::size_t rows = subbands_ * n_, nn = n_ * n_;
  std::vector<const cfloat*> chunk_pointers;
  std::vector<cfloat*> product_pointers;
  std::vector<cfloat> chunk_sum(subbands_ * chunks * subbands_, cfloat(0));  // (subbands x chunks) x subbands
  for (const auto& x : x_)
    for (std::size_t s = 0; s < subbands_; ++s)
      for (std::size_t j = 0; j < chunks; ++j) chunk_pointers.push_back(x->get() + s * n_ + j * kChunk * rows);
  for (std::size_t s = 0; s < subbands_; ++s)
    for (std::size_t j = 0; j < chunks; ++j) {
      product_pointers.push_back(chunk_products_->get() + (s * chunks + j) * nn);
      chunk_sum[(s * chunks + j) + s * subbands_ * chunks] = 1;
    }
  const auto upload = [&](void* to, const void* from, std::size_t bytes) {
    detail::check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream_.get()),
                       "covariance stage: copy to GPU");
  };
  upload(chunk_pointers_->get(), chunk_pointers.data(), chunk_pointers.size() * sizeof(const cfloat*));
  upload(product_pointers_->get(), product_pointers.data(), product_pointers.size() * sizeof(cfloat*));
  upload(chunk_sum_->get(), chunk_sum.data(), chunk_sum.size() * sizeof(cfloat));
  // From local vectors: wait for the copies (only when the block length changes).
  detail::check_cuda(cudaStreamSynchronize(stream_.get()), "covariance stage: copy to GPU");
  layout_chunks_ = chunks;
}

void GpuCovariance::update(const sample_t* block, std::size_t snapshots) {
  const std::size_t rows = subbands_ * n_, nn = n_ * n_;
  const std::size_t chunks = (snapshots + kChunk - 1) / kChunk, padded = chunks * kChunk;
  if (std::uint64_t(blocks_) >= completed_ + slots_)  // its buffer's last products may still be reading it
    throw Error(ErrorCode::invalid_argument, "covariance stage: block " + std::to_string(blocks_) + " queued with " +
                                                 std::to_string(std::uint64_t(blocks_) - completed_) +
                                                 " blocks in flight, more than " + std::to_string(slots_));
  // Room for the longest block so far: the old buffers are freed in stream_'s order, which every copy
  // so far precedes (through copied_), and lay_out_chunks waits for stream_ before the copy stream
  // writes the new ones.
  if (chunks > x_chunks_) {
    for (GraphExec& graph : graphs_) graph.reset();  // they name the buffers and pointers replaced here
    for (auto& x : x_) x = std::make_unique<detail::DeviceArray<cfloat>>(rows * padded, stream_.get());
    chunk_products_ = std::make_unique<detail::DeviceArray<cfloat>>(subbands_ * chunks * nn, stream_.get());
    chunk_pointers_ = std::make_unique<detail::DeviceArray<const cfloat*>>(slots_ * subbands_ * chunks, stream_.get());
    product_pointers_ = std::make_unique<detail::DeviceArray<cfloat*>>(subbands_ * chunks, stream_.get());
    chunk_sum_ = std::make_unique<detail::DeviceArray<cfloat>>(subbands_ * chunks * subbands_, stream_.get());
    x_chunks_ = chunks;
    layout_chunks_ = 0;
  }
  if (chunks != layout_chunks_) lay_out_chunks(chunks);

  const auto buffer = std::size_t(blocks_) % slots_;  // the buffers in turn
  cudaStream_t copy = copy_stream_.get();
  copy_timer_.begin(DeviceTimer::Kind::copy);
  detail::check_cuda(cudaMemcpyAsync(x_[buffer]->get(), block, rows * snapshots * sizeof(cfloat), cudaMemcpyHostToDevice, copy),
                     "covariance stage: copy to GPU");
  cudaEvent_t copied = copy_timer_.end();  // the timer's end event marks the copy's end, when timed
  if (padded > snapshots) {  // the last chunk's padding: zeros, whatever an earlier block left there
    copy_timer_.begin(DeviceTimer::Kind::kernel);
    detail::check_cuda(
        cudaMemsetAsync(x_[buffer]->get() + rows * snapshots, 0, rows * (padded - snapshots) * sizeof(cfloat), copy),
        "covariance stage: clear");
    copied = copy_timer_.end();
  }
  if (!copied) {
    copied = copied_[buffer];
    detail::check_cuda(cudaEventRecord(copied, copy), "covariance stage: cudaEventRecord");
  }
  detail::check_cuda(cudaStreamWaitEvent(stream_.get(), copied, 0), "covariance stage: cudaStreamWaitEvent");

  float alpha, beta;
  cfloat* out;
  if (windowed()) {
    const std::size_t slot = std::size_t(blocks_ % config_.window);
    ring_snapshots_[slot] = index_t(snapshots);
    alpha = 1, beta = 0, out = ring_.get() + slot * subbands_ * nn;
    const index_t held = std::min<index_t>(blocks_ + 1, config_.window);
    index_t total = 0;
    for (index_t s = 0; s < held; ++s) total += ring_snapshots_[std::size_t(s)];
    weight_square_sum_ = 1 / double(total);
  } else {
    const ForgettingStep step = forgetting_step(blocks_, config_.lambda);
    alpha = float(step.take) / float(snapshots), beta = float(step.keep), out = r_.get();
    weight_square_sum_ = step.weight_square_sum(weight_square_sum_, index_t(snapshots));
  }
  // After the first block the forgetting weights stay the same while the block length does: the
  // products are replayed from a graph of this buffer's calls (captured before the span begins).
  const bool steady = !windowed() && blocks_ > 0;
  if (steady && snapshots != graph_snapshots_) {
    for (GraphExec& graph : graphs_) graph.reset();
    graph_snapshots_ = snapshots;
  }
  if (steady && !graphs_[buffer]) graphs_[buffer] = capture_products(buffer, chunks, alpha, beta, out);
  timer_.begin(DeviceTimer::Kind::kernel);
  if (steady)
    detail::check_cuda(cudaGraphLaunch(graphs_[buffer].get(), stream_.get()), "covariance stage: cudaGraphLaunch");
  else
    queue_products(buffer, chunks, alpha, beta, out);
  timer_.end();
  ++blocks_;
}

void GpuCovariance::queue_products(std::size_t buffer, std::size_t chunks, float alpha, float beta, cfloat* out) {
  const std::size_t rows = subbands_ * n_, nn = n_ * n_;
  const cuComplex one{1, 0}, zero{0, 0}, weight{alpha, 0}, keep{beta, 0};
  const auto n = int(n_), products = int(subbands_ * chunks);
  const auto** a = reinterpret_cast<const cuComplex**>(chunk_pointers_->get() + buffer * subbands_ * chunks);
  check_blas(cublasCgemmBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_C, n, n, int(kChunk), &one, a, int(rows), a, int(rows), &zero,
                                reinterpret_cast<cuComplex**>(product_pointers_->get()), n, products),
             "cublasCgemmBatched");
  // out (n^2 x subbands) = weight * products (n^2 x subbands chunks) * chunk_sum + keep * out
  check_blas(cublasCgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, int(nn), int(subbands_), products, &weight,
                         reinterpret_cast<const cuComplex*>(chunk_products_->get()), int(nn),
                         reinterpret_cast<const cuComplex*>(chunk_sum_->get()), products, &keep,
                         reinterpret_cast<cuComplex*>(out), int(nn)),
             "cublasCgemm");
  if (!windowed()) make_hermitian();  // out is the estimate itself
}

void GpuCovariance::make_hermitian() {
  cuda::hermitian_from_lower(BatchView<cfloat>{r_.get(), index_t(n_), index_t(n_), index_t(n_), index_t(n_ * n_),
                                               index_t(subbands_)},
                             stream_.get());
}

GpuCovariance::GraphExec GpuCovariance::capture_products(std::size_t buffer, std::size_t chunks, float alpha, float beta,
                                                         cfloat* out) {
  // Thread-local capture: the other stages' threads go on calling CUDA meanwhile.
  detail::check_cuda(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal),
                     "covariance stage: cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    queue_products(buffer, chunks, alpha, beta, out);
  } catch (...) {
    cudaStreamEndCapture(stream_.get(), &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  detail::check_cuda(cudaStreamEndCapture(stream_.get(), &graph), "covariance stage: cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  detail::check_cuda(instantiated, "covariance stage: cudaGraphInstantiate");
  return GraphExec(exec);
}

void GpuCovariance::request(std::size_t slot, bool read) {
  cudaEvent_t done = nullptr;
  const std::size_t all = subbands_ * n_ * n_;
  if (read && windowed()) {
    // R = ring (n^2 subbands x window) times the weights: 1 / (sum of L) for the held slots, 0 for
    // the rest. Their host staging has a part per request slot: a slot's last request is complete.
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
    check_blas(cublasCgemv(blas_, CUBLAS_OP_N, int(all), int(window), &one, reinterpret_cast<const cuComplex*>(ring_.get()),
                           int(all), reinterpret_cast<const cuComplex*>(ring_weights_.get()), 1, &zero,
                           reinterpret_cast<cuComplex*>(r_.get()), 1),
               "cublasCgemv");
    make_hermitian();
    timer_.end();
  }
  if (read) {
    timer_.begin_after_last(DeviceTimer::Kind::copy);  // the products' or the window's sum's span
    detail::check_cuda(cudaMemcpyAsync(static_cast<cfloat*>(host_r_.data()) + slot * all, r_.get(), all * sizeof(cfloat),
                                       cudaMemcpyDeviceToHost, stream_.get()),
                       "covariance stage: copy from GPU");
    done = timer_.end();  // the timer's end event marks the end of the request, when timed
  }
  if (!done) {
    done = done_[slot];
    detail::check_cuda(cudaEventRecord(done, stream_.get()), "covariance stage: cudaEventRecord");
  }
  marks_[slot] = done;
  tickets_[slot] = {timer_.ticket(), copy_timer_.ticket()};
  slot_request_[slot] = requests_++;
}

void GpuCovariance::complete(std::size_t slot) {
  if (slot_request_[slot] != completed_)
    throw Error(ErrorCode::invalid_argument, "covariance stage: request " + std::to_string(slot_request_[slot]) +
                                                 " completed before request " + std::to_string(completed_));
  // (A timer's event stays the span's until the span is collected, below.)
  detail::check_cuda(cudaEventSynchronize(marks_[slot]), "covariance stage: covariance on the GPU");
  // Done: the work the request followed, the copies its products waited for included.
  timer_.collect_through(tickets_[slot].products);
  copy_timer_.collect_through(tickets_[slot].copies);
  ++completed_;
}

DeviceTime GpuCovariance::take_device_time() noexcept {
  const DeviceTime products = timer_.take(), copies = copy_timer_.take();
  return {products.kernel_seconds + copies.kernel_seconds, products.copy_seconds + copies.copy_seconds};
}

void GpuCovariance::read(std::size_t slot, std::size_t subband, cfloat* out) const {
  const std::size_t nn = n_ * n_;
  std::copy_n(static_cast<const cfloat*>(host_r_.data()) + (slot * subbands_ + subband) * nn, nn, out);
}

}  // namespace eigstream::streaming
