// The processing stages through pipelines: covariances and eigenvalues independent of the read
// chunk sizes, warm-started decompositions against cold ones and LAPACK, orthonormality over a long
// warm-started stream, MUSIC/MDL/MVDR on a simulated array, KLT reconstruction, a NaN block
// skipped without touching the estimate or the warm start, and the SVD of each block's samples.
#include <catch2/catch.hpp>

#include "oracle.hpp"

#include "eigstream/covariance.hpp"
#include "eigstream/evd.hpp"
#include "eigstream/klt.hpp"
#include "eigstream/simulation.hpp"
#include "eigstream/streaming/streaming.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace es = eigstream::streaming;
using eigstream::index_t;
using eigstream::sample_t;
using cfloat = std::complex<float>;
using oracle::Matrix;

namespace {

// Samples of an ArraySignal or MixtureSignal, channels interleaved per snapshot.
template <class Signal>
std::vector<sample_t> generate(Signal signal, std::size_t snapshots) {
  const std::size_t channels = std::size_t(signal.channels());
  std::vector<sample_t> samples(channels * snapshots);
  signal.generate({samples.data(), index_t(channels), index_t(snapshots), index_t(channels)});
  return samples;
}

std::vector<sample_t> array_samples(std::size_t snapshots, std::uint64_t seed = 7) {
  eigstream::ArraySignalConfig config;
  config.geometry = eigstream::ArrayGeometry::uniform_linear(8);
  config.sources = {{-20, 10}, {35, 10}};
  config.seed = seed;
  return generate(eigstream::ArraySignal(config), snapshots);
}

es::CovarianceStageConfig exponential(std::size_t channels, double lambda) {
  es::CovarianceStageConfig config;
  config.covariance.channels = index_t(channels);
  config.covariance.mode = eigstream::CovarianceConfig::Mode::exponential;
  config.covariance.lambda = lambda;
  return config;
}

es::CovarianceStageConfig per_block(std::size_t channels) {
  es::CovarianceStageConfig config;
  config.covariance.channels = index_t(channels);
  config.covariance.mode = eigstream::CovarianceConfig::Mode::sliding_window;
  config.covariance.window = 1;
  return config;
}

// Runs source -> covariance stage -> what `add_rest` adds after it, to the end of the samples.
template <class AddRest>
std::vector<es::StageStats> run(const std::vector<sample_t>& samples, std::size_t channels, std::size_t block,
                                const es::MemoryReaderOptions& reader, const es::CovarianceStageConfig& covariance,
                                AddRest add_rest) {
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(samples.data(), samples.size() / channels, channels, reader),
      es::ReaderSourceOptions{block});
  auto& stage = pipeline.add<es::CovarianceStage>("covariance", covariance);
  pipeline.connect(source, stage);
  add_rest(pipeline, stage);
  pipeline.start();
  pipeline.wait();
  return pipeline.stats();
}

struct CovarianceRecord {
  std::uint64_t sequence;
  std::uint32_t flags;
  Matrix<cfloat> r;
};

std::vector<CovarianceRecord> covariances(const std::vector<sample_t>& samples, std::size_t channels, std::size_t block,
                                          const es::MemoryReaderOptions& reader, const es::CovarianceStageConfig& config) {
  std::vector<CovarianceRecord> out;
  run(samples, channels, block, reader, config, [&](es::Pipeline& pipeline, es::CovarianceStage& stage) {
    auto& sink = pipeline.add<es::CallbackSink<es::CovarianceItem>>("sink", [&](const es::CovarianceItem& item) {
      const index_t n = index_t(channels);
      Matrix<cfloat> r(n, n);
      std::copy(item.matrix.begin(), item.matrix.end(), r.data.begin());
      out.push_back({item.stamp.sequence, item.stamp.flags, r});
    });
    pipeline.connect(stage, sink);
  });
  return out;
}

struct DecompositionRecord {
  std::uint64_t sequence;
  std::uint32_t flags;
  std::vector<float> w;
  Matrix<cfloat> v;
  eigstream::SolveInfo info;
  bool warm_started;
};

DecompositionRecord record_of(const es::DecompositionItem& item) {
  const index_t n = index_t(item.channels);
  DecompositionRecord r{item.stamp.sequence, item.stamp.flags, item.values, Matrix<cfloat>(n, n), item.info,
                        item.warm_started};
  std::copy(item.vectors.begin(), item.vectors.end(), r.v.data.begin());
  return r;
}

