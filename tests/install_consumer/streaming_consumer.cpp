// A user of the installed streaming runtime: 3 channels x 1000 samples from memory in blocks of 100
// reach a callback sink as 10 blocks holding every sample.
#include <eigstream/streaming/streaming.hpp>

#include <cstdio>
#include <memory>
#include <vector>

namespace es = eigstream::streaming;

int main() {
  std::vector<es::sample_t> samples(3 * 1000, {1.0f, 0.0f});
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>("source", std::make_unique<es::MemoryReader>(samples.data(), 1000, 3),
                                                es::ReaderSourceOptions{100});
  std::size_t blocks = 0, values = 0;
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [&](const es::Block& b) {
    ++blocks;
    values += b.samples * b.channels();
  });
  pipeline.connect(source, sink);
  pipeline.start();
  pipeline.wait();
  const bool ok = blocks == 10 && values == 3000;
  std::printf("streaming: %zu blocks, %zu values: %s\n", blocks, values, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
