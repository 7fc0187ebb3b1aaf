// Covariance<R> against a long double reference of the documented formulas (exponential forgetting,
// sliding window, relative and absolute loading); a block delivered in parts equals the whole block
// bit for bit; the sliding window equals a fresh estimator given only the last W blocks; NaN/Inf
// samples are reported by block, snapshot and channel and leave the estimate untouched; bad calls.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <utility>
#include <vector>

#include "oracle.hpp"

using eigstream::Covariance;
using eigstream::CovarianceConfig;
using eigstream::DiagonalLoading;
using eigstream::ErrorCode;
using eigstream::sample_t;
using namespace oracle;

namespace {

using Mode = CovarianceConfig::Mode;
using LongMatrix = std::vector<std::complex<long double>>;  // n x n, column-major

// Blocks of different lengths, unit-variance Gaussian samples with some channel correlation.
std::vector<Matrix<sample_t>> make_blocks(index_t n, const std::vector<index_t>& lengths, std::uint64_t seed) {
  Rng rng(seed);
  const Matrix<sample_t> mix = gaussian<sample_t>(n, n, rng);
  std::vector<Matrix<sample_t>> blocks;
  for (index_t l : lengths) {
    const Matrix<sample_t> z = gaussian<sample_t>(n, l, rng);
    Matrix<sample_t> x(n, l);
    for (index_t t = 0; t < l; ++t)
      for (index_t i = 0; i < n; ++i) {
        std::complex<double> sum = std::complex<double>(z(i, t)) * 2.0;
        for (index_t k = 0; k < n; ++k) sum += std::complex<double>(mix(i, k)) * std::complex<double>(z(k, t)) * 0.3;
        x(i, t) = sample_t(sum);
      }
    blocks.push_back(x);
  }
  return blocks;
}

// S / L of one block, in long double.
LongMatrix block_covariance(const Matrix<sample_t>& x) {
  const index_t n = x.rows;
  LongMatrix s(std::size_t(n * n));
  for (index_t t = 0; t < x.cols; ++t)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i)
        s[std::size_t(i + j * n)] += std::complex<long double>(x(i, t)) * std::conj(std::complex<long double>(x(j, t)));
  for (auto& v : s) v /= static_cast<long double>(x.cols);
  return s;
}

// The documented estimate after blocks[0..count), loaded.
LongMatrix reference(const std::vector<Matrix<sample_t>>& blocks, std::size_t count, const CovarianceConfig& config) {
  const index_t n = config.channels;
  LongMatrix r(std::size_t(n * n));
  if (config.mode == Mode::exponential) {
    for (std::size_t b = 0; b < count; ++b) {
      const LongMatrix s = block_covariance(blocks[b]);
      const long double keep = b == 0 ? 0.0L : static_cast<long double>(config.lambda);
      for (std::size_t k = 0; k < r.size(); ++k) r[k] = keep * r[k] + (1.0L - keep) * s[k];
    }
  } else {
    const std::size_t first = count > std::size_t(config.window) ? count - std::size_t(config.window) : 0;
    long double snapshots = 0;
    for (std::size_t b = first; b < count; ++b) {
      const LongMatrix s = block_covariance(blocks[b]);
      const long double l = static_cast<long double>(blocks[b].cols);
      for (std::size_t k = 0; k < r.size(); ++k) r[k] += s[k] * l;
      snapshots += l;
    }
    for (auto& v : r) v /= snapshots;
  }
  long double trace = 0;
  for (index_t i = 0; i < n; ++i) trace += r[std::size_t(i + i * n)].real();
  const long double delta = config.loading.kind == DiagonalLoading::Kind::relative
                                ? static_cast<long double>(config.loading.value) * trace / static_cast<long double>(n)
                            : config.loading.kind == DiagonalLoading::Kind::absolute
                                ? static_cast<long double>(config.loading.value)
                                : 0.0L;
  for (index_t i = 0; i < n; ++i) r[std::size_t(i + i * n)] += delta;
  return r;
}

// 1 / sum over snapshots of their squared weights, from the block weights of the documented formulas.
double reference_effective_snapshots(const std::vector<Matrix<sample_t>>& blocks, std::size_t count,
                                     const CovarianceConfig& config) {
  long double sum = 0;
  if (config.mode == Mode::exponential) {
    const long double lambda = static_cast<long double>(config.lambda);
    for (std::size_t b = 0; b < count; ++b) {
      const long double weight = (b == 0 ? 1.0L : 1.0L - lambda) * std::pow(lambda, static_cast<long double>(count - 1 - b));
      sum += weight * weight / static_cast<long double>(blocks[b].cols);
    }
    return double(1 / sum);
  }
  const std::size_t first = count > std::size_t(config.window) ? count - std::size_t(config.window) : 0;
  for (std::size_t b = first; b < count; ++b) sum += static_cast<long double>(blocks[b].cols);
  return double(sum);
}

template <class R>
Matrix<std::complex<R>> output(const Covariance<R>& c) {
  Matrix<std::complex<R>> out(c.channels(), c.channels());
  c.covariance(out.view());
  return out;
}