std::vector<DecompositionRecord> decompositions(const std::vector<sample_t>& samples, std::size_t channels,
                                                std::size_t block, const es::MemoryReaderOptions& reader,
                                                const es::CovarianceStageConfig& covariance, bool warm_start,
                                                std::vector<es::StageStats>* stats = nullptr,
                                                es::DecomposeMethod method = es::DecomposeMethod::covariance_evd) {
  std::vector<DecompositionRecord> out;
  es::DecomposeStageConfig config;
  config.options.backend = eigstream::Backend::cpu;  // these are the CPU path's tests (tests/gpu: the GPU's)
  config.channels = channels;
  config.warm_start = warm_start;
  config.method = method;
  es::CovarianceStageConfig covariance_config = covariance;
  if (method == es::DecomposeMethod::block_svd) {
    config.block_samples = block;
    covariance_config.keep_samples = true;
    covariance_config.block_samples = block;
  }
  auto s = run(samples, channels, block, reader, covariance_config, [&](es::Pipeline& pipeline, es::CovarianceStage& stage) {
    auto& decompose = pipeline.add<es::DecomposeStage>("decompose", config);
    auto& sink = pipeline.add<es::CallbackSink<es::DecompositionItem>>(
        "sink", [&](const es::DecompositionItem& item) { out.push_back(record_of(item)); });
    pipeline.connect(stage, decompose);
    pipeline.connect(decompose, sink);
  });
  if (stats) *stats = s;
  return out;
}

// The covariances of each block of `block` snapshots, by the library directly (the one-shot path).
std::vector<Matrix<cfloat>> direct_covariances(const std::vector<sample_t>& samples, std::size_t channels,
                                               std::size_t block, const eigstream::CovarianceConfig& config,
                                               std::size_t skip_block = std::size_t(-1)) {
  eigstream::Covariance<float> estimate(config);
  std::vector<Matrix<cfloat>> out;
  const std::size_t snapshots = samples.size() / channels;
  for (std::size_t b = 0; b * block < snapshots; ++b) {
    if (b == skip_block) continue;
    const std::size_t count = std::min(block, snapshots - b * block);
    estimate.update({samples.data() + b * block * channels, index_t(channels), index_t(count), index_t(channels)});
    const index_t n = index_t(channels);
      Matrix<cfloat> r(n, n);
    estimate.covariance(r.view());
    out.push_back(r);
  }
  return out;
}

double mean_sweeps(const std::vector<DecompositionRecord>& records) {
  double sum = 0;
  for (const auto& r : records) sum += r.info.sweeps;
  return sum / double(records.size());
}

double orthogonality_error(const Matrix<cfloat>& v) {  // ||V^H V - I||_F in double
  double sum = 0;
  for (index_t i = 0; i < v.cols; ++i)
    for (index_t j = 0; j < v.cols; ++j) {
      std::complex<double> dot = 0;
      for (index_t k = 0; k < v.rows; ++k) dot += std::conj(std::complex<double>(v(k, i))) * std::complex<double>(v(k, j));
      sum += std::norm(dot - (i == j ? 1.0 : 0.0));
    }
  return std::sqrt(sum);
}

}  // namespace

TEST_CASE("stages: covariances and eigenvalues do not depend on the read chunk sizes", "[stages]") {
  const std::size_t channels = 8, block = 200, blocks = 12;
  const auto samples = array_samples(block * blocks + 77);  // and a partial last block
  const auto config = exponential(channels, 0.8);
  const auto expected = direct_covariances(samples, channels, block, config.covariance);
  REQUIRE(expected.size() == blocks + 1);

  std::vector<DecompositionRecord> first;
  for (std::size_t max_chunk : {std::size_t(0), std::size_t(1), std::size_t(37), std::size_t(999)}) {
    CAPTURE(max_chunk);
    es::MemoryReaderOptions reader;
    reader.max_chunk = max_chunk;
    reader.chunk_seed = 3 + max_chunk;
    const auto got = covariances(samples, channels, block, reader, config);
    REQUIRE(got.size() == expected.size());
    for (std::size_t b = 0; b < got.size(); ++b) {
      CHECK(got[b].sequence == b);
      CHECK(got[b].r.data == expected[b].data);  // bit for bit
    }
    const auto decomposed = decompositions(samples, channels, block, reader, config, true);
    REQUIRE(decomposed.size() == expected.size());
    for (std::size_t b = 0; b < decomposed.size(); ++b) {
      CHECK((decomposed[b].flags & es::item_skipped) == 0);
      if (first.empty()) {
        oracle::check_evd(expected[b], decomposed[b].w, &decomposed[b].v, oracle::reference_eigenvalues(expected[b]),
                          eigstream::Sort::descending, "stages chunked");
      } else {
        CHECK(decomposed[b].w == first[b].w);
      }
    }
    if (first.empty()) first = decomposed;
  }
}

