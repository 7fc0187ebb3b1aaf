// The stages' GPU paths against their CPU paths on the same streams: the covariance kept by cuBLAS
// (exponential and sliding window, subbands: entries, effective snapshots, loading, a NaN block), and
// the decompose stage's groups per launch of the batched EVD kernel or of the SVD kernel, and its
// covariances through the persistent solver (eigenvalues and principal eigenvectors, skipped NaN
// blocks, a partial last group, orthonormality over 100000 warm-started updates, subbands), and the
// pipeline's GPU busy time. Label gpu.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <limits>
#include <utility>
#include <vector>

#include "eigstream/accuracy.hpp"
#include "eigstream/simulation.hpp"
#include "eigstream/streaming/streaming.hpp"

namespace es = eigstream::streaming;
using eigstream::index_t;
using eigstream::sample_t;
using cfloat = std::complex<float>;

namespace {

std::vector<sample_t> array_samples(std::size_t channels, std::size_t snapshots, std::uint64_t seed) {
  eigstream::ArraySignalConfig config;
  config.geometry = eigstream::ArrayGeometry::uniform_linear(index_t(channels));
  config.sources = {{-20, 10}, {35, 5}};
  config.seed = seed;
  std::vector<sample_t> samples(channels * snapshots);
  eigstream::ArraySignal(config).generate({samples.data(), index_t(channels), index_t(snapshots), index_t(channels)});
  return samples;
}

struct Result {
  std::uint64_t sequence;
  bool skipped, warm_started;
  int sweeps;
  std::vector<float> values;
  std::vector<cfloat> vectors;
};

const char* name(es::GpuSolver solver) { return solver == es::GpuSolver::persistent ? "persistent" : "batched"; }

// source -> covariance (exponential, lambda 0.9) -> decompose (the backend asked for) -> results.
std::vector<Result> decompose(const std::vector<sample_t>& samples, std::size_t channels, std::size_t block,
                              eigstream::Backend backend, std::size_t group, eigstream::Backend* used = nullptr,
                              es::DecomposeMethod method = es::DecomposeMethod::covariance_evd,
                              es::GpuSolver solver = es::GpuSolver::automatic, es::GpuSolver* resolved = nullptr) {
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(samples.data(), samples.size() / channels, channels),
      es::ReaderSourceOptions{block});
  es::CovarianceStageConfig cc;
  cc.covariance.channels = index_t(channels);
  cc.covariance.lambda = 0.9;
  es::DecomposeStageConfig dc;
  dc.channels = channels;
  dc.options.backend = backend;
  dc.group = group;
  dc.method = method;
  dc.gpu_solver = solver;
  if (method == es::DecomposeMethod::block_svd) {
    cc.keep_samples = true;
    cc.block_samples = dc.block_samples = block;
  }
  auto& covariance = pipeline.add<es::CovarianceStage>("covariance", cc);
  auto& stage = pipeline.add<es::DecomposeStage>("decompose", dc);
  std::vector<Result> out;
  auto& sink = pipeline.add<es::CallbackSink<es::DecompositionItem>>("sink", [&](const es::DecompositionItem& item) {
    out.push_back({item.stamp.sequence, item.skipped(), item.warm_started, item.info.sweeps, item.values, item.vectors});
  });
  pipeline.connect(source, covariance);
  pipeline.connect(covariance, stage);
  pipeline.connect(stage, sink);
  pipeline.start();
  pipeline.wait();
  if (used) *used = stage.backend();
  if (resolved) *resolved = stage.gpu_solver();
  return out;
}

double orthogonality(const std::vector<cfloat>& v, std::size_t n) {  // ||V^H V - I||_F
  return eigstream::orthogonality<cfloat>({v.data(), index_t(n), index_t(n), index_t(n)});
}

