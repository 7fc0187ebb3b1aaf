// pipebench: the processing stages: an in-memory source (looping over a simulated array signal) ->
// covariance (CPU, or cuBLAS with --backend cuda/auto) -> EVD (CPU, or on the GPU: groups of --group
// per launch of the batched kernel, or --solver persistent: up to --group in flight on the persistent
// solver) -> MVDR beam powers (CPU, or groups of --group on the GPU) -> a sink, as fast as it goes.
//
// 64 channels of complex float and blocks of 1024 snapshots by default; exponential forgetting; the
// EVD warm-started (case "warm") and cold (case "cold"); MVDR over -90..90 degrees by 0.5. Each
// case runs --seconds after a warm-up. Reports blocks/s, snapshots/s, samples/s (snapshots x
// channels), and the p50/p99 latency from the source's output to each stage's output (since the
// start; the queues hold --queue blocks, so under saturation latency includes waiting in them).
// With GPU stages, the fraction of the wall time the GPU was busy with their kernels and copies
// (work on several streams at once counted once; Pipeline::gpu_busy), and 1 minus it, the
// pipeline's overhead. Then the rates of what bounds the pipeline from outside: the source alone,
// and in CUDA builds with the covariance on the GPU, the copy of blocks to the GPU alone.
//
// The source (--source): "reader" copies each block's samples from the recording into the block
// (ReaderSource over a MemoryReader), as a program reading a file or socket does; "preloaded" hands
// out blocks whose samples are already in place, as a capture card's DMA leaves them, so that the
// CPU writing samples does not limit the rate.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "eigstream/simulation.hpp"
#include "eigstream/streaming/host_memory.hpp"
#include "eigstream/streaming/streaming.hpp"
#include "machine.hpp"

#if defined(EIGSTREAM_HAVE_CUDA)
#include <cuda_runtime.h>

#include "eigstream/detail/device_array.hpp"
#endif

#include <chrono>
#include <cstdint>
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
  double lambda = 0.9;
  double seconds = 5;
  double warmup = 1;
  std::string backend = "cpu";
  std::string covariance_backend, mvdr_backend;  // empty: as backend
  std::size_t group = 64;
  std::string solver = "auto";
  std::string source = "reader";
  std::size_t covariance_in_flight = es::CovarianceStageConfig{}.gpu_blocks_in_flight;
};

// Passes decompositions on and keeps the sum of their sweeps (read after the pipeline stopped).
class SweepTap : public es::Transform<es::DecompositionItem, es::DecompositionItem> {
 public:
  using Transform::Transform;
  std::uint64_t sweeps = 0, decompositions = 0;

 protected:
  void process(es::Handle<es::DecompositionItem> item) override {
    sweeps += std::uint64_t(item->info.sweeps);
    ++decompositions;
    emit(std::move(item));
  }
};

// The source for --source preloaded. Each block of its pool is filled once, the first time it is
// taken, with the next block of the recording (looped), and then emitted as it is each time it comes
// back: the blocks follow the order the pool returns them in, not the recording's.
class PreloadedSource : public es::Source<es::Block> {
 public:
  PreloadedSource(std::string name, const std::vector<es::sample_t>& recording, std::size_t channels,
                  std::size_t block_samples)
      : Source(std::move(name)), recording_(recording), channels_(channels), block_samples_(block_samples),
        finite_(!eigstream::find_non_finite({recording.data(), eigstream::index_t(channels),
                                             eigstream::index_t(recording.size() / channels),
                                             eigstream::index_t(channels)})
                     .found) {}

 protected:
  void configure(es::StageContext& context) override {
    pool_ = &context.make_pool<es::Block>(context.items_in_flight(), channels_, block_samples_);
  }
  bool process() override {
    es::Handle<es::Block> block = acquire(*pool_);
    if (block->samples == 0) {  // taken for the first time
      const std::size_t values = channels_ * block_samples_, recording_blocks = recording_.size() / values;
      std::copy_n(recording_.data() + (filled_++ % recording_blocks) * values, values, block->data());
      block->samples = block_samples_;
    }
    block->stamp.flags = es::block_finite_checked | (finite_ ? 0u : std::uint32_t{es::block_non_finite});
    block->first_sample = next_sample_;
    block->lost_before = 0;
    next_sample_ += block_samples_;
    emit(std::move(block));
    return true;
  }

