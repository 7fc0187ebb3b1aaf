// streambench: what the streaming runtime costs, on the CPU alone, with the machine's memcpy
// bandwidth measured in the same run for scale.
//
// Cases (64 channels of complex float, blocks of 1024 samples = 512 KiB by default):
//   hops  a source that emits pooled blocks without touching their samples -> three pass-through
//         stages -> a sink: blocks/s through the chain (handles move, samples do not) and latency
//   fill  the in-memory reader filling blocks (one memcpy each) -> a sink: bytes/s against memcpy
//   full  the in-memory reader -> three pass-through stages -> a sink
//   paced as hops, with the source paced at --paced-rate blocks/s: latency when queues are empty
// Each case runs --seconds after a short warm-up. Prints a markdown table; --json and --markdown
// write the results.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "eigstream/streaming/streaming.hpp"
#include "machine.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace es = eigstream::streaming;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Settings {
  std::size_t channels = 64;
  std::size_t block_samples = 1024;
  std::size_t queue = 64;
  double seconds = 3;
  double warmup = 0.3;
  double paced_rate = 10000;
  std::size_t block_bytes() const { return channels * block_samples * sizeof(es::sample_t); }
};

// Emits full blocks from its pool without writing their samples: only handles move. With a rate,
// it emits one block every 1/rate seconds; without, as fast as the pipeline takes them.
class HandleSource : public es::Source<es::Block> {
 public:
  HandleSource(std::string name, std::size_t channels, std::size_t block_samples, double blocks_per_second = 0)
      : es::Source<es::Block>(std::move(name)), channels_(channels), block_samples_(block_samples),
        blocks_per_second_(blocks_per_second) {}

 protected:
  void configure(es::StageContext& context) override {
    pool_ = &context.make_pool<es::Block>(context.items_in_flight(), channels_, block_samples_);
  }
  void start() override { start_ = Clock::now(); }
  bool process() override {
    if (blocks_per_second_ > 0)
      std::this_thread::sleep_until(start_ + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(emitted_++ / blocks_per_second_)));
    es::Handle<es::Block> block = acquire(*pool_);
    block->samples = block_samples_;
    emit(std::move(block));
    return true;
  }

 private:
  std::size_t channels_, block_samples_;
  double blocks_per_second_;
  es::Pool<es::Block>* pool_ = nullptr;
  Clock::time_point start_;
  std::uint64_t emitted_ = 0;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Runs a started pipeline for the warm-up and the measured time, then stops it; returns the
// sink's items and bytes per second over the measured time, and the final stats.
json measure(es::Pipeline& pipeline, const Settings& settings, std::size_t sink) {
  pipeline.start();
  std::this_thread::sleep_for(std::chrono::duration<double>(settings.warmup));
  const es::StageStats before = pipeline.stats()[sink];
  const Clock::time_point t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(settings.seconds));
  const es::StageStats after = pipeline.stats()[sink];
  const double elapsed = seconds_since(t0);
  pipeline.stop();
  json stages = json::array();
  std::uint64_t dropped = 0;
  for (const es::StageStats& s : pipeline.stats()) {
    stages.push_back({{"name", s.name}, {"items", s.items}, {"latency_p50_us", s.latency_p50_seconds * 1e6},
                      {"latency_p99_us", s.latency_p99_seconds * 1e6}, {"queue_high_water", s.queue_high_water}});
    dropped += s.dropped;
  }
  return {{"blocks_per_second", static_cast<double>(after.items - before.items) / elapsed},
          {"bytes_per_second", static_cast<double>(after.bytes - before.bytes) / elapsed},
          {"dropped", dropped},
          {"stages", stages}};
}

// Source -> three pass-through stages -> sink.
template <class SourceStage, class... SourceArgs>
json chain_case(const Settings& settings, SourceArgs&&... source_args) {
  es::Pipeline pipeline;
  auto& source = pipeline.add<SourceStage>("source", std::forward<SourceArgs>(source_args)...);
  auto& one = pipeline.add<es::PassThrough<es::Block>>("pass1");
  auto& two = pipeline.add<es::PassThrough<es::Block>>("pass2");
  auto& three = pipeline.add<es::PassThrough<es::Block>>("pass3");
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [](const es::Block&) {});
  const es::EdgeOptions edge{settings.queue, es::FullPolicy::block};
  pipeline.connect(source, one, edge);
  pipeline.connect(one, two, edge);
  pipeline.connect(two, three, edge);
  pipeline.connect(three, sink, edge);
  json result = measure(pipeline, settings, 4);
  // One hop: from the source's output to the first stage's output.
  result["hop_latency_p99_us"] = result["stages"][1]["latency_p99_us"];
  result["end_to_end_latency_p99_us"] = result["stages"][4]["latency_p99_us"];
  return result;
}

