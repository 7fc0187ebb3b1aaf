// The persistent GPU solver for streams (CUDA users): one resident kernel, launched once, solves
// Hermitian EVDs submitted one at a time (an item: one matrix or a small batch), without a launch,
// a workspace query or a host synchronisation per item. Items go into a ring in device-visible
// memory, from host threads (submit) or from device code on any stream
// (eigstream/persistent_submit.cuh); resident warps or blocks claim their matrices, solve them with
// the batched kernels' per-matrix code, and publish completion.
//
//   eigstream::cuda::PersistentSolver<std::complex<float>> solver(options);
//   auto ticket = solver.submit(item);      // item: device-accessible pointers, see EvdItem
//   solver.wait(*ticket);                   // or poll(), or stream_wait() to order stream work after it
//
// The kernel holds the SMs it occupies while it runs: size it with PersistentOptions::sms and
// blocks_per_sm (plus one block that polls the rings). Idle, one warp reads host memory with a
// back-off doubling up to idle_sleep_ns (at most 1 us; a read itself takes about one PCIe round trip),
// and each consumer polls device memory with a back-off doubling up to idle_sleep_ns.
//
// While the kernel runs the device never idles, and some CUDA calls wait for an idle device:
// cudaDeviceSynchronize, cudaMalloc, cudaHostAlloc, cudaFree, cudaFreeHost, work on the legacy
// default stream, and, with lazy module loading (CUDA's default since 12.2), the first launch of any
// kernel not yet loaded, cuBLAS's included. So by default the solver parks: after park_after_us
// (1 ms) without a new item the kernel finishes what it holds and ends, giving its SMs back, and the
// next submit launches it again. Such a call then waits at most that long plus the items in flight,
// provided nothing submits meanwhile. (Measured on an H100: without parking, a first kernel launch
// beside the idle solver never returned.)
//
// Device code cannot wake a parked kernel, so submitting from device code (device_queue()) needs
// park_after_us = 0: the kernel stays resident until shutdown, and then nothing may wait for an idle
// device while it runs: allocate before the solver starts (or with cudaMallocAsync), free after it
// stops, synchronise streams or events, and load the kernels that run alongside it before
// constructing it (cudaFuncGetAttributes on each, or CUDA_MODULE_LOADING=EAGER in the environment).
// The first solver loads eigstream's own kernels (persistent and batched), so several solvers and
// eigstream::cuda::evd_batched can run together.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "eigstream/detail/persistent_ring.hpp"
#include "eigstream/options.hpp"