 private:
  const std::vector<es::sample_t>& recording_;
  std::size_t channels_, block_samples_;
  bool finite_;
  es::Pool<es::Block>* pool_ = nullptr;
  std::size_t filled_ = 0;
  std::uint64_t next_sample_ = 0;
};

std::unique_ptr<es::MemoryReader> endless_reader(const Settings& settings, const std::vector<es::sample_t>& signal) {
  es::MemoryReaderOptions endless;
  endless.loop = true;
  return std::make_unique<es::MemoryReader>(signal.data(), signal.size() / settings.channels, settings.channels, endless);
}

// The source --source names, added to the pipeline.
es::Source<es::Block>& add_source(es::Pipeline& pipeline, const Settings& settings,
                                  const std::vector<es::sample_t>& signal) {
  if (settings.source == "preloaded")
    return pipeline.add<PreloadedSource>("source", signal, settings.channels, settings.block_samples);
  return pipeline.add<es::ReaderSource>("source", endless_reader(settings, signal),
                                        es::ReaderSourceOptions{settings.block_samples});
}

// Runs the started pipeline for the warm-up, then measures --seconds; stops it.
struct Window {
  std::vector<es::StageStats> before, after;
  es::GpuBusy busy_before, busy_after;
  double elapsed;
};
Window measure(es::Pipeline& pipeline, const Settings& settings) {
  Window w;
  std::this_thread::sleep_for(std::chrono::duration<double>(settings.warmup));
  w.before = pipeline.stats();
  w.busy_before = pipeline.gpu_busy();
  const Clock::time_point t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(settings.seconds));
  w.after = pipeline.stats();
  w.busy_after = pipeline.gpu_busy();
  w.elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  pipeline.stop();
  return w;
}

// The source alone, into a sink that drops each block: the most the pipeline can take from it.
double source_alone_blocks_per_second(const Settings& settings, const std::vector<es::sample_t>& signal) {
  es::Pipeline pipeline;
  auto& source = add_source(pipeline, settings, signal);
  auto& sink = pipeline.add<es::CallbackSink<es::Block>>("sink", [](const es::Block&) {});
  pipeline.connect(source, sink, es::EdgeOptions{settings.queue, es::FullPolicy::block});
  pipeline.start();
  const Window w = measure(pipeline, settings);
  return double(w.after[1].items - w.before[1].items) / w.elapsed;
}

#if defined(EIGSTREAM_HAVE_CUDA)
using eigstream::detail::check_cuda;

// The GPU's name, or false without one.
json gpu_description() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return false;
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  return prop.name;
}

