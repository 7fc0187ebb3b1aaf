// KltStage: the Karhunen-Loeve transform of each block (klt.hpp of lib/) in the basis of its
// decomposition: the number of components by a ComponentRule, the basis V_k and the coefficients
// C = V_k^H X, and KltItem, what it emits. A consumer reconstructs the block as
// klt_reconstruct(item.basis(), item.coefficients(), out). It needs the block's samples in its
// input: CovarianceStageConfig::keep_samples and DecomposeStageConfig::block_samples.
#pragma once

#include "eigstream/klt.hpp"
#include "eigstream/streaming/decompose_stage.hpp"
#include "eigstream/streaming/stage.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eigstream::streaming {

struct KltItem {
  KltItem(std::size_t channels, std::size_t samples_capacity)
      : channels(channels), basis_storage(channels * channels), coefficient_storage(channels * samples_capacity) {}
  std::size_t bytes() const noexcept {
    return (channels * components + components * snapshots) * sizeof(std::complex<float>);
  }
  bool skipped() const noexcept { return (stamp.flags & item_skipped) != 0; }
  MatrixView<const std::complex<float>> basis() const {  // channels x components
    return {basis_storage.data(), index_t(channels), index_t(components), index_t(channels)};
  }
  MatrixView<const std::complex<float>> coefficients() const {  // components x snapshots
    return {coefficient_storage.data(), index_t(components), index_t(snapshots), index_t(components)};
  }

  Stamp stamp;  // the decomposition's
  std::size_t channels;
  std::size_t subband = 0;  // the decomposition's (CovarianceStageConfig::subbands)
  std::size_t components = 0;
  std::size_t snapshots = 0;
  std::uint64_t first_sample = 0;  // the block's samples in the stream: [first_sample, end_sample)
  std::uint64_t end_sample = 0;
  std::vector<std::complex<float>> basis_storage;
  std::vector<std::complex<float>> coefficient_storage;
};

struct KltStageConfig {
  std::size_t channels = 0;
  std::size_t block_samples = 0;  // the largest block
  ComponentRule rule = ComponentRule::energy(0.99);
  std::size_t pool_items = 0;     // 0: StageContext::items_in_flight()
};

class KltStage : public Transform<DecompositionItem, KltItem> {
 public:
  KltStage(std::string name, KltStageConfig config);

 protected:
  void configure(StageContext& context) override;
  void process(Handle<DecompositionItem> decomposition) override;

 private:
  KltStageConfig config_;
  Pool<KltItem>* pool_ = nullptr;
};

}  // namespace eigstream::streaming
