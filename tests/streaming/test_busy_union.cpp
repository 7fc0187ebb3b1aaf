// BusyUnion (streaming/src, GpuTimeline's): the length of a union of intervals arriving in any
// order, against an exact count on a grid of whole microseconds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "busy_union.hpp"

using eigstream::streaming::BusyUnion;

namespace {

struct Span {
  int begin, end;  // microseconds
};

// The microseconds covered by at least one span.
double covered_seconds(const std::vector<Span>& spans) {
  int last = 0;
  for (const Span& s : spans) last = std::max(last, s.end);
  std::vector<char> busy(std::size_t(last), 0);
  for (const Span& s : spans) std::fill(busy.begin() + s.begin, busy.begin() + s.end, 1);
  return double(std::count(busy.begin(), busy.end(), 1)) * 1e-6;
}

double union_seconds(const std::vector<Span>& spans) {
  BusyUnion busy;
  for (const Span& s : spans) busy.add(s.begin * 1e-6, s.end * 1e-6);
  return busy.seconds();
}

}  // namespace

TEST_CASE("busy union: overlapping, nested, touching and empty intervals count once", "[streaming][gpu-busy]") {
  CHECK(BusyUnion().seconds() == 0);
  CHECK(union_seconds({{0, 10}, {20, 30}}) == Approx(20e-6));
  CHECK(union_seconds({{0, 10}, {5, 15}}) == Approx(15e-6));
  CHECK(union_seconds({{0, 100}, {10, 20}, {30, 40}}) == Approx(100e-6));
  CHECK(union_seconds({{20, 30}, {10, 20}, {0, 10}}) == Approx(30e-6));
  CHECK(union_seconds({{5, 5}, {7, 3}}) == 0);  // empty and reversed intervals add nothing
}

TEST_CASE("busy union: many intervals from several streams, shuffled within the settling time, equal the exact union",
          "[streaming][gpu-busy]") {
  // Five "streams" of back-to-back work with gaps, over 2 s: far more intervals than a fold takes,
  // so settled and pending intervals are both in the total.
  std::mt19937 random(7);
  std::uniform_int_distribution<int> length(1, 40), gap(0, 60);
  std::vector<Span> spans;
  for (int stream = 0; stream < 5; ++stream)
    for (int t = gap(random); t < 2000000;) {
      const int end = t + length(random);
      spans.push_back({t, end});
      t = end + gap(random);
    }
  REQUIRE(spans.size() > 10 * BusyUnion::kFoldAt);
  // In time order, then each moved at most 20 ms (well inside the settling time) out of place.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.end < b.end; });
  std::vector<std::pair<double, Span>> keyed;
  std::uniform_real_distribution<double> jitter(0, 20000);
  for (const Span& s : spans) keyed.push_back({s.end + jitter(random), s});
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Span> arrival;
  for (const auto& k : keyed) arrival.push_back(k.second);
  const double exact = covered_seconds(spans);
  CHECK(exact < 0.9 * 5 * 2.0);  // the streams overlap: a sum would overcount
  CHECK(union_seconds(arrival) == Approx(exact).epsilon(1e-9));
}

TEST_CASE("busy union: an interval arriving after its time settled adds nothing, never counting twice",
          "[streaming][gpu-busy]") {
  BusyUnion busy;
  busy.add(0, 1e-3);
  // Enough later work to fold, settling everything that ended before 0.6 s.
  for (std::size_t i = 0; i < BusyUnion::kFoldAt; ++i) busy.add(1.6 + double(i) * 1e-6, 1.6 + double(i + 1) * 1e-6);
  const double before = busy.seconds();
  CHECK(before == Approx(1e-3 + double(BusyUnion::kFoldAt) * 1e-6).epsilon(1e-9));
  busy.add(0, 1e-3);    // the same time again, late
  busy.add(0.2, 0.3);   // new, but late
  CHECK(busy.seconds() == Approx(before).epsilon(1e-12));
  busy.add(1.7, 1.71);  // new and in time
  CHECK(busy.seconds() == Approx(before + 0.01).epsilon(1e-9));
}

TEST_CASE("busy union: many separate intervals within the settling time all count", "[streaming][gpu-busy]") {
  // 200000 disjoint intervals of 1 us in 0.4 s: no fold can settle any of them, and each must count.
  BusyUnion busy;
  const int count = 200000;
  for (int k = count - 1; k >= 0; --k) busy.add(double(k) * 2e-6, double(k) * 2e-6 + 1e-6);
  CHECK(busy.seconds() == Approx(count * 1e-6).epsilon(1e-6));
}
