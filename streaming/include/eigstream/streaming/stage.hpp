// Stages: the one lifecycle every part of a pipeline has, whether it makes items (Source), turns
// items into items (Transform) or consumes them (Sink):
//   configure(context)  on the caller's thread when the pipeline starts: check settings, make pools
//   start()             on the stage's own thread, before the first item
//   process(...)        once per item (a source: once per item it makes, until its input ends)
//   flush()             the input has ended: emit or write what the stage still holds
//   stop()              the last call on the stage's thread
// The pipeline joins stages with edges, runs each on its own thread and keeps its statistics.
#pragma once

#include "eigstream/streaming/edge.hpp"
#include "eigstream/streaming/pool.hpp"
#include "eigstream/streaming/stamp.hpp"
#include "eigstream/streaming/stats.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace eigstream::streaming {

class Pipeline;
class GpuTimeline;  // (streaming/src) where GPU stage paths add their timed work

std::int64_t steady_now_ns() noexcept;

// What a stage learns when the pipeline starts, and where it makes its pools.
class StageContext {
 public:
  StageContext(std::size_t items_in_flight, std::vector<std::unique_ptr<PoolBase>>& pools,
               GpuTimeline* gpu_timeline = nullptr)
      : items_in_flight_(items_in_flight), pools_(pools), gpu_timeline_(gpu_timeline) {}

  // The most of this stage's output items that the queues and stages downstream can hold at once,
  // plus two the stage itself may hold. A pool this large lets back-pressure and the drop policies,
  // not the pool, decide what happens when a consumer is slow.
  std::size_t items_in_flight() const noexcept { return items_in_flight_; }

  // A pool of count items T(args...), owned by the pipeline (it outlives the stages and edges).
  template <class T, class... Args>
  Pool<T>& make_pool(std::size_t count, const Args&... args) {
    auto pool = std::make_unique<Pool<T>>(count, args...);
    Pool<T>& result = *pool;
    pools_.push_back(std::move(pool));
    return result;
  }

  // Where GPU stage paths add the spans of work they time, when the pipeline measures its GPU busy
  // time (PipelineOptions::measure_gpu_busy); else null.
  GpuTimeline* gpu_timeline() const noexcept { return gpu_timeline_; }

 private:
  std::size_t items_in_flight_;
  std::vector<std::unique_ptr<PoolBase>>& pools_;
  GpuTimeline* gpu_timeline_;
};

class Stage {
 public:
  explicit Stage(std::string name) : name_(std::move(name)) {}
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;
  virtual ~Stage() = default;

  const std::string& name() const noexcept { return name_; }
  // Counters since the start; safe to call from any thread while the pipeline runs.
  StageStats stats() const;

 protected:
  virtual void configure(StageContext&) {}
  virtual void start() {}
  virtual void flush() {}
  virtual void stop() {}

  // For stages that skip bad inputs or discard items themselves (on the stage's thread).
  void count_malformed(std::uint64_t n = 1) noexcept { add(malformed_, n); }
  void count_dropped(std::uint64_t n = 1) noexcept { add(dropped_, n); }
  // GPU stages: the stream time of their kernels and copies (StageStats::kernel_seconds, copy_seconds).
  void count_device_time(double kernel_seconds, double copy_seconds) noexcept {
    add(kernel_ns_, std::uint64_t(kernel_seconds * 1e9));
    add(copy_ns_, std::uint64_t(copy_seconds * 1e9));
  }
  // Counts an item leaving the stage (emitted, or consumed by a sink) and its latency.
  void record(const Stamp& stamp, std::size_t bytes) noexcept;
  // Busy time (StageStats::busy_seconds): the run loops time each process(); emit() and acquire()
  // take out the time spent waiting for room in the output queue or for an item of the pool.
  void add_busy(std::int64_t since_ns) noexcept;
  void add_blocked(std::int64_t since_ns) noexcept;
  // An item from `pool`. Waiting for one (all are downstream) is waiting on the consumers, as in
  // emit(), so it counts as blocked, not busy.
  template <class T>
  Handle<T> acquire(Pool<T>& pool) {
    if (Handle<T> item = pool.try_acquire()) return item;
    const std::int64_t since = steady_now_ns();
    Handle<T> item = pool.acquire();
    add_blocked(since);
    return item;
  }
  // Counters a stage keeps elsewhere (a reader's, an output queue's) added to its stats.
  virtual void add_counters(StageStats&) const {}

 private:
  friend class Pipeline;
  virtual void run() = 0;                       // process until the input ends
  virtual void discard_input() {}               // after a failure: release what still arrives
  virtual void close_output() {}                // always, last: tell the consumer nothing follows
  virtual void request_cancel() {}              // the pipeline is stopping (from another thread):
                                                // sources end soon, nothing waits on the program
  virtual bool takes_input() const { return false; }
  virtual bool gives_output() const { return false; }
  virtual EdgeBase* input_edge() const { return nullptr; }
  virtual EdgeBase* output_edge() const { return nullptr; }
  virtual std::size_t held_items() const { return 1; }  // input items it can hold at once

