// A streaming pipeline in about twenty lines: 4 channels of samples from memory are formed into
// blocks of 256 samples, pass a stage, and a sink sums their energy. Exits 0 when the sum is right.
#include <eigstream/streaming/streaming.hpp>

#include <cstdio>
#include <memory>
#include <vector>

namespace es = eigstream::streaming;

int main() {
  const std::size_t channels = 4, count = 10000;
  std::vector<es::sample_t> samples(channels * count, {0.5f, -0.5f});
  es::Pipeline pipeline;  // PipelineOptions{1.0} would print a status line every second
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(samples.data(), count, channels), es::ReaderSourceOptions{256});
  auto& stage = pipeline.add<es::PassThrough<es::Block>>("stage");
  double energy = 0;
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block& block) {
    for (std::size_t i = 0; i < block.samples * block.channels(); ++i) energy += std::norm(block.data()[i]);
  });
  pipeline.connect(source, stage, {16, es::FullPolicy::block});
  pipeline.connect(stage, sink);
  pipeline.start();
  pipeline.wait();  // the source ends; everything in flight is processed first
  for (const es::StageStats& s : pipeline.stats())
    std::printf("%-6s %llu blocks, latency p99 %.1f us\n", s.name.c_str(), (unsigned long long)s.items,
                s.latency_p99_seconds * 1e6);
  std::printf("energy %g (expected %g)\n", energy, 0.5 * channels * count);
  return energy == 0.5 * channels * count ? 0 : 1;
}
