// The statistics every stage keeps: counting items and latency as they leave, and the snapshot
// with moving-average rates.
#include "eigstream/streaming/stage.hpp"

#include <cmath>

namespace eigstream::streaming {

std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Stage::record(const Stamp& stamp, std::size_t bytes) noexcept {
  add(items_, 1);
  add(bytes_, bytes);
  const std::int64_t latency = steady_now_ns() - stamp.source_time_ns;
  latency_ns_.record(latency > 0 ? static_cast<std::uint64_t>(latency) : 0);
}

void Stage::add_busy(std::int64_t since_ns) noexcept {
  const std::int64_t elapsed = steady_now_ns() - since_ns;
  if (elapsed > 0) add(busy_ns_, std::uint64_t(elapsed));
}

void Stage::add_blocked(std::int64_t since_ns) noexcept {
  const std::int64_t elapsed = steady_now_ns() - since_ns;
  if (elapsed > 0) add(blocked_ns_, std::uint64_t(elapsed));
}

StageStats Stage::stats() const {
  StageStats s;
  s.name = name_;
  s.items = items_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.malformed = malformed_.load(std::memory_order_relaxed);
  // Read apart from each other: a process() in progress may count in one and not yet in the other.
  const std::uint64_t blocked = blocked_ns_.load(std::memory_order_relaxed);
  const std::uint64_t busy = busy_ns_.load(std::memory_order_relaxed);
  s.busy_seconds = busy > blocked ? double(busy - blocked) * 1e-9 : 0.0;
  s.kernel_seconds = double(kernel_ns_.load(std::memory_order_relaxed)) * 1e-9;
  s.copy_seconds = double(copy_ns_.load(std::memory_order_relaxed)) * 1e-9;
  if (const EdgeBase* input = input_edge()) {
    s.queue_capacity = input->options().capacity;
    s.queue_high_water = input->high_water();
    s.dropped += input->dropped();
  }
  s.latency_p50_seconds = latency_ns_.quantile(0.50) * 1e-9;
  s.latency_p99_seconds = latency_ns_.quantile(0.99) * 1e-9;
  add_counters(s);

  // Exponential moving average with a 1 s time constant of the rates between reads.
  std::lock_guard<std::mutex> lock(rate_mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (rate_.last_time != std::chrono::steady_clock::time_point{}) {
    const double dt = std::chrono::duration<double>(now - rate_.last_time).count();
    if (dt > 0) {
      // The first interval gives the rate as it is; later ones are averaged in.
      const double weight = rate_.averaging ? 1 - std::exp(-dt) : 1.0;
      rate_.averaging = true;
      rate_.items_per_second += weight * (static_cast<double>(s.items - rate_.last_items) / dt - rate_.items_per_second);
      rate_.bytes_per_second += weight * (static_cast<double>(s.bytes - rate_.last_bytes) / dt - rate_.bytes_per_second);
    }
  }
  rate_.last_time = now;
  rate_.last_items = s.items;
  rate_.last_bytes = s.bytes;
  s.items_per_second = rate_.items_per_second;
  s.bytes_per_second = rate_.bytes_per_second;
  return s;
}

}  // namespace eigstream::streaming