// One thread copying block-sized pieces of the signal into `destinations` blocks, round robin: the
// work of the in-memory source without the runtime.
double memcpy_bandwidth(const std::vector<es::sample_t>& signal, std::size_t destinations, const Settings& settings) {
  const std::size_t values = settings.channels * settings.block_samples;
  std::vector<std::unique_ptr<es::HostBuffer>> blocks;
  for (std::size_t i = 0; i < destinations; ++i) {
    blocks.push_back(std::make_unique<es::HostBuffer>(settings.block_bytes()));
    std::memset(blocks.back()->data(), 0, settings.block_bytes());
  }
  const std::size_t pieces = signal.size() / values;
  std::size_t copies = 0;
  auto copy_for = [&](double seconds) {
    const Clock::time_point t0 = Clock::now();
    std::size_t n = 0;
    while (seconds_since(t0) < seconds)
      for (int k = 0; k < 16; ++k, ++n)
        std::memcpy(blocks[n % destinations]->data(), signal.data() + (n % pieces) * values, settings.block_bytes());
    return n;
  };
  copy_for(settings.warmup);
  const Clock::time_point t0 = Clock::now();
  copies = copy_for(settings.seconds);
  return static_cast<double>(copies * settings.block_bytes()) / seconds_since(t0);
}

