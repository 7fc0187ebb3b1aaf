// Submission to a PersistentSolver from device code (CUDA sources only): a kernel that has just
// produced a matrix (a covariance, say) queues its EVD without returning to the host. This is the
// producer half of the ring protocol in eigstream/detail/persistent_ring.hpp, on the solver's device
// ring. One thread submits one item; any number of threads and kernels may submit concurrently.
//
//   __global__ void after_covariance(eigstream::cuda::DeviceQueue<float> queue, ...) {
//     std::uint64_t position;
//     if (threadIdx.x == 0 && eigstream::cuda::try_submit(queue, item, &position)) ...
//   }
//
// The host waits with solver.wait(PersistentSolver<T>::device_ticket(position)). The solver must
// not be shut down while kernels may still submit.
#pragma once

#include <cstdint>

#include "eigstream/persistent.hpp"

namespace eigstream::cuda {
namespace detail {

// Loads and stores at system scope: ring slots live in mapped host memory, shared with the host.
__device__ __forceinline__ std::uint64_t load_acquire_system(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release_system(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

}  // namespace detail

// Queues `item` (sizes are not checked here: n <= max_n, count in [1, kMaxItemMatrices], info and
// values must be set, and strides as EvdItem says when count > 1). Returns
// false, queuing nothing, when the ring is full or the solver is shutting down, and for good once
// the device ring has handed out detail::kMaxPositions positions (a new solver takes over then): a
// caller that retries on false should give up once the queue's ring tail has reached that.
template <class T>
__device__ bool try_submit(const DeviceQueue<T>& queue, const EvdItem<T>& item, std::uint64_t* position) {
  if (*reinterpret_cast<const volatile int*>(queue.run_state) != detail::kRunning) return false;
  const detail::Ring<T>& ring = queue.ring;
  unsigned long long* tail = reinterpret_cast<unsigned long long*>(ring.tail);
  std::uint64_t t = *reinterpret_cast<volatile std::uint64_t*>(ring.tail);
  if (t >= detail::kMaxPositions) return false;
  for (;;) {
    detail::RingSlot<T>& slot = ring.slots[t & (ring.capacity - 1)];
    const std::uint64_t state = detail::load_acquire_system(&slot.state);
    if (state == t) {
      const std::uint64_t seen = atomicCAS(tail, t, t + 1);
      if (seen == t) {
        slot.item = item;
        atomicAdd(reinterpret_cast<unsigned long long*>(queue.submitted_matrices),
                  (unsigned long long)detail::item_matrices(item.count));  // as the kernel counts them
        __threadfence_system();
        detail::store_release_system(&slot.state, t + 1);
        *position = t;
        return true;
      }
      t = seen;
    } else if (state < t) {
      return false;  // full: the slot still holds ticket t - capacity
    } else {
      t = *reinterpret_cast<volatile std::uint64_t*>(ring.tail);
    }
  }
}

}  // namespace eigstream::cuda
