// klt_compress: adaptive KLT compression of a multichannel stream. The pipeline keeps an
// exponentially forgotten covariance of the blocks and its eigenvectors (warm-started from the
// previous block's), keeps the top k components of each block (a fixed k or an energy fraction), and
// writes a KLT container (eigstream/streaming/klt_container.hpp): a basis record only when the kept
// subspace has moved more than --threshold from the basis in force, and each block's coefficients in
// that basis (float32, or int16 with a per-block scale). klt_decompress reconstructs the samples.
// Exit codes: 0 success, 1 internal error, 2 bad usage or bad input.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eigstream/eigstream.hpp"
#include "eigstream/streaming/file_io.hpp"
#include "eigstream/streaming/klt_container.hpp"
#include "eigstream/streaming/streaming.hpp"
#include "app_main.hpp"
#include "gnuplot.hpp"
#include "pending_output.hpp"
#include "stream_input.hpp"

namespace {

using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::index_t;
using eigstream::sample_t;
namespace io = eigstream::streaming;
using cfloat = std::complex<float>;

struct Settings {
  eigstream::apps::InputFlags input;
  std::string out;
  std::size_t block = 1024;
  double lambda = 0.95;
  index_t components = 0;
  double energy = 0.999;
  double threshold = 0.05;
  std::string coefficients = "int16";
  std::string backend = "auto";
  std::string json, plot, reconstructed;
  bool quiet = false;
};

// Distance between the subspaces spanned by orthonormal a and b (channels x k each): sqrt(1 - ||a^H b||_F^2 / k),
// 0 for the same subspace, 1 for orthogonal ones.
double subspace_distance(const std::vector<cfloat>& a, const std::vector<cfloat>& b, std::size_t channels, std::size_t k) {
  double overlap = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      std::complex<double> dot = 0;
      for (std::size_t c = 0; c < channels; ++c)
        dot += std::conj(std::complex<double>(a[c + i * channels])) * std::complex<double>(b[c + j * channels]);
      overlap += std::norm(dot);
    }
  return std::sqrt(std::max(0.0, 1.0 - overlap / double(k)));
}

// The sink of the pipeline: decides each block's basis and coefficients, writes them, and keeps the
// statistics of what a decompressor will reconstruct.
class Compressor {
 public:
  Compressor(const Settings& s, std::size_t channels, double sample_rate)
      : settings_(s), channels_(channels),
        writer_(s.out, io::KltHeader{std::uint32_t(channels), sample_rate,
                                     s.coefficients == "int16" ? io::CoefficientFormat::int16
                                                               : io::CoefficientFormat::float32}),
        rule_(s.components > 0 ? eigstream::ComponentRule::fixed(s.components)
                               : eigstream::ComponentRule::energy(s.energy)) {
    if (!s.reconstructed.empty())
      reconstructed_ = eigstream::apps::PendingSampleFile::raw(s.reconstructed, io::SampleFormat::cf32_le, channels);
  }