  // Every counter has one writer, the stage's thread, so a load and a store add without a lock.
  static void add(std::atomic<std::uint64_t>& counter, std::uint64_t n) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::string name_;
  std::atomic<std::uint64_t> items_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> malformed_{0};
  std::atomic<std::uint64_t> busy_ns_{0}, blocked_ns_{0}, kernel_ns_{0}, copy_ns_{0};
  LatencyHistogram latency_ns_;
  // The moving averages of the rates, updated when the stats are read.
  struct RateMeter {
    std::chrono::steady_clock::time_point last_time{};
    std::uint64_t last_items = 0, last_bytes = 0;
    double items_per_second = 0, bytes_per_second = 0;
    bool averaging = false;
  };
  mutable std::mutex rate_mutex_;
  mutable RateMeter rate_;
};

// Makes items of type Out until its input ends. process() makes (usually) one item and emits it,
// and returns false when there is nothing more. emit() numbers and time-stamps the item.
template <class Out>
class Source : public Stage {
 public:
  using output_type = Out;
  using Stage::Stage;

 protected:
  virtual bool process() = 0;
  // From another thread: make a process() blocked on the input return soon (for example by
  // cancelling a reader). process() is not called again after cancellation.
  virtual void cancel() {}
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }

  void emit(Handle<Out> item) {
    item->stamp.sequence = next_sequence_++;
    item->stamp.source_time_ns = steady_now_ns();
    record(item->stamp, item->bytes());
    const std::int64_t before_push = steady_now_ns();
    output_->push(std::move(item));
    add_blocked(before_push);
  }

 private:
  friend class Pipeline;
  void run() override {
    for (;;) {
      if (cancelled()) break;
      const std::int64_t start = steady_now_ns();
      const bool more = process();
      add_busy(start);
      if (!more) break;
    }
  }
  void close_output() override { output_->close(); }
  void request_cancel() override {
    cancelled_.store(true, std::memory_order_release);
    cancel();
  }
  bool gives_output() const override { return true; }
  EdgeBase* output_edge() const override { return output_; }

  Edge<Out>* output_ = nullptr;
  std::uint64_t next_sequence_ = 0;
  std::atomic<bool> cancelled_{false};
};

// Turns items of type In into items of type Out: process() receives each input and emits what it
// makes (the same handle passed on, or items from a pool of its own made in configure()).
template <class In, class Out>
class Transform : public Stage {
 public:
  using input_type = In;
  using output_type = Out;
  using Stage::Stage;

 protected:
  virtual void process(Handle<In> item) = 0;

  void emit(Handle<Out> item) {
    record(item->stamp, item->bytes());
    const std::int64_t before_push = steady_now_ns();
    output_->push(std::move(item));
    add_blocked(before_push);
  }

 private:
  friend class Pipeline;
  void run() override {
    while (Handle<In> item = input_->pop()) {
      const std::int64_t start = steady_now_ns();
      try {
        process(std::move(item));
      } catch (...) {
        count_dropped();  // the item it failed on
        throw;
      }
      add_busy(start);
    }
  }
  void discard_input() override {
    while (input_->pop()) count_dropped();
  }
  void close_output() override { output_->close(); }
  bool takes_input() const override { return true; }
  bool gives_output() const override { return true; }
  EdgeBase* input_edge() const override { return input_; }
  EdgeBase* output_edge() const override { return output_; }

  Edge<In>* input_ = nullptr;
  Edge<Out>* output_ = nullptr;
};

// Consumes items of type In. Each item is counted (with its latency) after process() returns.
// An item on which process() throws is counted as dropped (so is one a Transform fails on).
template <class In>
class Sink : public Stage {
 public:
  using input_type = In;
  using Stage::Stage;

 protected:
  virtual void process(Handle<In> item) = 0;

 private:
  friend class Pipeline;
  void run() override {
    while (Handle<In> item = input_->pop()) {
      const Stamp stamp = item->stamp;
      const std::size_t bytes = item->bytes();
      const std::int64_t start = steady_now_ns();
      try {
        process(std::move(item));
      } catch (...) {
        count_dropped();  // the item it failed on
        throw;
      }
      add_busy(start);
      record(stamp, bytes);
    }
  }
  void discard_input() override {
    while (input_->pop()) count_dropped();
  }
  bool takes_input() const override { return true; }
  EdgeBase* input_edge() const override { return input_; }

  Edge<In>* input_ = nullptr;
};

// Passes each item on unchanged (a tap point; the benchmark's hops).
template <class T>
class PassThrough : public Transform<T, T> {
 public:
  using Transform<T, T>::Transform;

 protected:
  void process(Handle<T> item) override { this->emit(std::move(item)); }
};

}  // namespace eigstream::streaming
