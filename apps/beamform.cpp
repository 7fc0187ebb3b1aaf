// beamform: direction finding and beamforming on a multichannel stream. Per block: the covariance,
// its eigendecomposition (warm-started from the previous block's), the number of sources (given, or
// estimated by MDL), the MUSIC directions of arrival and the MVDR beam powers over an angle grid,
// printed as one JSON line. A summary line ends the output; with ground truth (siggen's SigMF
// recordings, or --truth) it reports the RMS DOA error. Exit codes: 0 success, 1 internal error,
// 2 bad usage or bad input.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "eigstream/eigstream.hpp"
#include "eigstream/streaming/sigmf_spatial.hpp"
#include "eigstream/streaming/streaming.hpp"
#include "app_main.hpp"
#include "gnuplot.hpp"
#include "stream_input.hpp"

namespace {

using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::index_t;
namespace io = eigstream::streaming;

struct Settings {
  eigstream::apps::InputFlags input;
  index_t elements = 0;
  double spacing = 0.5;
  std::vector<std::string> positions;
  std::size_t block = 200;
  double lambda = 0;
  std::size_t sources = 0;
  double grid_step = 0.5;
  std::vector<double> truth;
  bool powers = true;
  std::string backend = "auto";
  std::string json, plot;
  bool quiet = false;
};

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

// An array and where its element positions came from (for messages).
struct Array {
  eigstream::ArrayGeometry geometry;
  std::string origin;
};

// The array: --positions, else --elements/--spacing, else the SigMF recording's geometry, else a
// uniform linear array of one element per channel.
Array array_of(const Settings& s, const eigstream::apps::Input& input, std::size_t channels) {
  if (!s.positions.empty()) {
    std::vector<eigstream::ArrayGeometry::Position> p;
    for (const std::string& text : s.positions) {
      const std::size_t colon = text.find(':');
      try {
        // The whole of each part a finite number (std::stod reads "0.5x" as 0.5, and "nan").
        const auto number = [](const std::string& part) {
          std::size_t used = 0;
          const double v = std::stod(part, &used);
          if (used != part.size() || !std::isfinite(v)) throw std::invalid_argument(part);
          return v;
        };
        p.push_back({number(text.substr(0, colon)), colon == std::string::npos ? 0.0 : number(text.substr(colon + 1))});
      } catch (const std::exception&) {
        bad("--position " + text + ": expected X:Y in wavelengths, for example 0.5:0");
      }
    }
    return {eigstream::ArrayGeometry(p), "--position"};
  }
  if (s.elements > 0) return {eigstream::ArrayGeometry::uniform_linear(s.elements, s.spacing), "--elements/--spacing"};
  if (input.sigmf && !input.sigmf->captures.empty() && !input.sigmf->captures[0].element_geometry.empty()) {
    const std::string meta = io::sigmf_paths(s.input.in).meta;
    return {io::sigmf_array_geometry(*input.sigmf, meta), meta + ", captures[0].spatial:element_geometry"};
  }
  return {eigstream::ArrayGeometry::uniform_linear(index_t(channels), s.spacing),
          "one element per channel, --spacing apart"};
}

// Error(invalid_argument) unless the array fits the input and has two or more elements, not all at one
// point: one element, or elements all at one point, see every direction alike.
void check_array(const Array& array, std::size_t channels) {
  const std::vector<eigstream::ArrayGeometry::Position>& p = array.geometry.positions();
  if (p.size() != channels)
    bad("the array (from " + array.origin + ") has " + std::to_string(p.size()) + " elements but the input " +
        std::to_string(channels) + " channels");
  if (p.size() < 2)
    bad("the array (from " + array.origin + ") has one element, so no direction can be estimated: MUSIC needs two "
        "or more");
  const auto at_first = [&p](const eigstream::ArrayGeometry::Position& q) { return q.x == p[0].x && q.y == p[0].y; };
  if (std::all_of(p.begin(), p.end(), at_first))
    bad("the element positions (from " + array.origin + ") coincide: all " + std::to_string(p.size()) +
        " elements are at one point, so no direction can be estimated");
}

// Errors of the estimates against the truth, over the blocks that found as many directions as there
// are true ones (sorted, paired in order).
struct DoaScore {
  double squared = 0;
  std::uint64_t pairs = 0, scored_blocks = 0, other_count_blocks = 0;
  void add(const std::vector<double>& truth, const double* doa, std::size_t count) {
    if (count != truth.size()) {
      ++other_count_blocks;
      return;
    }
    for (std::size_t i = 0; i < count; ++i) squared += (doa[i] - truth[i]) * (doa[i] - truth[i]);
    pairs += count;
    ++scored_blocks;
  }
};

std::string plot(const Settings& s, const std::vector<double>& angles, const std::vector<float>& music,
                 const std::vector<float>& mvdr) {
  const std::string data = s.plot + ".dat";
  {
    std::ofstream out(data);
    for (std::size_t g = 0; g < angles.size(); ++g)
      out << angles[g] << ' ' << 10 * std::log10(std::max(double(music[g]), 1e-30)) << ' '
          << 10 * std::log10(std::max(double(mvdr[g]), 1e-30)) << '\n';
    if (!out) return "cannot write " + data + "; no picture was written";
  }
  using eigstream::apps::gnuplot_quoted;
  const std::string script =
      "set terminal pngcairo size 1000,600\nset output " + gnuplot_quoted(s.plot) +
      "\nset title 'Last block: MUSIC pseudospectrum and MVDR beam pattern'\nset xlabel 'angle from broadside (degrees)'\n"
      "set ylabel 'dB'\nset grid\nplot " + gnuplot_quoted(data) + " using 1:2 with lines title 'MUSIC', " +
      gnuplot_quoted(data) + " using 1:3 with lines title 'MVDR'\n";
  std::string why_not = eigstream::apps::run_gnuplot(script);
  std::remove(data.c_str());
  return why_not;
}

int run(const Settings& s) {
  eigstream::apps::Input input = eigstream::apps::open_input(s.input);
  eigstream::apps::refuse_input_as_output(input, "--json", s.json);
  eigstream::apps::refuse_input_as_output(input, "--plot", s.plot);
  const std::size_t channels = input.reader->channels();
  const Array array = array_of(s, input, channels);
  check_array(array, channels);
  if (s.sources >= channels) bad("--sources " + std::to_string(s.sources) + " must be < the " + std::to_string(channels) + " elements");
  std::vector<double> truth = s.truth;
  if (truth.empty() && input.sigmf) truth = io::sigmf_source_angles(*input.sigmf);
  std::sort(truth.begin(), truth.end());
  if (!s.quiet) std::cerr << "beamform: " << input.description << ", " << channels << " elements\n";

  io::PipelineOptions po;
  po.status_interval_seconds = s.quiet ? 0 : 1;
  io::Pipeline pipeline(po);
  auto& source = pipeline.add<io::ReaderSource>("source", std::move(input.reader), io::ReaderSourceOptions{s.block});
  io::CovarianceStageConfig cc;
  cc.covariance.channels = index_t(channels);
  if (s.lambda > 0) {
    cc.covariance.mode = eigstream::CovarianceConfig::Mode::exponential;
    cc.covariance.lambda = s.lambda;
  } else {
    cc.covariance.mode = eigstream::CovarianceConfig::Mode::sliding_window;
    cc.covariance.window = 1;
  }
  auto& covariance = pipeline.add<io::CovarianceStage>("covariance", cc);
  io::DecomposeStageConfig dc;
  dc.channels = channels;
  eigstream::parse_backend(s.backend, dc.options.backend);  // checked by --backend's IsMember
  auto& decompose = pipeline.add<io::DecomposeStage>("decompose", dc);
  io::BeamformStageConfig bc;
  bc.geometry = array.geometry;
  bc.angles_deg = eigstream::angle_grid(-90, 90, s.grid_step);
  bc.sources = s.sources;
  auto& beamform = pipeline.add<io::BeamformStage>("beamform", bc);

  DoaScore score;
  std::uint64_t blocks = 0, skipped = 0;
  std::vector<float> last_music, last_mvdr;
  auto& sink = pipeline.add<io::CallbackSink<io::BeamformItem>>("print", [&](const io::BeamformItem& item) {
    ++blocks;
    nlohmann::json line = {{"block", item.stamp.sequence}, {"first_sample", item.first_sample},
                           {"samples", item.end_sample - item.first_sample}};
    if (item.skipped()) {
      ++skipped;
      line["skipped"] = true;
    } else {
      line["num_sources"] = item.sources;
      line["doa_deg"] = std::vector<double>(item.doa_storage.begin(), item.doa_storage.begin() + std::ptrdiff_t(item.doas));
      line["sweeps"] = item.info.sweeps;
      if (s.powers) {
        std::vector<float> db(item.mvdr_power.size());
        for (std::size_t g = 0; g < db.size(); ++g) db[g] = float(10 * std::log10(std::max(double(item.mvdr_power[g]), 1e-30)));
        line["mvdr_power_db"] = db;
      }
      if (!truth.empty()) score.add(truth, item.doa_storage.data(), item.doas);
      if (!s.plot.empty() && item.sources > 0) last_music = item.music_spectrum, last_mvdr = item.mvdr_power;
    }
    std::cout << line.dump() << '\n';
  });
  pipeline.connect(source, covariance);
  pipeline.connect(covariance, decompose);
  pipeline.connect(decompose, beamform);
  pipeline.connect(beamform, sink);
  const auto t0 = std::chrono::steady_clock::now();
  const bool interrupted = eigstream::apps::run_pipeline(pipeline, "beamform");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (blocks == 0) throw Error(ErrorCode::invalid_input, "the input holds no samples");  // as klt_compress says

  nlohmann::json summary = {{"summary", true}, {"blocks", blocks}, {"skipped_blocks", skipped},
                            {"elements", channels}, {"block_samples", s.block}, {"seconds", seconds},
                            {"backend", eigstream::to_string(decompose.backend())}};
  eigstream::apps::record_stage_counts(summary, pipeline);
  if (interrupted) summary["interrupted"] = true;
  if (!truth.empty()) {
    summary["truth_deg"] = truth;
    summary["scored_blocks"] = score.scored_blocks;
    summary["blocks_with_another_count"] = score.other_count_blocks;
    if (score.pairs > 0) summary["rms_doa_error_deg"] = std::sqrt(score.squared / double(score.pairs));
  }
  if (!s.plot.empty())
    eigstream::apps::record_plot(summary, "beamform", s.plot,
                                 last_music.empty() ? "no block had sources to draw; no picture was written"
                                                    : plot(s, bc.angles_deg, last_music, last_mvdr));
  eigstream::apps::write_summary(summary, s.json);
  return eigstream::apps::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"beamform: direction finding (MUSIC, MDL) and MVDR beamforming on a multichannel stream (a raw\n"
               "file, SigMF, UDP or TCP), one JSON line per block.",
               "beamform"};
  app.footer(
      "\nArray: --position X:Y (one per element, wavelengths), else --elements N --spacing D (a uniform\n"
      "linear array), else the SigMF recording's spatial:element_geometry, else a uniform linear array of\n"
      "one element per channel spaced --spacing; one element, or elements all at one point, are refused.\n"
      "Angles are degrees from broadside, positive toward the array axis (+x), as siggen writes them.\n\n"
      "Each block of --block samples gives a covariance (that block's alone, or exponentially forgotten\n"
      "with --lambda), its eigendecomposition warm-started from the previous block's, and one JSON line on\n"
      "stdout: block, first_sample, samples, num_sources (--sources K, or MDL's estimate), doa_deg (MUSIC,\n"
      "ascending), sweeps, mvdr_power_db (MVDR beam powers over the grid -90:--grid-step:90, unless\n"
      "--no-powers). A last line with \"summary\": true gives blocks, skipped_blocks (NaN samples), backend\n"
      "and, with ground truth (SigMF spatial annotations, or --truth), truth_deg and rms_doa_error_deg over\n"
      "the blocks that found as many directions as there are true ones; and, where not 0, what the input\n"
      "counted: " + eigstream::apps::kStageCountsHelp + ". A status line on stderr every second unless\n"
      "--quiet.\n\n"
      "Ctrl-C (SIGINT) or SIGTERM ends the input early: what was read is finished as usual and the summary\n"
      "says \"interrupted\": true (exit code 0); a second one quits at once (exit code 128 + the signal).\n\n"
      "Exit codes: 0 success; 1 internal error; 2 bad usage or bad input (the message on stderr starts\n"
      "with 'beamform: ').\n\n"
      "Example:\n"
      "  siggen array --elements 8 --source -20:10 --source 35:10 --samples 20000 --sigmf doa\n"
      "  beamform --in doa.sigmf-meta --sources 2 --no-powers\n");
  eigstream::apps::add_input_flags(app, s.input);
  auto* elements = app.add_option("--elements", s.elements, "A uniform linear array of N elements")
                       ->check(eigstream::apps::positive());
  app.add_option("--spacing", s.spacing, "Element spacing of the uniform linear array, in wavelengths")
      ->check(eigstream::apps::positive())
      ->capture_default_str();
  app.add_option("--position", s.positions, "An element at X:Y wavelengths (repeat for each element)")
      ->type_name("X:Y")
      ->excludes(elements);
  app.add_option("--block", s.block, "Samples (snapshots) per block")->check(CLI::Range(std::size_t(2), std::size_t(1) << 20))->capture_default_str();
  app.add_option("--lambda", s.lambda, "Forget the covariance exponentially with this factor in (0, 1) (default: each block alone)")
      ->check(CLI::Range(std::numeric_limits<double>::min(), 1.0 - std::numeric_limits<double>::epsilon()));
  app.add_option("--sources", s.sources, "K, the number of sources (default: estimated by MDL per block)")
      ->check(eigstream::apps::positive());
  app.add_option("--grid-step", s.grid_step, "Step of the angle grid in degrees")->check(CLI::Range(1e-3, 90.0))->capture_default_str();
  app.add_option("--truth", s.truth, "True source angles in degrees, for the summary's DOA error")->delimiter(',');
  app.add_flag("!--no-powers", s.powers, "Leave the MVDR beam powers out of the per-block lines");
  app.add_option("--backend", s.backend, "Where the decomposition runs: auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--json", s.json, "Also write the summary (indented) to this file");
  app.add_option("--plot", s.plot, "Draw the last block's MUSIC pseudospectrum and MVDR beam pattern to this PNG (needs gnuplot)");
  app.add_flag("--quiet", s.quiet, "No status line");
  return eigstream::apps::run_app(app, argc, argv, [&] { return run(s); });
}
