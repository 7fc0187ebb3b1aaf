// Two-sided Jacobi EVD of one small Hermitian matrix (n <= NMAX <= 32) held in registers by
// NMAX lanes of a warp: lane r owns row r of A and row r of V. Several matrices share a warp when
// NMAX < 32.
//
// Ordering (seed 001, eq. 7, in "seat" form): rotations always act on the seat pairs (2k, 2k+1);
// after each step the indices move by the chess-tournament permutation (seat 0 stays, the others
// move one place round the table), so every pair of indices meets once in NMAX - 1 steps. Columns
// are stored by seat and move by compile-time register renames; rows stay in their lanes, and each
// lane follows its row's seat (and its partner's lane) in a table (Schedule). The column phase
// A <- A J and V <- V J is thread-local; the row phase A <- J^H A needs one shuffle per entry (the partner row).
// Only the NMAX/2 rotations of a step go through shared memory.
// A row's diagonal entry is kept apart (Registers::d), exact from the rotations: its place in the
// row is never read during the sweeps, so the step does not keep it up to date.
// Within a sweep A is held as G B G, G diagonal, so that a rotation's factor c goes to G rather than
// to every entry it moves (PairRotation); each convergence test folds G back in (Registers::unscale).
// n < NMAX is padded with zero rows and columns, which never rotate (their a_pq are exactly zero).
//
// Column groups (C > 1): a matrix takes C segments of NMAX lanes of one warp, and lane r of segment
// h owns the K = NMAX / C seats hK .. hK + K - 1 of row r, of A and of V, so a warp-sized matrix's
// step has C times the lanes. Seat pairs lie within a segment, so each segment's column phase needs
// only its own pairs' rotations; the row phase needs every row's, and the segment that holds a
// pair's columns computes its rotation and publishes it (with c and the shift, from which every
// segment keeps d, g and 1 / g of its rows alike). The tournament moves two columns a step across
// each boundary between segments, one each way (move_across_groups), by shuffles. For warm batches,
// which fill the GPU only thinly, so that a matrix's steps are the critical path.
#pragma once

#include <cuda_runtime.h>

#include "device_scalar.cuh"
#include "eigstream/options.hpp"
#include "jacobi_rotation.cuh"

