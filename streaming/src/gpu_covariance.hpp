// GpuCovariance: CovarianceStage's GPU path (CUDA builds only): the covariance estimates of
// Covariance<float> (lib/, the same modes and bookkeeping, to float rounding), one per subband, kept
// on the device and updated per block by cuBLAS. A block's S = X X^H is formed in chunks of kChunk
// snapshots, one product per chunk and subband in one cublasCgemmBatched (a single cublasCherk over
// 1024 snapshots runs on a few SMs and took 40 us on an H100), and one cublasCgemm sums the chunks
// of every subband with the weights:
//   exponential:    R <- keep R + (take / L) sum of the chunks (ForgettingStep's weights);
//   sliding window: S into a ring of `window` slots, and when read R = (sum of the held S) / (sum of
//                   their L) (one cublasCgemv over the ring).
// R is then made exactly Hermitian on the GPU from its lower triangle (cuda::hermitian_from_lower):
// the general products round the two triangles apart. Reads copy it as it is.
// Copies and products overlap: a block's copy to the GPU runs on a stream of its own, into one of
// `slots` device buffers in turn, while the products of the blocks before run on the main stream;
// an event orders each block's products after its copy. Up to `slots` blocks are in flight: a
// buffer is written again only once the request that followed its last block is complete (checked),
// so no event is needed to order the copy after the products that read the buffer before.
// With exponential forgetting, once the weights are steady (from the second block) each buffer's
// cuBLAS calls and kernel are captured once as a CUDA graph and replayed, for about a quarter of their
// CPU time.
// Device memory is allocated at construction and when a block larger than any before arrives (the
// first block, in a stream of equal blocks).
#pragma once

#include <cublas_v2.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "cuda_stream.hpp"
#include "device_timer.hpp"
#include "eigstream/covariance.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/streaming/host_memory.hpp"
#include "eigstream/views.hpp"

namespace eigstream::streaming {

class GpuCovariance {
 public:
  using cfloat = std::complex<float>;

  // config.channels per subband; the loading is the caller's. slots: blocks that can be in flight.
  GpuCovariance(const CovarianceConfig& config, std::size_t subbands, std::size_t slots, GpuTimeline* timeline);
  ~GpuCovariance();
  GpuCovariance(const GpuCovariance&) = delete;
  GpuCovariance& operator=(const GpuCovariance&) = delete;

  // Queues the fold of block X (subbands x channels rows, snapshots columns: channels interleaved
  // per snapshot, subband by subband; finite; pinned host memory for a fast copy) into the estimates
  // and returns: X must stay as it is until the request() that follows has been complete()d. Each
  // update() is followed by one request(), and the request that followed the update `slots` updates
  // before this one must be complete (else Error(invalid_argument)).
  void update(const sample_t* block, std::size_t snapshots);
  // Marks everything queued so far with a request slot (0 to slots - 1; one not complete()d since
  // its last request is not reused), and with `read`, queues the copy of the estimates as they are
  // then to that slot's host staging.
  void request(std::size_t slot, bool read);
  // Waits for the work marked by the slot's last request. Requests are completed in the order made
  // (else Error(invalid_argument)).
  void complete(std::size_t slot);
  // Subband s's R of the slot's last read request, exactly Hermitian, into out (channels x
  // channels); after complete(slot).
  void read(std::size_t slot, std::size_t subband, cfloat* out) const;
  // As Covariance: blocks folded in, and the effective number of snapshots behind R.
  index_t blocks() const noexcept { return blocks_; }
  double effective_snapshots() const noexcept { return weight_square_sum_ > 0 ? 1 / weight_square_sum_ : 0; }
  // The stream time of the updates and reads since the last call (copies and products overlap).
  DeviceTime take_device_time() noexcept;

 private:
  bool windowed() const noexcept { return config_.mode == CovarianceConfig::Mode::sliding_window; }

  // The products' pointers and the chunk sums, laid out for `chunks` chunks a block.
  void lay_out_chunks(std::size_t chunks);

