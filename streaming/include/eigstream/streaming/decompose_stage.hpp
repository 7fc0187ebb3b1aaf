// DecomposeStage: the EVD (evd() of lib/, on the CPU) of each covariance, warm-started by default
// from the eigenvectors of the previous covariance it decomposed, and DecompositionItem, what it
// emits. The CPU solver re-orthonormalises every warm start it is given, so the eigenvectors do not
// drift from orthonormality over a long stream. A skipped input, or a covariance the solver rejects
// or does not converge on, is passed on flagged item_skipped (counted as malformed) and the warm
// start stays that of the last good decomposition.
//
// The item carries on what the consumers need of the covariance item: the block range, the
// effective snapshot count (MDL) and, when the covariance item kept them, the block's samples
// (KltStage), copied, so every item owns its storage and goes back to its pool on its own.
#pragma once

#include "eigstream/options.hpp"
#include "eigstream/streaming/covariance_stage.hpp"
#include "eigstream/streaming/stage.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eigstream::streaming {

struct DecompositionItem {
  DecompositionItem(std::size_t channels, std::size_t samples_capacity)
      : channels(channels), values(channels), vectors(channels * channels), samples(channels * samples_capacity) {}
  std::size_t bytes() const noexcept {
    return values.size() * sizeof(float) + vectors.size() * sizeof(std::complex<float>);
  }
  bool skipped() const noexcept { return (stamp.flags & item_skipped) != 0; }
  // Eigenvalues descending, eigenvector i in column i (channels x channels, column-major).
  MatrixView<const std::complex<float>> eigenvectors() const {
    return {vectors.data(), index_t(channels), index_t(channels), index_t(channels)};
  }
  // The block's samples (channels x snapshots) when they were kept, else empty.
  MatrixView<const sample_t> block() const {
    return {snapshots > 0 ? samples.data() : nullptr, index_t(channels), index_t(snapshots), index_t(channels)};
  }

  Stamp stamp;  // the covariance's
  std::size_t channels;
  std::vector<float> values;
  std::vector<std::complex<float>> vectors;
  SolveInfo info;           // sweeps, convergence
  bool warm_started = false;
  std::uint64_t first_sample = 0;  // the block's samples in the stream: [first_sample, end_sample)
  std::uint64_t end_sample = 0;
  double effective_snapshots = 0;  // of the covariance
  std::size_t snapshots = 0;       // samples kept
  std::vector<sample_t> samples;
};

struct DecomposeStageConfig {
  std::size_t channels = 0;
  bool warm_start = true;  // from the previous good decomposition
  Options options;         // the solver's; the backend is always the CPU, sort descending
  std::size_t block_samples = 0;  // the largest block whose samples are passed on (KltStage)
  std::size_t pool_items = 0;  // 0: StageContext::items_in_flight()
};

class DecomposeStage : public Transform<CovarianceItem, DecompositionItem> {
 public:
  DecomposeStage(std::string name, DecomposeStageConfig config);

 protected:
  void configure(StageContext& context) override;
  void process(Handle<CovarianceItem> covariance) override;

 private:
  DecomposeStageConfig config_;
  Pool<DecompositionItem>* pool_ = nullptr;
  std::vector<std::complex<float>> warm_;  // the last good eigenvectors
  bool have_warm_ = false;
};

}  // namespace eigstream::streaming
