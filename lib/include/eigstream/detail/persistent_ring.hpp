// The work rings of the persistent solver (eigstream/persistent.hpp), laid out for the three
// parties that share them: host code that submits and waits, the resident kernel that claims,
// solves and completes, and device code that submits (eigstream/persistent_submit.cuh).
//
// A ring is the bounded multi-producer, multi-consumer queue of D. Vyukov: slot t % capacity starts
// in state t % capacity; the producer holding ticket t may fill the slot when its state equals t and
// publishes it by storing t + 1; once every matrix of the item at position t is solved, the consumer
// that finished the last one stores t + capacity, which both says "done" and frees the slot for ticket
// t + capacity. A slot is therefore busy from submit to completion, and a full ring means `capacity`
// items queued or being solved. Items with a matrix cancelled at shutdown get kCancelledBit in their
// final state. States only grow, so "ticket t is finished" is (state & ~kCancelledBit) >= t + capacity.
//
// Between the rings and the consumers stands the kernel's poller, which makes published items
// `visible` (device memory) in order; consumers claim only visible positions, and stop once the
// poller has stopped (at shutdown, or when it parks) and nothing visible is left. How they claim (a
// ticket from a fetch-and-add on `head`), how the matrices of an item of several are shared out,
// parking and its handshake with submit are described in kernels/jacobi_evd_persistent.cu.
#pragma once

#include <cstdint>

#include "eigstream/detail/host_device.hpp"
#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::cuda {

// The most matrices one item may hold (EvdItem::count).
inline constexpr int kMaxItemMatrices = 1 << 18;

// One item for the persistent solver: one matrix, or a small batch of `count` matrices of the same
// order (matrix i at a + i * stride_a, its values at values + i * stride_values, and so on; its
// status at info[i]), whose matrices resident consumers claim a few at a time (as many as a
// consumer solves side by side), so a batch is solved by many consumers at once. Every pointer must
// be device-accessible: device memory, or pinned host memory mapped into the device's address space
// (cudaHostAlloc, cudaHostRegister).
template <class T>
struct EvdItem {
  const T* a = nullptr;           // n x n Hermitian, column-major, leading dimension lda
  index_t lda = 0;
  real_t<T>* values = nullptr;    // n eigenvalues, in the solver's sort order
  T* vectors = nullptr;           // optional: n x n eigenvectors, leading dimension ldv
  index_t ldv = 0;
  const T* warm_start = nullptr;  // optional: orthonormal V0 of the previous solve, leading dimension ldw
  index_t ldw = 0;
  SolveInfo* info = nullptr;      // the matrices' statuses: sweeps, off-norm, converged, invalid input
  int n = 0;
  bool reorthonormalise = true;   // with a warm start: end with one Newton-Schulz step on the vectors
                                  // (Options::reorthonormalise)
  int count = 1;                  // matrices, in [1, kMaxItemMatrices]
  // From one matrix of the item to the next, in elements; used when count > 1. The outputs' must
  // keep the matrices apart (stride_values >= n, stride_vectors >= ldv * n); the inputs' may be 0
  // (one A, or one V0 for every matrix).
  index_t stride_a = 0, stride_values = 0, stride_vectors = 0, stride_warm_start = 0;
};

namespace detail {

inline constexpr std::uint64_t kCancelledBit = std::uint64_t(1) << 63;

// The positions a ring can hand out. The kernel names an item in one 64-bit word by its position and
// a count of its matrices, in kItemCountBits bits (kernels/jacobi_evd_persistent.cu, item_word), so
// positions must stay below 2^(64 - kItemCountBits) = 2^44: 20 days at 10 million items a second.
// Submits refuse once a ring's tail has reached kMaxPositions, 2^32 short of that, which leaves room
// for every submit that passed the test at the same time.
inline constexpr int kItemCountBits = 20;
inline constexpr std::uint64_t kMaxPositions =
    (std::uint64_t(1) << (64 - kItemCountBits)) - (std::uint64_t(1) << 32);

template <class T>
struct alignas(64) RingSlot {
  std::uint64_t state;
  EvdItem<T> item;
};

template <class T>
struct Ring {
  RingSlot<T>* slots;      // `capacity` slots in mapped pinned host memory
  std::uint64_t* head;     // consumers' claim counter, device memory
  std::uint64_t* tail;     // producers' ticket counter: host memory (host ring), device memory (device ring)
  std::uint64_t capacity;  // a power of two
  // Items of several matrices (device memory; kernels/jacobi_evd_persistent.cu says how they are
  // shared): the oldest position helpers may find matrices in, and per slot its item's name and
  // count, the matrices of it handed out and finished, and a copy of the item for its helpers.
  std::uint64_t* help;
  std::uint64_t* opened;
  std::uint64_t* taken;
  std::uint64_t* finished;
  EvdItem<T>* open_items;
};

// The matrices of an item whose count is `count`, as the kernel solves and counts them: device code's
// count is not checked on submit (persistent_submit.cuh), and a bad one must not hang the solver.
EIGSTREAM_HD int item_matrices(int count) {
  const int at_least_one = count > 1 ? count : 1;
  return at_least_one < kMaxItemMatrices ? at_least_one : kMaxItemMatrices;
}

// Whether ticket t of a ring whose slot shows `state` is finished (solved or cancelled).
EIGSTREAM_HD bool finished(std::uint64_t state, std::uint64_t ticket, std::uint64_t capacity) {
  return (state & ~kCancelledBit) >= ticket + capacity;
}

// What the host tells the resident kernel (device memory, written by a copy on a side stream).
enum RunState : int { kRunning = 0, kDrain = 1, kCancel = 2 };

// Totals of one consumer (a warp or a block), written only by it (mapped pinned host memory).
struct alignas(32) ConsumerCounters {
  std::uint64_t completed;  // solved, valid or not
  std::uint64_t failed;     // solved with invalid input or not converged
  std::uint64_t cancelled;  // claimed at a cancelling shutdown and not solved
};

}  // namespace detail
}  // namespace eigstream::cuda
