// The Karhunen-Loeve transform of blocks: how many principal components to keep, the coefficients
// C = V_k^H X of a block, the reconstruction X^ = V_k C, and the reconstruction SNR.
//
// V_k (channels x k) is the first k columns of the eigenvectors of the block covariance, eigenvalues
// in descending order as evd() returns them by default: a view {V.data, channels, k, V.ld}.
// Blocks are channels x snapshots of sample_t; coefficients are k x snapshots in precision R.
#pragma once

#include <complex>

#include "eigstream/views.hpp"

namespace eigstream {

struct ComponentRule {
  index_t count = 0;           // > 0: keep exactly this many components
  double energy_fraction = 0;  // count == 0: keep the smallest k with w_1 + ... + w_k >= fraction * sum(w)

  static ComponentRule fixed(index_t k) { return {k, 0}; }
  static ComponentRule energy(double fraction) { return {0, fraction}; }
};

// The number of components the rule keeps, from n eigenvalues in descending order (negative
// eigenvalues, from rounding, count as 0); at least 1. Throws Error(invalid_argument) for count > n,
// a fraction outside (0, 1], n < 1, or values not descending; Error(invalid_input) for NaN/Inf values.
template <class R>
index_t choose_components(const R* values, index_t n, const ComponentRule& rule);

// coefficients (k x L) = basis^H (channels x k) * block (channels x L).
template <class R>
void klt_coefficients(MatrixView<const std::complex<R>> basis, MatrixView<const sample_t> block,
                      MatrixView<std::complex<R>> coefficients);

// block (channels x L) = basis (channels x k) * coefficients (k x L), rounded to sample_t.
template <class R>
void klt_reconstruct(MatrixView<const std::complex<R>> basis, MatrixView<const std::complex<R>> coefficients,
                     MatrixView<sample_t> block);

// 10 log10(sum |x|^2 / sum |x - x^|^2) over all samples of two equal-sized blocks; +infinity when
// they are equal. Throws Error(invalid_argument) for different sizes.
double reconstruction_snr_db(MatrixView<const sample_t> original, MatrixView<const sample_t> reconstructed);

}  // namespace eigstream
