// GPU beam powers (eigstream::cuda::beam_power_batched) against a reference computed in higher
// precision (double for float, long double for double) from the same EVDs and weights: MVDR and MUSIC
// weights, 1 to 64 elements (odd counts included), padded leading dimensions and strides; bad calls.
// And the beamform stage's GPU path against its CPU path on one stream (MVDR powers, MUSIC spectra,
// DOAs, MDL counts, a skipped NaN block, the last partial group). Label gpu.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "eigstream/cuda.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/simulation.hpp"
#include "eigstream/streaming/streaming.hpp"
#include "oracle.hpp"

using eigstream::ArrayGeometry;
using eigstream::Beamformer;
using eigstream::DiagonalLoading;
using eigstream::ErrorCode;
using eigstream::detail::DeviceArray;
using namespace oracle;

namespace {

template <class R> struct Wider { using type = double; };
template <> struct Wider<double> { using type = long double; };

// The EVD of a covariance of three sources on an n-element ULA.
template <class R>
SampleEvd<R> scene(index_t n, std::uint64_t seed) {
  eigstream::ArraySignalConfig config;
  config.geometry = ArrayGeometry::uniform_linear(n, 0.5);
  config.sources = {{-40, 10}, {3, 0}, {25, 20}};
  config.seed = seed;
  return SampleEvd<R>::generated(eigstream::ArraySignal(config), 4 * n + 20);
}

template <class R>
double reference_power(const eigstream::EvdView<R>& evd, const R* weights, const std::complex<R>* a, index_t n) {
  using W = typename Wider<R>::type;
  W denominator = 0;
  for (index_t i = 0; i < n; ++i) {
    std::complex<W> projection = 0;
    for (index_t k = 0; k < n; ++k) projection += std::conj(std::complex<W>(evd.vectors(k, i))) * std::complex<W>(a[k]);
    denominator += W(weights[i]) * std::norm(projection);
  }
  return double(1 / denominator);
}

}  // namespace

TEMPLATE_TEST_CASE("gpu beamforming: beam powers equal a higher-precision reference", "[gpu][beamforming]", float,
                   double) {
  using R = TestType;
  using C = std::complex<R>;
  const index_t n = GENERATE(1, 2, 7, 16, 33, 64);
  const index_t count = 5, ld = n + 1, stride = ld * n + 3, wstride = n + 2, angles = 181, pstride = angles + 7;
  Beamformer<R> beamformer(ArrayGeometry::uniform_linear(n, 0.5), eigstream::angle_grid(-90, 90, 1));
  std::vector<SampleEvd<R>> evds;
  for (index_t b = 0; b < count; ++b) evds.push_back(scene<R>(n, 50 + std::uint64_t(b)));

  // Matrices 0..count-1 with MVDR weights (relative loading), then the same with MUSIC weights.
  const index_t batch = n > 1 ? 2 * count : count;
  std::vector<C> v(std::size_t(stride * batch), C(std::numeric_limits<R>::quiet_NaN()));  // padding is poison
  std::vector<R> weights(std::size_t(wstride * batch), std::numeric_limits<R>::quiet_NaN());
  for (index_t b = 0; b < batch; ++b) {
    const SampleEvd<R>& e = evds[std::size_t(b % count)];
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) v[std::size_t(b * stride + i + j * ld)] = e.v(i, j);
    R* w = &weights[std::size_t(b * wstride)];
    if (b < count)
      beamformer.mvdr_power_weights(e.evd(), DiagonalLoading::relative(1e-3), w);
    else
      beamformer.music_power_weights(e.evd(), std::min<index_t>(3, n - 1), w);
  }

  cudaStream_t stream = cudaStreamPerThread;
  DeviceArray<C> dev_v(v.size(), stream), dev_steering(std::size_t(n * angles), stream);
  DeviceArray<R> dev_weights(weights.size(), stream), dev_power(std::size_t(pstride * batch), stream);
  dev_v.upload(v, stream);
  dev_weights.upload(weights, stream);
  const auto steering = beamformer.steering();
  REQUIRE(steering.ld == n);
  REQUIRE(cudaMemcpyAsync(dev_steering.get(), steering.data, std::size_t(n * angles) * sizeof(C), cudaMemcpyHostToDevice,
                          stream) == cudaSuccess);
  eigstream::cuda::beam_power_batched<R>({dev_v.get(), n, n, ld, stride, batch}, {dev_weights.get(), n, wstride, batch},
                                         {dev_steering.get(), n, angles, n}, {dev_power.get(), angles, pstride, batch},
                                         stream);
  std::vector<R> power;
  dev_power.download(power, stream);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);

  const double eps = std::numeric_limits<R>::epsilon();
  double worst = 0;
  for (index_t b = 0; b < batch; ++b) {
    const SampleEvd<R>& e = evds[std::size_t(b % count)];
    const R* w = &weights[std::size_t(b * wstride)];
    for (index_t g = 0; g < angles; ++g) {
      const double expected = reference_power<R>(e.evd(), w, steering.data + g * n, n);
      const double got = double(power[std::size_t(b * pstride + g)]);
      worst = std::max(worst, std::abs(got - expected) / expected);
    }
  }
  INFO((sizeof(R) == 4 ? "float" : "double") << " n = " << n << ": worst relative error " << worst);
  // Each denominator sums n weighted squares of n-term dot products: a few n eps relative, more near
  // MUSIC's nulls where the noise-subspace projection cancels.
  CHECK(worst <= 64 * n * eps);
}

