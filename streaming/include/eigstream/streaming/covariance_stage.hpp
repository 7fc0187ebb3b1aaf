// CovarianceStage: turns blocks into covariance estimates (Covariance<float> of lib/, exponential
// forgetting or a sliding window, optional diagonal loading), and CovarianceItem, what it emits.
// With backend cuda the estimate lives on the GPU and cuBLAS folds each block in (GpuCovariance);
// the items are the same, to float rounding. The stage queues a block's work on the GPU before it
// waits for the oldest block in flight and emits that one's items, so gpu_blocks_in_flight - 1
// blocks stay queued (each held until its work is done): the CPU's checks and hand-offs overlap the
// GPU's work, and the GPU does not wait for the CPU between blocks.
// A block holding a NaN or infinite sample is counted as malformed and leaves the estimate as it
// was; it is passed on as an item flagged item_skipped with no matrix, so the stages downstream see
// every block in order.
//
// Subbands: with `subbands` S > 1 each snapshot of the input holds S subbands of N channels, subband
// by subband (sample s N + c is channel c of subband s; blocks of S N channels, as a channeliser
// upstream would write them), and the stage keeps S estimates of N x N, one per subband, and emits S
// items per block, subband 0 to S - 1 (item.subband), all with the block's stamp. On the GPU the S
// subbands' products go in the same cuBLAS calls.
#pragma once

#include "eigstream/covariance.hpp"
#include "eigstream/options.hpp"
#include "eigstream/streaming/block.hpp"
#include "eigstream/streaming/stage.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eigstream::streaming {

// Bits of the processing stages' item flags, above the block's BlockFlag bits, which they keep.
enum ItemFlag : std::uint32_t {
  item_skipped = 1u << 8,  // the input was invalid (non-finite samples, a failed decomposition):
                           // this item carries no result
};

struct CovarianceItem {
  CovarianceItem(std::size_t channels, std::size_t samples_capacity)
      : channels(channels), matrix(channels * channels), samples(channels * samples_capacity) {}
  std::size_t bytes() const noexcept { return matrix.size() * sizeof(std::complex<float>); }
  bool skipped() const noexcept { return (stamp.flags & item_skipped) != 0; }
  // The channels x channels covariance, column-major, both triangles.
  MatrixView<const std::complex<float>> covariance() const {
    return {matrix.data(), index_t(channels), index_t(channels), index_t(channels)};
  }
  // The block's samples (of this subband) when the stage keeps them (channels x snapshots), else empty.
  MatrixView<const sample_t> block() const {
    return {snapshots > 0 ? samples.data() : nullptr, index_t(channels), index_t(snapshots), index_t(channels)};
  }

  Stamp stamp;                      // the block's, flags: its BlockFlag bits, ItemFlag bits
  std::size_t channels;             // of one subband
  std::size_t subband = 0;          // which of the block's subbands (CovarianceStageConfig::subbands)
  std::uint64_t first_sample = 0;   // the block's samples in the stream: [first_sample, end_sample)
  std::uint64_t end_sample = 0;
  std::uint64_t blocks = 0;         // blocks in the estimate since the start
  double effective_snapshots = 0;   // Covariance::effective_snapshots() (what MDL needs)
  std::vector<std::complex<float>> matrix;
  std::size_t snapshots = 0;        // samples kept (CovarianceStageConfig::keep_samples)
  std::vector<sample_t> samples;
};

struct CovarianceStageConfig {
  CovarianceConfig covariance;    // channels (of one subband), mode, lambda or window, loading
  std::size_t subbands = 1;       // S: blocks hold S x covariance.channels channels, subband by subband
  std::size_t block_samples = 0;  // the largest block, when keep_samples
  std::size_t hop = 1;            // emit an estimate every hop blocks (skipped blocks always pass)
  bool keep_samples = false;      // copy each block's samples into its item (for KltStage)
  Backend backend = Backend::cpu;  // cpu; cuda; automatic: cuda when the build has CUDA and a
                                   // device is present
  std::size_t pool_items = 0;     // items the stages downstream may hold (0: StageContext::items_in_flight());
                                  // the stage allocates gpu_blocks_in_flight x subbands more for its own
  std::size_t gpu_blocks_in_flight = 8;  // GPU: blocks queued at once, each with a device buffer of
                                         // one block (at least 1; 1 waits for each block's work
                                         // before taking the next)
};

class GpuCovariance;

class CovarianceStage : public Transform<Block, CovarianceItem> {
 public:
  CovarianceStage(std::string name, CovarianceStageConfig config);
  ~CovarianceStage() override;

  // Where the estimate is kept, decided when the pipeline starts (configure); Backend::cpu before.
  Backend backend() const noexcept { return backend_; }

 protected:
  void configure(StageContext& context) override;
  void process(Handle<Block> block) override;
  void flush() override;

 private:
  // The GPU path holds the blocks in flight, the one it takes included (see process). (Asked before
  // configure(): an automatic backend counts as the GPU.)
  std::size_t held_items() const override {
    return config_.backend == Backend::cpu ? 1 : config_.gpu_blocks_in_flight;
  }
  // The block's items, one per subband, their bookkeeping from the estimates as they are now;
  // flagged skipped when not valid.
  void items_for(const Block& block, bool valid, std::vector<Handle<CovarianceItem>>& items);
  void keep_samples(const Block& block, CovarianceItem& item) const;  // when config_.keep_samples
  void finish_oldest();  // GPU: waits for the oldest block in flight, emits its items

  CovarianceStageConfig config_;
  std::size_t channels_;              // of one subband
  std::vector<Covariance<float>> estimates_;  // the CPU's, one per subband
  Backend backend_ = Backend::cpu;
  std::unique_ptr<GpuCovariance> gpu_;
  struct InFlight {            // GPU: a block whose update (and read) is queued
    Handle<Block> block;       // held until its request is complete (its copy to the GPU with it)
    std::vector<Handle<CovarianceItem>> items;  // when it emits: bookkeeping filled, matrices once read
    std::size_t slot = 0;      // its read slot (GpuCovariance::request)
    bool gpu_work = false, read = false;
  };
  std::vector<Handle<CovarianceItem>> items_;  // CPU: the block's
  // GPU: the blocks in flight, a ring of gpu_blocks_in_flight; block number b (counted from 0 as
  // queued) at b % gpu_blocks_in_flight, its GpuCovariance request slot the same.
  std::vector<InFlight> in_flight_;
  std::uint64_t queued_ = 0, finished_ = 0;
  Pool<CovarianceItem>* pool_ = nullptr;
  std::uint64_t since_emitted_ = 0;
};

}  // namespace eigstream::streaming