// ||out - ref||_F / ||ref||_F, and exact Hermitian structure of out.
template <class R>
double relative_error(const Matrix<std::complex<R>>& out, const LongMatrix& ref) {
  const index_t n = out.rows;
  long double diff = 0, norm = 0;
  for (index_t j = 0; j < n; ++j) {
    CHECK(out(j, j).imag() == R(0));
    for (index_t i = 0; i < n; ++i) {
      CHECK(out(i, j) == std::conj(out(j, i)));
      diff += std::norm(std::complex<long double>(out(i, j)) - ref[std::size_t(i + j * n)]);
      norm += std::norm(ref[std::size_t(i + j * n)]);
    }
  }
  return double(std::sqrt(diff / norm));
}

template <class R>
bool same(const Matrix<std::complex<R>>& a, const Matrix<std::complex<R>>& b) {
  return a.data == b.data;
}

}  // namespace

TEMPLATE_TEST_CASE("covariance matches the long double reference", "[covariance]", float, double) {
  const index_t n = 6;
  const std::vector<Matrix<sample_t>> blocks = make_blocks(n, {40, 17, 64, 1, 33, 50, 25, 40}, 11);
  const double tolerance = 50 * double(std::numeric_limits<TestType>::epsilon());

  struct Case {
    const char* name;
    CovarianceConfig config;
  };
  const std::vector<Case> cases = {
      {"exponential", {n, Mode::exponential, 0.7, 1, {}}},
      {"exponential, lambda 0", {n, Mode::exponential, 0.0, 1, {}}},
      {"exponential, relative loading", {n, Mode::exponential, 0.9, 1, DiagonalLoading::relative(0.05)}},
      {"sliding window 3", {n, Mode::sliding_window, 0, 3, {}}},
      {"sliding window 1", {n, Mode::sliding_window, 0, 1, {}}},
      {"sliding window 5, absolute loading", {n, Mode::sliding_window, 0, 5, DiagonalLoading::absolute(0.25)}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Covariance<TestType> estimator(c.config);
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        estimator.update(blocks[b].cview());
        CHECK(estimator.blocks() == index_t(b + 1));
        const double error = relative_error(output(estimator), reference(blocks, b + 1, c.config));
        INFO("after block " << b << ": relative error " << error);
        CHECK(error <= tolerance);
        CHECK(estimator.effective_snapshots() ==
              Approx(reference_effective_snapshots(blocks, b + 1, c.config)).epsilon(tolerance));
      }
    }
  }
}

TEMPLATE_TEST_CASE("a block delivered in parts equals the whole block, bit for bit", "[covariance]", float, double) {
  const index_t n = 5;
  const std::vector<Matrix<sample_t>> blocks = make_blocks(n, {37, 64, 9}, 21);
  for (const Mode mode : {Mode::exponential, Mode::sliding_window}) {
    const CovarianceConfig config{n, mode, 0.8, 2, DiagonalLoading::relative(0.01)};
    Covariance<TestType> whole(config), parts(config);
    Rng rng(5);
    for (const Matrix<sample_t>& x : blocks) {
      whole.update(x.cview());
      index_t t = 0;
      while (t < x.cols) {
        const index_t size = std::min<index_t>(x.cols - t, 1 + index_t(rng.uniform(0, 12)));
        parts.accumulate(eigstream::matrix(x.data.data() + t * n, n, size));
        t += size;
        CHECK(parts.pending_snapshots() == t);
      }
      parts.end_block();
      CHECK(same(output(whole), output(parts)));
    }
  }
}

TEST_CASE("the sliding window equals a fresh estimate of the last W blocks", "[covariance]") {
  const index_t n = 4, window = 4;
  const std::vector<Matrix<sample_t>> blocks = make_blocks(n, {10, 20, 5, 30, 15, 8, 40, 12, 9, 25, 3}, 31);
  const CovarianceConfig config{n, Mode::sliding_window, 0, window, {}};
  Covariance<float> running(config);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    running.update(blocks[b].cview());
    Covariance<float> fresh(config);
    for (std::size_t k = b + 1 > std::size_t(window) ? b + 1 - std::size_t(window) : 0; k <= b; ++k)
      fresh.update(blocks[k].cview());
    INFO("after block " << b);
    CHECK(same(output(running), output(fresh)));
  }
}

