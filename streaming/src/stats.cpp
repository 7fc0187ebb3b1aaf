// The latency histogram's buckets and quantiles, and the status line.
#include "eigstream/streaming/stats.hpp"

#include <cstdio>

namespace eigstream::streaming {

std::size_t LatencyHistogram::bucket(std::uint64_t value) noexcept {
  if (value < linear) return static_cast<std::size_t>(value);
  const int top_bit = 63 - __builtin_clzll(value);  // >= 4
  const std::size_t sub = (value >> (top_bit - sub_bits)) & ((1u << sub_bits) - 1);
  return linear + static_cast<std::size_t>(top_bit - 4) * (std::size_t{1} << sub_bits) + sub;
}

std::uint64_t LatencyHistogram::bucket_low(std::size_t bucket) noexcept {
  if (bucket < linear) return bucket;
  const std::size_t top_bit = 4 + (bucket - linear) / (std::size_t{1} << sub_bits);
  const std::uint64_t sub = (bucket - linear) % (std::size_t{1} << sub_bits);
  return ((std::uint64_t{1} << sub_bits) + sub) << (top_bit - sub_bits);
}

std::uint64_t LatencyHistogram::count() const noexcept {
  std::uint64_t total = 0;
  for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
  return total;
}

double LatencyHistogram::quantile(double q) const noexcept {
  const std::uint64_t total = count();
  if (total == 0) return 0;
  // The smallest bucket holding at least ceil(q * total) of the values.
  std::uint64_t rank = static_cast<std::uint64_t>(q * static_cast<double>(total) + 0.999999);
  if (rank < 1) rank = 1;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    seen += counts_[b].load(std::memory_order_relaxed);
    if (seen >= rank) {
      if (b < linear) return static_cast<double>(b);
      const double low = static_cast<double>(bucket_low(b));
      const double high = b + 1 < buckets ? static_cast<double>(bucket_low(b + 1)) : 2 * low;
      return (low + high) / 2;
    }
  }
  return static_cast<double>(bucket_low(buckets - 1));
}

namespace {

// Appends printf-style text to a string.
template <class... Args>
void append(std::string& line, const char* format, Args... args) {
  char text[128];
  std::snprintf(text, sizeof text, format, args...);
  line += text;
}

// 1234567 -> "1.23M"
std::string si(double value) {
  const char* prefixes[] = {"", "k", "M", "G", "T"};
  int p = 0;
  while (value >= 1000 && p < 4) {
    value /= 1000;
    ++p;
  }
  std::string text;
  append(text, value < 10 ? "%.2f%s" : value < 100 ? "%.1f%s" : "%.0f%s", value, prefixes[p]);
  return text;
}

}  // namespace

std::string format_status(const std::vector<StageStats>& stages, bool overflow) {
  std::string line;
  for (const StageStats& s : stages) {
    if (!line.empty()) line += " | ";
    append(line, "%s %s/s %sB/s", s.name.c_str(), si(s.items_per_second).c_str(), si(s.bytes_per_second).c_str());
    if (s.queue_capacity > 0) append(line, " q<=%zu/%zu", s.queue_high_water, s.queue_capacity);
    if (s.items > 0 && s.latency_p99_seconds > 0) append(line, " p99 %.3gms", s.latency_p99_seconds * 1e3);
    if (s.dropped > 0) append(line, " drop %llu", static_cast<unsigned long long>(s.dropped));
    if (s.lost_samples > 0) append(line, " lost %llu", static_cast<unsigned long long>(s.lost_samples));
    if (s.resyncs > 0) append(line, " resync %llu", static_cast<unsigned long long>(s.resyncs));
    if (s.late > 0) append(line, " late %llu", static_cast<unsigned long long>(s.late));
    if (s.broken_connections > 0)
      append(line, " broken %llu", static_cast<unsigned long long>(s.broken_connections));
    if (s.malformed > 0) append(line, " bad %llu", static_cast<unsigned long long>(s.malformed));
  }
  if (overflow) line += " O";
  return line;
}

}  // namespace eigstream::streaming
