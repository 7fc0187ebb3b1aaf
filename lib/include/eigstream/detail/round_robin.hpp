// Parallel round-robin ("chess tournament") ordering of Jacobi pairs (seed 001, eq. 7; seed 000,
// algorithm 4). For m players (m = n, or n + 1 with a dummy index n when n is odd), each of the
// m - 1 steps of a sweep has m / 2 disjoint pairs, and every pair (p, q) occurs once per sweep.
// Player 0 stays in seat 0; the others move one seat per step; seat k plays seat m - 1 - k.
#pragma once

#include "eigstream/detail/host_device.hpp"

namespace eigstream::detail {

struct Pair {
  int p;  // p < q; q == n marks a pair with the dummy index (skip it)
  int q;
};

EIGSTREAM_HD int round_robin_players(int n) { return n + (n & 1); }

// The player in `seat` at `step` (0 <= step < m - 1) for m players: 1 + (seat - 1 + step) mod (m - 1)
// for seat > 0, the modulo as one subtraction (the GPU kernels compute this every step).
EIGSTREAM_HD int round_robin_player(int seat, int step, int m) {
  const int i = seat - 1 + step;
  return seat == 0 ? 0 : 1 + (i >= m - 1 ? i - (m - 1) : i);
}

// Pair k (0 <= k < m / 2) of `step`.
EIGSTREAM_HD Pair round_robin_pair(int k, int step, int m) {
  const int a = round_robin_player(k, step, m);
  const int b = round_robin_player(m - 1 - k, step, m);
  return a < b ? Pair{a, b} : Pair{b, a};
}

// The player in a seat at the next step, from the one there now: the players in seats 2 .. m - 1 move
// one seat down and the one in seat 1 moves to seat m - 1, so each player index but 0 goes up by one,
// from m - 1 back to 1. next_moving_player is the same for a seat other than 0, which never holds
// player 0.
EIGSTREAM_HD int next_moving_player(int player, int m) { return player == m - 1 ? 1 : player + 1; }
EIGSTREAM_HD int next_player(int player, int m) { return player == 0 ? 0 : next_moving_player(player, m); }

// A pair of the next step whose off-diagonal entry lies in this step's block of pairs (k, l), k < l
// (the rows of pair k, the columns of pair l).
struct NextPair {
  bool u_second;  // its player of pair k sits in pair k's second seat (m - 1 - k), else in seat k
  bool v_second;  // likewise in pair l
  int pair;       // its index in the next step
};

// The next step's pairs whose off-diagonal entry this step's block (k, l), k < l, holds, for
// m = 2 half players: 0, 1 or 2 of them, in `first` and `second`. As the players move (next_player),
// the next step's pair 0 (seats 0 and m - 1) sits now in seats 0 and 1, in block (0, 1); its pair j,
// 1 <= j <= half - 2, in seats m - j and j + 1, in block (j - 1, j + 1); its pair half - 1 in seats
// half + 1 and half, in block (half - 2, half - 1). With half == 2 block (0, 1) holds both.
EIGSTREAM_HD int next_pairs_in_block(int k, int l, int half, NextPair& first, NextPair& second) {
  const bool holds_first = k == 0 && l == 1, holds_middle = l == k + 2, holds_last = k == half - 2 && l == half - 1;
  const NextPair last{true, true, half - 1};
  first = holds_first ? NextPair{false, false, 0} : holds_middle ? NextPair{true, false, k + 1} : last;
  second = last;
  return int(holds_first) + int(holds_middle) + int(holds_last);
}

// Where the next step's pair j sits now: its players sit in this step's pairs k < l, the one of pair
// k in that pair's second seat (m - 1 - k) when u_second, else in seat k, and likewise the one of
// pair l; so its off-diagonal entry lies in this step's block of pairs (k, l) (the rows of pair k, the
// columns of pair l).
struct NextPairSource {
  int k;
  int l;
  bool u_second;
  bool v_second;
};

// For m = 2 half players, half >= 2: next_pairs_in_block seen from the next step's pair.
EIGSTREAM_HD NextPairSource next_pair_source(int j, int half) {
  if (j == 0) return {0, 1, false, false};
  if (j == half - 1) return {half - 2, half - 1, true, true};
  return {j - 1, j + 1, true, false};
}

}  // namespace eigstream::detail