TEST_CASE("gpu beamforming: bad calls name what is wrong", "[gpu][beamforming]") {
  using C = std::complex<float>;
  const index_t n = 65, angles = 3;
  cudaStream_t stream = cudaStreamPerThread;
  DeviceArray<C> v(std::size_t(n * n), stream), steering(std::size_t(n * angles), stream);
  DeviceArray<float> weights(std::size_t(n), stream), power(std::size_t(angles), stream);
  check_error([&] {
    eigstream::cuda::beam_power_batched<float>({v.get(), n, n, n, n * n, 1}, {weights.get(), n, n, 1},
                                               {steering.get(), n, angles, n}, {power.get(), angles, angles, 1}, stream);
  }, ErrorCode::invalid_argument, {"cuda::beam_power_batched", "64", "65"});
  check_error([&] {
    eigstream::cuda::beam_power_batched<float>({v.get(), 8, 8, 8, 64, 1}, {weights.get(), 8, 8, 1},
                                               {steering.get(), 7, angles, 8}, {power.get(), angles, angles, 1}, stream);
  }, ErrorCode::invalid_argument, {"steering", "7 x 3", "8 x 3"});
  check_error([&] {
    eigstream::cuda::beam_power_batched<float>({v.get(), 8, 8, 8, 64, 2}, {nullptr, 8, 8, 2},
                                               {steering.get(), 8, angles, 8}, {power.get(), angles, angles, 2}, stream);
  }, ErrorCode::invalid_argument, {"weights", "missing"});
  check_error([&] {
    eigstream::cuda::beam_power_batched<float>({v.get(), 8, 8, 8, 64, 1}, {weights.get(), 8, 8, 1},
                                               {steering.get(), 8, angles, 8}, {power.get(), 2, 2, 1}, stream);
  }, ErrorCode::invalid_argument, {"power", "room for 2"});
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
}

