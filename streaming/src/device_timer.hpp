// DeviceTimer: the time a GPU stage path's work spends on its stream, split into kernels and copies
// (CUDA builds only). The path brackets each piece of work it queues with begin(kind) and end(),
// and collects the times of the pieces done (CUDA events, to about a microsecond) once it has
// waited for them (collect_through); take() hands over the sum. Given the pipeline's GpuTimeline,
// it also adds each piece there, placed in time. Nothing is allocated after construction: at most
// kMaxSpans pieces wait to be collected (more go untimed).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstddef>
#include <utility>

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
  static constexpr std::size_t kMaxSpans = 64;

  // timeline: null, or where the spans are also added.
  DeviceTimer(cudaStream_t stream, GpuTimeline* timeline)
      : stream_(stream), timeline_(timeline), origin_(timeline ? timeline->origin() : nullptr) {
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
    if (used_ == kMaxSpans) return;  // beyond the last span the work goes untimed
    spans_[used_].kind = kind;
    spans_[used_].after_last = false;
    detail::check_cuda(cudaEventRecord(spans_[used_].begin, stream_), "device timer: cudaEventRecord");
  }
  // As begin(), for work queued right after the last span's end(), nothing queued between: with a
  // timeline, the span begins at the last one's end event, one event less to record and read.
  void begin_after_last(Kind kind) {
    if (!timeline_ || !last_end_recorded_) return begin(kind);
    if (used_ == kMaxSpans) return;
    spans_[used_].kind = kind;
    spans_[used_].after_last = true;
  }
  void end() {
    last_end_recorded_ = used_ < kMaxSpans;
    if (!last_end_recorded_) return;
    detail::check_cuda(cudaEventRecord(spans_[used_].end, stream_), "device timer: cudaEventRecord");
    ++used_;
    ++ended_;
  }
  // The spans timed so far, to name with collect_through() once the stream has passed their end.
  std::uint64_t ticket() const noexcept { return ended_; }
  // Adds the spans up to a ticket, which the caller knows are complete (it waited for the stream or
  // for an event after them), to the total, and forgets their events.
  void collect_through(std::uint64_t ticket) {
    const std::uint64_t collected = ended_ - used_;
    const auto done = ticket > collected ? std::size_t(std::min<std::uint64_t>(ticket - collected, used_)) : 0;
    for (std::size_t i = 0; i < done; ++i) add(spans_[i]);
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
  // A completed span, into the total (and the timeline).
  void add(const Span& span) {
    float begin_ms = 0, end_ms = 0;  // from the timeline's origin, or from the span's begin
    detail::check_cuda(cudaEventElapsedTime(&end_ms, timeline_ ? origin_ : span.begin, span.end),
                       "device timer: cudaEventElapsedTime");
    if (span.after_last)  // (only with a timeline) the span before was added just now
      begin_ms = last_end_ms_;
    else if (timeline_)
      detail::check_cuda(cudaEventElapsedTime(&begin_ms, origin_, span.begin), "device timer: cudaEventElapsedTime");
    last_end_ms_ = end_ms;
    const bool kernel = span.kind == Kind::kernel;
    (kernel ? total_.kernel_seconds : total_.copy_seconds) += (double(end_ms) - double(begin_ms)) * 1e-3;
    if (timeline_) timeline_->add(kernel, double(begin_ms) * 1e-3, double(end_ms) * 1e-3);
  }
  // Drops the first `done` spans, collected.
  void forget(std::size_t done) {
    std::rotate(spans_.begin(), spans_.begin() + std::ptrdiff_t(done), spans_.begin() + std::ptrdiff_t(used_));
    used_ -= done;
  }

  cudaStream_t stream_;
  GpuTimeline* timeline_;
  cudaEvent_t origin_;
  std::array<Span, kMaxSpans> spans_{};
  std::size_t used_ = 0;     // spans waiting to be collected, oldest first
  std::uint64_t ended_ = 0;  // spans timed since construction
  bool last_end_recorded_ = false;
  float last_end_ms_ = 0;    // with a timeline: where the span added last ended
  DeviceTime total_;
};

}  // namespace eigstream::streaming