// A GPU covariance against the CPU's: equal to float rounding (relative to the largest entry), and
// exactly Hermitian (the upper triangle the lower's conjugate transpose, the diagonal real).
void check_covariance(const std::vector<cfloat>& gpu, const std::vector<cfloat>& cpu, std::size_t n) {
  float scale = 0;
  for (const cfloat& x : cpu) scale = std::max(scale, std::abs(x));
  std::size_t far = 0, not_hermitian = 0;
  for (std::size_t k = 0; k < n * n; ++k) far += !(std::abs(gpu[k] - cpu[k]) <= 1e-5f * scale);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = j; i < n; ++i)
      not_hermitian += i == j ? gpu[i + i * n].imag() != 0.0f : gpu[j + i * n] != std::conj(gpu[i + j * n]);
  CHECK(far == 0);
  CHECK(not_hermitian == 0);
}

// |v_i^H v'_i| for column i of two eigenvector matrices.
double alignment(const std::vector<cfloat>& a, const std::vector<cfloat>& b, std::size_t n, std::size_t i) {
  std::complex<double> dot = 0;
  for (std::size_t k = 0; k < n; ++k) dot += std::conj(std::complex<double>(a[k + i * n])) * std::complex<double>(b[k + i * n]);
  return std::abs(dot);
}

void check_agree(const std::vector<Result>& cpu, const std::vector<Result>& gpu, std::size_t n) {
  REQUIRE(cpu.size() == gpu.size());
  const double eps = std::numeric_limits<float>::epsilon();
  for (std::size_t b = 0; b < cpu.size(); ++b) {
    INFO("block " << b);
    REQUIRE(cpu[b].sequence == gpu[b].sequence);
    REQUIRE(cpu[b].skipped == gpu[b].skipped);
    if (cpu[b].skipped) continue;
    const double scale = cpu[b].values[0];
    for (std::size_t i = 0; i < n; ++i) CHECK(std::abs(cpu[b].values[i] - gpu[b].values[i]) <= 4 * n * eps * scale);
    // The two sources' eigenvectors are well separated from the rest: the same up to a phase.
    for (std::size_t i = 0; i < 2; ++i) CHECK(alignment(cpu[b].vectors, gpu[b].vectors, n, i) >= 1 - 1e-4);
    CHECK(orthogonality(gpu[b].vectors, n) <= 4 * n * eps);
  }
}

}  // namespace

TEST_CASE("gpu stages: GPU and CPU decompositions of one stream agree, the last partial group included",
          "[gpu][stages]") {
  const std::size_t n = 8, block = 64, blocks = 300, group = 16;  // 300 = 18 groups of 16 + 12
  const es::GpuSolver solver = GENERATE(es::GpuSolver::batched, es::GpuSolver::persistent);
  INFO(name(solver));
  const auto samples = array_samples(n, block * blocks, 3);
  eigstream::Backend used = eigstream::Backend::cpu;
  const auto cpu = decompose(samples, n, block, eigstream::Backend::cpu, group);
  const auto gpu = decompose(samples, n, block, eigstream::Backend::cuda, group, &used,
                             es::DecomposeMethod::covariance_evd, solver);
  CHECK(used == eigstream::Backend::cuda);
  REQUIRE(gpu.size() == blocks);
  check_agree(cpu, gpu, n);
  // Batched: the first group starts cold, every later one from the group before. Persistent: items
  // start cold until the first result is back, at most a group of them.
  std::size_t cold_items = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    INFO("block " << b);
    if (solver == es::GpuSolver::batched) CHECK(gpu[b].warm_started == (b >= group));
    if (b > 0) CHECK(gpu[b].warm_started >= gpu[b - 1].warm_started);  // warm once, warm from then on
    cold_items += !gpu[b].warm_started;
  }
  CHECK(cold_items >= 1);
  CHECK(cold_items <= group);
  double cold = 0, warm = 0;
  for (std::size_t b = 0; b < blocks; ++b) (gpu[b].warm_started ? warm : cold) += gpu[b].sweeps;
  CHECK(warm / double(blocks - cold_items) < cold / double(cold_items));
  // auto picks the GPU when there is one, and the persistent solver for covariances.
  es::GpuSolver resolved = es::GpuSolver::automatic;
  decompose(samples, n, block, eigstream::Backend::automatic, group, &used, es::DecomposeMethod::covariance_evd,
            es::GpuSolver::automatic, &resolved);
  CHECK(used == eigstream::Backend::cuda);
  CHECK(resolved == es::GpuSolver::persistent);
}

