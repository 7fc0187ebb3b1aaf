// UDP sample reader and writer. The reader receives into one buffer of max_datagram_bytes + 1 bytes
// (MSG_TRUNC reports the true size of a longer datagram) and delivers from it until it is used up,
// so nothing is allocated while streaming.
#include "eigstream/streaming/udp_io.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
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

constexpr std::size_t seqnum_bytes = 8;
constexpr std::size_t ethernet_udp_payload = 1472;

UniqueFd udp_socket() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) throw Error(ErrorCode::io, errno_message("cannot create a UDP socket"));
  return fd;
}

}  // namespace

struct UdpSampleReader::Impl {
  UdpReaderOptions options;
  std::size_t sample_bytes;
  std::size_t header_bytes;
  std::string name;  // "udp 127.0.0.1:port", for messages
  UniqueFd fd;
  std::uint16_t port = 0;
  std::vector<unsigned char> datagram;
  std::size_t pending_offset = 0;  // undelivered samples of the last datagram start here
  std::size_t pending_samples = 0;
  std::uint64_t pending_lost = 0;  // to report before them
  bool have_seqnum = false;
  std::uint64_t next_seqnum = 0;
  bool ended = false;
  CancelSignal cancel;
  AtomicCounters counters;

  explicit Impl(const UdpReaderOptions& o)
      : options(o),
        sample_bytes(streaming::sample_bytes(o.format, o.channels)),
        header_bytes(o.seqnum_header ? seqnum_bytes : 0) {
    if (o.max_datagram_bytes > max_udp_payload || o.max_datagram_bytes < header_bytes + sample_bytes) {
      throw Error(ErrorCode::invalid_argument, "UDP max_datagram_bytes must be between " +
                                                   std::to_string(header_bytes + sample_bytes) +
                                                   " (header and one sample) and " + std::to_string(max_udp_payload) +
                                                   ", not " + std::to_string(o.max_datagram_bytes));
    }
    if (o.max_gap_datagrams > std::uint64_t{1} << 32) {  // lost samples: at most 2^32 x max_udp_payload
      throw Error(ErrorCode::invalid_argument,
                  "UDP max_gap_datagrams must be at most 2^32, not " + std::to_string(o.max_gap_datagrams));
    }
    const sockaddr_in address = ipv4_address(o.address, o.port);
    fd = udp_socket();
    // Best effort: a larger receive buffer rides out a slow consumer for longer.
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &o.receive_buffer_bytes, sizeof o.receive_buffer_bytes);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      throw Error(ErrorCode::io, errno_message("cannot bind UDP " + endpoint_name(o.address, o.port)));
    }
    port = bound_port(fd.get());
    name = "udp " + endpoint_name(o.address, port);
    datagram.resize(o.max_datagram_bytes + 1);
  }

  // Classifies a received datagram of `size` bytes; leaves its samples pending when it has any to deliver.
  void accept(std::size_t size) {
    AtomicCounters::add(counters.bytes, size);
    if (size == 0 && options.end_on_empty) {
      ended = true;
      return;
    }
    if (size < header_bytes + sample_bytes || size > options.max_datagram_bytes ||
        (size - header_bytes) % sample_bytes != 0) {
      AtomicCounters::add(counters.malformed, 1);
      return;
    }
    const std::size_t samples = (size - header_bytes) / sample_bytes;
    if (options.seqnum_header) {
      std::uint64_t seqnum;
      std::memcpy(&seqnum, datagram.data(), seqnum_bytes);
      if (have_seqnum && seqnum > next_seqnum && seqnum - next_seqnum <= options.max_gap_datagrams) {
        const std::uint64_t lost = (seqnum - next_seqnum) * samples;  // < 2^48: max_gap_datagrams <= 2^32
        pending_lost += lost;
        AtomicCounters::add(counters.lost_samples, lost);
      } else if (have_seqnum && seqnum > next_seqnum) {
        AtomicCounters::add(counters.resyncs, 1);
      } else if (have_seqnum && seqnum < next_seqnum) {
        if (next_seqnum - seqnum <= options.reorder_window) {
          AtomicCounters::add(counters.late, 1);
          return;
        }
        AtomicCounters::add(counters.resyncs, 1);
      }
      have_seqnum = true;
      next_seqnum = seqnum + 1;
    }
    pending_offset = header_bytes;
    pending_samples = samples;
  }

  // Receives one datagram if one comes within timeout_ms; false on timeout or cancel. A wake-up
  // with nothing to receive (a datagram dropped after poll saw it) waits again.
  bool receive(int timeout_ms) {
    for (;;) {
      if (cancel.wait(fd.get(), POLLIN, timeout_ms) != WaitOutcome::ready) return false;
      const ssize_t n = ::recv(fd.get(), datagram.data(), datagram.size(), MSG_TRUNC | MSG_DONTWAIT);
      if (n >= 0) {
        accept(static_cast<std::size_t>(n));
        return true;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        throw Error(ErrorCode::io, errno_message(name + ": receive failed"));
      }
    }
  }

  ReadResult read(sample_t* out, std::size_t max_samples) {
    ReadResult result;
    if (max_samples == 0) return result;
    for (;;) {
      if (pending_samples > 0) {
        if (pending_lost > 0) {
          if (result.samples > 0) return result;  // the gap is reported by the next read
          result.lost_before = pending_lost;
          pending_lost = 0;
        }
        const std::size_t n = std::min(max_samples - result.samples, pending_samples);
        decode_values(datagram.data() + pending_offset, n * options.channels, options.format,
                      out + result.samples * options.channels);
        pending_offset += n * sample_bytes;
        pending_samples -= n;
        result.samples += n;
        AtomicCounters::add(counters.samples, n);
        if (result.samples == max_samples) return result;
      }
      if (ended || cancel.cancelled()) {
        ended = true;
        result.end = result.samples == 0;
        return result;
      }
      const bool waiting = result.samples == 0;
      if (!receive(waiting ? options.idle_timeout_ms : 0)) {
        if (!waiting) return result;
        if (!cancel.cancelled()) ended = true;  // idle timeout
      }
    }
  }
};