TEST_CASE("stages: a warm-started stream equals cold decompositions, in fewer sweeps", "[stages]") {
  const std::size_t channels = 8, block = 100, blocks = 60;
  const auto samples = array_samples(block * blocks, 11);
  const auto config = exponential(channels, 0.95);
  const auto expected = direct_covariances(samples, channels, block, config.covariance);
  const auto warm = decompositions(samples, channels, block, {}, config, true);
  const auto cold = decompositions(samples, channels, block, {}, config, false);
  REQUIRE(warm.size() == blocks);
  REQUIRE(cold.size() == blocks);
  CHECK_FALSE(warm[0].warm_started);
  for (std::size_t b = 0; b < blocks; ++b) {
    CAPTURE(b);
    CHECK(warm[b].warm_started == (b > 0));
    CHECK_FALSE(cold[b].warm_started);
    const auto reference = oracle::reference_eigenvalues(expected[b]);
    oracle::check_evd(expected[b], warm[b].w, &warm[b].v, reference, eigstream::Sort::descending, "stages warm");
    const double scale = std::abs(reference[0]);
    for (std::size_t i = 0; i < channels; ++i)
      CHECK(std::abs(double(warm[b].w[i]) - double(cold[b].w[i])) <= 32 * channels * 1.2e-7 * scale);
  }
  const double warm_sweeps = mean_sweeps(warm), cold_sweeps = mean_sweeps(cold);
  INFO("mean sweeps warm " << warm_sweeps << ", cold " << cold_sweeps);
  CHECK(warm_sweeps < cold_sweeps);
}

TEST_CASE("stages: eigenvectors stay orthonormal over 100000 warm-started updates in float", "[stages]") {
  const std::size_t channels = 4, block = 4, blocks = 100000;
  eigstream::ArraySignalConfig signal;
  signal.geometry = eigstream::ArrayGeometry::uniform_linear(index_t(channels));
  signal.sources = {{-10, 5}, {40, 0}};
  signal.seed = 5;
  const auto samples = generate(eigstream::ArraySignal(signal), block * blocks);

  es::DecomposeStageConfig config;
  config.options.backend = eigstream::Backend::cpu;  // these are the CPU path's tests (tests/gpu: the GPU's)
  config.channels = channels;
  std::size_t count = 0, warm_count = 0;
  double worst = 0, worst_last = 0;
  long sweeps = 0;
  run(samples, channels, block, {}, exponential(channels, 0.9), [&](es::Pipeline& pipeline, es::CovarianceStage& stage) {
    auto& decompose = pipeline.add<es::DecomposeStage>("decompose", config);
    auto& sink = pipeline.add<es::CallbackSink<es::DecompositionItem>>("sink", [&](const es::DecompositionItem& item) {
      const DecompositionRecord r = record_of(item);
      const double error = orthogonality_error(r.v);
      worst = std::max(worst, error);
      if (count >= blocks - 1000) worst_last = std::max(worst_last, error);
      warm_count += r.warm_started;
      sweeps += r.info.sweeps;
      ++count;
    });
    pipeline.connect(stage, decompose);
    pipeline.connect(decompose, sink);
  });
  REQUIRE(count == blocks);
  CHECK(warm_count == blocks - 1);
  CHECK(sweeps > 0);  // the estimate moved: rotations were applied
  INFO("worst ||V^H V - I||_F " << worst << ", over the last 1000 " << worst_last);
  const double bound = 4 * channels * 1.2e-7;  // the one-solve bound of the oracle (4 n eps)
  CHECK(worst <= bound);
  CHECK(worst_last <= bound);
}

