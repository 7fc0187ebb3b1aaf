// BeamformStage: beamforming and direction finding from each decomposition (Beamformer<float> of
// lib/): the eigen-beamforming weights, MVDR beam powers over an angle grid, and MUSIC directions of
// arrival for K sources, K given or estimated by MDL from the eigenvalues; and BeamformItem, what it
// emits.
#pragma once

#include "eigstream/beamforming.hpp"
#include "eigstream/covariance.hpp"
#include "eigstream/streaming/decompose_stage.hpp"
#include "eigstream/streaming/stage.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
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
  std::size_t pool_items = 0;  // 0: StageContext::items_in_flight()
};

class BeamformStage : public Transform<DecompositionItem, BeamformItem> {
 public:
  BeamformStage(std::string name, BeamformStageConfig config);

 protected:
  void configure(StageContext& context) override;
  void process(Handle<DecompositionItem> decomposition) override;

 private:
  BeamformStageConfig config_;
  Beamformer<float> beamformer_;
  Pool<BeamformItem>* pool_ = nullptr;
};

}  // namespace eigstream::streaming
