// Two-sided Jacobi EVD of one small Hermitian matrix (n <= NMAX <= 32) held in registers by
// NMAX lanes of a warp: lane r owns row r of A and row r of V. Several matrices share a warp when
// NMAX < 32.
//
// Ordering (seed 001, eq. 7, in "seat" form): rotations always act on the seat pairs (2k, 2k+1);
// after each step the indices move by the chess-tournament permutation (seat 0 stays, the others
// move one place round the table), so every pair of indices meets once in NMAX - 1 steps. Columns
// are stored by seat and move by compile-time register renames; rows stay in their lanes, and each
// lane follows its row's seat (and its partner's lane) by formula. The column phase A <- A J and
// V <- V J is thread-local; the row phase A <- J^H A needs one shuffle per entry (the partner row).
// Only the NMAX/2 rotations of a step go through shared memory.
// n < NMAX is padded with zero rows and columns, which never rotate (their a_pq are exactly zero).
#pragma once

#include <cuda_runtime.h>

#include "device_scalar.cuh"
#include "eigstream/detail/jacobi_rotation.hpp"
#include "eigstream/options.hpp"

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
// The index that sits in seat s after t steps (index i starts in seat i).
__host__ __device__ constexpr int occupant(int s, int t, int m) {
  const int j = position_of_seat(s, m);
  return j == 0 ? s : seat_of_position(1 + ((j - 1 - t) % (m - 1) + (m - 1)) % (m - 1), m);
}

template <class S>
struct PairRotation {
  real_of<S> c;
  S s_e;   // s * e, e the phase of a_pq
  S s_ec;  // s * conj(e)
  real_of<S> app, aqq;  // the pair's diagonal after the rotation
  int active;           // 0: a_pq was negligible, the pair is left as it is
};