// block_svd on the GPU: groups of blocks per launch of the SVD kernel; the last block, shorter but not
// shorter than the channels, makes a group of its own.
TEST_CASE("gpu stages: GPU and CPU SVDs of each block agree, a shorter last block included", "[gpu][stages]") {
  const std::size_t n = 16, block = 256, blocks = 40, group = 16;
  auto samples = array_samples(n, block * blocks + 50, 9);  // 40 blocks of 256, one of 50
  samples[(7 * block + 1) * n + 4] = sample_t(std::numeric_limits<float>::quiet_NaN(), 0);  // block 7
  eigstream::Backend used = eigstream::Backend::cpu;
  const auto cpu = decompose(samples, n, block, eigstream::Backend::cpu, group, nullptr, es::DecomposeMethod::block_svd);
  es::GpuSolver resolved = es::GpuSolver::automatic;
  const auto gpu = decompose(samples, n, block, eigstream::Backend::cuda, group, &used, es::DecomposeMethod::block_svd,
                             es::GpuSolver::automatic, &resolved);
  CHECK(used == eigstream::Backend::cuda);
  CHECK(resolved == es::GpuSolver::batched);  // automatic: the persistent solver does EVDs only
  CHECK_THROWS_WITH(decompose(samples, n, block, eigstream::Backend::cuda, group, nullptr, es::DecomposeMethod::block_svd,
                              es::GpuSolver::persistent),
                    Catch::Contains("decompose stage 'decompose'") && Catch::Contains("block_svd"));
  REQUIRE(gpu.size() == blocks + 1);
  CHECK(gpu[7].skipped);
  CHECK_FALSE(gpu[blocks].skipped);
  check_agree(cpu, gpu, n);
}

TEST_CASE("gpu stages: a block with a NaN sample is skipped and never becomes the warm start", "[gpu][stages]") {
  const std::size_t n = 8, block = 64, blocks = 100, group = 8;
  const es::GpuSolver solver = GENERATE(es::GpuSolver::batched, es::GpuSolver::persistent);
  INFO(name(solver));
  auto samples = array_samples(n, block * blocks, 4);
  samples[(40 * block + 5) * n + 3] = sample_t(std::numeric_limits<float>::quiet_NaN(), 0);  // block 40
  const auto cpu = decompose(samples, n, block, eigstream::Backend::cpu, group);
  const auto gpu = decompose(samples, n, block, eigstream::Backend::cuda, group, nullptr,
                             es::DecomposeMethod::covariance_evd, solver);
  REQUIRE(gpu.size() == blocks);
  CHECK(gpu[40].skipped);
  check_agree(cpu, gpu, n);
}