UdpSampleReader::UdpSampleReader(const UdpReaderOptions& options) : impl_(std::make_unique<Impl>(options)) {}
UdpSampleReader::~UdpSampleReader() = default;
std::uint16_t UdpSampleReader::port() const { return impl_->port; }
std::size_t UdpSampleReader::channels() const { return impl_->options.channels; }
double UdpSampleReader::sample_rate() const { return impl_->options.sample_rate; }
ReadResult UdpSampleReader::read(sample_t* out, std::size_t max_samples) { return impl_->read(out, max_samples); }
void UdpSampleReader::cancel() { impl_->cancel.cancel(); }
ReaderCounters UdpSampleReader::counters() const { return impl_->counters.snapshot(); }

namespace {

std::size_t datagram_samples(const UdpWriterOptions& o) {
  const std::size_t header = o.seqnum_header ? seqnum_bytes : 0;
  const std::size_t bytes = sample_bytes(o.format, o.channels);
  if (o.max_datagram_bytes > max_udp_payload) {
    throw Error(ErrorCode::invalid_argument, "UDP max_datagram_bytes must be at most " +
                                                 std::to_string(max_udp_payload) + ", not " +
                                                 std::to_string(o.max_datagram_bytes));
  }
  const std::size_t samples =
      o.samples_per_datagram != 0
          ? o.samples_per_datagram
          : std::max<std::size_t>(1, (ethernet_udp_payload - std::min(header, ethernet_udp_payload)) / bytes);
  if (samples > (o.max_datagram_bytes - std::min(header, o.max_datagram_bytes)) / bytes) {
    throw Error(ErrorCode::invalid_argument, "UDP datagrams of " + std::to_string(samples) + " samples (" +
                                                 std::to_string(bytes) + " bytes each" +
                                                 (header ? ", after an 8-byte sequence number" : "") +
                                                 ") exceed max_datagram_bytes " + std::to_string(o.max_datagram_bytes));
  }
  return samples;
}

}  // namespace

struct UdpSampleWriter::Impl {
  UdpWriterOptions options;
  std::size_t samples_per_datagram;
  std::string name;
  sockaddr_in destination;
  UniqueFd fd;
  EncodeBuffer buffer;
  std::uint64_t seqnum;
  std::uint64_t datagrams = 0;

  explicit Impl(const UdpWriterOptions& o)
      : options(o),
        samples_per_datagram(datagram_samples(o)),
        name("udp " + endpoint_name(o.address, o.port)),
        destination(ipv4_address(o.address, o.port)),
        fd(udp_socket()),
        buffer(o.format, o.channels, samples_per_datagram),
        seqnum(o.first_seqnum) {
    if (o.port == 0) throw Error(ErrorCode::invalid_argument, "UDP writer: the destination port is required");
  }

  void send(const unsigned char* payload, std::size_t size) {
    std::uint64_t header = seqnum;
    iovec parts[2] = {{&header, seqnum_bytes}, {const_cast<unsigned char*>(payload), size}};
    msghdr message{};
    message.msg_name = &destination;
    message.msg_namelen = sizeof destination;
    message.msg_iov = options.seqnum_header ? parts : parts + 1;
    message.msg_iovlen = options.seqnum_header ? 2 : 1;
    for (;;) {
      if (::sendmsg(fd.get(), &message, MSG_NOSIGNAL) >= 0) break;
      // A refused earlier datagram (no reader yet) is reported on a later send; it is not this one's fault.
      if (errno != EINTR && errno != ECONNREFUSED) throw Error(ErrorCode::io, errno_message(name + ": send failed"));
    }
    ++seqnum;
    ++datagrams;
  }

  auto sender() {
    return [this](const unsigned char* payload, std::size_t size) { send(payload, size); };
  }
};

UdpSampleWriter::UdpSampleWriter(const UdpWriterOptions& options) : impl_(std::make_unique<Impl>(options)) {}

UdpSampleWriter::~UdpSampleWriter() {
  try {
    flush();
  } catch (const Error&) {
  }
}

std::size_t UdpSampleWriter::channels() const { return impl_->buffer.channels(); }
std::size_t UdpSampleWriter::samples_per_datagram() const { return impl_->samples_per_datagram; }
std::uint64_t UdpSampleWriter::datagrams_sent() const { return impl_->datagrams; }
void UdpSampleWriter::write(const sample_t* samples, std::size_t count) {
  impl_->buffer.write(samples, count, impl_->sender());
}
void UdpSampleWriter::flush() { impl_->buffer.flush(impl_->sender()); }

void UdpSampleWriter::send_end() {
  flush();
  for (int i = 0; i < 3; ++i) {
    while (::sendto(impl_->fd.get(), nullptr, 0, MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&impl_->destination),
                    sizeof impl_->destination) < 0) {
      if (errno != EINTR && errno != ECONNREFUSED)
        throw Error(ErrorCode::io, errno_message(impl_->name + ": send failed"));
    }
  }
}

}  // namespace eigstream::streaming
