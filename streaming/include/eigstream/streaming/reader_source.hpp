// ReaderSource: the source stage over any SampleReader. It forms blocks of a fixed number of
// samples, however the reader chunks its reads, so the blocks depend only on the samples and the
// gaps. A gap (samples the reader reports lost) ends the block being filled (flagged partial) and
// is recorded in the next block's lost_before and first_sample. At the end of the input the samples
// left over form a last, partial block.
#pragma once

#include "eigstream/streaming/block.hpp"
#include "eigstream/streaming/sample_io.hpp"
#include "eigstream/streaming/stage.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace eigstream::streaming {

struct ReaderSourceOptions {
  std::size_t samples_per_block = 1024;
  std::size_t pool_blocks = 0;  // blocks allocated at start; 0: StageContext::items_in_flight()
};

class ReaderSource : public Source<Block> {
 public:
  ReaderSource(std::string name, std::unique_ptr<SampleReader> reader, ReaderSourceOptions options = {});

 protected:
  void configure(StageContext& context) override;
  bool process() override;
  void cancel() override;
  void add_counters(StageStats& stats) const override;

 private:
  Handle<Block> new_block(std::uint64_t lost_before);

  std::unique_ptr<SampleReader> reader_;
  ReaderSourceOptions options_;
  std::size_t channels_ = 0;
  Pool<Block>* pool_ = nullptr;
  Handle<Block> filling_;
  std::uint64_t next_sample_ = 0;  // stream index of the next sample to arrive
  bool ended_ = false;             // the reader said nothing more will come
};

}  // namespace eigstream::streaming