TEST_CASE("stages: MUSIC, MDL and MVDR on a simulated 8-element array through the pipeline", "[stages]") {
  const std::size_t channels = 8, block = 200, blocks = 10;
  const auto samples = array_samples(block * blocks, 21);
  es::DecomposeStageConfig decompose_config;
  decompose_config.options.backend = eigstream::Backend::cpu;  // these are the CPU path's tests (tests/gpu: the GPU's)
  decompose_config.channels = channels;
  es::BeamformStageConfig beam_config;  // ULA of 8 at half a wavelength, MDL, grid -90..90 by 0.5
  std::vector<es::BeamformItem> results;
  std::vector<std::vector<float>> powers;
  run(samples, channels, block, {}, per_block(channels), [&](es::Pipeline& pipeline, es::CovarianceStage& stage) {
    auto& decompose = pipeline.add<es::DecomposeStage>("decompose", decompose_config);
    auto& beamform = pipeline.add<es::BeamformStage>("beamform", beam_config);
    auto& sink = pipeline.add<es::CallbackSink<es::BeamformItem>>(
        "sink", [&](const es::BeamformItem& item) { results.push_back(item); });
    pipeline.connect(stage, decompose);
    pipeline.connect(decompose, beamform);
    pipeline.connect(beamform, sink);
  });
  REQUIRE(results.size() == blocks);
  const auto& grid = beam_config.angles_deg;
  for (const auto& item : results) {
    CAPTURE(item.stamp.sequence);
    CHECK(item.sources == 2);
    REQUIRE(item.doas == 2);
    CHECK(item.doa_storage[0] == Approx(-20).margin(0.5));
    CHECK(item.doa_storage[1] == Approx(35).margin(0.5));
    // MVDR: the two highest local maxima of the beam powers lie at the sources (to a grid step).
    std::vector<std::pair<float, double>> peaks;
    for (std::size_t g = 1; g + 1 < grid.size(); ++g)
      if (item.mvdr_power[g] > item.mvdr_power[g - 1] && item.mvdr_power[g] >= item.mvdr_power[g + 1])
        peaks.push_back({item.mvdr_power[g], grid[g]});
    REQUIRE(peaks.size() >= 2);
    std::sort(peaks.rbegin(), peaks.rend());
    const double low = std::min(peaks[0].second, peaks[1].second), high = std::max(peaks[0].second, peaks[1].second);
    CHECK(low == Approx(-20).margin(1.0));
    CHECK(high == Approx(35).margin(1.0));
  }
}

TEST_CASE("stages: KLT of 16 channels mixing 4 latent signals keeps them at k = 4", "[stages]") {
  const std::size_t channels = 16, block = 256, blocks = 8;
  eigstream::MixtureSignalConfig mixture;
  mixture.channels = index_t(channels);
  mixture.latent = 4;
  mixture.snr_db = 40;
  mixture.seed = 9;
  const auto samples = generate(eigstream::MixtureSignal(mixture), block * blocks);

  auto covariance_config = per_block(channels);
  covariance_config.keep_samples = true;
  covariance_config.block_samples = block;
  es::DecomposeStageConfig decompose_config;
  decompose_config.options.backend = eigstream::Backend::cpu;  // these are the CPU path's tests (tests/gpu: the GPU's)
  decompose_config.channels = channels;
  decompose_config.block_samples = block;
  for (const auto& rule : {eigstream::ComponentRule::fixed(4), eigstream::ComponentRule::energy(0.999)}) {
    CAPTURE(rule.count, rule.energy_fraction);
    es::KltStageConfig klt_config{channels, block, rule};
    std::vector<double> snr_db;
    std::vector<std::size_t> components;
    run(samples, channels, block, {}, covariance_config, [&](es::Pipeline& pipeline, es::CovarianceStage& stage) {
      auto& decompose = pipeline.add<es::DecomposeStage>("decompose", decompose_config);
      auto& klt = pipeline.add<es::KltStage>("klt", klt_config);
      auto& sink = pipeline.add<es::CallbackSink<es::KltItem>>("sink", [&](const es::KltItem& item) {
        std::vector<sample_t> rebuilt(channels * item.snapshots);
        const eigstream::MatrixView<sample_t> out{rebuilt.data(), index_t(channels), index_t(item.snapshots),
                                                  index_t(channels)};
        eigstream::klt_reconstruct<float>(item.basis(), item.coefficients(), out);
        const eigstream::MatrixView<const sample_t> original{samples.data() + item.first_sample * channels,
                                                             index_t(channels), index_t(item.snapshots),
                                                             index_t(channels)};
        snr_db.push_back(eigstream::reconstruction_snr_db(original, out));
        components.push_back(item.components);
      });
      pipeline.connect(stage, decompose);
      pipeline.connect(decompose, klt);
      pipeline.connect(klt, sink);
    });
    REQUIRE(snr_db.size() == blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
      CAPTURE(b);
      CHECK(components[b] == 4);
      CHECK(snr_db[b] >= 35);
    }
  }
}

