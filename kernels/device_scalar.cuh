// Device scalars: R (float, double) and Cx<R>, a complex laid out as std::complex<R>, with the few
// operations the Jacobi kernels need, named alike for real and complex.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <type_traits>

namespace eigstream::kernels {

template <class R>
struct Cx {
  R re, im;
};

// The device scalar for a host scalar: std::complex<R> becomes Cx<R>, real types stay.
template <class T> struct DeviceScalar { using type = T; };
template <class R> struct DeviceScalar<std::complex<R>> { using type = Cx<R>; };

template <class S> struct RealOf { using type = S; };
template <class R> struct RealOf<Cx<R>> { using type = R; };
template <class S> using real_of = typename RealOf<S>::type;

template <class S, class R = real_of<S>> __device__ __forceinline__ S from_real(R x) {
  if constexpr (std::is_same_v<S, R>) return x; else return S{x, R(0)};
}

template <class R> __device__ __forceinline__ R re(R x) { return x; }
template <class R> __device__ __forceinline__ R re(Cx<R> x) { return x.re; }
template <class R> __device__ __forceinline__ R im(R) { return R(0); }
template <class R> __device__ __forceinline__ R im(Cx<R> x) { return x.im; }
template <class R> __device__ __forceinline__ R conj(R x) { return x; }
template <class R> __device__ __forceinline__ Cx<R> conj(Cx<R> x) { return {x.re, -x.im}; }
template <class R> __device__ __forceinline__ R abs2(R x) { return x * x; }
template <class R> __device__ __forceinline__ R abs2(Cx<R> x) { return x.re * x.re + x.im * x.im; }
// Largest component magnitude: within sqrt(2) of |x|, enough to choose a scaling.
template <class R> __device__ __forceinline__ R max_component(R x) { return fabs(x); }
template <class R> __device__ __forceinline__ R max_component(Cx<R> x) { return fmax(fabs(x.re), fabs(x.im)); }
template <class R> __device__ __forceinline__ bool is_zero(R x) { return x == R(0); }
template <class R> __device__ __forceinline__ bool is_zero(Cx<R> x) { return x.re == R(0) && x.im == R(0); }
template <class R> __device__ __forceinline__ bool finite(R x) { return isfinite(x); }
template <class R> __device__ __forceinline__ bool finite(Cx<R> x) { return isfinite(x.re) && isfinite(x.im); }
template <class R> __device__ __forceinline__ R scale2(R x, int e) { return scalbn(x, e); }
template <class R> __device__ __forceinline__ Cx<R> scale2(Cx<R> x, int e) { return {scalbn(x.re, e), scalbn(x.im, e)}; }

template <class R> __device__ __forceinline__ Cx<R> operator+(Cx<R> a, Cx<R> b) { return {a.re + b.re, a.im + b.im}; }
template <class R> __device__ __forceinline__ Cx<R> operator-(Cx<R> a, Cx<R> b) { return {a.re - b.re, a.im - b.im}; }
template <class R> __device__ __forceinline__ Cx<R> operator*(Cx<R> a, Cx<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R> __device__ __forceinline__ Cx<R> operator*(R a, Cx<R> b) { return {a * b.re, a * b.im}; }
template <class R> __device__ __forceinline__ Cx<R> operator/(Cx<R> a, R b) { return {a.re / b, a.im / b}; }
template <class R> __device__ __forceinline__ Cx<R>& operator+=(Cx<R>& a, Cx<R> b) { return a = a + b; }

// One vector access for an entry of memory aligned to 2 sizeof(R), as the solves' shared-memory
// matrices are (a Cx<R> alone is aligned to sizeof(R), so the compiler moves it in two accesses).
template <class R> __device__ __forceinline__ R load_vec(const R* p) { return *p; }
template <class R> __device__ __forceinline__ void store_vec(R* p, R x) { *p = x; }
template <class R> using Vec2 = std::conditional_t<sizeof(R) == 4, float2, double2>;
template <class R> __device__ __forceinline__ Cx<R> load_vec(const Cx<R>* p) {
  const Vec2<R> v = *reinterpret_cast<const Vec2<R>*>(p);
  return {v.x, v.y};
}
template <class R> __device__ __forceinline__ void store_vec(Cx<R>* p, Cx<R> x) {
  *reinterpret_cast<Vec2<R>*>(p) = Vec2<R>{x.re, x.im};
}

// p ? a : b as a predicated select, never a branch: where p differs between a warp's lanes, the
// compiler otherwise may branch around the rare case, and the warp runs each case in turn.
__device__ __forceinline__ float pick(bool p, float a, float b) {
  float r;
  asm("{ .reg .pred q; setp.ne.b32 q, %3, 0; selp.f32 %0, %1, %2, q; }" : "=f"(r) : "f"(a), "f"(b), "r"(int(p)));
  return r;
}
__device__ __forceinline__ double pick(bool p, double a, double b) {
  double r;
  asm("{ .reg .pred q; setp.ne.b32 q, %3, 0; selp.f64 %0, %1, %2, q; }" : "=d"(r) : "d"(a), "d"(b), "r"(int(p)));
  return r;
}
template <class R> __device__ __forceinline__ Cx<R> pick(bool p, Cx<R> a, Cx<R> b) {
  return {pick(p, a.re, b.re), pick(p, a.im, b.im)};
}

// conj(a) * b: the term of a dot product a^H b.
template <class R> __device__ __forceinline__ R conj_mul(R a, R b) { return a * b; }
template <class R> __device__ __forceinline__ Cx<R> conj_mul(Cx<R> a, Cx<R> b) {
  return {a.re * b.re + a.im * b.im, a.re * b.im - a.im * b.re};
}

// Shuffles of S within groups of W lanes of a warp (width W), component by component in complex.
template <class R, class F>
__device__ __forceinline__ R each_component(R x, F f) { return f(x); }
template <class R, class F>
__device__ __forceinline__ Cx<R> each_component(Cx<R> x, F f) { return {f(x.re), f(x.im)}; }
template <int W, class S>
__device__ __forceinline__ S shfl(unsigned mask, S x, int src) {
  return each_component(x, [&](auto c) { return __shfl_sync(mask, c, src, W); });
}
template <int W, class S>
__device__ __forceinline__ S shfl_up(unsigned mask, S x, int delta) {
  return each_component(x, [&](auto c) { return __shfl_up_sync(mask, c, delta, W); });
}
template <int W, class S>
__device__ __forceinline__ S shfl_down(unsigned mask, S x, int delta) {
  return each_component(x, [&](auto c) { return __shfl_down_sync(mask, c, delta, W); });
}
template <int W, class S>
__device__ __forceinline__ S shfl_xor(unsigned mask, S x, int lane_mask) {
  return each_component(x, [&](auto c) { return __shfl_xor_sync(mask, c, lane_mask, W); });
}

}  // namespace eigstream::kernels