// The chain of warm starts (each group from the last good result of the one before) keeps the
// eigenvectors orthonormal, both for the EVD of the covariance and for the block SVD: the kernels
// apply one Newton-Schulz step to a warm-started result.
TEST_CASE("gpu stages: eigenvectors stay orthonormal over 100000 warm-started updates in float", "[gpu][stages]") {
  const int path = GENERATE(0, 1, 2);  // covariance EVD batched and persistent, block SVD batched
  const es::DecomposeMethod method = path == 2 ? es::DecomposeMethod::block_svd : es::DecomposeMethod::covariance_evd;
  const es::GpuSolver solver = path == 1 ? es::GpuSolver::persistent : es::GpuSolver::batched;
  INFO((method == es::DecomposeMethod::block_svd ? "block SVD, " : "covariance EVD, ") << name(solver));
  const std::size_t n = 4, block = 4, blocks = 100000, group = 32;
  const auto samples = array_samples(n, block * blocks, 5);
  const auto gpu = decompose(samples, n, block, eigstream::Backend::cuda, group, nullptr, method, solver);
  REQUIRE(gpu.size() == blocks);
  double worst = 0, worst_last = 0;
  std::size_t warm = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    REQUIRE_FALSE(gpu[b].skipped);
    const double e = orthogonality(gpu[b].vectors, n);
    worst = std::max(worst, e);
    if (b >= blocks - 1000) worst_last = std::max(worst_last, e);
    warm += gpu[b].warm_started;
  }
  INFO("worst ||V^H V - I||_F " << worst << ", over the last 1000 " << worst_last);
  if (solver == es::GpuSolver::batched)
    CHECK(warm == blocks - group);
  else
    CHECK(warm >= blocks - group);  // cold until the first result is back
  const double bound = 4 * n * std::numeric_limits<float>::epsilon();
  CHECK(worst <= bound);
  CHECK(worst_last <= bound);
}

// The source add_source(pipeline) adds -> a covariance stage of config cc -> the items; the backend
// the stage used into *used.
template <class AddSource>
std::vector<es::CovarianceItem> run_covariance_stage(AddSource&& add_source, const es::CovarianceStageConfig& cc,
                                                     eigstream::Backend* used) {
  es::Pipeline pipeline;
  auto& source = add_source(pipeline);
  auto& stage = pipeline.add<es::CovarianceStage>("covariance", cc);
  std::vector<es::CovarianceItem> out;
  auto& sink = pipeline.add<es::CallbackSink<es::CovarianceItem>>("sink", [&](const es::CovarianceItem& item) { out.push_back(item); });
  pipeline.connect(source, stage);
  pipeline.connect(stage, sink);
  pipeline.start();
  pipeline.wait();
  *used = stage.backend();
  return out;
}

// source -> covariance (the backend asked for) -> the items.
std::vector<es::CovarianceItem> covariances(const std::vector<sample_t>& samples, std::size_t channels, std::size_t block,
                                            eigstream::Backend backend, eigstream::Backend* used, std::size_t hop = 1,
                                            eigstream::index_t window = 0,
                                            std::size_t in_flight = es::CovarianceStageConfig{}.gpu_blocks_in_flight) {
  es::CovarianceStageConfig cc;
  cc.covariance.channels = index_t(channels);
  cc.covariance.lambda = 0.95;
  cc.covariance.loading = eigstream::DiagonalLoading::relative(0.01);
  cc.backend = backend;
  cc.hop = hop;
  cc.gpu_blocks_in_flight = in_flight;
  if (window > 0) {
    cc.covariance.mode = eigstream::CovarianceConfig::Mode::sliding_window;
    cc.covariance.window = window;
  }
  return run_covariance_stage(
      [&](es::Pipeline& pipeline) -> auto& {
        return pipeline.add<es::ReaderSource>(
            "source", std::make_unique<es::MemoryReader>(samples.data(), samples.size() / channels, channels),
            es::ReaderSourceOptions{block});
      },
      cc, used);
}