  void consume(const io::DecompositionItem& item) {
    const std::size_t n = channels_, snapshots = item.snapshots;
    // The covariance stage passes a block with NaN or infinite samples on without them.
    if (snapshots != item.end_sample - item.first_sample)
      throw Error(ErrorCode::invalid_input, "block " + std::to_string(item.stamp.sequence) + " (samples " +
                                                std::to_string(item.first_sample) + " to " +
                                                std::to_string(item.end_sample) + ") holds NaN or infinite samples");
    // The candidate basis: the top k eigenvectors of this block's decomposition; a block whose
    // covariance could not be decomposed keeps the basis in force.
    if (!item.skipped()) {
      const std::size_t k = std::size_t(eigstream::choose_components(item.values.data(), index_t(n), rule_));
      candidate_.assign(item.vectors.begin(), item.vectors.begin() + std::ptrdiff_t(n * k));
      if (!has_basis() || k != k_ || subspace_distance(basis_, candidate_, n, k) > settings_.threshold) {
        basis_ = candidate_;
        k_ = k;
        writer_.write_basis(basis_.data(), std::uint32_t(k_));
      }
      if (!settings_.plot.empty()) spectra_.push_back(item.values);
    } else if (!has_basis()) {
      throw Error(ErrorCode::invalid_input, "block " + std::to_string(item.stamp.sequence) +
                                                ": the first block's covariance could not be decomposed");
    }
    const eigstream::MatrixView<const cfloat> basis{basis_.data(), index_t(n), index_t(k_), index_t(n)};
    coefficients_.resize(k_ * snapshots);
    eigstream::klt_coefficients<float>(basis, item.block(), {coefficients_.data(), index_t(k_), index_t(snapshots), index_t(k_)});
    writer_.write_block(item.first_sample, std::uint32_t(snapshots), coefficients_);
    restored_.resize(n * snapshots);
    eigstream::klt_reconstruct<float>(basis, {coefficients_.data(), index_t(k_), index_t(snapshots), index_t(k_)},
                                      {restored_.data(), index_t(n), index_t(snapshots), index_t(n)});
    double signal = 0, error = 0;
    const sample_t* x = item.samples.data();
    for (std::size_t i = 0; i < n * snapshots; ++i) {
      signal += std::norm(std::complex<double>(x[i]));
      error += std::norm(std::complex<double>(x[i]) - std::complex<double>(restored_[i]));
    }
    signal_ += signal, error_ += error;
    if (!settings_.plot.empty())
      block_snr_db_.push_back(10 * std::log10(signal / std::max(error, std::numeric_limits<double>::min())));
    components_min_ = std::min(components_min_, k_);
    components_max_ = std::max(components_max_, k_);
    if (reconstructed_) reconstructed_->writer().write(restored_.data(), snapshots);
  }

  void finish() {
    writer_.finish();
    if (reconstructed_) reconstructed_->commit();
  }

  bool has_basis() const { return k_ > 0; }
  const io::KltTotals& totals() const { return writer_.totals(); }
  std::uint64_t output_bytes() const { return writer_.bytes(); }
  double snr_db() const { return error_ > 0 ? 10 * std::log10(signal_ / error_) : std::numeric_limits<double>::infinity(); }
  std::size_t components() const { return k_; }
  std::size_t components_min() const { return components_min_; }
  std::size_t components_max() const { return components_max_; }
  const std::vector<std::vector<float>>& spectra() const { return spectra_; }
  const std::vector<double>& block_snr_db() const { return block_snr_db_; }

 private:

  const Settings& settings_;
  std::size_t channels_;
  io::KltWriter writer_;
  eigstream::ComponentRule rule_;
  std::unique_ptr<eigstream::apps::PendingSampleFile> reconstructed_;  // written as NAME.partial
  std::vector<cfloat> basis_, candidate_, coefficients_;
  std::vector<sample_t> restored_;
  std::size_t k_ = 0;
  double signal_ = 0, error_ = 0;
  std::size_t components_min_ = std::numeric_limits<std::size_t>::max(), components_max_ = 0;
  std::vector<std::vector<float>> spectra_;
  std::vector<double> block_snr_db_;
};

// The eigenvalue spectrum (dB) over blocks and the per-block reconstruction SNR, through gnuplot.
std::string plot(const Settings& s, const Compressor& c, std::size_t channels) {
  const std::string data = s.plot + ".dat";
  {
    std::ofstream out(data);
    for (std::size_t b = 0; b < c.spectra().size(); ++b) {
      out << b;
      for (float w : c.spectra()[b]) out << ' ' << 10 * std::log10(std::max(double(w), 1e-30));
      out << '\n';
    }
    out << "\n\n";
    for (std::size_t b = 0; b < c.block_snr_db().size(); ++b) out << b << ' ' << c.block_snr_db()[b] << '\n';
    if (!out) return "cannot write " + data + "; no picture was written";
  }
  using eigstream::apps::gnuplot_quoted;
  std::string script = "set terminal pngcairo size 1000,700\nset output " + gnuplot_quoted(s.plot) +
                       "\nset multiplot layout 2,1\nset title 'Eigenvalues of the covariance (dB) per block'\n"
                       "set xlabel 'block'\nset ylabel 'dB'\nplot ";
  for (std::size_t i = 0; i < channels; ++i)
    script += (i ? ", " : "") + gnuplot_quoted(data) + " index 0 using 1:" + std::to_string(i + 2) +
              " with lines notitle";
  script += "\nset title 'Reconstruction SNR per block (dB)'\nplot " + gnuplot_quoted(data) +
            " index 1 using 1:2 with lines notitle\nunset multiplot\n";
  std::string why_not = eigstream::apps::run_gnuplot(script);
  std::remove(data.c_str());
  return why_not;
}

