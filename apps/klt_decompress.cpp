// klt_decompress: restores the samples of a KLT container (klt_compress's output) as a raw cf32 file
// or a SigMF recording: each block is basis * coefficients, with the basis in force for it. Samples
// the compressor's input had lost (gaps between blocks) are written as zeros and counted.
// Exit codes: 0 success, 1 internal error, 2 bad usage or bad input (a corrupt or truncated container),
// 128 + the signal when SIGINT or SIGTERM interrupts it (the unfinished output is removed).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "eigstream/eigstream.hpp"
#include "eigstream/streaming/file_io.hpp"
#include "eigstream/streaming/klt_container.hpp"
#include "eigstream/streaming/sigmf.hpp"
#include "app_main.hpp"
#include "pending_output.hpp"

namespace {

using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::index_t;
using eigstream::sample_t;
namespace io = eigstream::streaming;

struct Settings {
  std::string in, out, sigmf;
};

// The restored samples: a raw cf32 file or a SigMF recording, renamed into place when complete.
std::unique_ptr<eigstream::apps::PendingSampleFile> open_output(const Settings& s, std::size_t channels,
                                                                double sample_rate) {
  if (!s.out.empty())
    return eigstream::apps::PendingSampleFile::raw(s.out, io::SampleFormat::cf32_le, channels, "klt_decompress");
  io::SigmfMetadata meta;
  meta.datatype = io::SampleFormat::cf32_le;
  meta.num_channels = channels;
  meta.sample_rate = sample_rate;
  meta.description = "restored by klt_decompress from " + s.in;
  meta.captures.push_back({});
  return eigstream::apps::PendingSampleFile::sigmf(s.sigmf, meta, "klt_decompress");
}

// A gap is written as zeros, and a container may declare any gap: refuses one whose zeros would leave
// the output's file system less than kKeepFreeBytes, before writing any of them, rather than fill the
// disk. (Where the free space cannot be read, the write itself fails when the disk is full.)
constexpr std::uint64_t kKeepFreeBytes = std::uint64_t(64) << 20;

void check_room_for_gap(const Settings& s, const eigstream::apps::PendingSampleFile& output, std::uint64_t block,
                        std::uint64_t first_sample, std::uint64_t gap, std::size_t channels) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path where = fs::absolute(output.data_path(), error).parent_path();
  const fs::space_info space = fs::space(where, error);
  if (error) return;
  const std::uint64_t room = space.available > kKeepFreeBytes ? space.available - kKeepFreeBytes : 0;
  const std::uint64_t sample_bytes = channels * sizeof(sample_t);
  if (gap <= room / sample_bytes) return;
  throw Error(ErrorCode::invalid_input,
              s.in + ": block " + std::to_string(block) + " starts at sample " + std::to_string(first_sample) +
                  " after a gap of " + std::to_string(gap) + " lost samples: restoring them as zeros needs " +
                  std::to_string(gap) + " x " + std::to_string(sample_bytes) + " bytes, and " + where.string() +
                  " has " + std::to_string(space.available) + " bytes free (of which 64 MiB are to stay free)");
}

int run(const Settings& s) {
  const auto t0 = std::chrono::steady_clock::now();
  io::KltReader reader(s.in);
  const std::size_t channels = reader.header().channels;
  const auto output = open_output(s, channels, reader.header().sample_rate);
  io::KltBlock block;
  std::vector<std::complex<float>> basis;
  std::vector<sample_t> samples, zeros;
  bool basis_changed = false;
  std::uint64_t next_sample = 0, gap_samples = 0, blocks = 0;
  for (; reader.next(block, basis, basis_changed); ++blocks) {
    if (block.first_sample > next_sample) {  // samples the compressor's input had lost
      const std::uint64_t gap = block.first_sample - next_sample;
      check_room_for_gap(s, *output, blocks, block.first_sample, gap, channels);
      zeros.assign(channels * 4096, sample_t{});
      for (std::uint64_t left = gap; left > 0;) {
        const std::size_t count = std::size_t(std::min<std::uint64_t>(left, 4096));
        output->writer().write(zeros.data(), count);
        left -= count;
      }
      gap_samples += gap;
    }
    const index_t n = index_t(channels), k = index_t(block.components), l = index_t(block.snapshots);
    samples.resize(channels * block.snapshots);
    eigstream::klt_reconstruct<float>({basis.data(), n, k, n}, {block.coefficients.data(), k, l, k},
                                      {samples.data(), n, l, n});
    output->writer().write(samples.data(), block.snapshots);
    next_sample = block.first_sample + block.snapshots;
  }
  output->commit();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const io::KltTotals& t = reader.totals();
  std::cout << nlohmann::json{{"input", s.in},
                              {"output", output->data_path()},
                              {"channels", channels},
                              {"samples", t.samples + gap_samples},
                              {"gap_samples", gap_samples},
                              {"blocks", t.blocks},
                              {"basis_updates", t.basis_updates},
                              {"output_bytes", (t.samples + gap_samples) * channels * 8},
                              {"samples_per_second", double(t.samples) / seconds},
                              {"seconds", seconds}}
                   .dump()
            << std::endl;
  return eigstream::apps::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"klt_decompress: restores the samples of a KLT container written by klt_compress.", "klt_decompress"};
  app.footer(
      "\nWrites complex float32 samples, channels interleaved per sample, to a raw file (--out) or a SigMF\n"
      "recording (--sigmf BASE: BASE.sigmf-meta and BASE.sigmf-data). The output is written under a\n"
      "temporary name and renamed when complete: a corrupt or truncated container leaves nothing behind.\n\n"
      "On success one JSON line on stdout: input, output, channels, samples, gap_samples (lost by the\n"
      "compressor's input, written as zeros), blocks, basis_updates, output_bytes, samples_per_second.\n\n"
      "Exit codes: 0 success; 1 internal error; 2 bad usage or bad input (the message on stderr starts\n"
      "with 'klt_decompress: ' and names the byte offset of a bad record, or the block whose gap of lost\n"
      "samples the output's file system has no room for); 128 + the signal when SIGINT or SIGTERM\n"
      "interrupts it (the unfinished output is removed).\n");
  app.add_option("--in", s.in, "The KLT container")->required()->type_name("FILE");
  auto* group = app.add_option_group("Output (exactly one)");
  group->add_option("--out", s.out, "Raw cf32 file")->type_name("FILE");
  group->add_option("--sigmf", s.sigmf, "SigMF recording BASE.sigmf-meta + BASE.sigmf-data")->type_name("BASE");
  group->require_option(1);
  return eigstream::apps::run_app(app, argc, argv, [&] { return run(s); });
}
