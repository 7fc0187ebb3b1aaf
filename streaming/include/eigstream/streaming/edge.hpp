// Edge<T>: the bounded queue that joins one producing stage to one consuming stage, carrying
// handles to pooled items. Its full-queue policy decides what a push into a full queue does:
//   block        the producer waits for room (lossless; the default)
//   drop_newest  the pushed item is dropped
//   drop_oldest  the oldest queued item is dropped and the pushed one queued
// Every drop is counted. block and drop_newest use a boost::lockfree::spsc_queue; drop_oldest a
// TakeBackRing, because there the producer too takes items out.
#pragma once

#include "eigstream/streaming/pool.hpp"
#include "eigstream/streaming/take_back_ring.hpp"
#include "eigstream/streaming/wakeup.hpp"

#include <boost/lockfree/spsc_queue.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace eigstream::streaming {

enum class FullPolicy { block, drop_oldest, drop_newest };

struct EdgeOptions {
  std::size_t capacity = 16;  // items the queue holds
  FullPolicy policy = FullPolicy::block;
};

// What the pipeline and the stats read of an edge of any item type.
class EdgeBase {
 public:
  explicit EdgeBase(const EdgeOptions& options);
  virtual ~EdgeBase() = default;
  const EdgeOptions& options() const noexcept { return options_; }
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  std::size_t high_water() const noexcept { return high_water_.load(std::memory_order_relaxed); }

 protected:
  // Producer thread only: single writer, so no read-modify-write is needed.
  void count_drop() noexcept { dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  void note_size(std::size_t size) noexcept {
    if (size > high_water_.load(std::memory_order_relaxed)) high_water_.store(size, std::memory_order_relaxed);
  }

 private:
  EdgeOptions options_;
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::size_t> high_water_{0};
};

template <class T>
class Edge : public EdgeBase {
 public:
  explicit Edge(const EdgeOptions& options) : EdgeBase(options) {
    if (options.policy == FullPolicy::drop_oldest)
      ring_.emplace(options.capacity);
    else
      fifo_.emplace(options.capacity);
  }
  ~Edge() override {
    while (try_pop()) {
    }
  }

  // Producer side.
  void push(Handle<T> item) {
    PoolSlot<T>* slot = item.release();
    switch (options().policy) {
      case FullPolicy::block:
        if (!fifo_->push(slot)) {
          bool pushed = false;
          room_.wait([&] { return (pushed = fifo_->push(slot)) || drop_when_full_.load(std::memory_order_acquire); });
          if (!pushed) {
            Handle<T>::adopt(slot).reset();
            count_drop();
            return;
          }
        }
        note_size(options().capacity - fifo_->write_available());
        break;
      case FullPolicy::drop_newest:
        if (!fifo_->push(slot)) {
          Handle<T>::adopt(slot).reset();
          count_drop();
          return;
        }
        note_size(options().capacity - fifo_->write_available());
        break;
      case FullPolicy::drop_oldest:
        while (!ring_->try_push(slot)) {
          if (PoolSlot<T>* oldest = ring_->try_take()) {
            Handle<T>::adopt(oldest).reset();
            count_drop();
          }
        }
        note_size(ring_->size());
        break;
    }
    items_.notify();
  }

  // From any thread: from now on a push into a full queue drops the pushed item (counted) instead of
  // waiting, and a producer waiting now stops waiting. For a queue whose consumer may never come back.
  void drop_when_full() {
    drop_when_full_.store(true, std::memory_order_release);
    room_.notify();
  }

  // Producer side: nothing more will be pushed.
  void close() {
    closed_.store(true, std::memory_order_release);
    items_.notify();
  }

  // Consumer side: the next item; waits for one. Empty once the edge is closed and drained.
  Handle<T> pop() {
    PoolSlot<T>* slot = take();
    if (!slot) {
      items_.wait([&] { return (slot = take()) != nullptr || closed_.load(std::memory_order_acquire); });
      if (!slot) slot = take();  // items pushed before close() are visible now
    }
    return Handle<T>::adopt(slot);
  }

  // Consumer side: the next item, or an empty handle when none is queued now.
  Handle<T> try_pop() { return Handle<T>::adopt(take()); }

 private:
  PoolSlot<T>* take() {
    PoolSlot<T>* slot = nullptr;
    if (ring_) {
      slot = ring_->try_take();
    } else if (fifo_->pop(slot)) {
      if (options().policy == FullPolicy::block) room_.notify();
    }
    return slot;
  }

  std::optional<boost::lockfree::spsc_queue<PoolSlot<T>*>> fifo_;
  std::optional<TakeBackRing<PoolSlot<T>>> ring_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> drop_when_full_{false};
  Wakeup items_;  // the consumer waits here for items
  Wakeup room_;   // the producer waits here for room (block policy)
};

}  // namespace eigstream::streaming