  struct GraphExecDeleter {
    void operator()(cudaGraphExec_t exec) const noexcept { cudaGraphExecDestroy(exec); }
  };
  using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDeleter>;
  // Queues the products of the block in `buffer` into out = beta out + alpha (its S), and when out
  // is R, make_hermitian(): two cuBLAS calls (26 us of CPU time on an H100 machine) and a kernel; or
  // captures them as a graph to replay (the two calls' graph took 7 us,
  // bench/results/2026-11-25-h100-pipebench-overhead.md).
  void queue_products(std::size_t buffer, std::size_t chunks, float alpha, float beta, cfloat* out);
  // Queues R made exactly Hermitian from its lower triangle (every subband's).
  void make_hermitian();
  GraphExec capture_products(std::size_t buffer, std::size_t chunks, float alpha, float beta, cfloat* out);

  CovarianceConfig config_;
  std::size_t n_, subbands_, slots_;
  CudaStream stream_;       // products and reads; before the device memory: destroyed after it
  CudaStream copy_stream_;  // blocks to the GPU
  // Spans a block can leave on stream_ (products, and for a read of a window: the weights, their sum
  // and the read); on the copy stream, two (copy, padding).
  static constexpr std::size_t kSpansPerBlock = 4;
  DeviceTimer timer_, copy_timer_;
  static constexpr std::size_t kBlasWorkspaceBytes = std::size_t(32) << 20;  // cuBLAS's advice for Hopper
  detail::DeviceArray<char> blas_workspace_;
  cublasHandle_t blas_ = nullptr;
  static constexpr std::size_t kChunk = 128;
  // slots_ buffers of X, each padded with zeros to whole chunks; block k goes to buffer k % slots_.
  // The end of the copy into a buffer is marked by its timer span's end, or copied_[b]. The products (subband by subband, chunk by chunk) and the pointers cublasCgemmBatched
  // takes to them (buffer b's chunk pointers from b * subbands * chunks); the 0/1 matrix that sums
  // each subband's chunks.
  std::vector<std::unique_ptr<detail::DeviceArray<cfloat>>> x_;
  std::unique_ptr<detail::DeviceArray<cfloat>> chunk_products_, chunk_sum_;
  std::unique_ptr<detail::DeviceArray<const cfloat*>> chunk_pointers_;
  std::unique_ptr<detail::DeviceArray<cfloat*>> product_pointers_;
  std::vector<cudaEvent_t> copied_;          // one per buffer, for a copy with no timed span
  std::vector<GraphExec> graphs_;            // per buffer: its products, for blocks of graph_snapshots_
  std::size_t graph_snapshots_ = 0;
  std::size_t x_chunks_ = 0;       // chunks the buffers have room for
  std::size_t layout_chunks_ = 0;  // chunks the pointers and chunk_sum are laid out for
  detail::DeviceArray<cfloat> r_;
  detail::DeviceArray<cfloat> ring_, ring_weights_;  // sliding window: S per slot, and 1 / (sum of L) per held slot
  HostBuffer host_r_, host_ring_weights_;  // a part per request slot: of the subbands' R, and of the weights
  std::vector<cudaEvent_t> done_;           // one per request slot, for a request with no timed span
  std::vector<cudaEvent_t> marks_;          // per request slot: the event its request ends with
  struct Tickets {                          // the timers' spans up to a request (DeviceTimer::ticket)
    std::uint64_t products = 0, copies = 0;
  };
  std::vector<Tickets> tickets_;            // one per request slot
  static constexpr std::uint64_t kNoRequest = ~std::uint64_t(0);
  std::vector<std::uint64_t> slot_request_;  // the number (from 0) of each slot's last request, or kNoRequest
  std::uint64_t requests_ = 0, completed_ = 0;
  std::vector<index_t> ring_snapshots_;
  index_t blocks_ = 0;
  double weight_square_sum_ = 0;
};

}  // namespace eigstream::streaming