TEST_CASE("stages: a block with a NaN sample is counted and skipped, and the stream goes on", "[stages]") {
  const std::size_t channels = 8, block = 100, blocks = 10, bad = 4;
  auto samples = array_samples(block * blocks, 31);
  samples[(bad * block + 17) * channels + 3] = {std::numeric_limits<float>::quiet_NaN(), 0};
  const auto config = exponential(channels, 0.9);
  const auto expected = direct_covariances(samples, channels, block, config.covariance, bad);
  REQUIRE(expected.size() == blocks - 1);

  std::vector<es::StageStats> stats;
  const auto got = decompositions(samples, channels, block, {}, config, true, &stats);
  REQUIRE(got.size() == blocks);
  CHECK(stats[1].name == "covariance");
  CHECK(stats[1].malformed == 1);
  CHECK(stats[2].malformed == 0);

  // The oracle: the same solver, warm-started along the good blocks only.
  eigstream::Options options;
  options.backend = eigstream::Backend::cpu;
  Matrix<cfloat> previous;
  for (std::size_t b = 0, good = 0; b < blocks; ++b) {
    CAPTURE(b);
    CHECK(got[b].sequence == b);
    if (b == bad) {
      CHECK((got[b].flags & es::item_skipped) != 0);
      continue;
    }
    CHECK((got[b].flags & es::item_skipped) == 0);
    const auto solved = oracle::run_evd(expected[good], options, good > 0 ? &previous : nullptr);
    CHECK(got[b].w == solved.w);
    CHECK(got[b].v.data == solved.v.data);
    oracle::check_evd(expected[good], got[b].w, &got[b].v, oracle::reference_eigenvalues(expected[good]),
                      eigstream::Sort::descending, "stages after NaN");
    previous = solved.v;
    ++good;
  }
}

// block_svd: the SVD of each block's samples is the EVD of the block's own covariance X X^H / L,
// checked against LAPACK on that covariance; a NaN block and a last block of fewer snapshots than
// channels are skipped, and the warm start goes on from the last good block.
TEST_CASE("stages: the SVD of each block is the EVD of the block's own covariance", "[stages]") {
  const std::size_t channels = 8, block = 100, blocks = 30, bad = 10;
  auto samples = array_samples(block * blocks + 5, 41);  // a last block of 5 snapshots
  samples[(bad * block + 3) * channels + 6] = {0, std::numeric_limits<float>::infinity()};
  const auto expected = direct_covariances(samples, channels, block, per_block(channels).covariance, bad);
  std::vector<es::StageStats> stats;
  const auto got = decompositions(samples, channels, block, {}, exponential(channels, 0.9), true, &stats,
                                  es::DecomposeMethod::block_svd);
  REQUIRE(got.size() == blocks + 1);
  CHECK(stats[1].malformed == 1);  // the NaN block, at the covariance stage
  CHECK(stats[2].malformed == 1);  // the short block, at the decompose stage
  for (std::size_t b = 0; b <= blocks; ++b) {
    CAPTURE(b);
    const bool skipped = b == bad || b == blocks;
    REQUIRE(((got[b].flags & es::item_skipped) != 0) == skipped);
    if (skipped) continue;
    CHECK(got[b].warm_started == (b > 0));
    CHECK(got[b].info.converged);
    const auto& covariance = expected[b < bad ? b : b - 1];
    oracle::check_evd(covariance, got[b].w, &got[b].v, oracle::reference_eigenvalues(covariance),
                      eigstream::Sort::descending, "stages block svd");
  }
}

TEST_CASE("stages: with a hop of 3 the covariance stage emits every third estimate", "[stages]") {
  const std::size_t channels = 8, block = 50, blocks = 10;
  const auto samples = array_samples(block * blocks, 41);
  auto config = exponential(channels, 0.7);
  config.hop = 3;
  const auto expected = direct_covariances(samples, channels, block, config.covariance);
  const auto got = covariances(samples, channels, block, {}, config);
  REQUIRE(got.size() == blocks / 3);
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].sequence == 3 * i + 2);
    CHECK(got[i].r.data == expected[3 * i + 2].data);
  }
}