// Blocks of 300 snapshots: three chunks of the GPU's product, the last padded with zeros; the last
// block, of 70, one chunk over the padding of the longer blocks before. From one block in flight on
// the GPU at a time to more than the default.
TEST_CASE("gpu stages: the cuBLAS covariance equals the CPU's, loading, weights and a NaN block included", "[gpu][stages]") {
  const std::size_t n = 16, block = 300, blocks = 200;
  const std::size_t in_flight = GENERATE(std::size_t(1), std::size_t(2), es::CovarianceStageConfig{}.gpu_blocks_in_flight,
                                         std::size_t(9));
  INFO(in_flight << " blocks in flight");
  auto samples = array_samples(n, block * (blocks - 1) + 70, 6);
  samples[(70 * block + 9) * n + 2] = sample_t(0, std::numeric_limits<float>::infinity());  // block 70
  eigstream::Backend used = eigstream::Backend::cpu;
  const auto cpu = covariances(samples, n, block, eigstream::Backend::cpu, &used);
  CHECK(used == eigstream::Backend::cpu);
  const auto gpu = covariances(samples, n, block, eigstream::Backend::cuda, &used, 1, 0, in_flight);
  CHECK(used == eigstream::Backend::cuda);
  REQUIRE(cpu.size() == blocks);
  REQUIRE(gpu.size() == blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    INFO("block " << b);
    REQUIRE(gpu[b].skipped() == (b == 70));
    REQUIRE(cpu[b].skipped() == gpu[b].skipped());
    CHECK(gpu[b].blocks == cpu[b].blocks);
    CHECK(gpu[b].effective_snapshots == Approx(cpu[b].effective_snapshots).epsilon(1e-12));
    if (gpu[b].skipped()) continue;
    check_covariance(gpu[b].matrix, cpu[b].matrix, n);
  }
}

// Emits consecutive blocks of the given lengths from samples (channels interleaved).
class SizedBlockSource : public es::Source<es::Block> {
 public:
  SizedBlockSource(const std::vector<sample_t>& samples, std::size_t channels, std::vector<std::size_t> sizes)
      : Source("source"), samples_(samples), channels_(channels), sizes_(std::move(sizes)) {}

 protected:
  void configure(es::StageContext& context) override {
    pool_ = &context.make_pool<es::Block>(context.items_in_flight(), channels_,
                                          *std::max_element(sizes_.begin(), sizes_.end()));
  }
  bool process() override {
    es::Handle<es::Block> block = acquire(*pool_);
    const std::size_t length = sizes_[next_];
    std::copy_n(samples_.data() + first_ * channels_, length * channels_, block->data());
    block->samples = length;
    block->first_sample = first_;
    block->lost_before = 0;
    block->stamp.flags = 0;
    first_ += length;
    emit(std::move(block));
    return ++next_ < sizes_.size();
  }

 private:
  const std::vector<sample_t>& samples_;
  std::size_t channels_;
  std::vector<std::size_t> sizes_;
  es::Pool<es::Block>* pool_ = nullptr;
  std::size_t next_ = 0, first_ = 0;
};

// Blocks longer than any before arrive while blocks are in flight (the GPU path reallocates its
// buffers and drops its graphs), and the length changes both ways (new chunk layouts, new graphs).
TEST_CASE("gpu stages: the cuBLAS covariance equals the CPU's as the block length grows and shrinks in flight",
          "[gpu][stages]") {
  const std::size_t n = 16;
  std::vector<std::size_t> sizes;
  for (const std::size_t length : {100, 300, 200, 300, 700, 128})
    for (int k = 0; k < 20; ++k) sizes.push_back(length);
  std::size_t total = 0;
  for (const std::size_t length : sizes) total += length;
  const auto samples = array_samples(n, total, 14);
  const auto run = [&](eigstream::Backend backend) {
    es::CovarianceStageConfig cc;
    cc.covariance.channels = index_t(n);
    cc.covariance.lambda = 0.9;
    cc.backend = backend;
    eigstream::Backend used = eigstream::Backend::automatic;
    auto out = run_covariance_stage(
        [&](es::Pipeline& pipeline) -> auto& { return pipeline.add<SizedBlockSource>(samples, n, sizes); }, cc, &used);
    CHECK(used == backend);
    return out;
  };
  const auto cpu = run(eigstream::Backend::cpu);
  const auto gpu = run(eigstream::Backend::cuda);
  REQUIRE(cpu.size() == sizes.size());
  REQUIRE(gpu.size() == cpu.size());
  for (std::size_t b = 0; b < gpu.size(); ++b) {
    INFO("block " << b << ", " << sizes[b] << " snapshots");
    CHECK(gpu[b].end_sample - gpu[b].first_sample == sizes[b]);
    CHECK(gpu[b].effective_snapshots == Approx(cpu[b].effective_snapshots).epsilon(1e-12));
    check_covariance(gpu[b].matrix, cpu[b].matrix, n);
  }
}

