// Raw loopback sockets for the UDP and TCP tests: they send exactly the bytes a test builds, so the
// readers are checked against datagrams and byte splits chosen by hand.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

#include "sample_io_fixtures.hpp"

namespace sample_io_test {

inline sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// An owned socket; no assertions inside, so peer threads may use it (Catch2 asserts from one thread).
class RawSocket {
 public:
  explicit RawSocket(int type) : fd_(::socket(AF_INET, type, 0)) {}
  RawSocket(RawSocket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  ~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

  // The next connection on a listening socket (fd() < 0 when accept fails).
  static RawSocket accept_from(const RawSocket& listener) {
    return RawSocket(Adopt{::accept(listener.fd(), nullptr, nullptr)});
  }

 private:
  struct Adopt {
    int fd;
  };
  explicit RawSocket(Adopt adopt) : fd_(adopt.fd) {}
  int fd_;
};

inline void send_datagram(const RawSocket& s, std::uint16_t port, const Bytes& bytes) {
  const sockaddr_in to = loopback(port);
  REQUIRE(::sendto(s.fd(), bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) ==
          static_cast<ssize_t>(bytes.size()));
}

// A TCP socket listening on 127.0.0.1 at a port the system picks (returned in port).
inline RawSocket tcp_listener(std::uint16_t& port) {
  RawSocket s(SOCK_STREAM);
  REQUIRE(s.fd() >= 0);
  sockaddr_in address = loopback(0);
  REQUIRE(::bind(s.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(s.fd(), 2) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&address), &length) == 0);
  port = ntohs(address.sin_port);
  return s;
}

// Connects a TCP socket to 127.0.0.1:port (the listener exists, so this does not wait).
inline bool tcp_connect(const RawSocket& s, std::uint16_t port) {
  const sockaddr_in to = loopback(port);
  return ::connect(s.fd(), reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0;
}

// Sends bytes[begin, end) in pieces of the given sizes (cycled), each with its own send call.
inline bool send_pieces(const RawSocket& s, const Bytes& bytes, std::size_t begin, std::size_t end,
                        std::initializer_list<std::size_t> pieces) {
  auto piece = pieces.begin();
  while (begin < end) {
    const std::size_t n = std::min(*piece, end - begin);
    if (::send(s.fd(), bytes.data() + begin, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) return false;
    begin += n;
    if (++piece == pieces.end()) piece = pieces.begin();
  }
  return true;
}

}  // namespace sample_io_test