TEST_CASE("stages: wrong settings and inputs are clear errors", "[stages]") {
  const std::size_t channels = 8, block = 50;
  const auto samples = array_samples(block * 4, 51);
  auto zero_hop = per_block(channels);
  zero_hop.hop = 0;
  CHECK_THROWS_WITH(es::CovarianceStage("covariance", zero_hop), Catch::Contains("'covariance': hop is 0"));
  auto none_in_flight = per_block(channels);
  none_in_flight.gpu_blocks_in_flight = 0;
  CHECK_THROWS_WITH(es::CovarianceStage("covariance", none_in_flight),
                    Catch::Contains("'covariance': gpu_blocks_in_flight is 0"));
  es::BeamformStageConfig too_many;
  too_many.sources = 8;
  CHECK_THROWS_WITH(es::BeamformStage("beamform", too_many), Catch::Contains("8 sources need more than 8 elements"));
  CHECK_THROWS_WITH(es::KltStage("klt", es::KltStageConfig{4, 10, eigstream::ComponentRule::fixed(5)}),
                    Catch::Contains("keeps 5 components of 4 channels"));

  // A KLT stage fed decompositions without the block's samples.
  es::DecomposeStageConfig decompose_config;
  decompose_config.options.backend = eigstream::Backend::cpu;  // these are the CPU path's tests (tests/gpu: the GPU's)
  decompose_config.channels = channels;
  CHECK_THROWS_WITH(
      run(samples, channels, block, {}, per_block(channels),
          [&](es::Pipeline& pipeline, es::CovarianceStage& stage) {
            auto& decompose = pipeline.add<es::DecomposeStage>("decompose", decompose_config);
            auto& klt = pipeline.add<es::KltStage>("klt", es::KltStageConfig{channels, block});
            auto& sink = pipeline.add<es::CallbackSink<es::KltItem>>("sink", [](const es::KltItem&) {});
            pipeline.connect(stage, decompose);
            pipeline.connect(decompose, klt);
            pipeline.connect(klt, sink);
          }),
      Catch::Contains("KLT stage 'klt': block 0 carries no samples"));

  // Blocks of 8 channels into a covariance stage set up for 4.
  CHECK_THROWS_WITH(covariances(samples, channels, block, {}, per_block(4)),
                    Catch::Contains("covariance stage 'covariance': block 0 has 8 channels, not 4"));
}

TEST_CASE("stages: a decomposition that does not converge is skipped and never becomes the warm start", "[stages]") {
  const std::size_t channels = 8, block = 100, blocks = 6;
  const auto samples = array_samples(block * blocks, 61);
  es::DecomposeStageConfig config;
  config.options.backend = eigstream::Backend::cpu;  // these are the CPU path's tests (tests/gpu: the GPU's)
  config.channels = channels;
  config.options.max_sweeps = 1;  // too few for a cold 8 x 8 solve
  std::vector<DecompositionRecord> got;
  const auto stats = run(samples, channels, block, {}, per_block(channels),
                         [&](es::Pipeline& pipeline, es::CovarianceStage& stage) {
                           auto& decompose = pipeline.add<es::DecomposeStage>("decompose", config);
                           auto& sink = pipeline.add<es::CallbackSink<es::DecompositionItem>>(
                               "sink", [&](const es::DecompositionItem& item) { got.push_back(record_of(item)); });
                           pipeline.connect(stage, decompose);
                           pipeline.connect(decompose, sink);
                         });
  REQUIRE(got.size() == blocks);
  CHECK(stats[2].malformed == blocks);
  for (const auto& r : got) {
    CAPTURE(r.sequence);
    CHECK((r.flags & es::item_skipped) != 0);
    CHECK_FALSE(r.info.converged);
    CHECK_FALSE(r.warm_started);
  }
}

