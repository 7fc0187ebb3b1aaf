// Launchers of the persistent EVD kernel (kernels/jacobi_evd_persistent.cu) for the host side of
// eigstream::cuda::PersistentSolver: the kernel's shape for a type and size, the launch of the
// resident consumers, and the small kernel that makes a stream wait for a ticket.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "eigstream/detail/persistent_ring.hpp"
#include "eigstream/options.hpp"

namespace eigstream::kernels {

template <class T>  // float, double, std::complex<float>, std::complex<double>
struct PersistentEvdArgs {
  cuda::detail::Ring<T> rings[2];            // [0] submitted by the host, [1] by device code
  const int* run_state;                      // device memory: cuda::detail::RunState
  std::uint64_t* visible;                    // device memory, per ring: positions published so far
  std::uint64_t* poller_done;                // device memory: nonzero once the poller has stopped
  std::uint64_t* parked;                     // mapped host memory: set when the poller parks
  std::uint64_t park_after_ns = 0;           // 0: never park
  T* staging;                                // device memory: staging_stride scalars per consumer
  std::size_t staging_stride;
  cuda::detail::ConsumerCounters* counters;  // mapped host memory, one per consumer
  int max_n = 0;                             // the largest n of an item: the kernel is compiled for NMAX >= it
  bool block_per_item = false;               // a block of max_n^2 / 2 threads per item, whatever max_n
  double tol = 0, symmetry_tol = 0;
  int max_sweeps = 0;
  Sort sort = Sort::descending;
  int idle_sleep_ns = 0;                     // the longest back-off between polls of idle rings
};

struct PersistentShape {
  int threads_per_block = 0;
  int consumers_per_block = 0;  // 4 (warps: the register solve at max_n = 17..32), else 1 (the block)
  std::size_t shared_bytes = 0;
  int blocks_per_sm = 0;        // the most that fit, from the occupancy calculator
  std::size_t staging_stride = 0;  // scalars of device memory each consumer needs (for all the matrices of a claim)
};

// Loads every persistent kernel and the ticket wait now: with lazy module loading (CUDA's default)
// a first load waits for the device, which never idles while a persistent kernel is resident.
cudaError_t load_persistent_evd_kernels();

template <class T>
cudaError_t persistent_evd_shape(int max_n, bool block_per_item, PersistentShape* shape);

// Launches `blocks` blocks of consumers and one more for the poller.
template <class T>
cudaError_t launch_persistent_evd(const PersistentEvdArgs<T>& args, int blocks, cudaStream_t stream);

// Holds `stream` until the ticket whose slot state is at `state` has finished.
cudaError_t launch_ticket_wait(const std::uint64_t* state, std::uint64_t ticket, std::uint64_t capacity,
                               cudaStream_t stream);

}  // namespace eigstream::kernels
