// PersistentEvdStream: DecomposeStage's persistent GPU path (CUDA builds only). Each covariance is
// submitted to a cuda::PersistentSolver as it arrives and the results are collected in submission
// order, up to `in_flight` at a time. Every item in flight has a slot of pinned host memory that the
// resident kernel reads and writes directly (covariance, warm start, eigenvalues, eigenvectors,
// status), so nothing goes through a stream and the stage makes no CUDA call per item (but for
// the relaunch of a parked solver).
//
// The solver parks after a millisecond without work (its default, see eigstream/persistent.hpp),
// which the stages beside it rely on: they load cuBLAS kernels lazily and free memory, and both wait
// for an idle device. It holds one block on each of up to `in_flight` SMs, and leaves the others to
// those stages.
#pragma once

#include <complex>
#include <cstddef>

#include <vector>

#include "eigstream/options.hpp"
#include "eigstream/persistent.hpp"
#include "eigstream/streaming/host_memory.hpp"

namespace eigstream::streaming {

class PersistentEvdStream {
 public:
  using cfloat = std::complex<float>;

  PersistentEvdStream(std::size_t channels, std::size_t in_flight, const Options& options);
  PersistentEvdStream(const PersistentEvdStream&) = delete;
  PersistentEvdStream& operator=(const PersistentEvdStream&) = delete;

  // Queues the EVD of `covariance` (channels x channels, column-major), warm-started from
  // `warm_start` (channels x channels, orthonormal) unless it is null; both are copied. The caller keeps fewer than
  // `in_flight` items in flight.
  void submit(const cfloat* covariance, const cfloat* warm_start);

  struct Result {
    const float* values;    // descending
    const cfloat* vectors;  // column i for values[i]
    SolveInfo info;
  };
  // Whether the oldest item in flight is solved. One must be in flight.
  bool oldest_done() const;
  // Waits for the oldest item in flight and returns its results, valid until the next submit; an
  // item the solver did not solve (cancelled) comes back not converged. One must be in flight.
  Result collect();

 private:
  cfloat* slot(std::size_t s) const noexcept;  // A, the warm start, the vectors, the info, the values

  std::size_t n_, slots_, slot_bytes_;
  HostBuffer memory_;  // before the solver: freed after it has stopped
  cuda::PersistentSolver<cfloat> solver_;
  std::vector<cuda::Ticket> tickets_;  // per slot
  std::size_t first_ = 0, count_ = 0;  // the slots in flight: [first_, first_ + count_) mod slots_
};

}  // namespace eigstream::streaming
