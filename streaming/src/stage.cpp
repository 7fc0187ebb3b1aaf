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

StageStats Stage::stats() const {
  StageStats s;
  s.name = name_;
  s.items = items_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.malformed = malformed_.load(std::memory_order_relaxed);
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