TEST_CASE("covariance rejects NaN and Inf samples and keeps its estimate", "[covariance][errors]") {
  const index_t n = 4;
  const std::vector<Matrix<sample_t>> blocks = make_blocks(n, {20, 20, 20, 20}, 41);
  const CovarianceConfig config{n, Mode::exponential, 0.5, 1, {}};
  Covariance<double> estimator(config), clean(config);
  estimator.update(blocks[0].cview());
  estimator.update(blocks[1].cview());
  clean.update(blocks[0].cview());
  clean.update(blocks[1].cview());

  Matrix<sample_t> bad = blocks[2];
  bad(3, 7) = sample_t(std::numeric_limits<float>::quiet_NaN(), 0);
  const eigstream::NonFiniteSample where = eigstream::find_non_finite(bad.cview());
  CHECK(where.found);
  CHECK(where.channel == 3);
  CHECK(where.snapshot == 7);
  CHECK_FALSE(eigstream::find_non_finite(blocks[2].cview()).found);
  check_error([&] { estimator.update(bad.cview()); }, ErrorCode::invalid_input,
              {"covariance", "block 2", "NaN", "snapshot 7", "channel 3"});
  CHECK(estimator.blocks() == 2);
  CHECK(same(output(estimator), output(clean)));

  // In parts: the snapshot is counted from the start of the block; the earlier part can be discarded.
  Matrix<sample_t> inf_block = blocks[2];
  inf_block(1, 15) = sample_t(0, std::numeric_limits<float>::infinity());
  estimator.accumulate(eigstream::matrix(inf_block.data.data(), n, 10));
  check_error([&] { estimator.accumulate(eigstream::matrix(inf_block.data.data() + 10 * n, n, 10)); },
              ErrorCode::invalid_input, {"block 2", "infinite", "snapshot 15", "channel 1"});
  CHECK(estimator.pending_snapshots() == 10);
  estimator.discard_block();

  // The stream goes on as if the bad block never came.
  estimator.update(blocks[3].cview());
  clean.update(blocks[3].cview());
  CHECK(same(output(estimator), output(clean)));
}

TEST_CASE("covariance rejects bad calls with clear messages", "[covariance][errors]") {
  check_error([] { Covariance<float>({0, Mode::exponential, 0.5, 1, {}}); }, ErrorCode::invalid_argument,
              {"channels must be >= 1", "got 0"});
  check_error([] { Covariance<float>({4, Mode::exponential, 1.0, 1, {}}); }, ErrorCode::invalid_argument,
              {"lambda", "[0, 1)", "got 1"});
  check_error([] { Covariance<float>({4, Mode::sliding_window, 0, 0, {}}); }, ErrorCode::invalid_argument,
              {"window", "got 0"});
  check_error([] { Covariance<float>({4, Mode::exponential, 0.5, 1, DiagonalLoading::relative(-1)}); },
              ErrorCode::invalid_argument, {"diagonal loading", "got -1"});

  Covariance<float> estimator({4, Mode::exponential, 0.5, 1, {}});
  Matrix<std::complex<float>> out(4, 4);
  check_error([&] { estimator.covariance(out.view()); }, ErrorCode::invalid_argument, {"no block has been added"});
  check_error([&] { estimator.end_block(); }, ErrorCode::invalid_argument, {"block 0", "no snapshots"});
  Matrix<sample_t> wrong(3, 10);
  check_error([&] { estimator.update(wrong.cview()); }, ErrorCode::invalid_argument, {"covariance", "block", "3 x 10", "4 x 10"});
  Matrix<sample_t> right(4, 10);
  estimator.update(right.cview());
  Matrix<std::complex<float>> small(3, 3);
  check_error([&] { estimator.covariance(small.view()); }, ErrorCode::invalid_argument, {"output matrix", "3 x 3", "4 x 4"});
}

// find_non_finite checks blocks fast, then searches: every kind of non-finite value at every position
// of blocks whose float counts are and are not multiples of 8, the first one reported, huge finite
// values accepted, and with a padded leading dimension the padding (NaN here) never looked at.
TEST_CASE("find_non_finite finds the first NaN or infinity anywhere, and only inside the view", "[covariance]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float max = std::numeric_limits<float>::max();
  for (const index_t rows : {1, 3, 4, 5}) {
    const index_t cols = 7, ld = rows + 2;
    std::vector<sample_t> data(std::size_t(ld * cols), sample_t(nan, nan));  // padding is NaN
    const auto fill = [&] {
      for (index_t t = 0; t < cols; ++t)
        for (index_t c = 0; c < rows; ++c) data[std::size_t(c + t * ld)] = sample_t(max, -max);
    };
    fill();
    CHECK_FALSE(eigstream::find_non_finite({data.data(), rows, cols, ld}).found);
    std::vector<sample_t> packed(std::size_t(rows * cols), sample_t(max, -max));
    CHECK_FALSE(eigstream::find_non_finite({packed.data(), rows, cols, rows}).found);
    for (const sample_t bad : {sample_t(nan, 0), sample_t(0, inf), sample_t(-inf, 1)})
      for (index_t t = 0; t < cols; ++t)
        for (index_t c = 0; c < rows; ++c) {
          INFO("rows " << rows << ", channel " << c << ", snapshot " << t);
          fill();
          data[std::size_t(c + t * ld)] = bad;
          packed.assign(packed.size(), sample_t(1, 1));
          packed[std::size_t(c + t * rows)] = bad;
          packed.back() = sample_t(inf, inf);  // a later one: the first is reported
          for (const auto& [where, view] :
               {std::pair{"padded", eigstream::MatrixView<const sample_t>{data.data(), rows, cols, ld}},
                std::pair{"packed", eigstream::MatrixView<const sample_t>{packed.data(), rows, cols, rows}}}) {
            INFO(where);
            const eigstream::NonFiniteSample found = eigstream::find_non_finite(view);
            CHECK(found.found);
            CHECK(found.channel == c);
            CHECK(found.snapshot == t);
          }
        }
  }
}
