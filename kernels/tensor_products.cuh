// Products of matrices in shared memory on the tensor cores (mma.sync m16n8k8, TF32 inputs, float
// accumulators): 32 x 32 complex float by one warp, for the register solve's warm starts
// (product_32), and 64 x 64 float or complex float by the warps of a block, for the pairs solve's
// warm starts and Newton-Schulz step (BlockProduct).
//
// A TF32 value keeps 11 significant bits. To about float precision, each input x is split into
// hi = tf32(x) and lo = tf32(x - hi), within 2^-22 |x| of x, and a product a b is taken as
// a_lo b_hi + a_hi b_lo + a_hi b_hi ("3xTF32"; the a_lo b_lo term is below 2^-22 |a b|). Where one
// factor is itself a small correction, one TF32 product is enough (Precision::single).
//
// A complex product is four real ones: re += xr yr - xi yi, im += xr yi + xi yr.
//
// With the split inputs, each chunk of 8 terms is summed apart from zero and added to the result in
// float arithmetic, rounding to nearest. Summing a whole product in the tensor cores' accumulators,
// which evidently do not round to nearest, left warm complex float 32's V at ||V^H V - I|| = 3.5e-6
// and its eigenvalue error at 8.6e-7; by chunks, 1.1e-6 and 4.0e-7, as fast (H100,
// bench/results/2026-12-07-h100-tensor-products.md).
//
// Fragments (PTX ISA, mma.m16n8k8 with .tf32): lane = 4 g + t. A (16 x 8, row-major): a0 (g, t),
// a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4). B (8 x 8): b0 (t, g), b1 (t + 4, g). C (16 x 8):
// c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "device_scalar.cuh"

namespace eigstream::kernels::tensor {

// mma.sync with TF32 inputs needs sm_80 or later; the device code for earlier architectures keeps
// its products off the tensor cores.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
inline constexpr bool kAvailable = false;
#else
inline constexpr bool kAvailable = true;
#endif

// The data the products take: float or complex float (TF32 inputs, float sums).
template <class S>
inline constexpr bool kFloatData = std::is_same_v<S, float> || std::is_same_v<S, Cx<float>>;

enum class Precision { single, split };  // one TF32 product; about float precision (3xTF32)

struct Tf32 {
  unsigned hi, lo;
};

template <Precision P>
__device__ __forceinline__ Tf32 to_tf32(float x) {
  Tf32 s{};
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(s.hi) : "f"(x));
  if constexpr (P == Precision::split) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(s.lo) : "f"(x - __uint_as_float(s.hi)));
  return s;
}
__device__ __forceinline__ Tf32 negated(Tf32 s) { return {s.hi ^ 0x80000000u, s.lo ^ 0x80000000u}; }

__device__ __forceinline__ void mma(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                    unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// d += a b for one 16 x 8 x 8 tile; the smaller terms first.
template <Precision P>
__device__ __forceinline__ void mma(float (&d)[4], const Tf32 (&a)[4], const Tf32 (&b)[2]) {
  if constexpr (P == Precision::split) {
    mma(d, a[0].lo, a[1].lo, a[2].lo, a[3].lo, b[0].hi, b[1].hi);
    mma(d, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b[0].lo, b[1].lo);
  }
  mma(d, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b[0].hi, b[1].hi);
}

// (re, im) += (xr + i xi) (yr + i yi) for one tile: re += xr yr - xi yi, im += xr yi + xi yr, with
// minus_xi = -xi.
template <Precision P>
__device__ __forceinline__ void complex_mma(float (&re)[4], float (&im)[4], const Tf32 (&xr)[4], const Tf32 (&xi)[4],
                                            const Tf32 (&minus_xi)[4], const Tf32 (&yr)[2], const Tf32 (&yi)[2]) {
  mma<P>(re, xr, yr);
  mma<P>(re, minus_xi, yi);
  mma<P>(im, xr, yi);
  mma<P>(im, xi, yr);
}

// out = op(x) y, where op(x) is x or, with ADJOINT, x^H: 32 x 32 complex float matrices by rows of
// LD entries in shared memory (out 16-byte aligned), on the full warp (`lane` 0-31; every lane must
// call). Every tile is held in registers until all are done, so out may be x or y. Synchronises the
// warp on entry (the inputs may have just been written by other lanes) and on exit (out is then
// visible to all).
template <bool ADJOINT, Precision P, int LD>
__device__ __forceinline__ void product_32(int lane, const Cx<float>* x, const Cx<float>* y, Cx<float>* out) {
  static_assert(LD % 2 == 0, "pairs of entries are stored as one 16-byte access");
  const int g = lane / 4, t = lane % 4;
  float re[2][4][4] = {}, im[2][4][4] = {};  // [row tile][column tile][fragment]
  __syncwarp();
#pragma unroll 1
  for (int k0 = 0; k0 < 32; k0 += 8) {
    Tf32 xr[2][4], xi[2][4], minus_xi[2][4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = 16 * mt + g + 8 * (r % 2), k = k0 + t + 4 * (r / 2);
        const Cx<float> e = ADJOINT ? conj(load_vec(&x[k * LD + i])) : load_vec(&x[i * LD + k]);
        xr[mt][r] = to_tf32<P>(e.re);
        xi[mt][r] = to_tf32<P>(e.im);
        minus_xi[mt][r] = negated(xi[mt][r]);
      }
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      Tf32 yr[2], yi[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const Cx<float> e = load_vec(&y[(k0 + t + 4 * r) * LD + 8 * nt + g]);
        yr[r] = to_tf32<P>(e.re);
        yi[r] = to_tf32<P>(e.im);
      }
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        if constexpr (P == Precision::split) {  // the chunk's sums apart, then added rounding to nearest
          float chunk_re[4] = {}, chunk_im[4] = {};
          complex_mma<P>(chunk_re, chunk_im, xr[mt], xi[mt], minus_xi[mt], yr, yi);
#pragma unroll
          for (int c = 0; c < 4; ++c) re[mt][nt][c] += chunk_re[c], im[mt][nt][c] += chunk_im[c];
        } else {
          complex_mma<P>(re[mt][nt], im[mt][nt], xr[mt], xi[mt], minus_xi[mt], yr, yi);
        }
      }
    }
  }
  __syncwarp();
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // rows g and g + 8 of the tile: entries 2t and 2t + 1
        const float4 pair{re[mt][nt][2 * h], im[mt][nt][2 * h], re[mt][nt][2 * h + 1], im[mt][nt][2 * h + 1]};
        *reinterpret_cast<float4*>(&out[(16 * mt + g + 8 * h) * LD + 8 * nt + 2 * t]) = pair;
      }
  __syncwarp();
}

