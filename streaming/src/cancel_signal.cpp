// CancelSignal: an eventfd polled beside the descriptor a reader waits for.
#include "cancel_signal.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "eigstream/error.hpp"

namespace eigstream::streaming {

CancelSignal::CancelSignal() : event_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (event_fd_ < 0) throw Error(ErrorCode::io, std::string("cannot create an eventfd: ") + std::strerror(errno));
}

CancelSignal::~CancelSignal() { ::close(event_fd_); }

void CancelSignal::cancel() noexcept {
  cancelled_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  // Only fails when the counter would overflow, in which case it is readable already.
  [[maybe_unused]] const ssize_t written = ::write(event_fd_, &one, sizeof one);
}

WaitOutcome CancelSignal::wait(int fd, short events, int timeout_ms) const {
  pollfd fds[2] = {{event_fd_, POLLIN, 0}, {fd, events, 0}};
  const nfds_t count = fd >= 0 ? 2 : 1;
  for (;;) {
    if (cancelled()) return WaitOutcome::cancelled;
    const int n = ::poll(fds, count, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::io, std::string("poll failed: ") + std::strerror(errno));
    }
    if (fds[0].revents != 0 || cancelled()) return WaitOutcome::cancelled;
    if (n == 0) return WaitOutcome::timeout;
    return WaitOutcome::ready;
  }
}

bool CancelSignal::sleep_until(std::chrono::steady_clock::time_point deadline) const {
  for (;;) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return !cancelled();
    // Rounded up so that the loop does not spin through the last partial millisecond.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    if (wait(-1, 0, static_cast<int>(ms)) == WaitOutcome::cancelled) return false;
  }
}

}  // namespace eigstream::streaming
