// Statistics of the streaming runtime: the latency histogram each stage fills (fixed size, no
// allocation), the per-stage snapshot the API returns, and the one-line status the pipeline can
// print periodically.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eigstream::streaming {

// Counts of values in logarithmic buckets: exact below 16, then 8 buckets per power of two (so a
// quantile is known within 1/16 of its value). One thread records; any thread may read.
class LatencyHistogram {
 public:
  void record(std::uint64_t value) noexcept {
    std::atomic<std::uint64_t>& count = counts_[bucket(value)];
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::uint64_t count() const noexcept;
  // The value below which a fraction q of the recorded values lie (the middle of its bucket);
  // 0 when nothing was recorded.
  double quantile(double q) const noexcept;

  static std::size_t bucket(std::uint64_t value) noexcept;
  static std::uint64_t bucket_low(std::size_t bucket) noexcept;  // smallest value in the bucket

 private:
  static constexpr int sub_bits = 3;
  static constexpr std::size_t linear = 16;
  static constexpr std::size_t buckets = linear + (64 - 4) * (std::size_t{1} << sub_bits);
  std::array<std::atomic<std::uint64_t>, buckets> counts_{};
};

struct StageStats {
  std::string name;
  std::uint64_t items = 0;  // items the stage emitted (sources, transforms) or consumed (sinks)
  std::uint64_t bytes = 0;  // their payload bytes
  double items_per_second = 0;  // moving average (time constant 1 s) between reads of the stats
  double bytes_per_second = 0;
  std::size_t queue_capacity = 0;    // the queue in front of the stage (0 for a source)
  std::size_t queue_high_water = 0;  // the most items it held at once
  std::uint64_t dropped = 0;         // items dropped by the full-queue policy in front of the stage,
                                     // or discarded by the stage itself
  std::uint64_t malformed = 0;       // inputs rejected as malformed and skipped
  std::uint64_t lost_samples = 0;    // sources: samples known lost at the input (sequence gaps)
  std::uint64_t resyncs = 0;         // sources: sequence numberings followed anew, no loss counted
  std::uint64_t late = 0;            // sources: datagrams that came late or twice, skipped
  std::uint64_t broken_connections = 0;  // sources: connections that ended in an error (TCP reset)
  double latency_p50_seconds = 0;    // source timestamp to this stage's output, since the start
  double latency_p99_seconds = 0;
  double busy_seconds = 0;           // in process(), less the time waiting for room in the output
                                     // queue: busy / elapsed near 1 marks the stage that limits the rate
  double kernel_seconds = 0;         // GPU stages: stream time in kernels, and in copies between
  double copy_seconds = 0;           // host and device (CUDA events)
};

// The time the GPU was busy with a pipeline's GPU stage paths, work on several streams at once
// counted once (Pipeline::gpu_busy): kernels and copies between host and device, and kernels alone.
// The persistent solver's resident kernel is in neither (it is always running).
struct GpuBusy {
  double seconds = 0;
  double kernel_seconds = 0;
};

// One line: each stage's rate, queue, p99 latency and drops, then " O" when `overflow` (something
// was dropped since the last line), as SDR programs mark overflows.
std::string format_status(const std::vector<StageStats>& stages, bool overflow);

}  // namespace eigstream::streaming