// Subbands: three 4-channel array signals side by side in 12-channel blocks (subband by subband in
// each snapshot) give, through one covariance and one decompose stage with subbands = 3, exactly the
// items of three separate 4-channel streams, interleaved block by block, each subband warm-started
// from its own last decomposition; the kept samples are the subband's. A NaN in one subband skips
// the whole block in every subband.
TEST_CASE("stages: subbands are decomposed as separate streams, each with its own warm start", "[stages]") {
  const std::size_t subbands = 3, n = 4, block = 50, blocks = 12;
  std::vector<std::vector<sample_t>> bands;
  for (std::size_t s = 0; s < subbands; ++s) {
    eigstream::ArraySignalConfig config;
    config.geometry = eigstream::ArrayGeometry::uniform_linear(index_t(n));
    config.sources = {{-10.0 + 20.0 * double(s), 10}};
    config.seed = 60 + s;
    bands.push_back(generate(eigstream::ArraySignal(config), block * blocks));
  }
  std::vector<sample_t> interleaved(subbands * n * block * blocks);
  for (std::size_t t = 0; t < block * blocks; ++t)
    for (std::size_t s = 0; s < subbands; ++s)
      std::copy_n(&bands[s][t * n], n, &interleaved[(t * subbands + s) * n]);

  struct Record {
    std::uint64_t sequence;
    std::size_t subband;
    bool skipped, warm_started;
    std::vector<float> values;
    std::vector<cfloat> vectors;
    std::vector<sample_t> samples;
  };
  auto run_stream = [&](const std::vector<sample_t>& samples, std::size_t bands_in_stream) {
    es::CovarianceStageConfig cc = exponential(n, 0.8);
    cc.subbands = bands_in_stream;
    cc.keep_samples = true;
    cc.block_samples = block;
    es::DecomposeStageConfig dc;
    dc.options.backend = eigstream::Backend::cpu;
    dc.channels = n;
    dc.subbands = bands_in_stream;
    dc.block_samples = block;
    std::vector<Record> out;
    es::Pipeline pipeline;
    auto& source = pipeline.add<es::ReaderSource>(
        "source", std::make_unique<es::MemoryReader>(samples.data(), block * blocks, n * bands_in_stream),
        es::ReaderSourceOptions{block});
    auto& covariance = pipeline.add<es::CovarianceStage>("covariance", cc);
    auto& decompose = pipeline.add<es::DecomposeStage>("decompose", dc);
    auto& tap = pipeline.add<es::CallbackSink<es::DecompositionItem>>("sink", [&](const es::DecompositionItem& item) {
      out.push_back({item.stamp.sequence, item.subband, item.skipped(), item.warm_started, item.values, item.vectors,
                     std::vector<sample_t>(item.samples.begin(), item.samples.begin() + std::ptrdiff_t(item.snapshots * n))});
    });
    pipeline.connect(source, covariance);
    pipeline.connect(covariance, decompose);
    pipeline.connect(decompose, tap);
    pipeline.start();
    pipeline.wait();
    return out;
  };
  const std::vector<Record> together = run_stream(interleaved, subbands);
  REQUIRE(together.size() == subbands * blocks);
  for (std::size_t s = 0; s < subbands; ++s) {
    const std::vector<Record> alone = run_stream(bands[s], 1);
    REQUIRE(alone.size() == blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
      INFO("subband " << s << ", block " << b);
      const Record& got = together[b * subbands + s];
      CHECK(got.sequence == b);
      CHECK(got.subband == s);
      CHECK_FALSE(got.skipped);
      CHECK(got.warm_started == (b > 0));
      CHECK(got.values == alone[b].values);
      CHECK(got.vectors == alone[b].vectors);
      CHECK(got.samples == alone[b].samples);
    }
  }

  interleaved[(5 * block + 3) * subbands * n + 2 * n + 1] = {std::numeric_limits<float>::quiet_NaN(), 0};  // block 5, subband 2
  const std::vector<Record> with_nan = run_stream(interleaved, subbands);
  REQUIRE(with_nan.size() == subbands * blocks);
  for (std::size_t i = 0; i < with_nan.size(); ++i) CHECK(with_nan[i].skipped == (i / subbands == 5));

  es::CovarianceStageConfig wrong = exponential(n, 0.8);
  wrong.subbands = 2;  // 8 channels expected, 12 arrive
  CHECK_THROWS_WITH(run(interleaved, subbands * n, block, {}, wrong,
                        [](es::Pipeline& pipeline, es::CovarianceStage& stage) {
                          auto& sink = pipeline.add<es::CallbackSink<es::CovarianceItem>>("sink", [](const es::CovarianceItem&) {});
                          pipeline.connect(stage, sink);
                        }),
                    Catch::Contains("12 channels, not 8 (2 subbands of 4)"));
}