// Shuffles of S within a group of W lanes (width W).
template <int W, class R>
__device__ __forceinline__ R shfl(unsigned mask, R x, int src) { return __shfl_sync(mask, x, src, W); }
template <int W, class R>
__device__ __forceinline__ Cx<R> shfl(unsigned mask, Cx<R> x, int src) {
  return {__shfl_sync(mask, x.re, src, W), __shfl_sync(mask, x.im, src, W)};
}
template <int W, class R>
__device__ __forceinline__ R shfl_xor(unsigned mask, R x, int lane_mask) { return __shfl_xor_sync(mask, x, lane_mask, W); }
template <int W, class R>
__device__ __forceinline__ Cx<R> shfl_xor(unsigned mask, Cx<R> x, int lane_mask) {
  return {__shfl_xor_sync(mask, x.re, lane_mask, W), __shfl_xor_sync(mask, x.im, lane_mask, W)};
}
template <int W, class R>
__device__ __forceinline__ R group_sum(unsigned mask, R x) {
  for (int offset = W / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(mask, x, offset, W);
  return x;
}

template <class S, int NMAX>
struct Registers {
  using R = real_of<S>;
  S a[NMAX];  // row `lane` of A, columns by seat
  S v[NMAX];  // row `lane` of V, columns by seat
  int lane;   // the row's index (>= n: padding)
  int seat;   // where index `lane` sits now
  int partner;  // the lane whose index sits in seat ^ 1
  int t;      // steps taken, modulo NMAX - 1
  unsigned mask;
  // One-hot masks of this seat and its partner's, made opaque to the compiler: written as
  // `j == seat`, the selections below let it replace a[j] by a[seat], a run-time index that moves
  // the whole row to local memory.
  unsigned me_bit, partner_bit;

  __device__ __forceinline__ void set_seat(int s) {
    seat = s;
    partner = occupant(s ^ 1, t, NMAX);
    asm("mov.b32 %0, %1;" : "=r"(me_bit) : "r"(1u << s));
    asm("mov.b32 %0, %1;" : "=r"(partner_bit) : "r"(1u << (s ^ 1)));
  }
  __device__ __forceinline__ bool is_me(int j) const { return (me_bit >> j) & 1u; }
  __device__ __forceinline__ bool is_partner(int j) const { return (partner_bit >> j) & 1u; }

  __device__ __forceinline__ S diagonal() const {
    S d = from_real<S>(R(0));
#pragma unroll
    for (int j = 0; j < NMAX; ++j)
      if (is_me(j)) d = a[j];
    return d;
  }
  __device__ __forceinline__ S partner_entry() const {  // a(seat, seat ^ 1)
    S x = from_real<S>(R(0));
#pragma unroll
    for (int j = 0; j < NMAX; ++j)
      if (is_partner(j)) x = a[j];
    return x;
  }
  __device__ __forceinline__ R off_norm2_of_row() const {
    R sum = 0;
#pragma unroll
    for (int j = 0; j < NMAX; ++j)
      if (!is_me(j)) sum += abs2(a[j]);
    return sum;
  }

  // One step: rotations of all seat pairs (2k, 2k+1), then the tournament move.
  __device__ __forceinline__ void step(PairRotation<S>* rot, R negligible) {
    // The even seat of each pair alone decides and computes its rotation, from its a(p, q); both
    // seats then read the same parameters, so rows p and q always move together.
    const bool even = seat % 2 == 0;
    const R d = re(diagonal());
    const R d_partner = shfl<NMAX>(mask, d, partner);
    if (even) {
      const S b = partner_entry();
      const R abs_b = sqrt(abs2(b));
      PairRotation<S> r{R(1), from_real<S>(R(0)), from_real<S>(R(0)), d, d_partner, 0};
      if (abs_b > negligible) {
        const detail::Rotation<R> j = detail::jacobi_rotation(d, d_partner, abs_b);
        const S e = b / abs_b;
        r = {j.c, j.s * e, j.s * conj(e), d - j.t * abs_b, d_partner + j.t * abs_b, 1};
      }
      rot[seat / 2] = r;
    }
    __syncwarp(mask);
    const PairRotation<S> mine = rot[seat / 2];
    // Columns: A <- A J, V <- V J.
#pragma unroll
    for (int k = 0; k < NMAX / 2; ++k) {
      const PairRotation<S> r = rot[k];
      const S x = a[2 * k], y = a[2 * k + 1];
      a[2 * k] = r.c * x - r.s_ec * y;
      a[2 * k + 1] = r.s_e * x + r.c * y;
      const S u = v[2 * k], w = v[2 * k + 1];
      v[2 * k] = r.c * u - r.s_ec * w;
      v[2 * k + 1] = r.s_e * u + r.c * w;
    }
    __syncwarp(mask);  // rot is rewritten next step
    // Rows: A <- J^H A; the 2 x 2 block of a rotated pair gets its exact diagonal and zeros.
#pragma unroll
    for (int j = 0; j < NMAX; ++j) {
      const S other = shfl<NMAX>(mask, a[j], partner);
      S x = even ? mine.c * a[j] - mine.s_e * other : mine.s_ec * other + mine.c * a[j];
      if (mine.active && is_me(j)) x = from_real<S>(even ? mine.app : mine.aqq);
      if (mine.active && is_partner(j)) x = from_real<S>(R(0));
      a[j] = x;
    }
    // The tournament move: columns (of A and V) by register renaming; the row follows its seat.
    S ta[NMAX], tv[NMAX];
#pragma unroll
    for (int j = 0; j < NMAX; ++j) ta[j] = a[source_seat(j, NMAX)], tv[j] = v[source_seat(j, NMAX)];
#pragma unroll
    for (int j = 0; j < NMAX; ++j) a[j] = ta[j], v[j] = tv[j];
    t = t == NMAX - 2 ? 0 : t + 1;
    set_seat(destination_seat(seat, NMAX));
  }

  // Scales the columns of V to unit length (c rounds to exactly 1 for t^2 < epsilon, lengthening
  // both columns of every such rotation a little, always the same way).
  __device__ __forceinline__ void normalise_v() {
#pragma unroll
    for (int j = 0; j < NMAX; ++j) {
      const R norm2 = group_sum<NMAX>(mask, abs2(v[j]));
      if (norm2 > R(0)) v[j] = (R(1) / sqrt(norm2)) * v[j];
    }
  }
};

}  // namespace eigstream::kernels::registers
