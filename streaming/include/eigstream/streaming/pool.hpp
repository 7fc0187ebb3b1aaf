// Pool<T>: a fixed number of items of type T, all constructed when the pool is made, and Handle<T>,
// the move-only owner of one of them that gives it back to its pool when destroyed. Free items sit
// on a lock-free stack of indices (a Treiber stack with an ABA tag), so any thread may release and
// acquiring or releasing never allocates. A pool must outlive every handle to its items.
#pragma once

#include "eigstream/error.hpp"
#include "eigstream/streaming/wakeup.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace eigstream::streaming {

template <class T>
class Pool;

template <class T>
struct PoolSlot {
  template <class... Args>
  PoolSlot(Pool<T>* home, std::uint32_t position, const Args&... args) : item(args...), pool(home), index(position) {}
  T item;
  Pool<T>* pool;
  std::uint32_t index;
};

template <class T>
class Handle {
 public:
  Handle() = default;
  Handle(Handle&& other) noexcept : slot_(std::exchange(other.slot_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      slot_ = std::exchange(other.slot_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  void reset() noexcept {
    if (PoolSlot<T>* slot = std::exchange(slot_, nullptr)) slot->pool->release(slot);
  }
  T& operator*() const noexcept { return slot_->item; }
  T* operator->() const noexcept { return &slot_->item; }
  explicit operator bool() const noexcept { return slot_ != nullptr; }

  // For queues, which hold raw slots: give up ownership, and take it back.
  PoolSlot<T>* release() noexcept { return std::exchange(slot_, nullptr); }
  static Handle adopt(PoolSlot<T>* slot) noexcept { return Handle(slot); }

 private:
  explicit Handle(PoolSlot<T>* slot) noexcept : slot_(slot) {}
  PoolSlot<T>* slot_ = nullptr;
};

// What the pipeline keeps of pools of any item type.
class PoolBase {
 public:
  virtual ~PoolBase() = default;
};

template <class T>
class Pool : public PoolBase {
 public:
  // Constructs count items as T(args...).
  template <class... Args>
  explicit Pool(std::size_t count, const Args&... args) {
    if (count == 0 || count >= none)
      throw Error(ErrorCode::invalid_argument, "streaming: a pool holds 1 to 2^32 - 2 items, not " + std::to_string(count));
    next_.reset(new std::atomic<std::uint32_t>[count]);
    slots_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      slots_.push_back(std::make_unique<PoolSlot<T>>(this, static_cast<std::uint32_t>(i), args...));
      push_free(slots_.back().get());
    }
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  ~Pool() override {
    std::size_t free = 0;
    for (std::uint32_t i = top_index(top_.load()); i != none; i = next_[i].load()) ++free;
    if (free != slots_.size()) {
      std::fprintf(stderr,
                   "eigstream: a pool was destroyed while %zu of its %zu items were still held "
                   "(release every handle, including those popped from an output queue, before "
                   "destroying the pipeline)\n",
                   slots_.size() - free, slots_.size());
      std::abort();
    }
  }

  std::size_t size() const noexcept { return slots_.size(); }

  // An item, or an empty handle when all are in use.
  Handle<T> try_acquire() noexcept { return Handle<T>::adopt(pop_free()); }

  // An item; waits while all are in use (they come back as the stages downstream finish with them).
  Handle<T> acquire() {
    PoolSlot<T>* slot = pop_free();
    if (!slot) freed_.wait([&] { return (slot = pop_free()) != nullptr; });
    return Handle<T>::adopt(slot);
  }

 private:
  friend class Handle<T>;
  static constexpr std::uint32_t none = 0xffffffffu;
  static std::uint32_t top_index(std::uint64_t top) { return static_cast<std::uint32_t>(top); }
  // The tag in the high half changes on every update, so a stale compare-and-swap fails (no ABA).
  static std::uint64_t make_top(std::uint64_t old_top, std::uint32_t index) {
    return (((old_top >> 32) + 1) << 32) | index;
  }

  void release(PoolSlot<T>* slot) noexcept {
    push_free(slot);
    freed_.notify();
  }

  void push_free(PoolSlot<T>* slot) noexcept {
    std::uint64_t top = top_.load(std::memory_order_relaxed);
    do {
      next_[slot->index].store(top_index(top), std::memory_order_relaxed);
    } while (!top_.compare_exchange_weak(top, make_top(top, slot->index), std::memory_order_release,
                                         std::memory_order_relaxed));
  }

  PoolSlot<T>* pop_free() noexcept {
    std::uint64_t top = top_.load(std::memory_order_acquire);
    for (;;) {
      const std::uint32_t index = top_index(top);
      if (index == none) return nullptr;
      const std::uint32_t next = next_[index].load(std::memory_order_relaxed);
      if (top_.compare_exchange_weak(top, make_top(top, next), std::memory_order_acquire,
                                     std::memory_order_acquire))
        return slots_[index].get();
    }
  }

  std::vector<std::unique_ptr<PoolSlot<T>>> slots_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> next_;
  std::atomic<std::uint64_t> top_{none};
  Wakeup freed_;
};

}  // namespace eigstream::streaming
