// The Jacobi rotation of the EVD solves (jacobi_evd_registers.cuh, solve_in_shared in
// jacobi_evd_solve.cuh, and jacobi_evd_pairs.cuh): its parameters, computed with every operation
// rounded as written so that threads computing the same rotation agree bit for bit (the pairs solve
// computes each in several threads), and its application to a pair of columns.
#pragma once

#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "device_scalar.cuh"

namespace eigstream::kernels {

// The rotation J = [[c, s e], [-s conj(e), c]] of a pair (p, q) in a step, e the phase of a_pq.
// Aligned so that a thread reads one from shared memory in 16-byte accesses.
template <class S>
struct alignas(16) Rot {
  S s_e;                // s * e
  real_of<S> c;
  real_of<S> shift;     // t |a_pq|: a_pp becomes a_pp - shift, and a_qq becomes a_qq + shift
  int active;           // 0: a_pq was negligible, J is the identity
};

// Stores r field by field: a copy of the whole struct also moves its padding, byte by byte.
template <class S>
__device__ __forceinline__ void store_rotation(Rot<S>* to, const Rot<S>& r) {
  to->s_e = r.s_e;
  to->c = r.c;
  to->shift = r.shift;
  to->active = r.active;
}

// Scalar operations rounded as written: the compiler may not contract them into fused multiply-adds,
// which it may do differently in two inlined copies of the same code.
namespace rn {
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double fma(double a, double b, double c) { return __fma_rn(a, b, c); }
// 1 / x and 1 / sqrt(x) for normal x > 0: the hardware estimate (denormals flushed, which normal x
// never meets) and Newton steps, one in float, two in double (each doubles the estimate's bits),
// within about an ulp and a fraction of the latency of the rounded division and square root. In
// double those are subroutines: rotation_of took 722 cycles with them against 185 in float (H200,
// bench/results/2026-11-26-h200-step-profile.md).
template <class R>
__device__ __forceinline__ R rcp_step(R x, R y) { return fma(y, fma(-x, y, R(1)), y); }
template <class R>
__device__ __forceinline__ R rsqrt_step(R x, R y) { return fma(mul(R(0.5), y), fma(-mul(x, y), y, R(1)), y); }
__device__ __forceinline__ float rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return rcp_step(x, y);
}
__device__ __forceinline__ double rcp(double x) {
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  return rcp_step(x, rcp_step(x, y));
}
__device__ __forceinline__ float rsqrt(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return rsqrt_step(x, y);
}
__device__ __forceinline__ double rsqrt(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  return rsqrt_step(x, rsqrt_step(x, y));
}
template <class R> __device__ __forceinline__ R abs2(R x) { return mul(x, x); }
template <class R> __device__ __forceinline__ R abs2(Cx<R> x) { return fma(x.re, x.re, mul(x.im, x.im)); }
template <class R> __device__ __forceinline__ R scale(R a, R x) { return mul(a, x); }
template <class R> __device__ __forceinline__ Cx<R> scale(R a, Cx<R> x) { return {mul(a, x.re), mul(a, x.im)}; }
}  // namespace rn

// The signed tangent of rotation_of (below) from a_pp, a_qq, |b|^2 and |b|.
template <class R>
__device__ __forceinline__ R rotation_tangent(R app, R aqq, R b2, R abs_b) {
  const R d = rn::sub(aqq, app);
  const R h = rn::fma(d, d, rn::mul(R(4), b2));
  const R root = rn::mul(h, rn::rsqrt(h));
  const R t_abs = rn::mul(rn::mul(R(2), abs_b), rn::rcp(rn::add(fabs(d), root)));
  return d >= R(0) ? t_abs : -t_abs;
}

// The rotation that zeroes b = a_pq of the Hermitian block [[app, b], [conj(b), aqq]] (seed 000,
// eqs. 9-11, as detail::jacobi_rotation), or the identity when |b|^2 <= negligible2, which must be at
// least the smallest normal number, so that 1 / |b| is finite. Threads computing it from the same
// entries get the same bits (see rn).
//
// The tangent is eq. 10's multiplied through by 2 |b|: with d = aqq - app,
//     t = sign(d) 2 |b| / (|d| + sqrt(d^2 + 4 |b|^2)),
// so that 1 / |b| and the first square root are computed side by side, not one after the other as
// zeta = d / (2 |b|) makes them: three estimates and their Newton steps in a row, not four. A step of
// the solves waits on this chain (about 227 cycles as eq. 10 is, H200; bench/results/
// 2026-11-26-h200-step-profile.md). The solves scale A so that its largest entry lies in [1, 2)
// (input_scaling.cuh), so its entries stay below 2 n in magnitude, and d^2 + 4 |b|^2 neither
// overflows nor, as |b|^2 is normal, underflows.
template <class S>
__device__ __forceinline__ Rot<S> rotation_of(real_of<S> app, real_of<S> aqq, S b, real_of<S> negligible2) {
  using R = real_of<S>;
  const R b2 = rn::abs2(b);
  if (!(b2 > negligible2)) return {from_real<S>(R(0)), R(1), R(0), 0};
  const R inv = rn::rsqrt(b2);  // 1 / |b|
  const R abs_b = rn::mul(b2, inv);
  const R t = rotation_tangent(app, aqq, b2, abs_b);
  const R c = rn::rsqrt(rn::fma(t, t, R(1)));
  return {rn::scale(rn::mul(rn::mul(t, c), inv), b), c, rn::mul(t, abs_b), 1};
}

