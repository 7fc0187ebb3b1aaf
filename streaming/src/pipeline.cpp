// Pipeline: checking the wiring, sizing the pools, one thread per stage, draining and stopping,
// errors, and the periodic status line.
#include "eigstream/streaming/pipeline.hpp"

#include "eigstream/error.hpp"
#include "gpu_timeline.hpp"

#include <chrono>
#include <string>

namespace eigstream::streaming {

Pipeline::Pipeline(PipelineOptions options)
    : options_(options), gpu_timeline_(options.measure_gpu_busy ? std::make_unique<GpuTimeline>() : nullptr) {}

Pipeline::~Pipeline() {
  request_stop();
  join();
}

void Pipeline::check_connect(const Stage& from, const Stage& to, const EdgeOptions& options) const {
  const std::string where = "streaming: connecting '" + from.name() + "' to '" + to.name() + "': ";
  if (started_) throw Error(ErrorCode::invalid_argument, where + "the pipeline has already started");
  if (from.output_edge()) throw Error(ErrorCode::invalid_argument, where + "'" + from.name() + "' is already connected");
  if (to.input_edge()) throw Error(ErrorCode::invalid_argument, where + "'" + to.name() + "' already has an input");
  if (&from == &to) throw Error(ErrorCode::invalid_argument, where + "a stage cannot feed itself");
  if (options.capacity == 0) throw Error(ErrorCode::invalid_argument, where + "the queue capacity must be at least 1");
}

std::size_t Pipeline::items_in_flight(const Stage& producer) const {
  std::size_t items = 2;  // the producer may hold one it is filling and one it has started
  const Stage* stage = &producer;
  for (;;) {
    const Stage* consumer = nullptr;
    for (const Link& link : links_)
      if (link.from == stage) consumer = link.to;
    if (!consumer) return items;
    items += stage->output_edge()->options().capacity + consumer->held_items();
    stage = consumer;
  }
}

void Pipeline::start() {
  if (started_) throw Error(ErrorCode::invalid_argument, "streaming: the pipeline was already started");
  if (stages_.empty()) throw Error(ErrorCode::invalid_argument, "streaming: the pipeline has no stages");
  for (const auto& stage : stages_) {
    if (stage->takes_input() && !stage->input_edge())
      throw Error(ErrorCode::invalid_argument, "streaming: stage '" + stage->name() + "' has no input connected");
    if (stage->gives_output() && !stage->output_edge())
      throw Error(ErrorCode::invalid_argument, "streaming: stage '" + stage->name() + "' has no output connected");
    // Upstream of every stage there must be a source, not a loop of stages feeding each other.
    const Stage* upstream = stage.get();
    for (std::size_t steps = 0; upstream && upstream->takes_input(); ++steps) {
      if (steps == stages_.size())
        throw Error(ErrorCode::invalid_argument, "streaming: stage '" + stage->name() + "' is in a loop with no source");
      const Stage* from = nullptr;
      for (const Link& link : links_)
        if (link.to == upstream) from = link.from;
      upstream = from;
    }
  }
  for (const auto& stage : stages_) {
    StageContext context(items_in_flight(*stage), pools_, gpu_timeline_.get());
    stage->configure(context);
    stage->stats();  // the baseline of the moving-average rates
  }
  started_ = true;
  threads_.reserve(stages_.size());
  for (const auto& stage : stages_) threads_.emplace_back([this, s = stage.get()] { run_stage(*s); });
  if (options_.status_interval_seconds > 0) status_thread_ = std::thread([this] { report_status(); });
}

void Pipeline::run_stage(Stage& stage) {
  try {
    stage.start();
    stage.run();
    stage.flush();
    stage.stop();
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    // Stop the input and keep consuming what is still in flight, so no stage waits forever.
    request_stop();
    stage.discard_input();
  }
  stage.close_output();
}

void Pipeline::request_stop() {
  for (const auto& stage : stages_) stage->request_cancel();
}

void Pipeline::join() {
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
  if (status_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(status_mutex_);
      status_done_ = true;
    }
    status_cv_.notify_all();
    status_thread_.join();
  }
}

void Pipeline::wait() {
  join();
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void Pipeline::stop() {
  request_stop();
  wait();
}

std::vector<StageStats> Pipeline::stats() const {
  std::vector<StageStats> all;
  all.reserve(stages_.size());
  for (const auto& stage : stages_) all.push_back(stage->stats());
  return all;
}

GpuBusy Pipeline::gpu_busy() const { return gpu_timeline_ ? gpu_timeline_->busy() : GpuBusy{}; }

void Pipeline::report_status() {
  const auto interval = std::chrono::duration<double>(options_.status_interval_seconds);
  std::uint64_t dropped_before = 0;
  std::unique_lock<std::mutex> lock(status_mutex_);
  while (!status_cv_.wait_for(lock, interval, [this] { return status_done_; })) {
    const std::vector<StageStats> now = stats();
    std::uint64_t dropped = 0;
    for (const StageStats& s : now) dropped += s.dropped;
    const std::string line = format_status(now, dropped > dropped_before);
    dropped_before = dropped;
    std::fprintf(options_.status_stream, "%s\n", line.c_str());
    std::fflush(options_.status_stream);
  }
}

}  // namespace eigstream::streaming
