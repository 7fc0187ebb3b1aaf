// The parallel round-robin ordering (detail/round_robin.hpp) against its definition: every step pairs
// all players, every pair meets once a sweep, players move as next_player says, and the block of
// pairs that the GPU's shared-memory solve asks for each next-step rotation (next_pairs_in_block,
// and next_pair_source from the other side) does hold that pair's off-diagonal entry.
#include <catch2/catch.hpp>

#include <set>
#include <utility>
#include <vector>

#include "eigstream/detail/round_robin.hpp"

using eigstream::detail::NextPair;
using eigstream::detail::NextPairSource;
using eigstream::detail::next_pair_source;
using eigstream::detail::next_pairs_in_block;
using eigstream::detail::next_player;
using eigstream::detail::round_robin_pair;
using eigstream::detail::round_robin_player;
using eigstream::detail::round_robin_players;

namespace {

std::pair<int, int> unordered(int a, int b) { return a < b ? std::pair{a, b} : std::pair{b, a}; }

}  // namespace

TEST_CASE("round robin: each step pairs every player, each pair meets once a sweep", "[round_robin]") {
  for (int n = 1; n <= 65; ++n) {
    const int m = round_robin_players(n);
    INFO("n = " << n);
    REQUIRE(m % 2 == 0);
    REQUIRE((m == n || m == n + 1));
    std::set<std::pair<int, int>> met;
    for (int step = 0; step < m - 1; ++step) {
      std::set<int> seen;
      for (int k = 0; k < m / 2; ++k) {
        const auto pair = round_robin_pair(k, step, m);
        CHECK(pair.p < pair.q);
        seen.insert(pair.p), seen.insert(pair.q);
        met.insert({pair.p, pair.q});
      }
      CHECK(seen.size() == std::size_t(m));
    }
    CHECK(met.size() == std::size_t(m * (m - 1) / 2));
  }
}

TEST_CASE("round robin: next_player gives the player in each seat at the next step", "[round_robin]") {
  for (int m = 2; m <= 66; m += 2)
    for (int step = 0; step < m - 1; ++step)
      for (int seat = 0; seat < m; ++seat) {
        const int next_step = step == m - 2 ? 0 : step + 1;  // the order repeats every sweep
        CHECK(next_player(round_robin_player(seat, step, m), m) == round_robin_player(seat, next_step, m));
      }
}

TEST_CASE("round robin: the block next_pairs_in_block names holds the next step's pair", "[round_robin]") {
  for (int half = 2; half <= 33; ++half) {
    const int m = 2 * half;
    for (int step = 0; step < m - 1; ++step) {
      const int next_step = step == m - 2 ? 0 : step + 1;
      std::vector<int> holders(std::size_t(half), 0);
      for (int k = 0; k < half; ++k)
        for (int l = k + 1; l < half; ++l) {
          NextPair found[2];
          const int count = next_pairs_in_block(k, l, half, found[0], found[1]);
          REQUIRE(count >= 0);
          REQUIRE(count <= 2);
          for (int i = 0; i < count; ++i) {
            const NextPair& next = found[i];
            INFO("m = " << m << " step " << step << " block (" << k << ", " << l << ") next pair " << next.pair);
            REQUIRE(next.pair >= 0);
            REQUIRE(next.pair < half);
            ++holders[std::size_t(next.pair)];
            const int u = round_robin_player(next.u_second ? m - 1 - k : k, step, m);
            const int v = round_robin_player(next.v_second ? m - 1 - l : l, step, m);
            const auto pair = round_robin_pair(next.pair, next_step, m);
            CHECK(unordered(u, v) == std::pair{pair.p, pair.q});
          }
        }
      INFO("m = " << m << " step " << step);
      for (int j = 0; j < half; ++j) CHECK(holders[std::size_t(j)] == 1);
    }
  }
}

TEST_CASE("round robin: the block next_pair_source names holds the next step's pair", "[round_robin]") {
  for (int half = 2; half <= 33; ++half) {
    const int m = 2 * half;
    for (int step = 0; step < m - 1; ++step) {
      const int next_step = step == m - 2 ? 0 : step + 1;
      for (int j = 0; j < half; ++j) {
        const NextPairSource source = next_pair_source(j, half);
        INFO("m = " << m << " step " << step << " next pair " << j << " block (" << source.k << ", " << source.l << ")");
        REQUIRE(source.k >= 0);
        REQUIRE(source.k < source.l);
        REQUIRE(source.l < half);
        const int u = round_robin_player(source.u_second ? m - 1 - source.k : source.k, step, m);
        const int v = round_robin_player(source.v_second ? m - 1 - source.l : source.l, step, m);
        const auto pair = round_robin_pair(j, next_step, m);
        CHECK(unordered(u, v) == std::pair{pair.p, pair.q});
      }
    }
  }
}