// The 64 x 64 product op(X) Y of float or complex float matrices stored by columns in shared memory,
// op(X) = X^H when ADJOINT, else X, by the first 8 warps of a block (any others do nothing): warp w
// takes the 4 tiles of 16 x 8 side by side at rows 16 (w / 2) .. + 15 and columns 32 (w % 2) .. + 31.
// compute() leaves the result in registers and store() hands each entry to the caller, so that the
// block can synchronise between the two when the result goes over an input. The pairs solve's
// products; a smaller matrix is zero-padded to 64 there. (The same products at 16 and 32 for
// solve_in_shared's warm starts did not gain: latency within 1-2 us either way, orthogonality 8.3e-7
// to 1.2e-6 at n = 32; H100, bench/results/2026-12-07-h100-block-tensor-products.md.)
//
// The terms of an entry are summed in any order, so each chunk of 8 takes k at a stride (kStride):
// with a leading dimension of 1 mod 32 (the pairs solve's 65), the 32 lanes of a fragment's load then
// fall in distinct banks (float: g + 8 t) or distinct 8-byte slots of each half warp (complex: g + 4 t).
template <class S>
struct BlockProduct {
  static_assert(kFloatData<S>, "TF32 products are of float data");
  static constexpr int kN = 64;
  static constexpr int kWarps = 8;
  static constexpr int kTiles = 4;  // a warp's
  static constexpr bool kComplex = std::is_same_v<S, Cx<float>>;
  static constexpr int kParts = kComplex ? 2 : 1;  // real and imaginary accumulators
  static constexpr int kStride = kComplex ? 4 : 8;
  float acc[kParts][kTiles][4];

  // Term kappa (0-7) of chunk c (0-7): every k below 64 once.
  __device__ __forceinline__ static int term(int c, int kappa) { return c % kStride + kStride * kappa + 8 * kStride * (c / kStride); }
  __device__ __forceinline__ static int first_row(int warp) { return 16 * (warp / 2); }
  __device__ __forceinline__ static int first_col(int warp) { return 32 * (warp % 2); }

  template <bool ADJOINT, Precision P>
  __device__ __forceinline__ void compute(int warp, int lane, const S* x, int ldx, const S* y, int ldy) {
    if (warp >= kWarps) return;
    const int g = lane / 4, t = lane % 4;
    const int row0 = first_row(warp), col0 = first_col(warp);
#pragma unroll
    for (int q = 0; q < kParts; ++q)
#pragma unroll
      for (int nt = 0; nt < kTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[q][nt][e] = 0.0f;
#pragma unroll 1
    for (int c = 0; c < kN / 8; ++c) {
      Tf32 xr[4], xi[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = row0 + g + 8 * (r % 2), k = term(c, t + 4 * (r / 2));
        const S e = ADJOINT ? conj(x[k + i * ldx]) : x[i + k * ldx];
        xr[r] = to_tf32<P>(re(e));
        if constexpr (kComplex) xi[r] = to_tf32<P>(im(e));
      }
#pragma unroll
      for (int nt = 0; nt < kTiles; ++nt) {
        Tf32 yr[2], yi[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int k = term(c, t + 4 * r);
          const S e = y[k + (col0 + 8 * nt + g) * ldy];
          yr[r] = to_tf32<P>(re(e));
          if constexpr (kComplex) yi[r] = to_tf32<P>(im(e));
        }
        float chunk[kParts][4] = {};  // the chunk's sums apart, then added rounding to nearest
        if constexpr (kComplex) {
          Tf32 minus_xi[4];
#pragma unroll
          for (int r = 0; r < 4; ++r) minus_xi[r] = negated(xi[r]);
          complex_mma<P>(chunk[0], chunk[1], xr, xi, minus_xi, yr, yi);
        } else {
          mma<P>(chunk[0], xr, yr);
        }
#pragma unroll
        for (int q = 0; q < kParts; ++q)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[q][nt][e] += chunk[q][e];
      }
    }
  }

  // store(i, j, value) for each entry of the result that this lane holds.
  template <class Store>
  __device__ __forceinline__ void store(int warp, int lane, Store store) const {
    if (warp >= kWarps) return;
    const int g = lane / 4, t = lane % 4;
    const int row0 = first_row(warp), col0 = first_col(warp);
#pragma unroll
    for (int nt = 0; nt < kTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {  // c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1)
        const int i = row0 + g + 8 * (e / 2), j = col0 + 8 * nt + 2 * t + e % 2;
        if constexpr (kComplex)
          store(i, j, S{acc[0][nt][e], acc[1][nt][e]});
        else
          store(i, j, acc[0][nt][e]);
      }
  }
};

}  // namespace eigstream::kernels::tensor
