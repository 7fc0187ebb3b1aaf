// AtomicCounters: a reader's running totals, written by the reading thread and read from any other
// (relaxed atomics: each total is exact, a snapshot of several is not taken at one instant).
#pragma once

#include <atomic>
#include <cstdint>

#include "eigstream/streaming/sample_io.hpp"

namespace eigstream::streaming {

struct AtomicCounters {
  std::atomic<std::uint64_t> samples{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> lost_samples{0};
  std::atomic<std::uint64_t> resyncs{0};
  std::atomic<std::uint64_t> late{0};
  std::atomic<std::uint64_t> malformed{0};
  std::atomic<std::uint64_t> reconnects{0};
  std::atomic<std::uint64_t> broken_connections{0};

  static void add(std::atomic<std::uint64_t>& total, std::uint64_t n) noexcept {
    total.store(total.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  ReaderCounters snapshot() const noexcept {
    ReaderCounters c;
    c.samples = samples.load(std::memory_order_relaxed);
    c.bytes = bytes.load(std::memory_order_relaxed);
    c.lost_samples = lost_samples.load(std::memory_order_relaxed);
    c.resyncs = resyncs.load(std::memory_order_relaxed);
    c.late = late.load(std::memory_order_relaxed);
    c.malformed = malformed.load(std::memory_order_relaxed);
    c.reconnects = reconnects.load(std::memory_order_relaxed);
    c.broken_connections = broken_connections.load(std::memory_order_relaxed);
    return c;
  }
};

}  // namespace eigstream::streaming
