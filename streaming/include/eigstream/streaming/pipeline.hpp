// Pipeline: owns stages, the edges that join them and the pools of their items; runs each stage on
// its own thread; starts, stops and drains them; reports their statistics and, when asked, prints
// a status line periodically.
#pragma once

#include "eigstream/streaming/edge.hpp"
#include "eigstream/streaming/pool.hpp"
#include "eigstream/streaming/stage.hpp"
#include "eigstream/streaming/stats.hpp"

#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace eigstream::streaming {

struct PipelineOptions {
  double status_interval_seconds = 0;  // > 0: print a status line this often (apps turn it on)
  std::FILE* status_stream = stderr;
  // Keep the time the GPU is busy with the GPU stage paths' work (gpu_busy()); costs a CUDA event
  // query and a lock per span of GPU work.
  bool measure_gpu_busy = false;
};

class Pipeline {
 public:
  explicit Pipeline(PipelineOptions options = {});
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();  // stops a running pipeline (errors are not reported from here)

  // Makes a stage S(args...) owned by the pipeline.
  template <class S, class... Args>
  S& add(Args&&... args) {
    static_assert(std::is_base_of_v<Stage, S>, "Pipeline::add makes stages");
    auto stage = std::make_unique<S>(std::forward<Args>(args)...);
    S& result = *stage;
    stages_.push_back(std::move(stage));
    return result;
  }

  // Joins from's output to to's input with a queue of the given capacity and full-queue policy.
  template <class From, class To>
  void connect(From& from, To& to, EdgeOptions options = {}) {
    using T = typename From::output_type;
    static_assert(std::is_same_v<T, typename To::input_type>,
                  "Pipeline::connect: the producer's item type is not the consumer's");
    check_connect(from, to, options);
    auto edge = std::make_unique<Edge<T>>(options);
    from.output_ = edge.get();
    to.input_ = edge.get();
    links_.push_back({&from, &to});
    edges_.push_back(std::move(edge));
  }

  // Configures every stage (here; a stage's eigstream::Error propagates and nothing runs), then
  // starts one thread per stage.
  void start();
  // Returns when every stage has finished: the sources ended and everything in flight was processed.
  // Rethrows the first error a stage threw (the pipeline drained and stopped after it).
  void wait();
  // Asks the sources to end now, then waits as wait() does.
  void stop();
  // Asks the sources to end now and returns at once; callable from any thread (a signal watcher's,
  // say) while another waits in wait(), which returns once what is in flight has been processed.
  void request_stop();

  std::vector<StageStats> stats() const;  // one per stage, in the order they were added
  // Since the start, with PipelineOptions::measure_gpu_busy (else zero). Work is counted once its
  // stage has collected its time, after waiting for it (the covariance stage: once the blocks in
  // flight after it are queued; the decompose and beamform stages: once their group is done). Work
  // collected more than a second after later work was is undercounted (BusyUnion).
  GpuBusy gpu_busy() const;

 private:
  struct Link {
    Stage* from;
    Stage* to;
  };
  void check_connect(const Stage& from, const Stage& to, const EdgeOptions& options) const;
  std::size_t items_in_flight(const Stage& producer) const;
  void run_stage(Stage& stage);
  void join();
  void report_status();

  PipelineOptions options_;
  std::unique_ptr<GpuTimeline> gpu_timeline_;  // with measure_gpu_busy; outlives the stages
  // Destroyed in reverse order: edges release what they hold into pools, which go last.
  std::vector<std::unique_ptr<PoolBase>> pools_;
  std::vector<std::unique_ptr<Stage>> stages_;
  std::vector<std::unique_ptr<EdgeBase>> edges_;
  std::vector<Link> links_;
  std::vector<std::thread> threads_;
  bool started_ = false;

  std::mutex error_mutex_;
  std::exception_ptr error_;

  std::thread status_thread_;
  std::mutex status_mutex_;
  std::condition_variable status_cv_;
  bool status_done_ = false;
};

}  // namespace eigstream::streaming
