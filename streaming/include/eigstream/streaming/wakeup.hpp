// Wakeup: how a thread waits for a lock-free queue or pool to become ready without burning a core.
// The waiter spins briefly (yielding), then sleeps on a condition variable; the other side calls
// notify() after every change, which costs a fence and a load unless someone sleeps.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace eigstream::streaming {

class Wakeup {
 public:
  // Returns once ready() is true. ready() may have side effects (a push or pop that succeeds).
  template <class Ready>
  void wait(Ready ready) {
    for (int spin = 0; spin < spins; ++spin) {
      if (ready()) return;
      std::this_thread::yield();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    // Pairs with the fence in notify(): either ready() sees the change, or notify() sees a sleeper.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    while (!ready()) cv_.wait_for(lock, backstop);
    sleepers_.fetch_sub(1);
  }

  void notify() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      cv_.notify_all();
    }
  }

 private:
  static constexpr int spins = 64;
  // The fences make a lost wakeup impossible; the timed wait only bounds the cost of a bug there.
  static constexpr std::chrono::milliseconds backstop{50};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<int> sleepers_{0};
};

}  // namespace eigstream::streaming
