// BeamformStage: beamforming and direction finding from each decomposition (Beamformer<float> of
// lib/): the eigen-beamforming weights, MVDR beam powers over an angle grid, and MUSIC directions of
// arrival for K sources, K given or estimated by MDL from the eigenvalues; and BeamformItem, what it
// emits.
//  - CPU: everything per decomposition, as it arrives.
//  - GPU (CUDA builds with a device; backend automatic or cuda): the beam powers and MUSIC spectra
//    over the grid, the bulk of the work, for `group` decompositions per launch
//    (eigstream::cuda::beam_power_batched); the rest (weights, MDL, MUSIC's peaks) stays on the CPU.
//    The items wait until their group is full or the input ends, then leave in order.
#pragma once

#include "eigstream/beamforming.hpp"
#include "eigstream/covariance.hpp"
#include "eigstream/options.hpp"
#include "eigstream/streaming/decompose_stage.hpp"
#include "eigstream/streaming/stage.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eigstream::streaming {

struct BeamformItem {
  BeamformItem(std::size_t elements, std::size_t angles)
      : eigen_weights(elements), mvdr_power(angles), music_spectrum(angles), doa_storage(elements) {}
  std::size_t bytes() const noexcept {
    return eigen_weights.size() * sizeof(std::complex<float>) + (mvdr_power.size() + music_spectrum.size()) * sizeof(float) +
           doas * sizeof(double);
  }
  bool skipped() const noexcept { return (stamp.flags & item_skipped) != 0; }

  Stamp stamp;  // the decomposition's
  std::size_t subband = 0;  // the decomposition's (CovarianceStageConfig::subbands)
  std::uint64_t first_sample = 0;  // the block's samples in the stream: [first_sample, end_sample)
  std::uint64_t end_sample = 0;
  std::vector<std::complex<float>> eigen_weights;  // Beamformer::eigen_weights
  std::vector<float> mvdr_power;                   // over BeamformStageConfig::angles_deg (when mvdr)
  std::vector<float> music_spectrum;               // over the same grid, with `sources` (when music, sources > 0)
  std::size_t sources = 0;                         // K: given, or MDL's estimate
  std::size_t doas = 0;                            // MUSIC's directions found (<= sources)
  std::vector<double> doa_storage;                 // degrees, ascending, the first `doas`
  SolveInfo info;                                  // the decomposition's: sweeps, convergence
};

struct BeamformStageConfig {
  ArrayGeometry geometry = ArrayGeometry::uniform_linear(8);
  std::vector<double> angles_deg = angle_grid(-90, 90, 0.5);  // the scan grid
  std::size_t sources = 0;   // K for MUSIC, < elements; 0: estimated by MDL
  bool music = true;
  bool mvdr = true;
  DiagonalLoading mvdr_loading = DiagonalLoading::relative(1e-3);
  Backend backend = Backend::cpu;  // cpu; cuda; automatic: cuda when the build has CUDA and a device
  std::size_t group = 32;          // GPU: decompositions per launch
  std::size_t pool_items = 0;  // 0: StageContext::items_in_flight()
};

class GpuBeamPower;

class BeamformStage : public Transform<DecompositionItem, BeamformItem> {
 public:
  BeamformStage(std::string name, BeamformStageConfig config);
  ~BeamformStage() override;

  // Where the beam powers are computed, decided when the pipeline starts (configure); Backend::cpu before.
  Backend backend() const noexcept { return backend_; }

 protected:
  void configure(StageContext& context) override;
  void process(Handle<DecompositionItem> decomposition) override;
  void flush() override;

 private:
  // The per-decomposition work before the beam powers: eigen-beamforming weights and K into the
  // item, the beam-power weights into mvdr_weights and music_weights (each N). Returns false, with
  // the item flagged and counted, when the decomposition is one MDL or MVDR cannot use.
  bool prepare(EvdView<float> evd, double effective_snapshots, BeamformItem& item, float* mvdr_weights,
               float* music_weights);
  void finish_group();  // GPU: the pending items' powers and DOAs, then emits them in order

  BeamformStageConfig config_;
  Beamformer<float> beamformer_;
  Backend backend_ = Backend::cpu;
  Pool<BeamformItem>* pool_ = nullptr;
  std::vector<float> mvdr_weights_, music_weights_;  // CPU: one decomposition's
  std::unique_ptr<GpuBeamPower> gpu_;
  std::vector<Handle<BeamformItem>> pending_;  // GPU: the group being gathered
  std::vector<std::size_t> pending_slots_;     // its slots in gpu_, or kNoSlot for skipped items
  std::size_t slots_used_ = 0;
};

}  // namespace eigstream::streaming
