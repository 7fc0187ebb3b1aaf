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

}  // namespace eigstream::detail