// With a hop, blocks are folded in without an estimate being read back: each block's copy to the GPU
// must be complete before the block returns to the source's pool and is refilled.
TEST_CASE("gpu stages: the cuBLAS covariance with a hop of 3 equals the CPU's", "[gpu][stages]") {
  const std::size_t n = 16, block = 100, blocks = 300;
  const auto samples = array_samples(n, block * blocks, 7);
  eigstream::Backend used = eigstream::Backend::cpu;
  const std::size_t in_flight = GENERATE(std::size_t(1), es::CovarianceStageConfig{}.gpu_blocks_in_flight);
  INFO(in_flight << " blocks in flight");
  const auto cpu = covariances(samples, n, block, eigstream::Backend::cpu, &used, 3);
  const auto gpu = covariances(samples, n, block, eigstream::Backend::cuda, &used, 3, 0, in_flight);
  CHECK(used == eigstream::Backend::cuda);
  REQUIRE(cpu.size() == blocks / 3);
  REQUIRE(gpu.size() == cpu.size());
  for (std::size_t b = 0; b < gpu.size(); ++b) {
    INFO("estimate " << b);
    check_covariance(gpu[b].matrix, cpu[b].matrix, n);
  }
}

// A sliding window of 5 blocks: the ring of per-block sums on the GPU, summed by cuBLAS, against the
// CPU's exact re-summation; blocks of two lengths (200: two chunks; the last, 30, padded over the
// longer blocks' data) and a NaN block, which enters neither window.
TEST_CASE("gpu stages: the cuBLAS sliding-window covariance equals the CPU's", "[gpu][stages]") {
  const std::size_t n = 16, block = 200, blocks = 40;
  auto samples = array_samples(n, block * blocks + 30, 10);
  samples[(12 * block + 4) * n + 9] = sample_t(std::numeric_limits<float>::quiet_NaN(), 1);  // block 12
  eigstream::Backend used = eigstream::Backend::cpu;
  const std::size_t in_flight = GENERATE(std::size_t(1), es::CovarianceStageConfig{}.gpu_blocks_in_flight);
  INFO(in_flight << " blocks in flight");
  const auto cpu = covariances(samples, n, block, eigstream::Backend::cpu, &used, 1, 5);
  const auto gpu = covariances(samples, n, block, eigstream::Backend::cuda, &used, 1, 5, in_flight);
  CHECK(used == eigstream::Backend::cuda);
  REQUIRE(cpu.size() == blocks + 1);
  REQUIRE(gpu.size() == cpu.size());
  for (std::size_t b = 0; b < gpu.size(); ++b) {
    INFO("block " << b);
    REQUIRE(gpu[b].skipped() == (b == 12));
    REQUIRE(cpu[b].skipped() == gpu[b].skipped());
    CHECK(gpu[b].blocks == cpu[b].blocks);
    CHECK(gpu[b].effective_snapshots == Approx(cpu[b].effective_snapshots).epsilon(1e-12));
    if (gpu[b].skipped()) continue;
    check_covariance(gpu[b].matrix, cpu[b].matrix, n);
  }
}

