// Covariance<R>: lower-triangle accumulation of X X^H per block, exponential or sliding-window
// combination of blocks, and the loaded Hermitian output (see covariance.hpp).
#include "eigstream/covariance.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "eigstream/error.hpp"
#include "scalar.hpp"
#include "validate.hpp"

namespace eigstream {

double DiagonalLoading::amount(double trace, index_t n) const {
  if (!std::isfinite(value) || value < 0) {
    std::ostringstream s;
    s << "diagonal loading: the value must be finite and >= 0, got " << value;
    throw Error(ErrorCode::invalid_argument, s.str());
  }
  switch (kind) {
    case Kind::none: return 0;
    case Kind::relative: return n > 0 ? value * trace / double(n) : 0;
    case Kind::absolute: return value;
  }
  return 0;
}

namespace {

// Whether any of the n floats at f is a NaN or an infinity: x * 0 is 0 for a finite x and NaN for
// the others, so a sum of such products stays exactly 0 when all are finite. Eight independent sums
// let the compiler vectorise the loop (a test and branch per value does not, and runs 8x slower).
bool any_non_finite(const float* f, std::size_t n) {
  float sums[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) sums[k] += f[i + k] * 0.0f;
  for (; i < n; ++i) sums[0] += f[i] * 0.0f;
  float total = 0;
  for (float x : sums) total += x;
  return !(total == 0.0f);
}

}  // namespace

NonFiniteSample find_non_finite(MatrixView<const sample_t> block) {
  // A fast check first (a block of samples is almost always finite), then the exact search.
  static_assert(sizeof(sample_t) == 2 * sizeof(float), "sample_t is two floats");
  const auto* floats = reinterpret_cast<const float*>(block.data);
  bool suspect = false;
  if (block.ld == block.rows) {
    suspect = any_non_finite(floats, 2 * std::size_t(block.rows) * std::size_t(block.cols));
  } else {
    for (index_t t = 0; t < block.cols && !suspect; ++t)
      suspect = any_non_finite(floats + 2 * std::size_t(t) * std::size_t(block.ld), 2 * std::size_t(block.rows));
  }
  if (!suspect) return {};
  for (index_t t = 0; t < block.cols; ++t)
    for (index_t c = 0; c < block.rows; ++c)
      if (!detail::is_finite(block(c, t))) return {true, c, t};
  return {};
}

template <class R>
Covariance<R>::Covariance(const CovarianceConfig& config) : config_(config) {
  std::ostringstream s;
  s << "covariance: ";
  if (config.channels < 1)
    s << "channels must be >= 1, got " << config.channels;
  else if (config.mode == CovarianceConfig::Mode::exponential && !(config.lambda >= 0 && config.lambda < 1))
    s << "the forgetting factor lambda must be in [0, 1), got " << config.lambda;
  else if (config.mode == CovarianceConfig::Mode::sliding_window && config.window < 1)
    s << "the window must hold at least 1 block, got " << config.window;
  else
    s.str("");
  if (!s.str().empty()) throw Error(ErrorCode::invalid_argument, s.str());
  config.loading.amount(0, config.channels);  // validates the loading value

  const std::size_t nn = std::size_t(config.channels * config.channels);
  block_sum_.assign(nn, value_type(0));
  estimate_.assign(nn, value_type(0));
  if (config.mode == CovarianceConfig::Mode::sliding_window) {
    ring_.assign(nn * std::size_t(config.window), value_type(0));
    ring_snapshots_.assign(std::size_t(config.window), 0);
  }
}

template <class R>
void Covariance<R>::update(MatrixView<const sample_t> block) {
  accumulate(block);
  end_block();
}

template <class R>
void Covariance<R>::accumulate(MatrixView<const sample_t> part) {
  const index_t n = config_.channels;
  detail::check_matrix("covariance", "block", part, n, -1);
  const NonFiniteSample bad = find_non_finite(part);
  if (bad.found) {
    std::ostringstream s;
    s << "covariance: block " << blocks_ << " has a " << detail::non_finite_kind(part(bad.channel, bad.snapshot))
      << " sample at snapshot " << block_snapshots_ + bad.snapshot << ", channel " << bad.channel
      << "; nothing of this part was added";
    throw Error(ErrorCode::invalid_input, s.str());
  }
  value_type* sum = block_sum_.data();
  for (index_t t = 0; t < part.cols; ++t) {
    const sample_t* x = part.data + t * part.ld;
    for (index_t j = 0; j < n; ++j) {
      // column += x * conj(x_j), written out in reals: std::complex's operator* checks for NaN
      // (a library call per product) and the samples are known finite here.
      const R br = R(x[j].real()), bi = R(x[j].imag());
      value_type* column = sum + j * n;
      for (index_t i = j; i < n; ++i) {
        const R ar = R(x[i].real()), ai = R(x[i].imag());
        column[i] += value_type(ar * br + ai * bi, ai * br - ar * bi);
      }
    }
  }
  block_snapshots_ += part.cols;
}

template <class R>
void Covariance<R>::end_block() {
  if (block_snapshots_ == 0)
    throw Error(ErrorCode::invalid_argument, "covariance: block " + std::to_string(blocks_) +
                                                 " has no snapshots; a block needs at least one");
  const index_t n = config_.channels;
  const std::size_t nn = block_sum_.size();
  if (config_.mode == CovarianceConfig::Mode::exponential) {
    const R scale = R(1) / R(block_snapshots_);
    const ForgettingStep step = forgetting_step(blocks_, config_.lambda);
    const R keep = R(step.keep), take = R(step.take);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = j; i < n; ++i) {
        const std::size_t k = std::size_t(i + j * n);
        estimate_[k] = keep * estimate_[k] + take * (block_sum_[k] * scale);
      }
    weight_square_sum_ = step.weight_square_sum(weight_square_sum_, block_snapshots_);
  } else {
    const index_t window = config_.window;
    const index_t slot = blocks_ % window;
    std::copy(block_sum_.begin(), block_sum_.end(), ring_.begin() + std::ptrdiff_t(std::size_t(slot) * nn));
    ring_snapshots_[std::size_t(slot)] = block_snapshots_;
    const index_t held = std::min(blocks_ + 1, window);
    std::fill(estimate_.begin(), estimate_.end(), value_type(0));
    index_t snapshots = 0;
    for (index_t age = held - 1; age >= 0; --age) {  // oldest first
      const index_t b = ((slot - age) % window + window) % window;
      const value_type* s = ring_.data() + std::size_t(b) * nn;
      for (index_t j = 0; j < n; ++j)
        for (index_t i = j; i < n; ++i) estimate_[std::size_t(i + j * n)] += s[i + j * n];
      snapshots += ring_snapshots_[std::size_t(b)];
    }
    const R scale = R(1) / R(snapshots);
    for (value_type& x : estimate_) x *= scale;
    weight_square_sum_ = 1 / double(snapshots);
  }
  ++blocks_;
  discard_block();
}