int run(const Settings& s) {
  eigstream::apps::Input input = eigstream::apps::open_input(s.input);
  const std::size_t channels = input.reader->channels();
  const double sample_rate = input.reader->sample_rate();
  if (s.components > index_t(channels))
    throw Error(ErrorCode::invalid_argument, "--components " + std::to_string(s.components) + " but the input has " +
                                                 std::to_string(channels) + " channels");
  // (The container and the reconstruction are written as NAME.partial and renamed over NAME when done.)
  for (const auto& [flag, path] : {std::pair{"--out", s.out}, {"--reconstructed", s.reconstructed}, {"--json", s.json},
                                   {"--plot", s.plot}})
    eigstream::apps::refuse_input_as_output(input, flag, path);
  if (!s.quiet) std::cerr << "klt_compress: " << input.description << " -> " << s.out << '\n';

  Compressor compressor(s, channels, sample_rate);
  io::PipelineOptions po;
  po.status_interval_seconds = s.quiet ? 0 : 1;
  io::Pipeline pipeline(po);
  auto& source = pipeline.add<io::ReaderSource>("source", std::move(input.reader), io::ReaderSourceOptions{s.block});
  io::CovarianceStageConfig cc;
  cc.covariance.channels = index_t(channels);
  cc.covariance.mode = eigstream::CovarianceConfig::Mode::exponential;
  cc.covariance.lambda = s.lambda;
  cc.block_samples = s.block;
  cc.keep_samples = true;
  auto& covariance = pipeline.add<io::CovarianceStage>("covariance", cc);
  io::DecomposeStageConfig dc;
  dc.channels = channels;
  eigstream::parse_backend(s.backend, dc.options.backend);  // checked by --backend's IsMember
  dc.block_samples = s.block;
  auto& decompose = pipeline.add<io::DecomposeStage>("decompose", dc);
  auto& sink = pipeline.add<io::CallbackSink<io::DecompositionItem>>(
      "compress", [&](const io::DecompositionItem& item) { compressor.consume(item); });
  pipeline.connect(source, covariance);
  pipeline.connect(covariance, decompose);
  pipeline.connect(decompose, sink);
  const auto t0 = std::chrono::steady_clock::now();
  const bool interrupted = eigstream::apps::run_pipeline(pipeline, "klt_compress");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!compressor.has_basis()) throw Error(ErrorCode::invalid_input, "the input holds no samples");
  compressor.finish();

  const io::KltTotals& t = compressor.totals();
  const std::uint64_t input_bytes = t.samples * input.bytes_per_sample;
  nlohmann::json summary = {
      {"input", input.description},
      {"output", s.out},
      {"channels", channels},
      {"samples", t.samples},
      {"blocks", t.blocks},
      {"basis_updates", t.basis_updates},
      {"coefficients", s.coefficients},
      {"input_bytes", input_bytes},
      {"output_bytes", compressor.output_bytes()},
      {"compression_ratio", double(input_bytes) / double(compressor.output_bytes())},
      {"snr_db", compressor.snr_db()},
      {"components", compressor.components()},
      {"components_min", compressor.components_min()},
      {"components_max", compressor.components_max()},
      {"samples_per_second", double(t.samples) / seconds},
      {"seconds", seconds},
      {"backend", eigstream::to_string(decompose.backend())},
  };
  eigstream::apps::record_stage_counts(summary, pipeline);
  if (interrupted) summary["interrupted"] = true;
  if (!s.plot.empty()) eigstream::apps::record_plot(summary, "klt_compress", s.plot, plot(s, compressor, channels));
  eigstream::apps::write_summary(summary, s.json);
  return eigstream::apps::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"klt_compress: adaptive KLT compression of a multichannel stream (a raw file, SigMF, UDP or TCP)\n"
               "into a KLT container that klt_decompress restores.",
               "klt_compress"};
  app.footer(
      "\nEach block of --block samples updates a covariance with forgetting factor --lambda; its\n"
      "eigenvectors (warm-started from the previous block's) give the kept components: --components K, or\n"
      "the fewest whose eigenvalues hold --energy of the total. A new basis is written only when the kept\n"
      "subspace has moved more than --threshold (distance sqrt(1 - ||B^H B'||_F^2 / k), 0 to 1) from the\n"
      "basis in force; every block's coefficients in the basis in force follow (int16 with a per-block\n"
      "scale, or float32). The container is written as OUT.partial and renamed when complete.\n\n"
      "On success one JSON line on stdout: input_bytes, output_bytes, compression_ratio, snr_db (of the\n"
      "reconstruction against the input, over all samples; null when the error is zero, as JSON has\n"
      "no infinity), components (of the last block; components_min and components_max), samples_per_second,\n"
      "backend, and samples, blocks, basis_updates, seconds; and, where not 0, what the input counted:\n" +
      eigstream::apps::kStageCountsHelp + ".\n"
      "A status line on stderr every second unless --quiet.\n\n"
      "Ctrl-C (SIGINT) or SIGTERM ends the input early: what was read is finished as usual and the summary\n"
      "says \"interrupted\": true (exit code 0); a second one quits at once (exit code 128 + the signal).\n\n"
      "Exit codes: 0 success; 1 internal error; 2 bad usage or bad input (the message on stderr starts\n"
      "with 'klt_compress: '; no container is left behind).\n\n"
      "Example:\n"
      "  siggen mixture --channels 16 --latent 4 --snr 40 --samples 200000 --out mix.cf32\n"
      "  klt_compress --in mix.cf32 --channels 16 --components 4 --out mix.klt\n"
      "  klt_decompress --in mix.klt --out restored.cf32\n");
  eigstream::apps::add_input_flags(app, s.input);
  app.add_option("--out", s.out, "The KLT container to write")->required()->type_name("FILE");
  app.add_option("--block", s.block, "Samples per block")->check(CLI::Range(std::size_t(1), std::size_t(1) << 20))->capture_default_str();
  app.add_option("--lambda", s.lambda, "Forgetting factor of the covariance, in [0, 1): the weight of the past")
      ->check(CLI::Range(0.0, 1.0 - std::numeric_limits<double>::epsilon()))
      ->capture_default_str();
  auto* k =
      app.add_option("--components", s.components, "Keep exactly K components")->check(eigstream::apps::positive());
  app.add_option("--energy", s.energy, "Keep the fewest components holding this fraction of the energy, in (0, 1]")
      ->check(CLI::Range(std::numeric_limits<double>::min(), 1.0))
      ->excludes(k)
      ->capture_default_str();
  app.add_option("--threshold", s.threshold, "Write a new basis when the kept subspace moved more than this (0 to 1)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--coefficients", s.coefficients, "Coefficient format: int16 (per-block scale) or float32")
      ->check(CLI::IsMember({"int16", "float32"}))
      ->capture_default_str();
  app.add_option("--backend", s.backend, "Where the decomposition runs: auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--json", s.json, "Also write the summary (indented) to this file");
  app.add_option("--plot", s.plot, "Draw the eigenvalue spectrum over time and the per-block reconstruction SNR "
                                   "to this PNG (needs gnuplot)");
  app.add_option("--reconstructed", s.reconstructed,
                 "Also write the reconstruction klt_decompress will produce, as raw cf32 (for checking)");
  app.add_flag("--quiet", s.quiet, "No status line");
  return eigstream::apps::run_app(app, argc, argv, [&] { return run(s); });
}
