// DeviceTimer: the time a GPU stage path's work spends on its stream, split into kernels and copies
// (CUDA builds only). The path brackets each piece of work it queues with begin(kind) and end(),
// and collect()s the times of the pieces done (CUDA events, to about a microsecond) when it has
// waited for the stream; take() hands over the sum. Given the pipeline's GpuTimeline, it also adds
// each piece there, placed in time. Nothing is allocated after construction: at most kMaxSpans
// pieces wait to be collected (more go untimed).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
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
  static constexpr std::size_t kMaxSpans = 32;

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
    detail::check_cuda(cudaEventRecord(spans_[used_].begin, stream_), "device timer: cudaEventRecord");
  }
  void end() {
    if (used_ == kMaxSpans) return;
    detail::check_cuda(cudaEventRecord(spans_[used_].end, stream_), "device timer: cudaEventRecord");
    ++used_;
  }
  // Adds the spans that have completed (in the order queued) to the total and forgets their events;
  // the others wait for a later collect().
  void collect() {
    std::size_t done = 0;
    for (; done < used_; ++done) {
      const Span& span = spans_[done];
      const cudaError_t state = cudaEventQuery(span.end);
      if (state == cudaErrorNotReady) break;
      detail::check_cuda(state, "device timer: cudaEventQuery");
      // From the timeline's origin, or from the span's begin.
      float begin_ms = 0, end_ms = 0;
      detail::check_cuda(cudaEventElapsedTime(&end_ms, timeline_ ? origin_ : span.begin, span.end),
                         "device timer: cudaEventElapsedTime");
      if (timeline_)
        detail::check_cuda(cudaEventElapsedTime(&begin_ms, origin_, span.begin), "device timer: cudaEventElapsedTime");
      const bool kernel = span.kind == Kind::kernel;
      (kernel ? total_.kernel_seconds : total_.copy_seconds) += (double(end_ms) - double(begin_ms)) * 1e-3;
      if (timeline_) timeline_->add(kernel, double(begin_ms) * 1e-3, double(end_ms) * 1e-3);
    }
    std::rotate(spans_.begin(), spans_.begin() + std::ptrdiff_t(done), spans_.begin() + std::ptrdiff_t(used_));
    used_ -= done;
  }
  // The total collected since the last take().
  DeviceTime take() noexcept { return std::exchange(total_, DeviceTime{}); }

 private:
  struct Span {
    cudaEvent_t begin = nullptr, end = nullptr;
    Kind kind = Kind::kernel;
  };
  cudaStream_t stream_;
  GpuTimeline* timeline_;
  cudaEvent_t origin_;
  std::array<Span, kMaxSpans> spans_{};
  std::size_t used_ = 0;
  DeviceTime total_;
};

}  // namespace eigstream::streaming