namespace eigstream::cuda {

struct PersistentOptions {
  // Largest matrix. Up to 32, a matrix is solved by NMAX lanes of a warp, NMAX the power of two from 4
  // holding max_n (a block of warps claims and solves a matrix for each NMAX lanes of an item at once
  // up to 16: eight warps for float up to 8, else four; a warp 32 / NMAX at 32); up to 64, by a block
  // that claims two at once, to start them side by side (cold ones, from the tridiagonal start).
  int max_n = 32;
  // Latency instead of throughput for max_n <= 32: each matrix is solved by a whole block (128 threads
  // at max_n <= 16, 320 at max_n <= 32; a thread per 2 x 2 block of A or a row of V in four pairs'
  // columns in a Jacobi step), so it finishes sooner (H100, complex float, warm: p99 75-88 us against
  // 232-240 us at n = 32, bench/results/2026-11-25-h100-step-banks.md), but fewer matrices are solved at
  // once.
  // Off: NMAX lanes of a warp per matrix. For max_n > 32 a matrix always gets a block of 256 threads;
  // on, the kernel is compiled for one block an SM (a lone warm complex float 64 item: p50 about 300
  // us), off for three (362 us, but three times the matrices at once: items of 64 ran at 1.03 of the
  // batched kernel's rate against 0.55, bench/results/2026-11-25-h100-warp-claims.md).
  bool block_per_item = false;
  int sms = 0;                    // SMs to occupy; 0: all but one (room for other kernels)
  int blocks_per_sm = 0;          // 0: as many as fit
  std::uint64_t capacity = 8192;  // items queued or being solved, per ring (rounded up to a power of two)
  // Longest sleep of an idle consumer between polls, and of the poller (at most 1 us). With 2000 (the
  // poller 1000), a lone warm complex float item took about 1 us longer at n = 16 and 32 (p50) than
  // with 256 (H200, bench/results/2026-11-26-h200-latency-path.md).
  int idle_sleep_ns = 256;
  // > 0: park (end the kernel) after this many microseconds without a new item; the next submit
  // launches it again. 0: resident until shutdown, as device_queue() needs (see the top of this file).
  int park_after_us = 1000;
  Options solve;                  // tol, max_sweeps, sort, symmetry_tol (always two-sided); each
                                  // item's own reorthonormalise, not this one's, is used
};

enum class SubmitMode { wait, fail };        // what submit does when the ring is full
enum class ShutdownMode { drain, cancel };   // solve what is queued, or cancel it
enum class ItemState { pending, done, cancelled };  // cancelled: some matrix of the item was

// The handle of a submitted item: which ring and its position there.
struct Ticket {
  std::uint64_t position = 0;
  bool from_device = false;  // submitted by device code (DeviceQueue)
};

// Counted in matrices (an item of count k counts k), but launches.
struct PersistentCounters {
  std::uint64_t submitted = 0;  // by the host and by device code
  std::uint64_t completed = 0;  // solved, valid or not
  std::uint64_t failed = 0;     // solved with invalid input or not converged (see the matrix's SolveInfo)
  std::uint64_t cancelled = 0;  // cancelled by a cancelling shutdown
  std::uint64_t launches = 0;   // of the kernel: 1, plus one per wake after a park
};

// What device code needs to submit (eigstream/persistent_submit.cuh); valid while the solver lives.
template <class T>
struct DeviceQueue {
  detail::Ring<T> ring;
  const int* run_state;                // device memory
  std::uint64_t* submitted_matrices;   // device memory: what device code has submitted, in matrices
};

template <class T>  // float, double, std::complex<float>, std::complex<double>
class PersistentSolver {
 public:
  // Allocates the rings and launches the resident kernel on a stream of its own. Throws
  // Error(invalid_argument) for bad options and Error(cuda) without a device.
  explicit PersistentSolver(const PersistentOptions& options = {});
  ~PersistentSolver();  // a draining shutdown if none was asked for; never throws
  PersistentSolver(const PersistentSolver&) = delete;
  PersistentSolver& operator=(const PersistentSolver&) = delete;

  // Queues one item; thread-safe. Its sizes are checked here (Error invalid_argument), its data on
  // the GPU (a NaN or non-Hermitian matrix gets its info[i].invalid_input and NaN outputs; the other
  // matrices of the item are solved). A full ring makes SubmitMode::wait wait and SubmitMode::fail
  // return no ticket. Throws Error(invalid_argument) after shutdown and once the ring has handed out
  // detail::kMaxPositions positions (2^44 - 2^32: a new solver takes over), and Error(cuda) once the
  // kernel has failed.
  std::optional<Ticket> submit(const EvdItem<T>& item, SubmitMode mode = SubmitMode::wait);

  ItemState poll(const Ticket& ticket) const;
  // Waits until the item (every matrix of it) is finished; throws Error(cuda) when the kernel fails
  // or stops first.
  ItemState wait(const Ticket& ticket) const;
  // Work queued on `stream` after this call runs once the item is finished (a one-thread kernel
  // waits on the GPU, so the host does not).
  void stream_wait(const Ticket& ticket, cudaStream_t stream) const;
  // The ticket that device code received from submit() (see persistent_submit.cuh).
  static Ticket device_ticket(std::uint64_t position) { return {position, true}; }

  DeviceQueue<T> device_queue() const;  // Error(invalid_argument) when the solver parks
  PersistentCounters counters() const;
  int consumers() const;  // resident warps or blocks

  // Stops taking items, then solves (drain) or cancels what is queued, and waits for the kernel to
  // end. Device code must have stopped submitting. Throws Error(cuda) if the kernel failed.
  void shutdown(ShutdownMode mode = ShutdownMode::drain);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace eigstream::cuda
