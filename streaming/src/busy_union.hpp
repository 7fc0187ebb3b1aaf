// BusyUnion: the length of the union of time intervals that arrive in any order, each counted once
// however many overlap it (GpuTimeline's: work on several GPU streams at once is busy time once).
// Memory stays bounded: intervals that ended more than kSettleSeconds before the latest end seen are
// merged into the total and forgotten, and a later interval is cut to start at that settling line,
// so an interval that arrives later than that is undercounted, never counted twice. The pending
// intervals are merged when they have doubled since the last merge (at least kFoldAt), so adding
// stays cheap however many separate intervals the settling time holds. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace eigstream::streaming {

class BusyUnion {
 public:
  static constexpr double kSettleSeconds = 1;
  static constexpr std::size_t kFoldAt = 4096;  // the fewest pending intervals that trigger a fold

  void add(double begin, double end) {
    begin = std::max(begin, settled_until_);
    if (!(end > begin)) return;
    pending_.emplace_back(begin, end);
    latest_end_ = std::max(latest_end_, end);
    if (pending_.size() >= std::max(kFoldAt, 2 * folded_size_)) fold();
  }

  // The seconds covered by every interval added so far.
  double seconds() const {
    std::vector<Interval> merged = pending_;
    return settled_seconds_ + merge(merged);
  }

 private:
  using Interval = std::pair<double, double>;

  // Sorts and merges `intervals` in place into disjoint ones in order; returns their total length.
  static double merge(std::vector<Interval>& intervals) {
    std::sort(intervals.begin(), intervals.end());
    std::size_t kept = 0;
    double total = 0;
    for (const Interval& next : intervals) {
      if (kept > 0 && next.first <= intervals[kept - 1].second) {
        intervals[kept - 1].second = std::max(intervals[kept - 1].second, next.second);
      } else {
        if (kept > 0) total += intervals[kept - 1].second - intervals[kept - 1].first;
        intervals[kept++] = next;
      }
    }
    if (kept > 0) total += intervals[kept - 1].second - intervals[kept - 1].first;
    intervals.resize(kept);
    return total;
  }

  // Merges the pending intervals and settles those that ended before the settling line.
  void fold() {
    merge(pending_);
    const double line = latest_end_ - kSettleSeconds;
    std::size_t settled = 0;
    while (settled < pending_.size() && pending_[settled].second < line) {
      settled_seconds_ += pending_[settled].second - pending_[settled].first;
      ++settled;
    }
    pending_.erase(pending_.begin(), pending_.begin() + std::ptrdiff_t(settled));
    if (settled > 0) settled_until_ = std::max(settled_until_, line);
    folded_size_ = pending_.size();
  }

  std::vector<Interval> pending_;
  std::size_t folded_size_ = 0;  // pending intervals left by the last fold
  double settled_seconds_ = 0;
  double settled_until_ = -std::numeric_limits<double>::infinity();
  double latest_end_ = -std::numeric_limits<double>::infinity();
};

}  // namespace eigstream::streaming
