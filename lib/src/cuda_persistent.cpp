// The host side of the persistent solver (eigstream/persistent.hpp): the rings' memory, the launch
// of the resident kernel (kernels/jacobi_evd_persistent.cu), submission by host threads (the
// producer half of the ring protocol in eigstream/detail/persistent_ring.hpp), waiting, counters and
// shutdown.
#include "eigstream/persistent.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <complex>
#include <mutex>
#include <sstream>
#include <thread>

#include "eigstream/detail/device_array.hpp"
#include "eigstream/cuda.hpp"
#include "eigstream/error.hpp"
#include "eigstream_kernels/evd_batched.hpp"
#include "eigstream_kernels/evd_persistent.hpp"
#include "validate.hpp"

namespace eigstream::cuda {
namespace {

using eigstream::detail::check_cuda;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMaxCapacity = std::uint64_t(1) << 24;
constexpr auto kKernelCheckInterval = std::chrono::milliseconds(1);

std::uint64_t load_acquire(const std::uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void store_release(std::uint64_t* p, std::uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

[[noreturn]] void invalid(const std::string& what) { throw Error(ErrorCode::invalid_argument, what); }

// Pinned host memory mapped into the device's address space.
template <class X>
X* mapped_alloc(std::size_t count, const char* what) {
  void* p = nullptr;
  check_cuda(cudaHostAlloc(&p, count * sizeof(X), cudaHostAllocMapped), what);
  std::fill_n(static_cast<char*>(p), count * sizeof(X), char(0));
  return static_cast<X*>(p);
}
template <class X>
X* device_pointer(X* host, const char* what) {
  void* d = nullptr;
  check_cuda(cudaHostGetDevicePointer(&d, host, 0), what);
  return static_cast<X*>(d);
}

}  // namespace

template <class T>
struct PersistentSolver<T>::State {
  PersistentOptions options;
  std::uint64_t capacity = 0;
  int consumers = 0;
  cudaStream_t stream = nullptr;   // the resident kernel's
  cudaStream_t control = nullptr;  // copies to and from the kernel's control words
  detail::RingSlot<T>* slots = nullptr;  // host view: [0, capacity) host ring, [capacity, 2 capacity) device ring
  std::uint64_t* host_tail = nullptr;    // mapped: the host ring's ticket counter
  std::uint64_t* parked = nullptr;       // mapped: set by the kernel when it parks, cleared by wake()
  detail::ConsumerCounters* counters = nullptr;  // mapped, one per consumer
  // Device memory: [0, 1] the rings' heads, [2] the device ring's tail, [3, 4] the rings' visible
  // counts, [5] the poller's done flag, [6] the matrices device code submitted, [7, 8] the rings'
  // help cursors.
  std::uint64_t* device_words = nullptr;
  static constexpr int kDeviceWords = 9;
  // Device memory: the rings' per-slot words (Ring::opened, taken, finished), each 2 capacity long.
  std::uint64_t* item_words = nullptr;
  static constexpr int kSlotWords = 3;
  EvdItem<T>* open_items = nullptr;  // device memory: Ring::open_items, 2 capacity long
  int* run_state = nullptr;                      // device memory
  T* staging = nullptr;                          // device memory: each consumer's copies of its item
  kernels::PersistentEvdArgs<T> args{};
  int blocks = 0;                                // of consumers, per launch
  std::mutex launch_mutex;                       // one wake at a time
  std::atomic<std::uint64_t> launches{0};
  std::atomic<bool> accepting{true};
  // Submits in progress, counted in shards of their own cache line (a thread keeps its shard), so
  // that threads submitting at once do not all write one line: shutdown waits for every shard.
  struct alignas(64) SubmitShard {
    std::atomic<int> count{0};
    std::atomic<std::uint64_t> matrices{0};  // submitted by the threads of this shard
  };
  std::array<SubmitShard, 16> submitting{};
  SubmitShard& my_submit_shard() {
    static std::atomic<unsigned> next_thread{0};
    thread_local const unsigned mine = next_thread.fetch_add(1, std::memory_order_relaxed) % submitting.size();
    return submitting[mine];
  }
  std::atomic<bool> stopped{false};

  ~State() {
    if (stream) cudaStreamDestroy(stream);
    if (control) cudaStreamDestroy(control);
    cudaFreeHost(slots);
    cudaFreeHost(host_tail);
    cudaFreeHost(parked);
    cudaFreeHost(counters);
    cudaFree(device_words);
    cudaFree(item_words);
    cudaFree(open_items);
    cudaFree(run_state);
    cudaFree(staging);
  }

  detail::RingSlot<T>& slot(const Ticket& t) const {
    return slots[(t.from_device ? capacity : 0) + (t.position & (capacity - 1))];
  }

  // Throws when the kernel has failed, or has ended although it should run (it never parks).
  void check_kernel(bool should_run, const char* op) const {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaErrorNotReady) return;
    if (status != cudaSuccess)
      throw Error(ErrorCode::cuda, std::string(op) + ": the persistent kernel failed: " + cudaGetErrorString(status));
    if (should_run && args.park_after_ns == 0)
      throw Error(ErrorCode::cuda, std::string(op) + ": the persistent kernel has stopped");
  }

  void launch(const char* op) {
    check_cuda(cudaMemsetAsync(args.poller_done, 0, sizeof(std::uint64_t), stream), op);
    // Positions the last launch handed out as tickets but never made visible are handed out again
    // (kernels/jacobi_evd_persistent.cu, claim_by_ticket): head = visible, for both rings.
    check_cuda(cudaMemcpyAsync(args.rings[0].head, args.visible, 2 * sizeof(std::uint64_t), cudaMemcpyDeviceToDevice,
                               stream),
               op);
    check_cuda(kernels::launch_persistent_evd(args, blocks, stream), op);
    ++launches;
  }

  // After a publish: launches the kernel again if it has parked. The other half of the handshake in
  // the kernel's poller (kernels/jacobi_evd_persistent.cu): publish, fence, read `parked`.
  void wake(const char* op) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (__atomic_load_n(parked, __ATOMIC_ACQUIRE) == 0) return;
    std::lock_guard<std::mutex> lock(launch_mutex);
    if (__atomic_load_n(parked, __ATOMIC_ACQUIRE) == 0) return;  // another submit woke it
    __atomic_store_n(parked, 0, __ATOMIC_RELEASE);
    try {
      launch(op);  // runs once the parked launch has ended: same stream
    } catch (const Error&) {
      __atomic_store_n(parked, 1, __ATOMIC_RELEASE);  // the next submit tries again
      throw;
    }
  }
};

template <class T>
PersistentSolver<T>::PersistentSolver(const PersistentOptions& options) : state_(std::make_unique<State>()) {
  const char* op = "PersistentSolver";
  State& s = *state_;
  s.options = options;
  eigstream::detail::check_options(op, options.solve);
  if (options.max_n < 1 || options.max_n > max_evd_size())
    invalid(std::string(op) + ": max_n must be in [1, " + std::to_string(max_evd_size()) + "], not " +
            std::to_string(options.max_n));
  if (options.capacity < 1 || options.capacity > kMaxCapacity)
    invalid(std::string(op) + ": capacity must be in [1, 2^24], not " + std::to_string(options.capacity));
  if (options.idle_sleep_ns < 32 || options.idle_sleep_ns > 1000000)
    invalid(std::string(op) + ": idle_sleep_ns must be in [32, 1000000], not " + std::to_string(options.idle_sleep_ns));
  if (options.sms < 0 || options.blocks_per_sm < 0) invalid(std::string(op) + ": sms and blocks_per_sm must be >= 0");
  if (options.park_after_us < 0 || options.park_after_us > 10000000)
    invalid(std::string(op) + ": park_after_us must be in [0, 10000000], not " + std::to_string(options.park_after_us));
  if (!device_available()) throw Error(ErrorCode::cuda, std::string(op) + ": no CUDA device is present");

  // Every kernel this library may launch while a solver is resident, loaded once per process before
  // the first solver starts (see persistent.hpp on lazy loading).
  static const cudaError_t loaded = [] {
    const cudaError_t status = kernels::load_persistent_evd_kernels();
    return status != cudaSuccess ? status : kernels::load_evd_batched_kernels();
  }();
  check_cuda(loaded, "PersistentSolver: loading the kernels");
  int device = 0, sm_count = 0;
  check_cuda(cudaGetDevice(&device), op);
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device), op);
  kernels::PersistentShape shape;
  check_cuda(kernels::persistent_evd_shape<T>(options.max_n, options.block_per_item, &shape), "PersistentSolver: kernel shape");
  if (shape.blocks_per_sm < 1) throw Error(ErrorCode::cuda, std::string(op) + ": the kernel does not fit on an SM");
  const int sms = options.sms ? options.sms : std::max(1, sm_count - 1);
  if (sms > sm_count)
    invalid(std::string(op) + ": sms = " + std::to_string(sms) + " but the GPU has " + std::to_string(sm_count));
  const int blocks_per_sm = options.blocks_per_sm ? options.blocks_per_sm : shape.blocks_per_sm;
  if (blocks_per_sm > shape.blocks_per_sm)
    invalid(std::string(op) + ": blocks_per_sm = " + std::to_string(blocks_per_sm) + " but at most " +
            std::to_string(shape.blocks_per_sm) + " fit for max_n = " + std::to_string(options.max_n));
  s.blocks = sms * blocks_per_sm;
  s.consumers = s.blocks * shape.consumers_per_block;

  s.capacity = 1;
  while (s.capacity < options.capacity) s.capacity *= 2;
  s.slots = mapped_alloc<detail::RingSlot<T>>(std::size_t(2 * s.capacity), "PersistentSolver: ring memory");
  for (std::uint64_t i = 0; i < 2 * s.capacity; ++i) s.slots[i].state = i & (s.capacity - 1);
  s.host_tail = mapped_alloc<std::uint64_t>(1, "PersistentSolver: ring memory");
  s.parked = mapped_alloc<std::uint64_t>(1, "PersistentSolver: ring memory");
  s.counters = mapped_alloc<detail::ConsumerCounters>(std::size_t(s.consumers), "PersistentSolver: counters");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&s.device_words), State::kDeviceWords * sizeof(std::uint64_t)), op);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&s.item_words), State::kSlotWords * 2 * s.capacity * sizeof(std::uint64_t)),
             op);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&s.open_items), 2 * s.capacity * sizeof(EvdItem<T>)), op);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&s.run_state), sizeof(int)), op);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&s.staging), sizeof(T) * shape.staging_stride * std::size_t(s.consumers)),
             op);
  check_cuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), op);
  check_cuda(cudaStreamCreateWithFlags(&s.control, cudaStreamNonBlocking), op);
  // On the kernel's stream, so they precede it without waiting for the device (another solver's
  // kernel may be resident).
  check_cuda(cudaMemsetAsync(s.device_words, 0, State::kDeviceWords * sizeof(std::uint64_t), s.stream), op);
  check_cuda(cudaMemsetAsync(s.item_words, 0, State::kSlotWords * 2 * s.capacity * sizeof(std::uint64_t), s.stream), op);
  check_cuda(cudaMemsetAsync(s.run_state, 0, sizeof(int), s.stream), op);

  detail::RingSlot<T>* slots = device_pointer(s.slots, op);
  auto& a = s.args;
  std::uint64_t* opened = s.item_words;
  std::uint64_t* taken = s.item_words + 2 * s.capacity;
  std::uint64_t* finished = s.item_words + 4 * s.capacity;
  a.rings[0] = {slots, s.device_words, device_pointer(s.host_tail, op), s.capacity, s.device_words + 7, opened, taken,
                finished, s.open_items};
  a.rings[1] = {slots + s.capacity, s.device_words + 1, s.device_words + 2, s.capacity, s.device_words + 8,
                opened + s.capacity, taken + s.capacity, finished + s.capacity, s.open_items + s.capacity};
  a.run_state = s.run_state;
  a.visible = s.device_words + 3;
  a.poller_done = s.device_words + 5;
  a.parked = device_pointer(s.parked, op);
  a.park_after_ns = std::uint64_t(options.park_after_us) * 1000;
  a.staging = s.staging;
  a.staging_stride = shape.staging_stride;
  a.counters = device_pointer(s.counters, op);
  a.max_n = options.max_n;
  a.block_per_item = options.block_per_item;
  a.tol = eigstream::detail::tolerance<T>(options.solve, false, options.max_n);
  a.symmetry_tol = eigstream::detail::symmetry_tolerance<T>(options.solve);
  a.max_sweeps = options.solve.max_sweeps;
  a.sort = options.solve.sort;
  a.idle_sleep_ns = options.idle_sleep_ns;
  s.launch("PersistentSolver: kernel launch");
}

