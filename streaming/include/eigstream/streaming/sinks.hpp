// Sink stages: WriterSink writes blocks to any SampleWriter; CallbackSink calls a function on each
// item; OutputQueueSink hands items to the embedding program through a bounded queue.
#pragma once

#include "eigstream/streaming/block.hpp"
#include "eigstream/streaming/edge.hpp"
#include "eigstream/streaming/sample_io.hpp"
#include "eigstream/streaming/stage.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace eigstream::streaming {

class WriterSink : public Sink<Block> {
 public:
  WriterSink(std::string name, std::unique_ptr<SampleWriter> writer);

 protected:
  void process(Handle<Block> block) override;  // throws eigstream::Error when channels differ
  void flush() override;

 private:
  std::unique_ptr<SampleWriter> writer_;
};

// The function runs on the sink's thread; the item goes back to its pool when it returns.
template <class T>
class CallbackSink : public Sink<T> {
 public:
  CallbackSink(std::string name, std::function<void(const T&)> callback)
      : Sink<T>(std::move(name)), callback_(std::move(callback)) {}

 protected:
  void process(Handle<T> item) override { callback_(*item); }

 private:
  std::function<void(const T&)> callback_;
};

// The embedding program pops the items (from any one thread). Its queue has a full-queue policy of
// its own: block (the default) holds the pipeline back until the program pops. Once the pipeline is
// stopping (stop() or its destruction), what does not fit the queue is dropped (counted), so a
// program that no longer pops cannot hold the stop up. Items popped hold pool storage until
// released: release them promptly, and all before the pipeline is destroyed.
template <class T>
class OutputQueueSink : public Sink<T> {
 public:
  explicit OutputQueueSink(std::string name, EdgeOptions queue = {}) : Sink<T>(std::move(name)), queue_(queue) {}

  // The next item; waits for one. Empty once the pipeline has ended and everything was popped.
  Handle<T> pop() { return queue_.pop(); }
  // The next item, or an empty handle when none is waiting.
  Handle<T> try_pop() { return queue_.try_pop(); }

 protected:
  void process(Handle<T> item) override { queue_.push(std::move(item)); }
  void add_counters(StageStats& stats) const override { stats.dropped += queue_.dropped(); }

 private:
  void close_output() override { queue_.close(); }
  void request_cancel() override { queue_.drop_when_full(); }
  std::size_t held_items() const override { return 1 + queue_.options().capacity; }

  Edge<T> queue_;
};

}  // namespace eigstream::streaming