// Subbands on the GPU: three subbands of 8 channels in blocks of 24, blocks of 300 snapshots (three
// chunks of the product, per subband) and a last one of 70 (one chunk: the products laid out anew),
// exponential and sliding window: the GPU's items equal the CPU's, subband by subband; and the decompose stage's groups, mixing subbands, warm-start each
// matrix from its own subband and agree with the CPU.
TEST_CASE("gpu stages: subbands: covariances and decompositions equal the CPU's", "[gpu][stages]") {
  const std::size_t subbands = 3, n = 8, block = 300, blocks = 41, group = 16;
  // One wide array, cut in three; 40 blocks of 300 and a last of 70 (one chunk after three).
  const auto samples = array_samples(subbands * n, block * (blocks - 1) + 70, 12);
  for (const eigstream::index_t window : {0, 4}) {
    auto run = [&](eigstream::Backend backend, std::vector<es::CovarianceItem>& covs, std::vector<Result>& decs,
                   es::GpuSolver solver = es::GpuSolver::batched) {
      es::Pipeline pipeline;
      auto& source = pipeline.add<es::ReaderSource>(
          "source", std::make_unique<es::MemoryReader>(samples.data(), samples.size() / (subbands * n), subbands * n),
          es::ReaderSourceOptions{block});
      es::CovarianceStageConfig cc;
      cc.covariance.channels = index_t(n);
      cc.covariance.lambda = 0.9;
      if (window > 0) {
        cc.covariance.mode = eigstream::CovarianceConfig::Mode::sliding_window;
        cc.covariance.window = window;
      }
      cc.subbands = subbands;
      cc.backend = backend;
      auto& covariance = pipeline.add<es::CovarianceStage>("covariance", cc);
      auto& tap = pipeline.add<es::CallbackSink<es::CovarianceItem>>("covariances", [&](const es::CovarianceItem& item) {
        covs.push_back(item);
      });
      pipeline.connect(source, covariance);
      pipeline.connect(covariance, tap);
      pipeline.start();
      pipeline.wait();
      // The decompositions of the same covariances, on the same backend.
      es::DecomposeStageConfig dc;
      dc.channels = n;
      dc.subbands = subbands;
      dc.options.backend = backend;
      dc.group = group;
      dc.gpu_solver = solver;
      decs.clear();
      es::Pipeline second;
      auto& again = second.add<es::ReaderSource>(
          "source", std::make_unique<es::MemoryReader>(samples.data(), samples.size() / (subbands * n), subbands * n),
          es::ReaderSourceOptions{block});
      auto& covariance2 = second.add<es::CovarianceStage>("covariance", cc);
      auto& decompose = second.add<es::DecomposeStage>("decompose", dc);
      auto& sink = second.add<es::CallbackSink<es::DecompositionItem>>("sink", [&](const es::DecompositionItem& item) {
        decs.push_back({item.stamp.sequence, item.skipped(), item.warm_started, item.info.sweeps, item.values, item.vectors});
        CHECK(item.subband == (decs.size() - 1) % subbands);
      });
      second.connect(again, covariance2);
      second.connect(covariance2, decompose);
      second.connect(decompose, sink);
      second.start();
      second.wait();
    };
    INFO("window " << window);
    std::vector<es::CovarianceItem> cpu_covs, gpu_covs;
    std::vector<Result> cpu_decs, gpu_decs;
    run(eigstream::Backend::cpu, cpu_covs, cpu_decs);
    run(eigstream::Backend::cuda, gpu_covs, gpu_decs);
    REQUIRE(cpu_covs.size() == subbands * blocks);
    REQUIRE(gpu_covs.size() == cpu_covs.size());
    for (std::size_t i = 0; i < gpu_covs.size(); ++i) {
      INFO("item " << i);
      REQUIRE(gpu_covs[i].subband == i % subbands);
      REQUIRE(gpu_covs[i].stamp.sequence == i / subbands);
      CHECK(gpu_covs[i].effective_snapshots == Approx(cpu_covs[i].effective_snapshots).epsilon(1e-12));
      check_covariance(gpu_covs[i].matrix, cpu_covs[i].matrix, n);
    }
    check_agree(cpu_decs, gpu_decs, n);
    for (std::size_t i = 0; i < gpu_decs.size(); ++i) CHECK(gpu_decs[i].warm_started == (i >= group));
    // The persistent solver: each subband warm once its first result is back, and from then on.
    std::vector<Result> persistent_decs;
    gpu_covs.clear();
    run(eigstream::Backend::cuda, gpu_covs, persistent_decs, es::GpuSolver::persistent);
    check_agree(cpu_decs, persistent_decs, n);
    for (std::size_t i = subbands; i < persistent_decs.size(); ++i)
      CHECK(persistent_decs[i].warm_started >= persistent_decs[i - subbands].warm_started);
    CHECK(persistent_decs.back().warm_started);
  }
}

