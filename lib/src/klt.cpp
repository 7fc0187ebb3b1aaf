// Component choice, KLT coefficients and reconstruction, reconstruction SNR (see klt.hpp).
#include "eigstream/klt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "eigstream/error.hpp"
#include "validate.hpp"

namespace eigstream {

template <class R>
index_t choose_components(const R* values, index_t n, const ComponentRule& rule) {
  detail::check_eigenvalues("klt", values, n);
  std::ostringstream s;
  s << "klt: ";
  if (rule.count < 0 || rule.count > n)
    s << "the component count " << rule.count << " must be in [1, " << n << "] (the number of eigenvalues)";
  else if (rule.count == 0 && !(rule.energy_fraction > 0 && rule.energy_fraction <= 1))
    s << "the energy fraction must be in (0, 1], got " << rule.energy_fraction;
  else
    s.str("");
  if (!s.str().empty()) throw Error(ErrorCode::invalid_argument, s.str());
  if (rule.count > 0) return rule.count;

  double total = 0;
  for (index_t i = 0; i < n; ++i) total += std::max(0.0, double(values[i]));
  double kept = 0;
  for (index_t k = 1; k <= n; ++k) {
    kept += std::max(0.0, double(values[k - 1]));
    if (kept >= rule.energy_fraction * total) return k;
  }
  return n;
}

template <class R>
void klt_coefficients(MatrixView<const std::complex<R>> basis, MatrixView<const sample_t> block,
                      MatrixView<std::complex<R>> coefficients) {
  const index_t n = basis.rows, k = basis.cols, l = block.cols;
  detail::check_matrix("klt coefficients", "basis", basis, n, k);
  detail::check_matrix("klt coefficients", "block", block, n, -1);
  detail::check_matrix("klt coefficients", "coefficients", coefficients, k, l);
  for (index_t t = 0; t < l; ++t)
    for (index_t j = 0; j < k; ++j) {
      std::complex<R> sum = 0;
      for (index_t i = 0; i < n; ++i) sum += std::conj(basis(i, j)) * std::complex<R>(block(i, t));
      coefficients(j, t) = sum;
    }
}

template <class R>
void klt_reconstruct(MatrixView<const std::complex<R>> basis, MatrixView<const std::complex<R>> coefficients,
                     MatrixView<sample_t> block) {
  const index_t n = basis.rows, k = basis.cols, l = coefficients.cols;
  detail::check_matrix("klt reconstruct", "basis", basis, n, k);
  detail::check_matrix("klt reconstruct", "coefficients", coefficients, k, l);
  detail::check_matrix("klt reconstruct", "block", block, n, l);
  for (index_t t = 0; t < l; ++t)
    for (index_t i = 0; i < n; ++i) {
      std::complex<R> sum = 0;
      for (index_t j = 0; j < k; ++j) sum += basis(i, j) * coefficients(j, t);
      block(i, t) = sample_t(sum);
    }
}

double reconstruction_snr_db(MatrixView<const sample_t> original, MatrixView<const sample_t> reconstructed) {
  detail::check_matrix("reconstruction snr", "original", original, original.rows, original.cols);
  detail::check_matrix("reconstruction snr", "reconstructed block", reconstructed, original.rows, original.cols);
  double signal = 0, error = 0;
  for (index_t t = 0; t < original.cols; ++t)
    for (index_t c = 0; c < original.rows; ++c) {
      const std::complex<double> x(original(c, t));
      signal += std::norm(x);
      error += std::norm(x - std::complex<double>(reconstructed(c, t)));
    }
  if (error == 0) return std::numeric_limits<double>::infinity();
  return 10 * std::log10(signal / error);
}

#define EIGSTREAM_INSTANTIATE(R)                                                                           \
  template index_t choose_components<R>(const R*, index_t, const ComponentRule&);                         \
  template void klt_coefficients<R>(MatrixView<const std::complex<R>>, MatrixView<const sample_t>,        \
                                    MatrixView<std::complex<R>>);                                         \
  template void klt_reconstruct<R>(MatrixView<const std::complex<R>>, MatrixView<const std::complex<R>>, \
                                   MatrixView<sample_t>);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)

}  // namespace eigstream
