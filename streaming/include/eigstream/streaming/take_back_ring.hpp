// TakeBackRing: the queue behind a drop_oldest edge. A bounded ring of pointers with one producer
// and one consumer in which the producer may also take back the oldest entry, to drop it when the
// ring is full. (A boost::lockfree::spsc_queue cannot do that: only its consumer may pop.)
//
// head is written by the producer only; tail is advanced by compare-and-swap by whichever side takes
// the oldest entry, so an entry goes to exactly one of them. Both counters only grow (64 bits), so a
// stale compare-and-swap fails instead of succeeding on a recycled position. Slots are atomic: a
// taker may read a slot that the producer is refilling, but then its compare-and-swap fails and the
// value read is never used.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace eigstream::streaming {

template <class P>
class TakeBackRing {
 public:
  explicit TakeBackRing(std::size_t capacity) : capacity_(capacity), slots_(new std::atomic<P*>[capacity]) {}

  std::size_t capacity() const noexcept { return capacity_; }

  // Producer only. False when full.
  bool try_push(P* entry) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == capacity_) return false;
    slots_[head % capacity_].store(entry, std::memory_order_relaxed);
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer, or producer taking back the oldest. nullptr when empty.
  P* try_take() noexcept {
    std::uint64_t tail = tail_.load(std::memory_order_acquire);
    for (;;) {
      if (tail == head_.load(std::memory_order_acquire)) return nullptr;
      P* entry = slots_[tail % capacity_].load(std::memory_order_relaxed);
      if (tail_.compare_exchange_weak(tail, tail + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        return entry;
    }
  }

  // Entries in the ring (exact from the producer's side).
  std::size_t size() const noexcept {
    return static_cast<std::size_t>(head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire));
  }

 private:
  std::size_t capacity_;
  std::unique_ptr<std::atomic<P*>[]> slots_;
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
};

}  // namespace eigstream::streaming