namespace eigstream::kernels::registers {

// Seats (2k, 2k+1) hold the tournament positions (k, m-1-k).
__host__ __device__ constexpr int seat_of_position(int j, int m) { return j < m / 2 ? 2 * j : 2 * (m - 1 - j) + 1; }
__host__ __device__ constexpr int position_of_seat(int s, int m) { return s % 2 == 0 ? s / 2 : m - 1 - (s - 1) / 2; }
// The seat whose occupant moves into seat s after a step (position 0 stays; j <- j-1, 1 <- m-1).
__host__ __device__ constexpr int source_seat(int s, int m) {
  const int j = position_of_seat(s, m);
  return j == 0 ? s : seat_of_position(j == 1 ? m - 1 : j - 1, m);
}
// The seat that the occupant of seat s moves to.
__host__ __device__ constexpr int destination_seat(int s, int m) {
  const int j = position_of_seat(s, m);
  return j == 0 ? s : seat_of_position(j == m - 1 ? 1 : j + 1, m);
}
// The index that sits in seat s after t steps (index i starts in seat i), 0 <= t < m - 1.
__host__ __device__ constexpr int occupant(int s, int t, int m) {
  const int j = position_of_seat(s, m);
  const int i = j - 1 - t;  // in (-(m - 1), m - 1): one wrap at most
  return j == 0 ? s : seat_of_position(1 + (i < 0 ? i + m - 1 : i), m);
}

// a + k b, the row update of the step, its fused multiply-adds spelled out (as rotate_columns).
template <class R>
__device__ __forceinline__ R combine_rows(R a, R k, R b) { return fma(k, b, a); }
template <class R>
__device__ __forceinline__ Cx<R> combine_rows(Cx<R> a, Cx<R> k, Cx<R> b) {
  return {fma(k.re, b.re, fma(-k.im, b.im, a.re)), fma(k.re, b.im, fma(k.im, b.re, a.im))};
}

// The rotation of a seat pair (p, q) as the step applies it (Registers): A is held as G B G and V
// as W G, G diagonal and positive, so that J = G^-1 M G' with M = [[1, s2], [-conj(s1), 1]] and
// G' = c G on p and q, where s1 = t e g_q / g_p and s2 = t e g_p / g_q (tangent_rotation_of).
// B <- M^H B M and W <- W M take two fused multiply-adds an entry in real types and four in complex,
// against three and six for J itself; the factors c go to G, one multiplication a row a step (the
// scaled, or fast, rotations of Rutishauser's Jacobi). Each row keeps g and 1 / g, the reciprocal
// taken afresh from g at every step, as 1 / g updated by 1 / c drifts from g through a sweep, and
// J with it from orthogonality. Cold batches ran 7-19% faster at n = 16 and 32 in every type but
// complex double 32 (the block solve), warm batches 4-17%, and n <= 8 within 3% either way, though
// the kernels take more registers. The price: the implied J takes several roundings (s1, s2, g and
// 1 / g) where J itself takes two, and cold batches came out 0-42% further from orthonormal (still
// within 2 n eps; H200, bench/results/2026-11-27-h200-scaled-rotations.md).
template <class S>
struct PairRotation {
  S s1, s2;
  real_of<S> c, shift;
};
// What column groups publish of a rotation besides its Multipliers: c and the shift.
template <class R>
struct alignas(2 * sizeof(R)) FactorShift {
  R c, shift;
};

// Four entries of lane `src` of a group of W lanes, by shuffles of their 32-bit words four to a
// statement: the four words of a statement are live together, so each has a register of its own and
// the four shuffles are in flight at once. Written one by one, the shuffles of a step's row phase went
// through one or two registers in some kernels, each waiting for the one before (cold double 32: 10%
// slower, 5% with shfl4; bench/results/2026-11-25-h100-register-schedule.md).
template <int W, class S>
__device__ __forceinline__ void shfl4(unsigned mask, const S (&x)[4], S (&out)[4], int src) {
  static_assert(sizeof(S) % 4 == 0, "whole 32-bit words");
  constexpr unsigned kClamp = ((32u - W) << 8) | 31u;  // shfl.sync's c operand for a group of W lanes
  constexpr int kWords = int(sizeof(S));               // of four entries
  unsigned in[kWords], got[kWords];
  memcpy(in, x, sizeof(in));
#pragma unroll
  for (int q = 0; q < kWords; q += 4)
    asm volatile(
        "shfl.sync.idx.b32 %0, %4, %8, %9, %10;\n\t"
        "shfl.sync.idx.b32 %1, %5, %8, %9, %10;\n\t"
        "shfl.sync.idx.b32 %2, %6, %8, %9, %10;\n\t"
        "shfl.sync.idx.b32 %3, %7, %8, %9, %10;"
        : "=r"(got[q]), "=r"(got[q + 1]), "=r"(got[q + 2]), "=r"(got[q + 3])
        : "r"(in[q]), "r"(in[q + 1]), "r"(in[q + 2]), "r"(in[q + 3]), "r"(src), "n"(kClamp), "r"(mask));
  memcpy(out, got, sizeof(got));
}
template <int W, class R>
__device__ __forceinline__ R group_sum(unsigned mask, R x) {
  for (int offset = W / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(mask, x, offset, W);
  return x;
}

// The tournament as each lane follows it: for step t of a sweep and lane r, the seat of row r (low
// byte) and the lane whose row sits in the partner seat (high byte). A table in global memory, made
// by the compiler; each step reads the next step's entry (an L1 hit, issued early in the step)
// instead of computing it (about 35 instructions a step). Filled per solve in shared memory instead,
// it made warm batches of 1024 at n <= 16 6-9% slower.
template <int NMAX>
struct Schedule {
  unsigned short entry[NMAX - 1][NMAX];
};

template <int NMAX>
constexpr Schedule<NMAX> make_schedule() {
  Schedule<NMAX> schedule{};
  for (int lane = 0; lane < NMAX; ++lane)
    for (int t = 0, s = lane; t < NMAX - 1; ++t, s = destination_seat(s, NMAX))
      schedule.entry[t][lane] = (unsigned short)(s | occupant(s ^ 1, t, NMAX) << 8);
  return schedule;
}

// Whether make_schedule<NMAX>() is a tournament: at every step the lanes sit in distinct seats,
// partners sit in seats (2k, 2k + 1) and name each other, and over a sweep every two lanes meet once.
template <int NMAX>
constexpr bool is_tournament(const Schedule<NMAX>& schedule) {
  bool met[NMAX][NMAX] = {};
  for (int t = 0; t < NMAX - 1; ++t) {
    int lane_in_seat[NMAX] = {};
    for (int s = 0; s < NMAX; ++s) lane_in_seat[s] = -1;
    for (int lane = 0; lane < NMAX; ++lane) {
      const int seat = schedule.entry[t][lane] & 0xff, partner = schedule.entry[t][lane] >> 8;
      if (seat >= NMAX || partner >= NMAX || lane_in_seat[seat] != -1) return false;
      lane_in_seat[seat] = lane;
      if ((schedule.entry[t][partner] >> 8) != lane || (schedule.entry[t][partner] & 0xff) != (seat ^ 1)) return false;
      if (lane < partner) {
        if (met[lane][partner]) return false;
        met[lane][partner] = true;
      }
    }
  }
  for (int i = 0; i < NMAX; ++i)
    for (int j = i + 1; j < NMAX; ++j)
      if (!met[i][j]) return false;
  return true;
}

template <int NMAX>
__device__ const Schedule<NMAX> kSchedule = make_schedule<NMAX>();
static_assert(is_tournament(make_schedule<4>()) && is_tournament(make_schedule<8>()) &&
                  is_tournament(make_schedule<16>()) && is_tournament(make_schedule<32>()),
              "the register solve's schedule is not a round-robin tournament");

// x, as a value the compiler cannot see through: selections on its bits stay selections. Tested
// against a value it knows to equal a run-time seat (`j == seat`), it replaces a[j] by a[seat], a
// run-time index that moves the whole row to local memory.
__device__ __forceinline__ unsigned opaque(unsigned x) {
  unsigned y;
  asm("mov.b32 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}

// The order of a step's phases (Registers::step). A cold solve takes the column phase first; a
// warm start the row phase first (J^H (A J) = (J^H A) J), so that its shuffles overlap the rotations'
// trip through shared memory: faster where a warp's steps are the critical path (warm batches of
// 1024), slower in some cold batches (bench/results/2026-11-25-h100-register-schedule.md). Warm
// steps that also computed the next step's rotation beside the column phase ("pipelined") paid at
// real n >= 16 until the scaled rotations shortened that phase; then warm batches of 1024 ran 1-6%
// faster without them (H200, bench/results/2026-11-27-h200-scaled-rotations.md).
enum class StepOrder { columns_first, rows_first };

// Where the occupant of seat j of a group of K seats comes from in the tournament move: its own
// group (from_group 0) or the one to its left (-1) or right (+1), and the seat there. Even seats
// take from two below and odd seats from two above; a group's seat 0 comes from the left group's
// K - 2 and its seat K - 1 from the right group's seat 1, but at the ends of the table: in the first
// group seat 0 (position 0) stays and seat 2 takes seat 1, and in the last seat K - 1 takes K - 2.
struct SeatSource {
  int from_group, seat;
};
__host__ __device__ constexpr SeatSource seat_source(int j, int k, bool first, bool last) {
  if (j % 2 == 0) {
    if (j >= 2) return {0, first && j == 2 ? 1 : j - 2};
    return first ? SeatSource{0, 0} : SeatSource{-1, k - 2};
  }
  if (j + 2 < k) return {0, j + 2};
  return last ? SeatSource{0, k - 2} : SeatSource{+1, 1};
}
// Whether seat_source, over C groups of NMAX / C seats, is source_seat's move.
template <int NMAX, int C>
constexpr bool is_tournament_move() {
  constexpr int k = NMAX / C;
  for (int h = 0; h < C; ++h)
    for (int j = 0; j < k; ++j) {
      const SeatSource from = seat_source(j, k, h == 0, h == C - 1);
      if ((h + from.from_group) * k + from.seat != source_seat(h * k + j, NMAX)) return false;
    }
  return true;
}
static_assert(is_tournament_move<4, 1>() && is_tournament_move<8, 1>() && is_tournament_move<16, 1>() &&
                  is_tournament_move<32, 1>() && is_tournament_move<8, 2>() && is_tournament_move<16, 2>() &&
                  is_tournament_move<16, 4>() && is_tournament_move<32, 2>(),
              "seat_source is not the tournament's move");

// Row `lane` of A and of V in C column groups (file comment): K = NMAX / C seats of the row, from
// seat group * K on. C = 1 is the whole row.
template <class S, int NMAX, int C = 1>
struct Registers {
  using R = real_of<S>;
  static constexpr int K = NMAX / C;  // seats a lane holds
  static constexpr int kLanes = NMAX * C;  // lanes of a matrix
  static_assert(C == 1 || (K >= 4 && kLanes <= 32), "column groups of at least four seats, within a warp");
  S a[K];  // row `lane` of B (A = G B G, PairRotation), columns by seat (its own seat's entry is stale: see d)
  S v[K];  // row `lane` of V G^-1, columns by seat
  R d;        // the row's diagonal entry a(seat, seat), of A itself
  R g, h;     // the row's factor in G, and 1 / g
  int lane;   // the row's index (>= n: padding)
  int group;  // the lane's column group: its seats are group * K .. group * K + K - 1
  int seat;   // where index `lane` sits now: `lane` again at the start of every sweep
  int partner;  // the lane whose index sits in seat ^ 1
  unsigned mask;
  unsigned me_bit;  // one-hot mask of the row's seat, within the group, at the start of a sweep (1 << lane), opaque

  __device__ __forceinline__ void start(int row, unsigned lanes, int column_group = 0) {
    lane = row;
    group = column_group;
    seat = row;
    partner = row ^ 1;
    mask = lanes;
    me_bit = local_bit(row);
    g = h = R(1);
  }
  // One-hot mask of a seat within the group (0 if the group does not hold it), opaque.
  __device__ __forceinline__ unsigned local_bit(int s) const {
    if constexpr (C == 1) return opaque(1u << s);
    else return opaque(s / K == group ? 1u << (s % K) : 0u);
  }
  __device__ __forceinline__ bool is_me(int j) const { return (me_bit >> j) & 1u; }
  // The global seat of the lane's seat j.
  __device__ __forceinline__ int seat_of(int j) const { return C == 1 ? j : group * K + j; }
  // Whether the lane's group holds the seats of the row's pair.
  __device__ __forceinline__ bool holds_pair() const { return C == 1 || seat / K == group; }

  // d from the row's own entry: once, before the sweeps (with column groups, from the group that
  // holds it).
  __device__ __forceinline__ void take_diagonal() {
    S x = from_real<S>(R(0));
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (is_me(j)) x = a[j];
    d = re(x);
    if constexpr (C > 1) d = shfl<kLanes>(mask, d, lane / K * NMAX + lane);
  }
  // a[2 pair + SECOND] for a run-time seat pair of the group: by groups of four seat pairs, a tree of
  // three selections on the low two bits of the pair's index within each group, and a chain over the
  // groups on the rest (the bits opaque). A whole tree took more registers, and spilled.
  template <int SECOND>
  __device__ __forceinline__ S entry_of_pair(unsigned pair) const {
    pair = opaque(pair);
    constexpr int kGroup = K / 2 < 4 ? K / 2 : 4;
    const bool bit0 = pair & 1u, bit1 = (pair >> 1) & 1u;
    S x = from_real<S>(R(0));
#pragma unroll
    for (int g = 0; g < K / 2; g += kGroup) {
      S y = bit0 ? a[2 * g + 2 + SECOND] : a[2 * g + SECOND];
      if constexpr (kGroup == 4) y = bit1 ? (bit0 ? a[2 * g + 6 + SECOND] : a[2 * g + 4 + SECOND]) : y;
      x = pair / kGroup == unsigned(g / kGroup) ? y : x;
    }
    return x;
  }
  // a(seat, seat + 1), for an even seat the group holds.
  __device__ __forceinline__ S partner_entry() const { return entry_of_pair<1>(local_pair()); }
  // The row's seat pair within the group (meaningful where the group holds it).
  __device__ __forceinline__ unsigned local_pair() const {
    return C == 1 ? unsigned(seat) >> 1 : (unsigned(seat) >> 1) % unsigned(K / 2);
  }

  // The rotation of the row's seat pair, from the even seat's b(p, q), both diagonal entries and
  // both factors of G: both seats compute it (tangent_rotation_of rounds alike in every thread), so
  // each has it, and its new diagonal entry, at once. With column groups, meaningful where the
  // group holds the pair.
  __device__ __forceinline__ PairRotation<S> pair_rotation(R negligible2) const {
    const bool even = (seat & 1) == 0;
    const S own_bpq = partner_entry();  // meaningful in the even seat
    const R d_partner = shfl<NMAX>(mask, d, partner);
    const S partner_bpq = shfl<NMAX>(mask, own_bpq, partner);
    const R g_partner = shfl<NMAX>(mask, g, partner), h_partner = shfl<NMAX>(mask, h, partner);
    const R g_p = even ? g : g_partner, g_q = even ? g_partner : g;
    const R h_p = even ? h : h_partner, h_q = even ? h_partner : h;
    const TangentRot<S> r = tangent_rotation_of(even ? d : d_partner, even ? d_partner : d,
                                                rn::scale(rn::mul(g_p, g_q), even ? own_bpq : partner_bpq),
                                                negligible2);
    const Multipliers<S> m = multipliers_of(r.t_e, g_p, g_q, h_p, h_q);
    return {m.s1, m.s2, r.c, r.shift};
  }
  // Folds G into the rows of A and V (G <- I), with `by_seat` (NMAX reals of shared memory, free
  // again on return) to pass the factors round: at every convergence test, as off(A) is of A itself,
  // which also keeps G within [2^-(NMAX-1)/2, 1] (a factor falls by c >= 1/sqrt(2) a step).
  __device__ __forceinline__ void unscale(R* by_seat) {
    __syncwarp(mask);
    if (C == 1 || group == 0) by_seat[seat] = g;  // every group holds the same g
    __syncwarp(mask);
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const R g_j = by_seat[seat_of(j)];
      a[j] = rn::scale(rn::mul(g, g_j), a[j]);
      v[j] = rn::scale(g_j, v[j]);
    }
    g = h = R(1);
    __syncwarp(mask);
  }
  // The row's share of off(A)^2: every entry but its own, whose seat is one-hot in `own`: me_bit at
  // the start of a sweep, seat_bit() within one. (At a sweep's start the two are equal; seat_bit()
  // there too changed the registers of kernels that never test within a sweep, cold ones included.)
  __device__ __forceinline__ unsigned seat_bit() const { return local_bit(seat); }
  // The own entry is masked by a multiplication, not a branch: after Registers::unscale, branches
  // here made ptxas fail to allocate predicate registers in the persistent solver's complex kernels.
  __device__ __forceinline__ R off_norm2_of_row(unsigned own) const {
    R sum = 0;
#pragma unroll
    for (int j = 0; j < K; ++j) sum += R((~own >> j) & 1u) * abs2(a[j]);
    return sum;
  }

  // The row phase, B <- M^H B with the row's own rotation: row p to p - s1 q and row q to
  // q + conj(s2) p, the partner row's entries four at a time (shfl4).
  __device__ __forceinline__ void rotate_rows(const PairRotation<S>& mine) {
    const S coef = (seat & 1) == 0 ? from_real<S>(R(0)) - mine.s1 : conj(mine.s2);
#pragma unroll
    for (int j0 = 0; j0 < K; j0 += 4) {
      const S entries[4] = {a[j0], a[j0 + 1], a[j0 + 2], a[j0 + 3]};
      S other[4];
      shfl4<NMAX>(mask, entries, other, partner);
#pragma unroll
      for (int i = 0; i < 4; ++i) a[j0 + i] = combine_rows(a[j0 + i], coef, other[i]);
    }
  }
  // The column phase, B <- B M and V <- V M, with the group's K / 2 rotations from shared memory.
  __device__ __forceinline__ void rotate_columns_of(const Multipliers<S>* rot) {
#pragma unroll
    for (int k = 0; k < K / 2; ++k) {
      const Multipliers<S> r = load_multipliers(&rot[k]);
      rotate_columns_unscaled(a[2 * k], a[2 * k + 1], r.s1, r.s2);
      rotate_columns_unscaled(v[2 * k], v[2 * k + 1], r.s1, r.s2);
    }
  }

  // One step: rotations of all seat pairs (2k, 2k+1), then the tournament move. `rot` holds the
  // step's NMAX / 2 rotations in shared memory (the caller alternates two buffers from step to step,
  // so that one barrier a step suffices), and with column groups `factors` their c and shifts; `next`
  // is the lane's schedule entry for the next step (Schedule).
  template <StepOrder ORDER>
  __device__ __forceinline__ void step(Multipliers<S>* rot, FactorShift<R>* factors, unsigned next, R negligible2) {
    const unsigned pair = unsigned(seat) >> 1;
    const bool even = (seat & 1) == 0;
    PairRotation<S> mine = pair_rotation(negligible2);
    const bool holds = holds_pair();
    if (holds && even) {
      store_multipliers(&rot[pair], mine.s1, mine.s2);
      if constexpr (C > 1) factors[pair] = {mine.c, mine.shift};
    }
    if constexpr (C > 1) {  // the rotation of a pair that another group holds, as that group published it
      __syncwarp(mask);
      if (!holds) {
        const Multipliers<S> m = load_multipliers(&rot[pair]);
        const FactorShift<R> f = factors[pair];
        mine = {m.s1, m.s2, f.c, f.shift};
      }
    }
    d = even ? d - mine.shift : d + mine.shift;
    g *= mine.c;
    h = rn::rcp(g);  // not h / c, whose rounding errors would add up through the sweep: see PairRotation
    // A rotated pair's block loses both entries of the row's pair: a(p, q) becomes exactly zero, and
    // the row's own entry is stale anyway (d holds it). One test per pair, on an opaque one-hot
    // mask, after the second phase.
    const unsigned zero_pair = opaque(is_zero(mine.s1) || !holds ? 0u : 1u << (C == 1 ? pair : local_pair()));
    const Multipliers<S>* group_rot = rot + (C == 1 ? 0 : group * (K / 2));
    if constexpr (C > 1) {  // ORDER aside: the row phase waits for other groups' rotations anyway
      rotate_columns_of(group_rot);
      rotate_rows(mine);
    } else if constexpr (ORDER == StepOrder::rows_first) {
      rotate_rows(mine);
      __syncwarp(mask);  // every rotation of the step published
      rotate_columns_of(group_rot);
    } else {
      __syncwarp(mask);
      rotate_columns_of(group_rot);
      rotate_rows(mine);
    }
#pragma unroll
    for (int k = 0; k < K / 2; ++k)
      if ((zero_pair >> k) & 1u) a[2 * k] = a[2 * k + 1] = from_real<S>(R(0));
    // The tournament move: columns (of A and V) by register renaming; the row follows its seat.
    if constexpr (C == 1) {
      S ta[NMAX], tv[NMAX];
#pragma unroll
      for (int j = 0; j < NMAX; ++j) ta[j] = a[source_seat(j, NMAX)], tv[j] = v[source_seat(j, NMAX)];
#pragma unroll
      for (int j = 0; j < NMAX; ++j) a[j] = ta[j], v[j] = tv[j];
    } else {
      move_across_groups(a);
      move_across_groups(v);
    }
    seat = int(next & 0xffu);
    partner = int(next >> 8);
  }
  // The tournament move of a row's columns (of A or V) in column groups: by register renaming
  // within the group (seat_source), and across groups by shuffles with the lanes of the same row in
  // the neighbouring groups.
  __device__ __forceinline__ void move_across_groups(S (&x)[K]) {
    const S from_left = shfl_up<kLanes>(mask, x[K - 2], NMAX), from_right = shfl_down<kLanes>(mask, x[1], NMAX);
    const bool first = group == 0, last = group == C - 1;
    auto take = [&](SeatSource from) { return from.from_group < 0 ? from_left : from.from_group > 0 ? from_right : x[from.seat]; };
    S t[K];
#pragma unroll
    for (int j = 0; j < K; ++j)
      t[j] = first ? take(seat_source(j, K, true, false))
             : last ? take(seat_source(j, K, false, true))
                    : take(seat_source(j, K, false, false));
#pragma unroll
    for (int j = 0; j < K; ++j) x[j] = t[j];
  }

  // Scales the columns of V to unit length (c rounds to exactly 1 for t^2 < epsilon, lengthening
  // both columns of every such rotation a little, always the same way).
  __device__ __forceinline__ void normalise_v() {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const R norm2 = group_sum<NMAX>(mask, abs2(v[j]));
      if (norm2 > R(0)) v[j] = (R(1) / sqrt(norm2)) * v[j];
    }
  }
};

}  // namespace eigstream::kernels::registers
