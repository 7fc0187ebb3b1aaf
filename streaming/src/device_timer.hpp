// DeviceTimer: the time a GPU stage path's work spends on its stream, split into kernels and copies
// (CUDA builds only). The path brackets each piece of work it queues with begin(kind) and end(),
// and collects the times of the pieces done (CUDA events, to about a microsecond) once it has
// waited for them (collect_through); take() hands over the sum. Given the pipeline's GpuTimeline,
// it also adds each piece there, placed in time. Nothing is allocated after construction: at most
// `capacity` pieces wait to be collected (more go untimed).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <utility>
#include <vector>

#include "eigstream/detail/device_array.hpp"
#include "gpu_timeline.hpp"

namespace eigstream::streaming {

struct DeviceTime {
  double kernel_seconds = 0;
  double copy_seconds = 0;
};

class DeviceTimer {
 public:
  enum class Kind { kernel, copy };
  static constexpr std::size_t kDefaultCapacity = 32;

  // timeline: null, or where the spans are also added; capacity: the most spans that wait to be
  // collected (the path's work between two collections).
  DeviceTimer(cudaStream_t stream, GpuTimeline* timeline, std::size_t capacity = kDefaultCapacity)
      : stream_(stream), timeline_(timeline), origin_(timeline ? timeline->origin() : nullptr), spans_(capacity) {
    for (Span& span : spans_) {
      detail::check_cuda(cudaEventCreate(&span.begin), "device timer: cudaEventCreate");
      detail::check_cuda(cudaEventCreate(&span.end), "device timer: cudaEventCreate");
    }
  }
  ~DeviceTimer() {
    for (Span& span : spans_) cudaEventDestroy(span.begin), cudaEventDestroy(span.end);
  }
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  void begin(Kind kind) {
    if (used_ == spans_.size()) return;  // beyond the last span the work goes untimed
    spans_[used_].kind = kind;
    spans_[used_].after_last = false;
    detail::check_cuda(cudaEventRecord(spans_[used_].begin, stream_), "device timer: cudaEventRecord");
  }
  // As begin(), for work queued right after the last span's end(), while the stream is still busy
  // with the last span's work (so that it begins when that ends): with a timeline, the span begins
  // at the last one's end event, one event less to record and read.
  void begin_after_last(Kind kind) {
    if (!timeline_ || !last_end_recorded_) return begin(kind);
    if (used_ == spans_.size()) return;
    spans_[used_].kind = kind;
    spans_[used_].after_last = true;
  }
  // Returns the span's end event, recorded on the stream (null when the span went untimed): the path
  // may wait on it, or make other streams wait on it, until the span is collected.
  cudaEvent_t end() {
    last_end_recorded_ = used_ < spans_.size();
    if (!last_end_recorded_) return nullptr;
    const cudaEvent_t event = spans_[used_].end;
    detail::check_cuda(cudaEventRecord(event, stream_), "device timer: cudaEventRecord");
    ++used_;
    ++ended_;
    return event;
  }
  // The spans timed so far, to name with collect_through() once the stream has passed their end.
  std::uint64_t ticket() const noexcept { return ended_; }
  // Adds the spans up to a ticket, which the caller knows are complete (it waited for the stream or
  // for an event after them), to the total, and forgets their events.
  void collect_through(std::uint64_t ticket) {
    const std::uint64_t collected = ended_ - used_;
    const auto done = ticket > collected ? std::size_t(std::min<std::uint64_t>(ticket - collected, used_)) : 0;
    for (std::size_t i = 0; i < done; ++i) add(i);
    forget(done);
  }
  // The total collected since the last take().
  DeviceTime take() noexcept { return std::exchange(total_, DeviceTime{}); }

 private:
  struct Span {
    cudaEvent_t begin = nullptr, end = nullptr;
    Kind kind = Kind::kernel;
    bool after_last = false;  // begins at the end of the span before (begin not recorded)
  };
  // Completed span i, into the total (and the timeline). Durations are read between a span's own
  // events (to about a microsecond); positions on the timeline from its origin, as floats (about 1 us
  // of resolution after 10 s, 8 us after 100 s).
  void add(std::size_t i) {
    const Span& span = spans_[i];
    float ms = 0;
    double begin = 0;  // seconds from the timeline's origin
    if (span.after_last) {  // (only with a timeline) begins where the span added before ended
      begin = last_end_;
      if (i > 0) {  // the span before is collected in this call: its end event is still its own
        detail::check_cuda(cudaEventElapsedTime(&ms, spans_[i - 1].end, span.end), "device timer: cudaEventElapsedTime");
      } else {
        detail::check_cuda(cudaEventElapsedTime(&ms, origin_, span.end), "device timer: cudaEventElapsedTime");
        ms = float(std::max(0.0, double(ms) - begin * 1e3));
      }
    } else {
      detail::check_cuda(cudaEventElapsedTime(&ms, span.begin, span.end), "device timer: cudaEventElapsedTime");
      if (timeline_) {
        float from_origin = 0;
        detail::check_cuda(cudaEventElapsedTime(&from_origin, origin_, span.begin), "device timer: cudaEventElapsedTime");
        begin = double(from_origin) * 1e-3;
      }
    }
    const double seconds = double(ms) * 1e-3;
    const bool kernel = span.kind == Kind::kernel;
    (kernel ? total_.kernel_seconds : total_.copy_seconds) += seconds;
    last_end_ = begin + seconds;
    if (timeline_) timeline_->add(kernel, begin, last_end_);
  }
  // Drops the first `done` spans, collected.
  void forget(std::size_t done) {
    std::rotate(spans_.begin(), spans_.begin() + std::ptrdiff_t(done), spans_.begin() + std::ptrdiff_t(used_));
    used_ -= done;
  }

  cudaStream_t stream_;
  GpuTimeline* timeline_;
  cudaEvent_t origin_;
  std::vector<Span> spans_;
  std::size_t used_ = 0;     // spans waiting to be collected, oldest first
  std::uint64_t ended_ = 0;  // spans timed since construction
  bool last_end_recorded_ = false;
  double last_end_ = 0;      // with a timeline: where the span added last ended (s from the origin)
  DeviceTime total_;
};

}  // namespace eigstream::streaming