namespace {

namespace es = eigstream::streaming;

struct BeamResult {
  std::uint64_t sequence;
  bool skipped;
  std::size_t sources;
  std::vector<double> doas;
  std::vector<float> mvdr, music;
};

// source -> covariance -> decompose (CPU: the same decompositions for both) -> beamform (backend).
std::vector<BeamResult> beamform(const std::vector<eigstream::sample_t>& samples, std::size_t n, std::size_t block,
                                 eigstream::Backend backend, std::size_t group, eigstream::Backend* used) {
  es::Pipeline pipeline;
  auto& source = pipeline.add<es::ReaderSource>(
      "source", std::make_unique<es::MemoryReader>(samples.data(), samples.size() / n, n), es::ReaderSourceOptions{block});
  es::CovarianceStageConfig cc;
  cc.covariance.channels = index_t(n);
  cc.covariance.lambda = 0.8;
  auto& covariance = pipeline.add<es::CovarianceStage>("covariance", cc);
  es::DecomposeStageConfig dc;
  dc.channels = n;
  dc.options.backend = eigstream::Backend::cpu;
  auto& decompose = pipeline.add<es::DecomposeStage>("decompose", dc);
  es::BeamformStageConfig bc;
  bc.geometry = ArrayGeometry::uniform_linear(index_t(n));
  bc.backend = backend;
  bc.group = group;
  auto& stage = pipeline.add<es::BeamformStage>("beamform", bc);
  std::vector<BeamResult> out;
  auto& sink = pipeline.add<es::CallbackSink<es::BeamformItem>>("sink", [&](const es::BeamformItem& item) {
    out.push_back({item.stamp.sequence, item.skipped(), item.sources,
                   std::vector<double>(item.doa_storage.begin(), item.doa_storage.begin() + std::ptrdiff_t(item.doas)),
                   item.mvdr_power, item.music_spectrum});
  });
  pipeline.connect(source, covariance);
  pipeline.connect(covariance, decompose);
  pipeline.connect(decompose, stage);
  pipeline.connect(stage, sink);
  pipeline.start();
  pipeline.wait();
  *used = stage.backend();
  return out;
}

double db_difference(float a, float b) { return std::abs(10 * std::log10(double(a) / double(b))); }

}  // namespace

TEST_CASE("gpu stages: the beamform stage's GPU beam powers and DOAs equal its CPU path's", "[gpu][stages]") {
  const std::size_t n = 8, block = 200, blocks = 70, group = 16;  // 70 = 4 groups of 16 + 6
  eigstream::ArraySignalConfig config;
  config.geometry = ArrayGeometry::uniform_linear(index_t(n));
  config.sources = {{-20, 10}, {35, 10}};
  config.seed = 8;
  std::vector<eigstream::sample_t> samples(n * block * blocks);
  eigstream::ArraySignal(config).generate({samples.data(), index_t(n), index_t(block * blocks), index_t(n)});
  samples[(30 * block + 7) * n + 1] = {std::numeric_limits<float>::quiet_NaN(), 0};  // block 30
  eigstream::Backend used = eigstream::Backend::cuda;
  const auto cpu = beamform(samples, n, block, eigstream::Backend::cpu, group, &used);
  CHECK(used == eigstream::Backend::cpu);
  const auto gpu = beamform(samples, n, block, eigstream::Backend::cuda, group, &used);
  CHECK(used == eigstream::Backend::cuda);
  REQUIRE(cpu.size() == blocks);
  REQUIRE(gpu.size() == blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    INFO("block " << b);
    REQUIRE(gpu[b].sequence == cpu[b].sequence);
    REQUIRE(gpu[b].skipped == (b == 30));
    REQUIRE(cpu[b].skipped == gpu[b].skipped);
    if (gpu[b].skipped) continue;
    REQUIRE(gpu[b].sources == cpu[b].sources);
    CHECK(gpu[b].sources == 2);
    REQUIRE(gpu[b].doas.size() == cpu[b].doas.size());
    for (std::size_t k = 0; k < gpu[b].doas.size(); ++k) CHECK(std::abs(gpu[b].doas[k] - cpu[b].doas[k]) <= 1e-3);
    double worst_mvdr = 0, worst_music = 0;
    for (std::size_t g = 0; g < gpu[b].mvdr.size(); ++g) {
      worst_mvdr = std::max(worst_mvdr, db_difference(gpu[b].mvdr[g], cpu[b].mvdr[g]));
      worst_music = std::max(worst_music, db_difference(gpu[b].music[g], cpu[b].music[g]));
    }
    INFO("worst differences: MVDR " << worst_mvdr << " dB, MUSIC " << worst_music << " dB");
    CHECK(worst_mvdr <= 1e-3);
    CHECK(worst_music <= 0.05);
  }
}