// The copy of blocks to the GPU alone, as the covariance stage copies them (host memory as the
// blocks' own, 16 blocks in turn, back to back on one stream): the most blocks per second the link
// carries, which bounds a pipeline whose samples must all cross it.
double transfer_alone_blocks_per_second(const Settings& settings) {
  const std::size_t bytes = settings.channels * settings.block_samples * sizeof(es::sample_t), blocks = 16;
  const es::HostBuffer host_blocks(bytes * blocks);
  char* host = static_cast<char*>(host_blocks.data());
  std::memset(host, 0, bytes * blocks);
  void* device = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  check_cuda(cudaMalloc(&device, bytes), "transfer alone: cudaMalloc");
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "transfer alone: cudaStreamCreate");
  check_cuda(cudaEventCreate(&start), "transfer alone: cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "transfer alone: cudaEventCreate");
  const auto copies = [&](int count) {
    for (int k = 0; k < count; ++k)
      check_cuda(cudaMemcpyAsync(device, host + bytes * std::size_t(k % int(blocks)), bytes,
                                 cudaMemcpyHostToDevice, stream),
                 "transfer alone: cudaMemcpyAsync");
  };
  copies(200);  // warm-up
  double seconds = 0;
  int copied = 0;
  while (seconds < settings.seconds / 4) {
    const int count = 1000;
    check_cuda(cudaEventRecord(start, stream), "transfer alone: cudaEventRecord");
    copies(count);
    check_cuda(cudaEventRecord(stop, stream), "transfer alone: cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "transfer alone: copies");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "transfer alone: cudaEventElapsedTime");
    seconds += double(ms) * 1e-3;
    copied += count;
  }
  cudaEventDestroy(start), cudaEventDestroy(stop), cudaStreamDestroy(stream), cudaFree(device);
  return double(copied) / seconds;
}
#endif

json run_case(const Settings& settings, const std::vector<es::sample_t>& signal, bool warm_start) {
  es::CovarianceStageConfig covariance;
  covariance.covariance.channels = eigstream::index_t(settings.channels);
  covariance.covariance.lambda = settings.lambda;
  eigstream::Backend backend = eigstream::Backend::cpu;
  eigstream::parse_backend(settings.backend, backend);  // checked by the options' IsMember
  eigstream::Backend covariance_backend = backend, mvdr_backend = backend;
  if (!settings.covariance_backend.empty()) eigstream::parse_backend(settings.covariance_backend, covariance_backend);
  if (!settings.mvdr_backend.empty()) eigstream::parse_backend(settings.mvdr_backend, mvdr_backend);
  covariance.backend = covariance_backend;
  covariance.gpu_blocks_in_flight = settings.covariance_in_flight;
  es::DecomposeStageConfig decompose;
  decompose.channels = settings.channels;
  decompose.warm_start = warm_start;
  decompose.options.backend = backend;
  decompose.group = settings.group;
  decompose.gpu_solver = settings.solver == "persistent" ? es::GpuSolver::persistent
                         : settings.solver == "batched"  ? es::GpuSolver::batched
                                                         : es::GpuSolver::automatic;
  es::BeamformStageConfig beamform;
  beamform.geometry = eigstream::ArrayGeometry::uniform_linear(eigstream::index_t(settings.channels));
  beamform.music = false;
  beamform.backend = mvdr_backend;
  beamform.group = settings.group;

  es::PipelineOptions measured;
  measured.measure_gpu_busy = true;
  es::Pipeline pipeline(measured);
  auto& source = add_source(pipeline, settings, signal);
  auto& cov = pipeline.add<es::CovarianceStage>("covariance", covariance);
  auto& evd = pipeline.add<es::DecomposeStage>("evd", decompose);
  auto& tap = pipeline.add<SweepTap>("sweeps");
  auto& mvdr = pipeline.add<es::BeamformStage>("mvdr", beamform);
  auto& sink = pipeline.add<es::CallbackSink<es::BeamformItem>>("sink", [](const es::BeamformItem&) {});
  const es::EdgeOptions edge{settings.queue, es::FullPolicy::block};
  pipeline.connect(source, cov, edge);
  pipeline.connect(cov, evd, edge);
  pipeline.connect(evd, tap, edge);
  pipeline.connect(tap, mvdr, edge);
  pipeline.connect(mvdr, sink, edge);

  pipeline.start();
  const Window w = measure(pipeline, settings);
  const std::vector<es::StageStats>& before = w.before;
  const std::vector<es::StageStats>& after = w.after;
  const double elapsed = w.elapsed;

  // Per stage over the measured window: the fraction of it spent busy (the stage that limits the
  // rate is near 1), and for GPU stages in kernels and copies (stream time, CUDA events).
  json stages = json::array();
  std::uint64_t dropped = 0, malformed = 0;
  const std::vector<es::StageStats> final_stats = pipeline.stats();
  for (std::size_t i = 0; i < final_stats.size(); ++i) {
    const es::StageStats& s = final_stats[i];
    const double kernel = after[i].kernel_seconds - before[i].kernel_seconds;
    const double copy = after[i].copy_seconds - before[i].copy_seconds;
    stages.push_back({{"name", s.name}, {"items", s.items}, {"latency_p50_us", s.latency_p50_seconds * 1e6},
                      {"latency_p99_us", s.latency_p99_seconds * 1e6}, {"queue_high_water", s.queue_high_water},
                      {"busy_fraction", (after[i].busy_seconds - before[i].busy_seconds) / elapsed},
                      {"kernel_fraction", kernel / elapsed}, {"copy_fraction", copy / elapsed}});
    dropped += s.dropped;
    malformed += s.malformed;
  }
  const double blocks_per_second = double(after[5].items - before[5].items) / elapsed;
  return {{"warm_start", warm_start},
          {"covariance_backend", eigstream::to_string(cov.backend())},
          {"evd_backend", eigstream::to_string(evd.backend())},
          {"evd_solver", evd.gpu_solver() == es::GpuSolver::persistent ? "persistent"
                         : evd.gpu_solver() == es::GpuSolver::batched  ? "batched"
                                                                       : "none"},
          {"mvdr_backend", eigstream::to_string(mvdr.backend())},
          {"blocks_per_second", blocks_per_second},
          {"snapshots_per_second", blocks_per_second * double(settings.block_samples)},
          {"samples_per_second", blocks_per_second * double(settings.block_samples * settings.channels)},
          {"sample_bytes_per_second", blocks_per_second * double(settings.block_samples * settings.channels *
                                                                 sizeof(es::sample_t))},
          {"latency_p50_us", stages[5]["latency_p50_us"]},
          {"latency_p99_us", stages[5]["latency_p99_us"]},
          {"mean_sweeps", double(tap.sweeps) / double(tap.decompositions)},
          {"gpu_kernel_busy_fraction", (w.busy_after.kernel_seconds - w.busy_before.kernel_seconds) / elapsed},
          {"gpu_busy_fraction", (w.busy_after.seconds - w.busy_before.seconds) / elapsed},
          {"dropped", dropped},
          {"malformed", malformed},
          {"stages", stages}};
}

// A case's GPU busy fractions and overhead as three table cells, or dashes with no GPU stage.
std::string gpu_fractions(const json& c) {
  if (c["covariance_backend"] != "cuda" && c["evd_backend"] != "cuda" && c["mvdr_backend"] != "cuda") return "- | - | -";
  std::ostringstream cells;
  cells << c["gpu_kernel_busy_fraction"].get<double>() << " | " << c["gpu_busy_fraction"].get<double>() << " | "
        << 1 - c["gpu_busy_fraction"].get<double>();
  return cells.str();
}

std::string markdown(const json& report) {
  std::ostringstream md;
  const json& s = report["settings"];
  md << "# pipebench, " << report["date"].get<std::string>() << "\n\n`" << report["command"].get<std::string>()
     << "`\n\nMachine: " << report["machine"]["cpu"].get<std::string>() << ", " << report["machine"]["cores"].get<int>()
     << " cores; at the start " << report["machine"]["load"]["runnable_threads"].get<int>()
     << " threads runnable, 1-minute load average " << report["machine"]["load"]["load_average_1min"].get<double>()
     << (report["machine"]["gpu"].is_string() ? "; GPU: " + report["machine"]["gpu"].get<std::string>() : std::string())
     << ". " << s["channels"].get<std::size_t>() << " channels of complex float, blocks of "
     << s["block_samples"].get<std::size_t>() << " snapshots; covariance ("
     << report["cases"]["warm"]["covariance_backend"].get<std::string>() << ", exponential, lambda "
     << s["lambda"].get<double>()
     << (report["cases"]["warm"]["covariance_backend"] == "cuda"
             ? ", " + std::to_string(s["covariance_in_flight"].get<std::size_t>()) + " blocks in flight"
             : std::string())
     << ") -> EVD (" << report["cases"]["warm"]["evd_backend"].get<std::string>()
     << (report["cases"]["warm"]["evd_backend"] != "cuda" ? std::string()
         : report["cases"]["warm"]["evd_solver"] == "persistent" ? ", persistent solver, " + std::to_string(s["group"].get<std::size_t>()) + " in flight"
                                       : ", groups of " + std::to_string(s["group"].get<std::size_t>()) + " per launch")
     << ") -> MVDR beam powers over 361 angles (" << report["cases"]["warm"]["mvdr_backend"].get<std::string>()
     << "); queues of "
     << s["queue"].get<std::size_t>() << " blocks, block policy, " << s["seconds"].get<double>() << " s per case.\n\n"
     << "| case | blocks/s | snapshots/s | samples/s (snapshots x channels) | MB/s of samples | p50 latency | p99 latency | mean sweeps | GPU busy in kernels / wall | GPU busy in kernels or copies / wall | overhead | dropped |\n"
     << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const char* name : {"warm", "cold"}) {
    const json& c = report["cases"][name];
    md << "| " << name << " | " << c["blocks_per_second"].get<double>() << " | " << c["snapshots_per_second"].get<double>()
       << " | " << c["snapshots_per_second"].get<double>() * s["channels"].get<double>() << " | "
       << c["sample_bytes_per_second"].get<double>() / 1e6 << " | " << c["latency_p50_us"].get<double>() / 1e3
       << " ms | " << c["latency_p99_us"].get<double>() / 1e3 << " ms | " << c["mean_sweeps"].get<double>() << " | "
       << gpu_fractions(c) << " | " << c["dropped"].get<std::uint64_t>() << " |\n";
  }
  md << "\nSource: " << s["source"].get<std::string>()
     << (s["source"] == "preloaded" ? " (blocks whose samples are already in place, emitted as they are)"
                                    : " (each block's samples copied from the recording by a MemoryReader)")
     << ".\n\nThe source alone, into a sink that drops each block, gives "
     << report["source_alone_blocks_per_second"].get<double>() << " blocks/s; the whole pipeline runs at "
     << report["cases"]["warm"]["fraction_of_source_alone"].get<double>() << " (warm) and "
     << report["cases"]["cold"]["fraction_of_source_alone"].get<double>()
     << " (cold) of that rate (when the source limits the pipeline, 1 minus this is the cost of everything after it).\n";
  if (report.contains("transfer_alone_blocks_per_second"))
    md << "\nThe copy of blocks to the GPU alone (pinned host memory, back to back on one stream) gives "
       << report["transfer_alone_blocks_per_second"].get<double>() << " blocks/s ("
       << report["transfer_alone_blocks_per_second"].get<double>() * s["block_samples"].get<double>() *
              s["channels"].get<double>() * double(sizeof(es::sample_t)) / 1e9
       << " GB/s); the pipeline runs at " << report["cases"]["warm"]["fraction_of_transfer_alone"].get<double>()
       << " (warm) and " << report["cases"]["cold"]["fraction_of_transfer_alone"].get<double>()
       << " (cold) of that rate, the most a pipeline whose samples all cross to the GPU can reach.\n";
  md << "\nLatency: from the source's output to the sink, over the whole run. GPU busy: the time in "
        "which the GPU ran a kernel (or a copy between host and device) of a GPU stage, work on several streams "
        "at once counted once (CUDA events), over the measured wall time; overhead: 1 minus that, the wall "
        "time in which the GPU did none of the pipeline's work"
     << (report["cases"]["warm"]["evd_solver"] == "persistent" ? " (the persistent solver's resident kernel is not counted as busy)" : "")
     << ".\n\nPer stage, the fraction of the wall time each was busy "
        "(in process(), less waiting for room downstream; the stage that limits the rate is near 1), and for "
        "GPU stages, the stream time of their kernels + copies over the wall time:\n\n"
        "| case |";
  for (const json& stage : report["cases"]["warm"]["stages"]) md << " " << stage["name"].get<std::string>() << " |";
  md << "\n| --- |";
  for (std::size_t i = 0; i < report["cases"]["warm"]["stages"].size(); ++i) md << " ---: |";
  md << "\n";
  for (const char* name : {"warm", "cold"}) {
    md << "| " << name << " |";
    for (const json& stage : report["cases"][name]["stages"]) {
      md << " " << stage["busy_fraction"].get<double>();
      if (stage["kernel_fraction"].get<double>() > 0)
        md << " (GPU " << stage["kernel_fraction"].get<double>() << " + " << stage["copy_fraction"].get<double>() << ")";
      md << " |";
    }
    md << "\n";
  }
  return md.str();
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  std::string json_path, md_path;
  CLI::App app{"pipebench: covariance -> EVD -> MVDR, from memory, as fast as it goes"};
  app.add_option("--covariance-backend", settings.covariance_backend, "the covariance stage's, if not --backend")
      ->check(CLI::IsMember({"cpu", "auto", "cuda"}));
  app.add_option("--mvdr-backend", settings.mvdr_backend, "the MVDR stage's, if not --backend")
      ->check(CLI::IsMember({"cpu", "auto", "cuda"}));
  app.add_option("--backend", settings.backend, "where covariance, EVD and MVDR run: cpu, auto or cuda")
      ->check(CLI::IsMember({"cpu", "auto", "cuda"}));
  app.add_option("--group", settings.group, "GPU: covariances per EVD launch, or in flight with --solver persistent")
      ->check(CLI::PositiveNumber);
  app.add_option("--solver", settings.solver,
                 "GPU EVD: batched (groups per launch), persistent (resident kernel) or auto (persistent)")
      ->check(CLI::IsMember({"auto", "batched", "persistent"}));
  app.add_option("--source", settings.source,
                 "reader (copies each block from the recording, as from a file) or preloaded (blocks already "
                 "in pinned memory, as a capture card's DMA leaves them)")
      ->check(CLI::IsMember({"reader", "preloaded"}));
  app.add_option("--covariance-in-flight", settings.covariance_in_flight,
                 "GPU covariance: blocks queued on the GPU at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--channels", settings.channels, "channels (array elements)")->check(CLI::Range(2, 1024));
  app.add_option("--block", settings.block_samples, "snapshots per block")->check(CLI::PositiveNumber);
  app.add_option("--queue", settings.queue, "blocks each queue holds")->check(CLI::PositiveNumber);
  app.add_option("--seconds", settings.seconds, "measured seconds per case")->check(CLI::PositiveNumber);
  app.add_option("--json", json_path, "write the results as JSON to this file");
  app.add_option("--markdown", md_path, "write the markdown table to this file");
  CLI11_PARSE(app, argc, argv);

  try {
    const json load_at_start = machine_load();
    // 16 blocks of three sources on the array, looped.
    eigstream::ArraySignalConfig config;
    config.geometry = eigstream::ArrayGeometry::uniform_linear(eigstream::index_t(settings.channels));
    config.sources = {{-30, 10}, {5, 0}, {40, 5}};
    eigstream::ArraySignal source(config);
    const std::size_t snapshots = 16 * settings.block_samples;
    std::vector<es::sample_t> signal(snapshots * settings.channels);
    source.generate({signal.data(), eigstream::index_t(settings.channels), eigstream::index_t(snapshots),
                     eigstream::index_t(settings.channels)});

    json cases;
    cases["warm"] = run_case(settings, signal, true);
    cases["cold"] = run_case(settings, signal, false);
    const double source_alone = source_alone_blocks_per_second(settings, signal);
    for (const char* name : {"warm", "cold"})
      cases[name]["fraction_of_source_alone"] = cases[name]["blocks_per_second"].get<double>() / source_alone;
    json gpu = false;
    double transfer_alone = 0;
#if defined(EIGSTREAM_HAVE_CUDA)
    gpu = gpu_description();
    if (cases["warm"]["covariance_backend"] == "cuda") {
      transfer_alone = transfer_alone_blocks_per_second(settings);
      for (const char* name : {"warm", "cold"})
        cases[name]["fraction_of_transfer_alone"] = cases[name]["blocks_per_second"].get<double>() / transfer_alone;
    }
#endif

    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::string command = "pipebench";
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
    json report = {
        {"benchmark", "pipebench"},
        {"command", command},
        {"date", date},
        {"machine", {{"cpu", cpu_model()}, {"cores", static_cast<int>(std::thread::hardware_concurrency())},
                     {"load", load_at_start}, {"gpu", gpu}}},
        {"settings",
         {{"channels", settings.channels}, {"block_samples", settings.block_samples}, {"queue", settings.queue},
          {"lambda", settings.lambda}, {"seconds", settings.seconds}, {"backend", settings.backend},
          {"group", settings.group}, {"solver", settings.solver}, {"source", settings.source},
          {"covariance_in_flight", settings.covariance_in_flight}, {"covariance_backend", settings.covariance_backend.empty() ? settings.backend : settings.covariance_backend},
          {"mvdr_backend", settings.mvdr_backend.empty() ? settings.backend : settings.mvdr_backend}}},
        {"cases", cases},
        {"source_alone_blocks_per_second", source_alone}};
    if (transfer_alone > 0) report["transfer_alone_blocks_per_second"] = transfer_alone;
    const std::string md = markdown(report);
    std::cout << md;
    if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
    if (!md_path.empty()) std::ofstream(md_path) << md;
  } catch (const std::exception& e) {
    std::cerr << "pipebench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
