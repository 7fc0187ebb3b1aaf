// Scalar helpers that read the same for real and complex T (conj, |x|^2, real part, phase).
#pragma once

#include <cmath>
#include <complex>

#include "eigstream/views.hpp"

namespace eigstream::detail {

template <class T> inline T conj_of(T x) { return x; }
template <class R> inline std::complex<R> conj_of(std::complex<R> x) { return std::conj(x); }

template <class T> inline real_t<T> abs2(T x) { return x * x; }
template <class R> inline R abs2(std::complex<R> x) { return x.real() * x.real() + x.imag() * x.imag(); }

template <class T> inline real_t<T> real_of(T x) { return x; }
template <class R> inline R real_of(std::complex<R> x) { return x.real(); }

template <class T> inline real_t<T> abs_of(T x) { return std::abs(x); }

template <class T> inline bool is_finite(T x) { return std::isfinite(x); }
template <class R> inline bool is_finite(std::complex<R> x) { return std::isfinite(x.real()) && std::isfinite(x.imag()); }

// "NaN" or "infinite", for messages about an entry that failed is_finite.
template <class T> inline const char* non_finite_kind(T x) { return std::isnan(x) ? "NaN" : "infinite"; }
template <class R> inline const char* non_finite_kind(std::complex<R> x) {
  return std::isnan(x.real()) || std::isnan(x.imag()) ? "NaN" : "infinite";
}

// x / |x| for x != 0 (the phase of a complex number, the sign of a real one).
template <class T> inline T unit_phase(T x, real_t<T> abs_x) { return x / abs_x; }

}  // namespace eigstream::detail
