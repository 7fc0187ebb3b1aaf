// TCP sample reader and writer. The reader receives into one buffer whose front holds the bytes of
// a partial sample until the rest arrives, so samples split anywhere across receives are
// reassembled exactly and nothing is allocated while streaming.
#include "eigstream/streaming/tcp_io.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "atomic_counters.hpp"
#include "cancel_signal.hpp"
#include "eigstream/error.hpp"
#include "eigstream/streaming/sample_format.hpp"
#include "encode_buffer.hpp"
#include "posix_io.hpp"

namespace eigstream::streaming {
namespace {

using clock = std::chrono::steady_clock;

constexpr int connect_wait_ms = 5000;  // longest wait for one connection attempt to complete

UniqueFd tcp_socket() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw Error(ErrorCode::io, errno_message("cannot create a TCP socket"));
  return fd;
}

// One connection attempt; an empty descriptor (and the reason in `error`) when it fails or is cancelled.
UniqueFd try_connect(const sockaddr_in& address, const CancelSignal& cancel, int& error) {
  UniqueFd fd = tcp_socket();
  const int flags = ::fcntl(fd.get(), F_GETFL);
  ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    if (errno != EINPROGRESS) {
      error = errno;
      return {};
    }
    if (cancel.wait(fd.get(), POLLOUT, connect_wait_ms) != WaitOutcome::ready) {
      error = ETIMEDOUT;
      return {};
    }
    socklen_t length = sizeof error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    if (error != 0) return {};
  }
  ::fcntl(fd.get(), F_SETFL, flags);
  return fd;
}

}  // namespace

struct TcpSampleReader::Impl {
  TcpReaderOptions options;
  std::size_t sample_bytes;
  sockaddr_in address;
  std::string name;  // "tcp host:port", for messages
  UniqueFd listener;
  UniqueFd peer;
  std::uint16_t port = 0;
  std::vector<unsigned char> buffer;
  std::size_t carry = 0;  // bytes of a partial sample at the front of buffer
  std::uint64_t connections = 0;
  bool ended = false;
  CancelSignal cancel;
  AtomicCounters counters;

  explicit Impl(const TcpReaderOptions& o)
      : options(o),
        sample_bytes(streaming::sample_bytes(o.format, o.channels)),
        address(ipv4_address(o.address, o.port)),
        name("tcp " + endpoint_name(o.address, o.port)),
        port(o.port) {
    if (o.retry_initial_ms < 1 || o.retry_max_ms < o.retry_initial_ms) {
      throw Error(ErrorCode::invalid_argument, name + ": need 1 <= retry_initial_ms <= retry_max_ms");
    }
    buffer.resize(buffer_samples(sample_bytes) * sample_bytes);
    if (o.mode == TcpMode::connect) {
      if (o.port == 0) throw Error(ErrorCode::invalid_argument, "TCP reader in connect mode: the port is required");
      return;
    }
    listener = tcp_socket();
    const int yes = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener.get(), 4) != 0) {
      throw Error(ErrorCode::io, errno_message("cannot listen on " + name));
    }
    port = bound_port(listener.get());
    name = "tcp " + endpoint_name(o.address, port);
  }

  bool accept_peer() {
    for (;;) {
      if (cancel.wait(listener.get(), POLLIN, options.idle_timeout_ms) != WaitOutcome::ready) return false;
      const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        peer = UniqueFd(fd);
        return true;
      }
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
        throw Error(ErrorCode::io, errno_message(name + ": accept failed"));
      }
    }
  }

  bool connect_peer() {
    const auto start = clock::now();
    int backoff_ms = options.retry_initial_ms;
    for (;;) {
      int error = 0;
      peer = try_connect(address, cancel, error);
      if (peer) return true;
      if (cancel.cancelled()) return false;
      const auto retry = clock::now() + std::chrono::milliseconds(backoff_ms);
      if (options.idle_timeout_ms >= 0 && retry > start + std::chrono::milliseconds(options.idle_timeout_ms)) {
        if (connections > 0) return false;  // the peer went away and did not come back: the end
        throw Error(ErrorCode::io, name + ": cannot connect: " + std::strerror(error) + " (tried for " +
                                       std::to_string(options.idle_timeout_ms) + " ms)");
      }
      if (!cancel.sleep_until(retry)) return false;
      backoff_ms = std::min(2 * backoff_ms, options.retry_max_ms);
    }
  }

  // Waits for the next peer; false when the stream ends instead.
  bool establish() {
    if (connections > 0 && !options.reconnect) return false;
    if (!(options.mode == TcpMode::listen ? accept_peer() : connect_peer())) return false;
    if (connections > 0) AtomicCounters::add(counters.reconnects, 1);
    ++connections;
    return true;
  }

  void peer_gone() {
    if (carry > 0) AtomicCounters::add(counters.malformed, 1);
    carry = 0;
    peer.reset();
  }

  ReadResult read(sample_t* out, std::size_t max_samples) {
    ReadResult result;
    if (max_samples == 0) return result;
    const std::size_t capacity = std::min(buffer.size() / sample_bytes, max_samples) * sample_bytes;
    for (;;) {
      if (ended || cancel.cancelled()) {
        ended = true;
        result.end = true;
        return result;
      }
      if (!peer) {
        if (!establish()) ended = true;
        continue;
      }
      const WaitOutcome outcome = cancel.wait(peer.get(), POLLIN, options.idle_timeout_ms);
      if (outcome != WaitOutcome::ready) {
        if (outcome == WaitOutcome::timeout) ended = true;
        continue;
      }
      const ssize_t n = ::recv(peer.get(), buffer.data() + carry, capacity - carry, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) {  // orderly close, or the connection broke (reset by the peer)
        if (n < 0) AtomicCounters::add(counters.broken_connections, 1);
        peer_gone();
        continue;
      }
      AtomicCounters::add(counters.bytes, static_cast<std::uint64_t>(n));
      const std::size_t have = carry + static_cast<std::size_t>(n);
      const std::size_t whole = have / sample_bytes;
      carry = have - whole * sample_bytes;
      if (whole == 0) continue;
      decode_values(buffer.data(), whole * options.channels, options.format, out);
      std::memmove(buffer.data(), buffer.data() + whole * sample_bytes, carry);
      AtomicCounters::add(counters.samples, whole);
      result.samples = whole;
      return result;
    }
  }
};