template <class T>
PersistentSolver<T>::~PersistentSolver() {
  try {
    shutdown(ShutdownMode::drain);
  } catch (const Error&) {
    // A failed kernel was already reported to the calls that met it; the memory is freed regardless.
  }
}

template <class T>
std::optional<Ticket> PersistentSolver<T>::submit(const EvdItem<T>& item, SubmitMode mode) {
  const char* op = "PersistentSolver::submit";
  State& s = *state_;
  const auto check = [&](bool ok, const char* what) {
    if (!ok)
      invalid(std::string(op) + ": " + what + " (n = " + std::to_string(item.n) + ", count = " + std::to_string(item.count) +
              ")");
  };
  check(item.n >= 1 && item.n <= s.options.max_n, "n must be in [1, max_n]");
  check(item.a && item.lda >= item.n, "A is missing or its leading dimension is below n");
  check(item.values != nullptr, "values is missing");
  check(item.info != nullptr, "info is missing");
  check(!item.vectors || item.ldv >= item.n, "the vectors' leading dimension is below n");
  check(!item.warm_start || item.ldw >= item.n, "the warm start's leading dimension is below n");
  check(item.count >= 1 && item.count <= kMaxItemMatrices, "count must be in [1, 2^18]");
  if (item.count > 1) {
    check(item.stride_a >= 0 && item.stride_warm_start >= 0, "stride_a and stride_warm_start must be >= 0");
    check(item.stride_values >= item.n, "stride_values is below n: the matrices' eigenvalues would overlap");
    check(!item.vectors || item.stride_vectors >= item.ldv * item.n,
          "stride_vectors is below ldv * n: the matrices' eigenvectors would overlap");
  }

  typename State::SubmitShard& shard = s.my_submit_shard();
  struct Guard {
    std::atomic<int>& count;
    explicit Guard(std::atomic<int>& c) : count(c) { ++count; }
    ~Guard() { --count; }
  } guard(shard.count);
  if (!s.accepting) invalid(std::string(op) + ": the solver has been shut down");
  if (__atomic_load_n(s.host_tail, __ATOMIC_RELAXED) >= detail::kMaxPositions)
    invalid(std::string(op) + ": the solver has handed out every position its ring can name (" +
            std::to_string(detail::kMaxPositions) + "); submit to a new PersistentSolver");

  auto last_check = Clock::now();
  const auto wait_for_room = [&] {
    if (Clock::now() - last_check > kKernelCheckInterval) {
      s.check_kernel(true, op);
      last_check = Clock::now();
    }
    cpu_relax();
  };
  const auto publish = [&](std::uint64_t t) {
    detail::RingSlot<T>& slot = s.slots[t & (s.capacity - 1)];
    slot.item = item;
    shard.matrices.fetch_add(std::uint64_t(item.count), std::memory_order_relaxed);
    store_release(&slot.state, t + 1);
    if (s.args.park_after_ns) s.wake(op);
    return Ticket{t, false};
  };
  if (mode == SubmitMode::wait) {
    // Take ticket t outright (a fetch-and-add never retries, unlike the compare-and-swap below,
    // which threads submitting at once kept failing), then wait for slot t to be free.
    const std::uint64_t t = __atomic_fetch_add(s.host_tail, 1, __ATOMIC_RELAXED);
    while (load_acquire(&s.slots[t & (s.capacity - 1)].state) != t) wait_for_room();
    return publish(t);
  }
  std::uint64_t t = __atomic_load_n(s.host_tail, __ATOMIC_RELAXED);
  for (;;) {
    detail::RingSlot<T>& slot = s.slots[t & (s.capacity - 1)];
    const std::uint64_t state = load_acquire(&slot.state);
    if (state == t) {  // free: take ticket t unless another submit took it first
      if (__atomic_compare_exchange_n(s.host_tail, &t, t + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return publish(t);
      continue;  // t now holds the current tail
    }
    if (state < t) return std::nullopt;  // the slot still holds ticket t - capacity: the ring is full
    t = __atomic_load_n(s.host_tail, __ATOMIC_RELAXED);
  }
}

template <class T>
ItemState PersistentSolver<T>::poll(const Ticket& ticket) const {
  const std::uint64_t state = load_acquire(&state_->slot(ticket).state);
  if (!detail::finished(state, ticket.position, state_->capacity)) return ItemState::pending;
  const bool cancelled = state == ((ticket.position + state_->capacity) | detail::kCancelledBit);
  return cancelled ? ItemState::cancelled : ItemState::done;
}

template <class T>
ItemState PersistentSolver<T>::wait(const Ticket& ticket) const {
  auto last_check = Clock::now();
  for (;;) {
    const ItemState state = poll(ticket);
    if (state != ItemState::pending) return state;
    if (Clock::now() - last_check > kKernelCheckInterval) {
      state_->check_kernel(false, "PersistentSolver::wait");
      if (state_->stopped && poll(ticket) == ItemState::pending)
        throw Error(ErrorCode::cuda, "PersistentSolver::wait: the solver stopped before the item was solved");
      last_check = Clock::now();
    }
    cpu_relax();
  }
}

template <class T>
void PersistentSolver<T>::stream_wait(const Ticket& ticket, cudaStream_t stream) const {
  const char* op = "PersistentSolver::stream_wait";
  state_->check_kernel(false, op);
  const std::uint64_t* state = device_pointer(&state_->slot(ticket).state, op);
  check_cuda(kernels::launch_ticket_wait(state, ticket.position, state_->capacity, stream), op);
}

template <class T>
DeviceQueue<T> PersistentSolver<T>::device_queue() const {
  if (state_->args.park_after_ns)
    invalid("PersistentSolver::device_queue: the solver parks (park_after_us > 0), and device code cannot wake it");
  return {state_->args.rings[1], state_->args.run_state, state_->device_words + 6};
}

template <class T>
PersistentCounters PersistentSolver<T>::counters() const {
  const State& s = *state_;
  std::uint64_t device_matrices = 0;
  check_cuda(cudaMemcpyAsync(&device_matrices, s.device_words + 6, sizeof device_matrices, cudaMemcpyDeviceToHost,
                             s.control),
             "PersistentSolver::counters");
  check_cuda(cudaStreamSynchronize(s.control), "PersistentSolver::counters");
  PersistentCounters c;
  c.submitted = device_matrices;
  for (const auto& shard : s.submitting) c.submitted += shard.matrices.load(std::memory_order_relaxed);
  c.launches = s.launches;
  for (int i = 0; i < s.consumers; ++i) {
    const volatile detail::ConsumerCounters& k = s.counters[i];
    c.completed += k.completed;
    c.failed += k.failed;
    c.cancelled += k.cancelled;
  }
  return c;
}

template <class T>
int PersistentSolver<T>::consumers() const {
  return state_->consumers;
}

template <class T>
void PersistentSolver<T>::shutdown(ShutdownMode mode) {
  const char* op = "PersistentSolver::shutdown";
  State& s = *state_;
  if (s.stopped) return;
  s.accepting = false;
  for (const auto& shard : s.submitting)  // submits that passed the check finish publishing
    while (shard.count > 0) std::this_thread::yield();
  s.stopped = true;
  static const int drain = detail::kDrain, cancel = detail::kCancel;
  check_cuda(cudaMemcpyAsync(s.run_state, mode == ShutdownMode::drain ? &drain : &cancel, sizeof(int),
                             cudaMemcpyHostToDevice, s.control),
             op);
  check_cuda(cudaStreamSynchronize(s.control), op);
  const cudaError_t status = cudaStreamSynchronize(s.stream);
  if (status != cudaSuccess)
    throw Error(ErrorCode::cuda, std::string(op) + ": the persistent kernel failed: " + cudaGetErrorString(status));
}

template class PersistentSolver<float>;
template class PersistentSolver<double>;
template class PersistentSolver<std::complex<float>>;
template class PersistentSolver<std::complex<double>>;

}  // namespace eigstream::cuda
