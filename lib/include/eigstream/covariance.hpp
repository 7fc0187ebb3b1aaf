// Covariance estimation of multichannel blocks: R (channels x channels, Hermitian) from blocks of
// snapshots (channels x snapshots, sample_t), with exponential forgetting or an exact sliding window,
// and optional diagonal loading. Sums are kept in precision R (float or double).
//
// A block's contribution is S / L, S = X X^H summed over its L snapshots. Every snapshot is added to
// S in arrival order, so a block delivered in parts (accumulate ... end_block) gives bit for bit what
// the whole block given to update() gives.
//   exponential:    the first block sets R = S / L; each later block R = lambda R + (1 - lambda) S / L.
//   sliding window: R = (sum of S over the last W blocks) / (sum of their L); fewer while the window
//                   fills. The per-block sums live in a ring allocated at construction, and R is
//                   re-summed from the ring, oldest block first, so it equals exactly what a fresh
//                   estimator given only those blocks would hold (no drift from subtraction).
// Loading is applied to the output only, never to the state.
#pragma once

#include <complex>
#include <vector>

#include "eigstream/views.hpp"

namespace eigstream {

// Diagonal loading added to a covariance: R + delta I with
//   relative: delta = value * trace(R) / N   (value 0.01 is 1% of the mean eigenvalue)
//   absolute: delta = value.
struct DiagonalLoading {
  enum class Kind { none, relative, absolute };
  Kind kind = Kind::none;
  double value = 0;

  static DiagonalLoading relative(double value) { return {Kind::relative, value}; }
  static DiagonalLoading absolute(double value) { return {Kind::absolute, value}; }
  // delta for a matrix of this trace and order; throws Error(invalid_argument) for a negative or
  // non-finite value.
  double amount(double trace, index_t n) const;
};

struct CovarianceConfig {
  enum class Mode { exponential, sliding_window };
  index_t channels = 0;
  Mode mode = Mode::exponential;
  double lambda = 0.9;  // exponential: weight of the previous estimate, in [0, 1)
  index_t window = 1;   // sliding window: blocks, >= 1
  DiagonalLoading loading;
};

// Where the first NaN or infinite sample of a block lies: found = false when every sample is finite.
struct NonFiniteSample {
  bool found = false;
  index_t channel = 0;
  index_t snapshot = 0;
};
NonFiniteSample find_non_finite(MatrixView<const sample_t> block);

// Exponential forgetting, step by step (what Covariance does, for estimators kept elsewhere, such as
// on a GPU): the next block enters as R = keep R + take S / L, and the sum of the squared snapshot
// weights (1 / effective snapshots) becomes keep^2 * before + take^2 / L.
struct ForgettingStep {
  double keep;  // 0 for the first block, lambda after
  double take;  // 1 for the first block, 1 - lambda after
  double weight_square_sum(double before, index_t snapshots) const {
    return keep * keep * before + take * take / double(snapshots);
  }
};
inline ForgettingStep forgetting_step(index_t blocks_before, double lambda) {
  return blocks_before == 0 ? ForgettingStep{0, 1} : ForgettingStep{lambda, 1 - lambda};
}

template <class R>
class Covariance {
 public:
  using value_type = std::complex<R>;

  // Throws Error(invalid_argument) for channels < 1, lambda outside [0, 1), window < 1, bad loading.
  explicit Covariance(const CovarianceConfig& config);

  // The whole block (channels x L snapshots, L >= 1): accumulate(block) then end_block(). Throws
  // Error(invalid_input) naming the block (its number counts the blocks folded in since reset, from
  // 0), snapshot and channel of a NaN or infinite sample, and leaves the estimate as it was;
  // Error(invalid_argument) for a wrong channel count. A stage that numbers blocks its own way, or
  // flags and skips bad blocks without exceptions, checks them first with find_non_finite().
  void update(MatrixView<const sample_t> block);

  // A block in parts: adds the part's snapshots to the current block. A part with a non-finite sample
  // throws (as update) before adding anything of it; the parts added before stay in the current block
  // until end_block() or discard_block().
  void accumulate(MatrixView<const sample_t> part);
  // Folds the current block into the estimate. Throws Error(invalid_argument) when it holds no snapshot.
  void end_block();
  // Drops the current block's parts; the estimate is unchanged.
  void discard_block();

  // The loaded estimate, full Hermitian (both triangles, real diagonal), channels x channels.
  // Throws Error(invalid_argument) before the first block or for a wrong output size.
  void covariance(MatrixView<value_type> out) const;

  // The number of equally weighted snapshots the estimate is worth: 1 / sum of the squared weights of
  // its snapshots (a snapshot of block b weighs w_b / L_b, the w_b summing to 1). Sliding window: the
  // snapshots in the window; exponential: L (1 + lambda) / (1 - lambda) in the steady state of
  // blocks of L. What mdl_sources needs as `snapshots`. 0 before the first block.
  double effective_snapshots() const { return weight_square_sum_ > 0 ? 1 / weight_square_sum_ : 0; }

  index_t channels() const { return config_.channels; }
  index_t blocks() const { return blocks_; }                   // blocks folded in since reset
  index_t pending_snapshots() const { return block_snapshots_; }  // in the current block
  const CovarianceConfig& config() const { return config_; }
  void reset();

 private:
  CovarianceConfig config_;
  std::vector<value_type> block_sum_;  // lower triangle of the current block's S
  index_t block_snapshots_ = 0;
  std::vector<value_type> estimate_;   // lower triangle of R (unloaded)
  std::vector<value_type> ring_;       // sliding window: window sums S, lower triangles
  std::vector<index_t> ring_snapshots_;
  index_t blocks_ = 0;
  double weight_square_sum_ = 0;
};

extern template class Covariance<float>;
extern template class Covariance<double>;

}  // namespace eigstream
