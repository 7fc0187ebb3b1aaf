// CancelSignal: what lets cancel() from any thread end a reader's blocking waits at once. Every
// wait of a reader (for a socket, a peer, a back-off or a rate-limit delay) polls the descriptor
// it waits for together with an eventfd that cancel() makes readable.
#pragma once

#include <atomic>
#include <chrono>

namespace eigstream::streaming {

enum class WaitOutcome { ready, timeout, cancelled };

class CancelSignal {
 public:
  CancelSignal();
  ~CancelSignal();
  CancelSignal(const CancelSignal&) = delete;
  CancelSignal& operator=(const CancelSignal&) = delete;

  void cancel() noexcept;
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }

  // Waits until fd has any of `events` (poll flags), the timeout passes (timeout_ms < 0: never)
  // or cancel() is called. Errors and hang-ups on fd count as ready: the next call on fd says more.
  WaitOutcome wait(int fd, short events, int timeout_ms) const;

  // Waits until `deadline`; false when cancelled first.
  bool sleep_until(std::chrono::steady_clock::time_point deadline) const;

 private:
  int event_fd_ = -1;
  std::atomic<bool> cancelled_{false};
};

}  // namespace eigstream::streaming
