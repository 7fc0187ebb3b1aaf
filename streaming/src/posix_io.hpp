// Small POSIX pieces shared by the file and socket readers and writers: an owned descriptor, the
// size of their buffers, IPv4 address resolution, the bound port of a socket, writing a whole buffer.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace eigstream::streaming {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept;
  void reset() noexcept;

 private:
  int fd_ = -1;
};

// Samples that one read, receive or write buffer holds: about 256 KiB, at least one sample.
inline std::size_t buffer_samples(std::size_t sample_bytes) {
  return sample_bytes >= 256 * 1024 ? 1 : 256 * 1024 / sample_bytes;
}

// "what: strerror(errno)" for the current errno.
std::string errno_message(const std::string& what);

// The IPv4 address of host (dotted quad or a name) and port; Error(invalid_argument) when it
// cannot be resolved.
sockaddr_in ipv4_address(const std::string& host, std::uint16_t port);

// "host:port" as given, for messages.
std::string endpoint_name(const std::string& host, std::uint16_t port);

// The local port a bound socket got.
std::uint16_t bound_port(int fd);

// Writes all `size` bytes to fd (send with MSG_NOSIGNAL for sockets, so a gone peer is an error and
// not a signal); Error(io) naming `name` on failure.
void write_all(int fd, const unsigned char* data, std::size_t size, bool socket, const std::string& name);

}  // namespace eigstream::streaming
