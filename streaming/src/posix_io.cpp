// POSIX descriptors, IPv4 addresses and whole-buffer writes for the sample readers and writers.
#include "posix_io.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "eigstream/error.hpp"

namespace eigstream::streaming {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string errno_message(const std::string& what) { return what + ": " + std::strerror(errno); }

sockaddr_in ipv4_address(const std::string& host, std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) == 1) return address;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                "cannot resolve the IPv4 address of '" + host + "': " + ::gai_strerror(rc));
  }
  address.sin_addr = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
  ::freeaddrinfo(found);
  return address;
}

std::string endpoint_name(const std::string& host, std::uint16_t port) { return host + ":" + std::to_string(port); }

std::uint16_t bound_port(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw Error(ErrorCode::io, errno_message("getsockname failed"));
  }
  return ntohs(address.sin_port);
}

void write_all(int fd, const unsigned char* data, std::size_t size, bool socket, const std::string& name) {
  while (size > 0) {
    const ssize_t n = socket ? ::send(fd, data, size, MSG_NOSIGNAL) : ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::io, errno_message(name + ": write failed"));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace eigstream::streaming