std::string markdown(const json& report) {
  std::ostringstream md;
  const json& s = report["settings"];
  md << "# streambench, " << report["date"].get<std::string>() << "\n\n"
     << "`" << report["command"].get<std::string>() << "`\n\n"
     << "Machine: " << report["machine"]["cpu"].get<std::string>() << ", " << report["machine"]["cores"].get<int>()
     << " cores; at the start " << report["machine"]["load"]["runnable_threads"].get<int>()
     << " threads runnable, 1-minute load average " << report["machine"]["load"]["load_average_1min"].get<double>()
     << ". "
     << s["channels"].get<int>() << " channels of complex float, blocks of " << s["block_samples"].get<int>()
     << " samples (" << s["block_bytes"].get<std::size_t>() / 1024 << " KiB), queues of " << s["queue"].get<int>()
     << ", block policy, " << s["seconds"].get<double>() << " s per case, "
     << (s["pinned_blocks"].get<bool>() ? "pinned" : "pageable") << " host memory.\n\n"
     << "| case | blocks/s | GB/s | p99 hop latency | p99 source to sink | dropped |\n"
     << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  auto microseconds = [](const json& c, const char* key) {
    char text[32] = "";
    if (c.contains(key)) std::snprintf(text, sizeof text, "%.1f us", c[key].get<double>());
    return std::string(text);
  };
  char row[256];
  for (const char* name : {"hops", "fill", "full", "paced"}) {
    const json& c = report["cases"][name];
    std::snprintf(row, sizeof row, "| %s | %.0f | %.2f | %s | %s | %llu |\n", name, c["blocks_per_second"].get<double>(),
                  c["bytes_per_second"].get<double>() / 1e9, microseconds(c, "hop_latency_p99_us").c_str(),
                  microseconds(c, "end_to_end_latency_p99_us").c_str(),
                  static_cast<unsigned long long>(c["dropped"].get<std::uint64_t>()));
    md << row;
  }
  const json& t = report["targets"];
  std::snprintf(row, sizeof row,
                "\nmemcpy (one thread, same block size, the faster of just before and just after the fill case): %.2f GB/s. In-memory source fill: %.2f GB/s = %.0f%% of "
                "memcpy (target >= 80%%: %s).\nBlocks/s through three stages: %.0f (target >= 200000: %s).\n",
                report["memcpy_bytes_per_second"].get<double>() / 1e9,
                report["cases"]["fill"]["bytes_per_second"].get<double>() / 1e9, 100 * t["fill_fraction"].get<double>(),
                t["fill_met"].get<bool>() ? "met" : "NOT met", report["cases"]["hops"]["blocks_per_second"].get<double>(),
                t["blocks_per_second_met"].get<bool>() ? "met" : "NOT met");
  md << row;
  std::snprintf(row, sizeof row,
                "Latency: p99 from the source's output to the first stage's output (one hop) and to the sink, "
                "since the start; saturated cases queue %d blocks per edge, `paced` emits %.0f blocks/s.\n",
                s["queue"].get<int>(), s["paced_rate"].get<double>());
  md << row;
  return md.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"streambench: the streaming runtime's blocks/s, bytes/s and latency through three pass-through\n"
               "stages, and the in-memory source's fill rate against memcpy, in one run (CPU only)."};
  Settings settings;
  std::string json_path, md_path;
  app.add_option("--seconds", settings.seconds, "measured seconds per case")->check(CLI::PositiveNumber);
  app.add_option("--channels", settings.channels, "channels per sample")->check(CLI::PositiveNumber);
  app.add_option("--block-samples", settings.block_samples, "samples per block")->check(CLI::PositiveNumber);
  app.add_option("--queue", settings.queue, "capacity of every queue")->check(CLI::PositiveNumber);
  app.add_option("--paced-rate", settings.paced_rate, "blocks/s of the paced case")->check(CLI::PositiveNumber);
  app.add_option("--json", json_path, "write the results as JSON to this file");
  app.add_option("--markdown", md_path, "write the markdown table to this file");
  CLI11_PARSE(app, argc, argv);

  try {
    const json load_at_start = machine_load();
    // 256 blocks of signal, enough that the copies come from memory rather than cache.
    const std::size_t signal_samples = 256 * settings.block_samples;
    std::vector<es::sample_t> signal(signal_samples * settings.channels);
    for (std::size_t i = 0; i < signal.size(); ++i) signal[i] = {static_cast<float>(i % 1000), 1.0f};
    const std::size_t fill_pool = settings.queue + 3;

    json cases;
    cases["hops"] = chain_case<HandleSource>(settings, settings.channels, settings.block_samples);
    // memcpy just before and just after the fill case; the fill is compared with the faster.
    const double memcpy_before = memcpy_bandwidth(signal, fill_pool, settings);
    es::MemoryReaderOptions endless;
    endless.loop = true;
    {
      es::Pipeline pipeline;
      auto& source = pipeline.add<es::ReaderSource>(
          "source", std::make_unique<es::MemoryReader>(signal.data(), signal_samples, settings.channels, endless),
          es::ReaderSourceOptions{settings.block_samples, fill_pool});
      auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [](const es::Block&) {});
      pipeline.connect(source, sink, {settings.queue, es::FullPolicy::block});
      cases["fill"] = measure(pipeline, settings, 1);
    }
    const double memcpy_after = memcpy_bandwidth(signal, fill_pool, settings);
    const double memcpy_rate = std::max(memcpy_before, memcpy_after);
    cases["full"] = chain_case<es::ReaderSource>(
        settings, std::make_unique<es::MemoryReader>(signal.data(), signal_samples, settings.channels, endless),
        es::ReaderSourceOptions{settings.block_samples});
    cases["paced"] = chain_case<HandleSource>(settings, settings.channels, settings.block_samples, settings.paced_rate);

    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    const double fill_fraction = cases["fill"]["bytes_per_second"].get<double>() / memcpy_rate;
    const double blocks_per_second = cases["hops"]["blocks_per_second"].get<double>();
    std::string command = "streambench";
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
    const json report = {
        {"benchmark", "streambench"},
        {"command", command},
        {"date", date},
        {"machine", {{"cpu", cpu_model()}, {"cores", static_cast<int>(std::thread::hardware_concurrency())},
                     {"load", load_at_start}}},
        {"settings",
         {{"channels", settings.channels}, {"block_samples", settings.block_samples}, {"block_bytes", settings.block_bytes()},
          {"queue", settings.queue}, {"seconds", settings.seconds}, {"paced_rate", settings.paced_rate},
          {"pinned_blocks", es::HostBuffer(settings.block_bytes()).pinned()}}},
        {"memcpy_bytes_per_second", memcpy_rate},
        {"memcpy_bytes_per_second_before_after_fill", {memcpy_before, memcpy_after}},
        {"cases", cases},
        {"targets",
         {{"blocks_per_second_min", 200000}, {"blocks_per_second_met", blocks_per_second >= 200000},
          {"fill_fraction_min", 0.8}, {"fill_fraction", fill_fraction}, {"fill_met", fill_fraction >= 0.8}}}};
    const std::string md = markdown(report);
    std::cout << md;
    if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
    if (!md_path.empty()) std::ofstream(md_path) << md;
  } catch (const std::exception& e) {
    std::cerr << "streambench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