TcpSampleReader::TcpSampleReader(const TcpReaderOptions& options) : impl_(std::make_unique<Impl>(options)) {}
TcpSampleReader::~TcpSampleReader() = default;
std::uint16_t TcpSampleReader::port() const { return impl_->port; }
std::size_t TcpSampleReader::channels() const { return impl_->options.channels; }
double TcpSampleReader::sample_rate() const { return impl_->options.sample_rate; }
ReadResult TcpSampleReader::read(sample_t* out, std::size_t max_samples) { return impl_->read(out, max_samples); }
void TcpSampleReader::cancel() { impl_->cancel.cancel(); }
ReaderCounters TcpSampleReader::counters() const { return impl_->counters.snapshot(); }

struct TcpSampleWriter::Impl {
  std::string name;
  UniqueFd fd;
  EncodeBuffer buffer;

  explicit Impl(const TcpWriterOptions& o)
      : name("tcp " + endpoint_name(o.address, o.port)),
        buffer(o.format, o.channels, buffer_samples(sample_bytes(o.format, o.channels))) {
    if (o.port == 0) throw Error(ErrorCode::invalid_argument, "TCP writer: the destination port is required");
    const sockaddr_in address = ipv4_address(o.address, o.port);
    const CancelSignal never;
    const auto deadline = clock::now() + std::chrono::milliseconds(std::max(0, o.connect_timeout_ms));
    int backoff_ms = 10;
    for (;;) {
      int error = 0;
      fd = try_connect(address, never, error);
      if (fd) return;
      if (clock::now() + std::chrono::milliseconds(backoff_ms) > deadline) {
        throw Error(ErrorCode::io, name + ": cannot connect: " + std::strerror(error) + " (tried for " +
                                       std::to_string(o.connect_timeout_ms) + " ms)");
      }
      never.sleep_until(clock::now() + std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min(2 * backoff_ms, 500);
    }
  }

  auto sender() {
    return [this](const unsigned char* bytes, std::size_t size) { write_all(fd.get(), bytes, size, true, name); };
  }
};

TcpSampleWriter::TcpSampleWriter(const TcpWriterOptions& options) : impl_(std::make_unique<Impl>(options)) {}

TcpSampleWriter::~TcpSampleWriter() {
  try {
    flush();
  } catch (const Error&) {
  }
}

std::size_t TcpSampleWriter::channels() const { return impl_->buffer.channels(); }
void TcpSampleWriter::write(const sample_t* samples, std::size_t count) {
  impl_->buffer.write(samples, count, impl_->sender());
}
void TcpSampleWriter::flush() { impl_->buffer.flush(impl_->sender()); }

}  // namespace eigstream::streaming
