// DecomposeStage: the EVD of each covariance (or the SVD of each block's samples, which gives the
// EVD of the block's own covariance), warm-started by default from the eigenvectors of the last good
// decomposition, and DecompositionItem, what it emits.
//  - CPU (evd() of lib/): one covariance at a time, each warm-started from the one before.
//  - GPU (CUDA builds with a device; Options::backend automatic or cuda), by one of two solvers
//    (GpuSolver::automatic, the default: persistent for covariance_evd, batched for block_svd):
//    - batched: `group` covariances in one launch of the batched kernel, all warm-started
//      from the last good decomposition of the group before (the items wait until their group is
//      full or the input ends, then leave in order; a block of another length than its group's, with
//      block_svd, starts a group of its own);
//    - persistent (covariance_evd only): each covariance goes to the persistent solver as it
//      arrives, warm-started from the last good decomposition collected so far, up to `group` held
//      (skipped items included); items leave in order, those solved by then each time a covariance
//      arrives (the last ones when the input ends). The solver holds one block on each of up to
//      `group` SMs, and parks when the stream pauses.
// Both re-orthonormalise every warm-started result (the CPU its warm start, the GPU kernel its output),
// so the eigenvectors do not drift from orthonormality over a long stream. A skipped input, or a
// covariance the solver rejects or does not converge on, is passed on flagged item_skipped (counted
// as malformed) and never becomes the warm start.
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
#include <deque>
#include <memory>
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
  std::size_t subband = 0;  // the covariance's
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

// Which GPU solver DecomposeStage uses (see the top of this file). automatic: persistent for
// covariance_evd (on an H100 in pipebench, the same rate as batched at half the latency), batched for
// block_svd (the persistent solver does EVDs only).
enum class GpuSolver { automatic, batched, persistent };

// What DecomposeStage decomposes.
enum class DecomposeMethod {
  covariance_evd,  // the EVD of the covariance estimate
  block_svd,       // the SVD of the block's samples X = U S W^H (channels x L snapshots; the covariance
                   // stage must keep_samples): eigenvectors U and eigenvalues s_i^2 / L, the EVD of
                   // the block's own covariance X X^H / L without forming it, which keeps the small
                   // eigenvalues accurate. A block of fewer snapshots than channels is skipped
                   // (flagged, counted as malformed): its SVD does not give every eigenvector.
};

struct DecomposeStageConfig {
  std::size_t channels = 0;
  std::size_t subbands = 1;  // CovarianceStageConfig::subbands: a warm start is kept per subband
  DecomposeMethod method = DecomposeMethod::covariance_evd;
  bool warm_start = true;  // from the previous good decomposition
  Options options;         // the solver's (sort is always descending); backend: automatic (the GPU
                           // when the build has CUDA and a device is present), cpu or cuda
  GpuSolver gpu_solver = GpuSolver::automatic;
  std::size_t group = 32;  // GPU: covariances per launch (batched) or in flight (persistent)
  std::size_t block_samples = 0;  // the largest block whose samples are passed on (KltStage) or,
                                  // with block_svd, decomposed (on the GPU at most cuda::max_svd_rows())
  std::size_t pool_items = 0;  // 0: StageContext::items_in_flight()
};

class GpuEvdGroup;
class PersistentEvdStream;

class DecomposeStage : public Transform<CovarianceItem, DecompositionItem> {
 public:
  DecomposeStage(std::string name, DecomposeStageConfig config);
  ~DecomposeStage() override;

  // Where the decompositions run, decided when the pipeline starts (configure); Backend::cpu before.
  Backend backend() const noexcept { return backend_; }
  // The GPU solver in use, decided with the backend (batched or persistent); automatic on the CPU.
  GpuSolver gpu_solver() const noexcept { return gpu_solver_; }

 protected:
  void configure(StageContext& context) override;
  void process(Handle<CovarianceItem> covariance) override;
  void flush() override;

 private:
  Handle<DecompositionItem> item_for(const CovarianceItem& covariance);
  void solve_on_cpu(const CovarianceItem& covariance, DecompositionItem& item);
  bool usable(const CovarianceItem& covariance);  // false: flagged skipped (a block_svd block too short)
  void solve_group();  // GPU: the pending items, then emits them in order
  // CPU and persistent: a good result becomes its subband's warm start, a failed one is flagged
  // skipped and counted.
  void settle_result(DecompositionItem& item);
  std::complex<float>* subband_warm_start(std::size_t subband) {
    return warm_.data() + subband * config_.channels * config_.channels;
  }
  // Persistent: emits the pending items from the front that are finished; with `wait`, at least one.
  void emit_solved(bool wait);

  DecomposeStageConfig config_;
  Backend backend_ = Backend::cpu;
  GpuSolver gpu_solver_ = GpuSolver::automatic;
  Pool<DecompositionItem>* pool_ = nullptr;
  std::vector<std::complex<float>> warm_;  // CPU and persistent: the last good eigenvectors of each subband
  std::vector<char> have_warm_;            // per subband
  std::unique_ptr<GpuEvdGroup> gpu_;
  std::unique_ptr<PersistentEvdStream> persistent_;
  std::vector<Handle<DecompositionItem>> pending_;  // GPU: the group being gathered
  std::vector<std::size_t> pending_slots_;          // its slots in gpu_, or kNoSlot for skipped items
  struct InFlight {
    Handle<DecompositionItem> item;
    bool submitted;  // false: skipped, passed on as it is
  };
  std::deque<InFlight> in_flight_;  // persistent: in order of arrival
  std::size_t pending_snapshots_ = 0;               // block_svd: the group's block length
  std::vector<std::size_t> last_good_;              // GPU: per subband, the group's last good slot
  std::vector<float> singular_values_;              // CPU block_svd
};

}  // namespace eigstream::streaming