template <class R>
void Covariance<R>::discard_block() {
  std::fill(block_sum_.begin(), block_sum_.end(), value_type(0));
  block_snapshots_ = 0;
}

template <class R>
void Covariance<R>::covariance(MatrixView<value_type> out) const {
  const index_t n = config_.channels;
  if (blocks_ == 0) throw Error(ErrorCode::invalid_argument, "covariance: no block has been added yet");
  detail::check_matrix("covariance", "output matrix", out, n, n);
  double trace = 0;
  for (index_t i = 0; i < n; ++i) trace += double(estimate_[std::size_t(i + i * n)].real());
  const R delta = R(config_.loading.amount(trace, n));
  for (index_t j = 0; j < n; ++j) {
    out(j, j) = value_type(estimate_[std::size_t(j + j * n)].real() + delta);
    for (index_t i = j + 1; i < n; ++i) {
      const value_type x = estimate_[std::size_t(i + j * n)];
      out(i, j) = x;
      out(j, i) = std::conj(x);
    }
  }
}

template <class R>
void Covariance<R>::reset() {
  discard_block();
  std::fill(estimate_.begin(), estimate_.end(), value_type(0));
  std::fill(ring_.begin(), ring_.end(), value_type(0));
  std::fill(ring_snapshots_.begin(), ring_snapshots_.end(), 0);
  blocks_ = 0;
  weight_square_sum_ = 0;
}

template class Covariance<float>;
template class Covariance<double>;

}  // namespace eigstream