// Pipeline::gpu_busy: the stages' GPU work counted once however many streams run at once, so at
// least the busiest single stream's time and at most all of it summed; and within the wall time.
TEST_CASE("gpu stages: the pipeline's GPU busy time lies between one stream's time and all streams' sum",
          "[gpu][stages]") {
  const std::size_t n = 32, block = 512, blocks = 400;
  const auto samples = array_samples(n, block * blocks, 12);
  es::PipelineOptions options;
  options.measure_gpu_busy = true;
  es::Pipeline pipeline(options);
  auto& source = pipeline.add<es::ReaderSource>("source", std::make_unique<es::MemoryReader>(samples.data(), block * blocks, n),
                                                es::ReaderSourceOptions{block});
  es::CovarianceStageConfig cc;
  cc.covariance.channels = index_t(n);
  cc.backend = eigstream::Backend::cuda;
  es::DecomposeStageConfig dc;
  dc.channels = n;
  dc.options.backend = eigstream::Backend::cuda;
  dc.group = 16;
  dc.gpu_solver = es::GpuSolver::batched;
  auto& covariance = pipeline.add<es::CovarianceStage>("covariance", cc);
  auto& decompose = pipeline.add<es::DecomposeStage>("decompose", dc);
  auto& sink = pipeline.add<es::CallbackSink<es::DecompositionItem>>("sink", [](const es::DecompositionItem&) {});
  pipeline.connect(source, covariance);
  pipeline.connect(covariance, decompose);
  pipeline.connect(decompose, sink);
  const auto start = std::chrono::steady_clock::now();
  pipeline.start();
  pipeline.wait();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<es::StageStats> stats = pipeline.stats();
  REQUIRE(stats[3].items == blocks);
  const double decompose_stream = stats[2].kernel_seconds + stats[2].copy_seconds;  // one stream
  const double all_streams = stats[1].kernel_seconds + stats[1].copy_seconds + decompose_stream;
  const es::GpuBusy busy = pipeline.gpu_busy();
  INFO("busy " << busy.seconds << " s, kernels " << busy.kernel_seconds << " s, decompose stream " << decompose_stream
               << " s, all streams " << all_streams << " s, wall " << wall << " s");
  CHECK(decompose_stream > 0);
  CHECK(busy.seconds >= 0.99 * decompose_stream);
  CHECK(busy.seconds <= 1.01 * all_streams);
  CHECK(busy.seconds <= wall);
  CHECK(busy.kernel_seconds > 0);
  CHECK(busy.kernel_seconds <= busy.seconds * (1 + 1e-9));
}

TEST_CASE("gpu stages: without measure_gpu_busy, the pipeline keeps no GPU busy time", "[gpu][stages]") {
  const std::size_t n = 16, block = 256;
  const auto samples = array_samples(n, block * 20, 13);
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>("source", std::make_unique<es::MemoryReader>(samples.data(), block * 20, n),
                                                es::ReaderSourceOptions{block});
  es::CovarianceStageConfig cc;
  cc.covariance.channels = index_t(n);
  cc.backend = eigstream::Backend::cuda;
  auto& covariance = pipeline.add<es::CovarianceStage>("covariance", cc);
  auto& sink = pipeline.add<es::CallbackSink<es::CovarianceItem>>("sink", [](const es::CovarianceItem&) {});
  pipeline.connect(source, covariance);
  pipeline.connect(covariance, sink);
  pipeline.start();
  pipeline.wait();
  CHECK(covariance.backend() == eigstream::Backend::cuda);
  CHECK(pipeline.stats()[1].kernel_seconds > 0);
  CHECK(pipeline.gpu_busy().seconds == 0);
  CHECK(pipeline.gpu_busy().kernel_seconds == 0);
}
