// DecomposeStage's persistent GPU path: covariances through a parking cuda::PersistentSolver.
#include "persistent_evd_stream.hpp"

#include <algorithm>

#include <cuda_runtime_api.h>

#include "eigstream/detail/device_array.hpp"
#include "eigstream/error.hpp"

namespace eigstream::streaming {
namespace {

std::size_t slot_bytes(std::size_t n) {
  const std::size_t bytes = 3 * n * n * sizeof(std::complex<float>) + sizeof(SolveInfo) + n * sizeof(float);
  return (bytes + 63) / 64 * 64;
}

const HostBuffer& check_pinned(const HostBuffer& memory) {
  if (!memory.pinned())
    throw Error(ErrorCode::cuda, "decompose stage: the persistent solver needs pinned host memory, and none was given");
  return memory;
}

cuda::PersistentOptions solver_options(std::size_t n, std::size_t in_flight, const Options& options) {
  int device = 0, sm_count = 0;
  detail::check_cuda(cudaGetDevice(&device), "decompose stage: persistent solver");
  detail::check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
                     "decompose stage: persistent solver");
  cuda::PersistentOptions p;
  p.max_n = int(n);
  p.sms = int(std::min<std::size_t>(in_flight, std::size_t(std::max(1, sm_count - 1))));
  p.blocks_per_sm = 1;
  p.block_per_item = n > 32;  // above 32, the kernel compiled for one block an SM (no register cap)
  p.capacity = in_flight;
  p.solve = options;
  return p;
}

}  // namespace

// The solver drains what is in flight when it is destroyed, before the memory is freed.
PersistentEvdStream::PersistentEvdStream(std::size_t channels, std::size_t in_flight, const Options& options)
    : n_(channels), slots_(in_flight), slot_bytes_(slot_bytes(channels)), memory_(in_flight * slot_bytes_),
      solver_((check_pinned(memory_), solver_options(channels, in_flight, options))), tickets_(in_flight) {}

PersistentEvdStream::cfloat* PersistentEvdStream::slot(std::size_t s) const noexcept {
  return reinterpret_cast<cfloat*>(static_cast<char*>(memory_.data()) + s * slot_bytes_);
}

void PersistentEvdStream::submit(const cfloat* covariance, const cfloat* warm_start) {
  const std::size_t s = (first_ + count_) % slots_, nn = n_ * n_;
  cfloat* a = slot(s);
  cfloat* v0 = a + nn;
  cfloat* v = v0 + nn;
  auto* info = reinterpret_cast<SolveInfo*>(v + nn);
  *info = SolveInfo{};  // not converged until the kernel says so
  std::copy_n(covariance, nn, a);
  if (warm_start) std::copy_n(warm_start, nn, v0);
  cuda::EvdItem<cfloat> item;
  item.n = int(n_);
  item.a = a;
  item.lda = index_t(n_);
  item.values = reinterpret_cast<float*>(info + 1);
  item.vectors = v;
  item.ldv = index_t(n_);
  item.warm_start = warm_start ? v0 : nullptr;
  item.ldw = index_t(n_);
  item.info = info;
  tickets_[s] = *solver_.submit(item);  // never full: capacity >= the slots
  ++count_;
}

bool PersistentEvdStream::oldest_done() const {
  return solver_.poll(tickets_[first_]) != cuda::ItemState::pending;
}

PersistentEvdStream::Result PersistentEvdStream::collect() {
  const std::size_t s = first_, nn = n_ * n_;
  const bool solved = solver_.wait(tickets_[s]) == cuda::ItemState::done;
  first_ = (first_ + 1) % slots_;
  --count_;
  const cfloat* v = slot(s) + 2 * nn;
  const auto* info = reinterpret_cast<const SolveInfo*>(v + nn);
  return {reinterpret_cast<const float*>(info + 1), v, solved ? *info : SolveInfo{}};
}

}  // namespace eigstream::streaming
