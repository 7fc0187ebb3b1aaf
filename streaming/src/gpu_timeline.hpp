// GpuTimeline: where a pipeline measuring its GPU busy time (PipelineOptions::measure_gpu_busy) keeps
// it. Every GPU stage path's DeviceTimer adds the spans it collects, placed on one time axis (CUDA
// events, from an origin event recorded when the first timer attaches), and work on several streams
// at once is counted once (BusyUnion). Thread-safe. Positions are float milliseconds from the origin
// (about 1 us of resolution after 10 s, 8 us after 100 s; durations keep a microsecond's).
#pragma once

#include "busy_union.hpp"
#include "eigstream/streaming/stats.hpp"

#include <mutex>

#if defined(EIGSTREAM_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "eigstream/detail/device_array.hpp"
#endif

namespace eigstream::streaming {

class GpuTimeline {
 public:
  GpuTimeline() = default;
  GpuTimeline(const GpuTimeline&) = delete;
  GpuTimeline& operator=(const GpuTimeline&) = delete;
#if defined(EIGSTREAM_HAVE_CUDA)
  ~GpuTimeline() {
    if (origin_) cudaEventDestroy(origin_);
  }

  // The event every span is placed from; recorded at the first call, before the caller queues work.
  cudaEvent_t origin() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!origin_) {
      detail::check_cuda(cudaEventCreate(&origin_), "GPU timeline: cudaEventCreate");
      detail::check_cuda(cudaEventRecord(origin_, cudaStreamPerThread), "GPU timeline: cudaEventRecord");
    }
    return origin_;
  }
#endif

  // A span of work, in seconds from the origin.
  void add(bool kernel, double begin, double end) {
    std::lock_guard<std::mutex> lock(mutex_);
    all_.add(begin, end);
    if (kernel) kernels_.add(begin, end);
  }

  GpuBusy busy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {all_.seconds(), kernels_.seconds()};
  }

 private:
  mutable std::mutex mutex_;
  BusyUnion all_, kernels_;
#if defined(EIGSTREAM_HAVE_CUDA)
  cudaEvent_t origin_ = nullptr;
#endif
};

}  // namespace eigstream::streaming