// rotation_of's J as c M with M = [[1, t e], [-t conj(e), 1]], for solves that apply M and keep the
// factors c apart (registers::Registers, solve_in_pairs): t e, c and the shift.
template <class S>
struct TangentRot {
  S t_e;
  real_of<S> c, shift;
};
template <class S>
__device__ __forceinline__ TangentRot<S> tangent_rotation_of(real_of<S> app, real_of<S> aqq, S b, real_of<S> negligible2) {
  using R = real_of<S>;
  const R b2 = rn::abs2(b);
  if (!(b2 > negligible2)) return {from_real<S>(R(0)), R(1), R(0)};
  const R inv = rn::rsqrt(b2);
  const R abs_b = rn::mul(b2, inv);
  const R t = rotation_tangent(app, aqq, b2, abs_b);
  return {rn::scale(rn::mul(t, inv), b), rn::rsqrt(rn::fma(t, t, R(1))), rn::mul(t, abs_b)};
}

// M's multipliers as the threads that apply it need them, J = G^-1 M G' for the diagonal factors G
// of a scaled solve (registers::PairRotation): s1 = t e g_q / g_p and s2 = t e g_p / g_q (both zero
// when J is the identity), moved to and from shared memory in one vector access (two in complex
// double).
template <class S>
struct alignas(sizeof(S) == 4 ? 8 : 16) Multipliers {
  S s1, s2;
};
template <class S>
__device__ __forceinline__ void store_multipliers(Multipliers<S>* to, S s1, S s2) {
  if constexpr (std::is_same_v<S, float>) *reinterpret_cast<float2*>(to) = {s1, s2};
  else if constexpr (std::is_same_v<S, double>) *reinterpret_cast<double2*>(to) = {s1, s2};
  else if constexpr (std::is_same_v<S, Cx<float>>) *reinterpret_cast<float4*>(to) = {s1.re, s1.im, s2.re, s2.im};
  else reinterpret_cast<double2*>(to)[0] = {s1.re, s1.im}, reinterpret_cast<double2*>(to)[1] = {s2.re, s2.im};
}
template <class S>
__device__ __forceinline__ Multipliers<S> load_multipliers(const Multipliers<S>* from) {
  if constexpr (std::is_same_v<S, float>) {
    const float2 x = *reinterpret_cast<const float2*>(from);
    return {x.x, x.y};
  } else if constexpr (std::is_same_v<S, double>) {
    const double2 x = *reinterpret_cast<const double2*>(from);
    return {x.x, x.y};
  } else if constexpr (std::is_same_v<S, Cx<float>>) {
    const float4 x = *reinterpret_cast<const float4*>(from);
    return {{x.x, x.y}, {x.z, x.w}};
  } else {
    const double2 x = reinterpret_cast<const double2*>(from)[0], y = reinterpret_cast<const double2*>(from)[1];
    return {{x.x, x.y}, {y.x, y.y}};
  }
}
// s1 = t e g_q / g_p and s2 = t e g_p / g_q from tangent_rotation_of's t e, the factors g_p, g_q and
// their reciprocals h_p, h_q.
template <class S>
__device__ __forceinline__ Multipliers<S> multipliers_of(S t_e, real_of<S> g_p, real_of<S> g_q, real_of<S> h_p,
                                                         real_of<S> h_q) {
  return {rn::scale(rn::mul(g_q, h_p), t_e), rn::scale(rn::mul(g_p, h_q), t_e)};
}

// The smallest |a_pq|^2 worth a rotation: (tol ||A||_F / n)^2, at least the smallest normal number.
template <class R>
__device__ __forceinline__ R negligible_square(R target, int n) {
  const R negligible = target / R(n);
  return fmax(negligible * negligible, std::numeric_limits<R>::min());
}

// Column update of a pair of columns: (u, w) <- (c u - conj(s) w, s u + c w), s = s e, that is
// (u, w) <- (u, w) J. The fused multiply-adds are spelled out, not left to the compiler's
// contraction, which differed between the batched and the persistent kernel and made their sweep
// counts differ by one on some matrices. Rows (x, y) <- J^H (x, y) are rotate_columns(x, y, c,
// conj(s e)).
template <class R>
__device__ __forceinline__ void rotate_columns(R& u, R& w, R c, R s) {
  const R x = u;
  u = fma(c, u, -(s * w));
  w = fma(c, w, s * x);
}
template <class R>
__device__ __forceinline__ void rotate_columns(Cx<R>& u, Cx<R>& w, R c, Cx<R> s) {
  const Cx<R> x = u;
  u = {fma(c, u.re, -fma(s.re, w.re, s.im * w.im)), fma(c, u.im, -fma(s.re, w.im, -(s.im * w.re)))};
  w = {fma(c, w.re, fma(s.re, x.re, -(s.im * x.im))), fma(c, w.im, fma(s.re, x.im, s.im * x.re))};
}

// The column update of a rotation whose factor c is kept apart (tangent_rotation_of):
// (u, w) <- (u - conj(s1) w, w + s2 u), that is (u, w) <- (u, w) M with M = [[1, s2], [-conj(s1), 1]],
// two fused multiply-adds an entry in real types and four in complex, against rotate_columns' three
// and six. The scaled rotations of the register and pairs solves take it.
template <class R>
__device__ __forceinline__ void rotate_columns_unscaled(R& u, R& w, R s1, R s2) {
  const R x = u;
  u = fma(-s1, w, u);
  w = fma(s2, x, w);
}
template <class R>
__device__ __forceinline__ void rotate_columns_unscaled(Cx<R>& u, Cx<R>& w, Cx<R> s1, Cx<R> s2) {
  const Cx<R> x = u;
  u = {fma(-s1.re, w.re, fma(-s1.im, w.im, u.re)), fma(-s1.re, w.im, fma(s1.im, w.re, u.im))};
  w = {fma(s2.re, x.re, fma(-s2.im, x.im, w.re)), fma(s2.re, x.im, fma(s2.im, x.re, w.im))};
}

}  // namespace eigstream::kernels
