// The persistent solver (eigstream/persistent.hpp) against the batched kernel and the LAPACK oracle:
// equal results, concurrent host submitters, a full ring, shutdown with items in flight, a NaN item
// among good ones, submission from device code, stream ordering, and parking (the device idles while
// the solver is parked, and a submit wakes it). Runs only with a CUDA device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "eigstream/cuda.hpp"
#include "eigstream/persistent.hpp"
#include "first_launch.hpp"
#include "oracle.hpp"
#include "persistent_producer.hpp"

using namespace oracle;
using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::SolveInfo;
using eigstream::cuda::EvdItem;
using eigstream::cuda::ItemState;
using eigstream::cuda::PersistentOptions;
using eigstream::cuda::PersistentSolver;
using eigstream::cuda::ShutdownMode;
using eigstream::cuda::SubmitMode;
using eigstream::cuda::Ticket;

namespace {

// Pinned host memory mapped into the device: what both the host and the resident kernel can touch.
// cudaFreeHost waits for the whole device, so every Pinned buffer must outlive the solvers that use
// it (declare it first): freed while the resident kernel runs, it would wait forever.
template <class X>
class Pinned {
 public:
  explicit Pinned(std::size_t count) : count_(count) {
    REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&data_), count * sizeof(X), cudaHostAllocMapped) == cudaSuccess);
    std::fill_n(reinterpret_cast<char*>(data_), count * sizeof(X), char(0));
  }
  ~Pinned() { cudaFreeHost(data_); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  X* get() const { return data_; }
  X& operator[](std::size_t i) const { return data_[i]; }

 private:
  X* data_ = nullptr;
  std::size_t count_;
};

// Matrices, outputs and statuses for `count` items of order n, all in pinned memory.
template <class T>
struct Items {
  index_t n, count;
  Pinned<T> a, v, warm;
  Pinned<real_t<T>> w;
  Pinned<SolveInfo> info;
  Items(const std::vector<Matrix<T>>& ms)
      : n(ms[0].rows), count(index_t(ms.size())), a(std::size_t(n * n * count)), v(std::size_t(n * n * count)),
        warm(std::size_t(n * n * count)), w(std::size_t(n * count)), info(std::size_t(count)) {
    for (index_t b = 0; b < count; ++b) std::copy(ms[std::size_t(b)].data.begin(), ms[std::size_t(b)].data.end(), &a[std::size_t(b * n * n)]);
  }
  EvdItem<T> item(index_t b, bool warm_start = false) const {
    EvdItem<T> it;
    it.a = &a[std::size_t(b * n * n)], it.lda = n;
    it.values = &w[std::size_t(b * n)];
    it.vectors = &v[std::size_t(b * n * n)], it.ldv = n;
    if (warm_start) it.warm_start = &warm[std::size_t(b * n * n)], it.ldw = n;
    it.info = &info[std::size_t(b)];
    it.n = int(n);
    return it;
  }
  Matrix<T> vectors(index_t b) const {
    Matrix<T> m(n, n);
    std::copy_n(&v[std::size_t(b * n * n)], n * n, m.data.begin());
    return m;
  }
  std::vector<real_t<T>> values(index_t b) const { return {&w[std::size_t(b * n)], &w[std::size_t((b + 1) * n)]}; }
};

PersistentOptions options_for(int max_n, bool block_per_item = false) {
  PersistentOptions o;
  o.max_n = max_n;
  o.block_per_item = block_per_item;
  return o;
}

// Ends the test program, saying what hung, if it is still alive after `limit`: for steps whose
// failure is a hang.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, std::string what)
      : thread_([this, limit, what] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!done_changed_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "FAILED: %s did not finish within %lld s\n", what.c_str(), (long long)limit.count());
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

// The per-matrix solve that runs an item, as jacobi_evd_batched.cu (cold) and
// jacobi_evd_persistent.cu choose it: registers (padded to NMAX players), shared memory (n + n % 2
// players) or pairs (64).
enum class SolveKind { registers, shared, pairs };
int nmax_of(index_t n) { return n <= 4 ? 4 : n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 64; }
template <class T>
SolveKind batched_cold_solve(index_t n) {
  const int nmax = nmax_of(n);
  if (nmax == 64) return SolveKind::pairs;
  return std::is_same_v<T, std::complex<double>> && nmax == 32 ? SolveKind::shared : SolveKind::registers;
}
// Whether a cold solve of order n with vectors takes the tridiagonal start (uses_tridiagonal_start in
// kernels/tridiagonal_start.hpp): the batched kernel's do, and the persistent solver's in its
// throughput shape at NMAX = 64.
template <class T>
bool batched_start(index_t n) {
  return n > 32 || (n > 16 && !std::is_floating_point_v<T>);
}
template <class T>
bool persistent_start(index_t n, int max_n, bool block_per_item) {
  return batched_start<T>(n) && !block_per_item && nmax_of(max_n) == 64;
}
template <class T>
SolveKind persistent_solve(int max_n, bool block_per_item) {
  const int nmax = nmax_of(max_n);
  if (nmax == 64) return SolveKind::pairs;
  if (block_per_item || (std::is_same_v<T, std::complex<double>> && nmax == 32)) return SolveKind::shared;
  return SolveKind::registers;
}

template <class T>
std::vector<Matrix<T>> covariances(index_t n, index_t count, std::uint64_t seed) {
  std::vector<Matrix<T>> ms;
  for (index_t b = 0; b < count; ++b) ms.push_back(evd_case<T>(EvdCase::covariance, n, seed + std::uint64_t(b)));
  return ms;
}

// The batched kernel's eigenvalues and statuses on `count` packed n x n matrices: what the
// persistent solver's results are compared with.
template <class T>
struct BatchedResult {
  std::vector<real_t<T>> w;
  std::vector<SolveInfo> info;
};
template <class T>
BatchedResult<T> solve_batched(const std::vector<T>& a, index_t n, index_t count) {
  std::vector<T> v(a.size());
  BatchedResult<T> out{std::vector<real_t<T>>(std::size_t(n * count)), std::vector<SolveInfo>(std::size_t(count))};
  eigstream::Options gpu;
  gpu.backend = eigstream::Backend::cuda;
  eigstream::evd_batched(eigstream::batch<const T>(a.data(), n, n, count), eigstream::vectors(out.w.data(), n, count),
                         eigstream::batch(v.data(), n, n, count), out.info.data(), gpu);
  return out;
}

// Matrix b's persistent result (values w, vectors v): its values within 2 n eps of the batched
// kernel's, scaled by the spectrum's ends, and its decomposition against LAPACK.
template <class T>
void check_as_batched(const Matrix<T>& m, const std::vector<real_t<T>>& w, const Matrix<T>& v,
                      const BatchedResult<T>& batched, index_t b, const char* what) {
  const index_t n = m.rows;
  const double scale = std::abs(double(batched.w[std::size_t(b * n)])) + std::abs(double(batched.w[std::size_t(b * n + n - 1)]));
  for (index_t k = 0; k < n; ++k)
    CHECK(std::abs(double(w[std::size_t(k)] - batched.w[std::size_t(b * n + k)])) <= 2 * n * eps<T>() * scale);
  check_evd(m, w, &v, reference_eigenvalues(m), eigstream::Sort::descending, what);
}

}  // namespace

TEMPLATE_TEST_CASE("gpu persistent: results equal the batched kernel's on the hard cases", "[gpu][persistent]", float,
                   double, std::complex<float>, std::complex<double>) {
  using T = TestType;
  // 1 and 2: one pair, which stays from step to step; 3 and 4: two pairs, whose one off-diagonal
  // block holds both rotations of the next step (StepItems in jacobi_evd_solve.cuh).
  const index_t n = GENERATE(1, 2, 3, 4, 5, 8, 13, 16, 32, 33, 64);
  const bool block_per_item = GENERATE(false, true);
  // Also, for n <= 32, a solver sized for 64, which pads the items to 64 players (jacobi_evd_pairs.cuh).
  const int sizing = GENERATE_COPY(filter([=](int s) { return s == 0 || n <= 32; }, values({0, 1})));
  const int max_n = sizing == 1 ? 64 : int(n);
  std::vector<Matrix<T>> ms;
  for (EvdCase c : all_evd_cases()) ms.push_back(evd_case<T>(c, n, 2000 + std::uint64_t(n)));
  Items<T> items(ms);
  {
    PersistentSolver<T> solver(options_for(max_n, block_per_item));
    std::vector<Ticket> tickets;
    for (index_t b = 0; b < items.count; ++b) tickets.push_back(*solver.submit(items.item(b)));
    for (const Ticket& t : tickets) REQUIRE(solver.wait(t) == ItemState::done);
    const auto c = solver.counters();
    CHECK(c.submitted == std::uint64_t(items.count));
    CHECK(c.completed == std::uint64_t(items.count));
    CHECK(c.failed == 0);
  }
  const BatchedResult<T> batched =
      solve_batched(std::vector<T>(items.a.get(), items.a.get() + n * n * items.count), n, items.count);
  for (index_t b = 0; b < items.count; ++b) {
    INFO(type_name<T>() << " n = " << n << " case " << to_string(all_evd_cases()[std::size_t(b)])
                        << (block_per_item ? " block per item" : "") << " max_n = " << max_n);
    const SolveInfo& s = items.info[std::size_t(b)];
    REQUIRE(s.converged);
    // The same solve code takes the same sweeps. The register and shared-memory solves visit the
    // pairs in mirrored orders, which on graded, rank-deficient and repeated spectra took up to three
    // sweeps more or less (H100, 2026-11-22; H200, 2026-11-23: 3 for complex double n = 16,
    // repeated). An item padded to the pairs solve's 64 players takes sweeps of its own. Block per
    // item, the shared-memory solve takes its latency shape (evd::StepShape): another block size,
    // so its norm (and target) rounds differently, and convergence tests within a sweep. Where only
    // the batched kernel's solve takes the tridiagonal start, sweeps are not compared; where both
    // do, they run the same start code in a group of two warps; compiled into different kernels,
    // it rounds apart: float n = 33 graded_psd came out one sweep apart in every run (H200).
    const SolveKind batched_kind = batched_cold_solve<T>(n), persistent = persistent_solve<T>(max_n, block_per_item);
    const int sweeps_apart = std::abs(s.sweeps - batched.info[std::size_t(b)].sweeps);
    const bool same_shape = !(persistent == SolveKind::shared && block_per_item);
    const bool start = batched_start<T>(n), same_start = start == persistent_start<T>(n, max_n, block_per_item);
    if (same_start && batched_kind == persistent && same_shape &&
        (batched_kind != SolveKind::registers || nmax_of(n) == nmax_of(max_n)))
      CHECK(sweeps_apart <= (start ? 1 : 0));
    else if (same_start && persistent != SolveKind::pairs)
      CHECK(sweeps_apart <= 3);
    check_as_batched(ms[std::size_t(b)], items.values(b), items.vectors(b), batched, b, "gpu persistent");
  }
}

// Block per item, the solve writes its outputs straight to the item's: items without vectors get
// their eigenvalues, and vectors with a leading dimension above n land in their columns and leave
// the rows past n as they were. Cold, and warm-started from the identity.
TEMPLATE_TEST_CASE("gpu persistent: items without vectors, or with padded vectors", "[gpu][persistent]", float, double,
                   std::complex<float>, std::complex<double>) {
  using T = TestType;
  const index_t n = GENERATE(3, 16, 32, 64);
  const bool block_per_item = GENERATE(false, true);
  const bool warm = GENERATE(false, true);
  const bool with_vectors = GENERATE(false, true);
  const index_t ldv = n + 3;
  std::vector<Matrix<T>> ms;
  for (EvdCase c : all_evd_cases()) ms.push_back(evd_case<T>(c, n, 3000 + std::uint64_t(n)));
  Items<T> items(ms);
  for (index_t b = 0; b < items.count; ++b)
    for (index_t i = 0; i < n; ++i) items.warm[std::size_t(b * n * n + i * n + i)] = T(1);
  Pinned<T> padded(std::size_t(ldv * n * items.count));
  const T untouched(7);
  std::fill_n(padded.get(), ldv * n * items.count, untouched);
  {
    PersistentSolver<T> solver(options_for(int(n), block_per_item));
    std::vector<Ticket> tickets;
    for (index_t b = 0; b < items.count; ++b) {
      EvdItem<T> it = items.item(b, warm);
      it.vectors = with_vectors ? &padded[std::size_t(b * ldv * n)] : nullptr, it.ldv = ldv;
      tickets.push_back(*solver.submit(it));
    }
    for (const Ticket& t : tickets) REQUIRE(solver.wait(t) == ItemState::done);
  }
  for (index_t b = 0; b < items.count; ++b) {
    INFO(type_name<T>() << " n = " << n << " case " << to_string(all_evd_cases()[std::size_t(b)])
                        << (block_per_item ? " block per item" : "") << (warm ? " warm" : " cold")
                        << (with_vectors ? " padded vectors" : " no vectors"));
    REQUIRE(items.info[std::size_t(b)].converged);
    Matrix<T> v(n, n);
    int padding_changed = 0;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < ldv; ++i) {
        const T x = padded[std::size_t(b * ldv * n + j * ldv + i)];
        if (i < n) v.data[std::size_t(i + j * n)] = x;
        else padding_changed += x != untouched;
      }
    CHECK(padding_changed == 0);
    check_evd<T>(ms[std::size_t(b)], items.values(b), with_vectors ? &v : nullptr,
                 reference_eigenvalues(ms[std::size_t(b)]), eigstream::Sort::descending, "gpu persistent, output layouts");
  }
}

// Matrices of order n at a stride of their own (not packed), and their outputs likewise, for items
// that hold a batch (EvdItem::count).
template <class T>
struct StridedBatch {
  index_t n, count, stride_a, stride_w, stride_v;
  Pinned<T> a, v;
  Pinned<real_t<T>> w;
  Pinned<SolveInfo> info;
  StridedBatch(const std::vector<Matrix<T>>& ms, index_t gap)
      : n(ms[0].rows), count(index_t(ms.size())), stride_a(n * n + gap), stride_w(n + gap), stride_v(n * n + 2 * gap),
        a(std::size_t(stride_a * count)), v(std::size_t(stride_v * count)), w(std::size_t(stride_w * count)),
        info(std::size_t(count)) {
    for (index_t b = 0; b < count; ++b) std::copy(ms[std::size_t(b)].data.begin(), ms[std::size_t(b)].data.end(), &a[std::size_t(b * stride_a)]);
  }
  // The matrices [first, first + matrices) as one item.
  EvdItem<T> item(index_t first, int matrices) const {
    EvdItem<T> it;
    it.a = &a[std::size_t(first * stride_a)], it.lda = n, it.stride_a = stride_a;
    it.values = &w[std::size_t(first * stride_w)], it.stride_values = stride_w;
    it.vectors = &v[std::size_t(first * stride_v)], it.ldv = n, it.stride_vectors = stride_v;
    it.info = &info[std::size_t(first)];
    it.n = int(n), it.count = matrices;
    return it;
  }
  std::vector<real_t<T>> values(index_t b) const { return {&w[std::size_t(b * stride_w)], &w[std::size_t(b * stride_w + n)]}; }
  Matrix<T> vectors(index_t b) const {
    Matrix<T> m(n, n);
    std::copy_n(&v[std::size_t(b * stride_v)], n * n, m.data.begin());
    return m;
  }
};

TEMPLATE_TEST_CASE("gpu persistent: items holding batches are solved matrix by matrix, as the batched kernel solves them",
                   "[gpu][persistent]", float, std::complex<float>, double, std::complex<double>) {
  using T = TestType;
  const index_t n = GENERATE(1, 3, 8, 13, 32, 48, 64);  // 48: items padded to the pairs solve's 64
  const bool block_per_item = GENERATE(false, true);
  // 37 matrices: every hard case, then covariances; one NaN among them.
  std::vector<Matrix<T>> ms;
  for (EvdCase c : all_evd_cases()) ms.push_back(evd_case<T>(c, n, 3000 + std::uint64_t(n)));
  while (ms.size() < 37) ms.push_back(evd_case<T>(EvdCase::covariance, n, 3100 + ms.size()));
  const index_t bad = 11;
  ms[bad](0, 0) = std::numeric_limits<real_t<T>>::quiet_NaN();
  const index_t count = index_t(ms.size());
  StridedBatch<T> batch(ms, 3);
  {
    PersistentSolver<T> solver(options_for(int(n), block_per_item));
    // Three items: 20 matrices, 1, then the other 16.
    const std::vector<Ticket> tickets = {*solver.submit(batch.item(0, 20)), *solver.submit(batch.item(20, 1)),
                                         *solver.submit(batch.item(21, int(count) - 21))};
    for (const Ticket& t : tickets) REQUIRE(solver.wait(t) == ItemState::done);
    const auto c = solver.counters();
    CHECK(c.submitted == std::uint64_t(count));
    CHECK(c.completed == std::uint64_t(count));
    CHECK(c.failed == 1);
  }
  // The batched kernel refuses a batch with a NaN: it gets the identity in the bad matrix's place.
  std::vector<T> batch_a;
  for (const Matrix<T>& m : ms) batch_a.insert(batch_a.end(), m.data.begin(), m.data.end());
  for (index_t k = 0; k < n * n; ++k) batch_a[std::size_t(bad * n * n + k)] = T(k % (n + 1) == 0 ? 1 : 0);
  const BatchedResult<T> batched = solve_batched(batch_a, n, count);
  for (index_t b = 0; b < count; ++b) {
    INFO(type_name<T>() << " n = " << n << " matrix " << b << (block_per_item ? " block per item" : ""));
    const SolveInfo& s = batch.info[std::size_t(b)];
    CHECK(s.invalid_input == (b == bad));
    if (b == bad) {
      CHECK(std::isnan(double(batch.values(b)[0])));
      continue;
    }
    REQUIRE(s.converged);
    check_as_batched(ms[std::size_t(b)], batch.values(b), batch.vectors(b), batched, b, "gpu persistent batch item");
  }
  // The gaps between the matrices' outputs are never written.
  for (index_t b = 0; b < count; ++b)
    for (index_t k = n; k < batch.stride_w; ++k) CHECK(batch.w[std::size_t(b * batch.stride_w + k)] == real_t<T>(0));
}

TEST_CASE("gpu persistent: a batch item warm-started from one V0 (stride 0)", "[gpu][persistent]") {
  using T = std::complex<float>;
  const index_t n = 16, count = 12;
  const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 81);
  std::vector<Matrix<T>> ms;
  for (index_t b = 0; b < count; ++b) ms.push_back(perturb_hermitian(a, 0.01, true, 82 + std::uint64_t(b)));
  Items<T> first({a});
  StridedBatch<T> batch(ms, 0);
  PersistentSolver<T> solver(options_for(16));
  REQUIRE(solver.wait(*solver.submit(first.item(0))) == ItemState::done);
  EvdItem<T> it = batch.item(0, int(count));
  it.warm_start = first.v.get(), it.ldw = n, it.stride_warm_start = 0;
  REQUIRE(solver.wait(*solver.submit(it)) == ItemState::done);
  for (index_t b = 0; b < count; ++b) {
    INFO("matrix " << b);
    CHECK(batch.info[std::size_t(b)].sweeps <= 3);
    const Matrix<T> v = batch.vectors(b);
    check_evd(ms[std::size_t(b)], batch.values(b), &v, reference_eigenvalues(ms[std::size_t(b)]),
              eigstream::Sort::descending, "gpu persistent batch warm");
  }
}

TEST_CASE("gpu persistent: warm start from the previous result", "[gpu][persistent]") {
  using T = std::complex<float>;
  const index_t n = 32;
  const bool block_per_item = GENERATE(false, true);
  const bool reorthonormalise = GENERATE(true, false);  // one link: V0 J is orthonormal enough without the step
  INFO((block_per_item ? "block per item" : "warp per item") << (reorthonormalise ? "" : ", no Newton-Schulz step"));
  const Matrix<T> a = evd_case<T>(EvdCase::covariance, n, 71);
  Items<T> items({a, perturb_hermitian(a, 0.01, true, 72)});
  PersistentSolver<T> solver(options_for(32, block_per_item));
  REQUIRE(solver.wait(*solver.submit(items.item(0))) == ItemState::done);
  std::copy_n(&items.v[0], n * n, &items.warm[std::size_t(n * n)]);
  EvdItem<T> warm_item = items.item(1, true);
  warm_item.reorthonormalise = reorthonormalise;
  REQUIRE(solver.wait(*solver.submit(warm_item)) == ItemState::done);
  CHECK(items.info[0].sweeps >= 5);
  CHECK(items.info[1].sweeps <= 3);
  const Matrix<T> v = items.vectors(1);
  Matrix<T> a1(n, n);
  std::copy_n(&items.a[std::size_t(n * n)], n * n, a1.data.begin());
  check_evd(a1, items.values(1), &v, reference_eigenvalues(a1), eigstream::Sort::descending, "gpu persistent warm");
}

// Four host threads submit per_thread matrices each, in items of 1 to max_matrices (1: one matrix a
// submit), into a ring smaller than the work, so that submitters also meet a full ring; to a solver
// that parks (the default) or stays resident (park_after_us = 0).
template <class T>
void submit_from_threads(index_t n, index_t per_thread, std::uint64_t capacity, int max_matrices, std::uint64_t seed,
                         bool resident = false) {
  const int threads = 4;
  const std::vector<Matrix<T>> ms = covariances<T>(n, per_thread * threads, seed);
  StridedBatch<T> batch(ms, 1);
  PersistentOptions o = options_for(int(n));
  o.capacity = capacity;
  if (resident) o.park_after_us = 0;
  PersistentSolver<T> solver(o);
  std::atomic<int> wrong_state{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<Ticket> tickets;
      std::mt19937 rng{std::uint32_t(t)};
      for (index_t k = 0; k < per_thread;) {
        const int matrices = int(std::min<index_t>(per_thread - k, 1 + index_t(rng() % std::uint32_t(max_matrices))));
        tickets.push_back(*solver.submit(batch.item(t * per_thread + k, matrices)));
        k += matrices;
      }
      for (const Ticket& ticket : tickets) wrong_state += solver.wait(ticket) != ItemState::done;
    });
  for (auto& th : pool) th.join();
  CHECK(wrong_state == 0);
  const auto c = solver.counters();
  CHECK(c.submitted == std::uint64_t(threads * per_thread));
  CHECK(c.completed == std::uint64_t(threads * per_thread));
  int unsolved = 0;
  for (index_t b = 0; b < batch.count; ++b) unsolved += !batch.info[std::size_t(b)].converged;
  CHECK(unsolved == 0);
  for (index_t b = 0; b < batch.count; b += 29) {
    INFO("matrix " << b);
    const Matrix<T> v = batch.vectors(b);
    check_evd(ms[std::size_t(b)], batch.values(b), &v, reference_eigenvalues(ms[std::size_t(b)]),
              eigstream::Sort::descending, "gpu persistent threads");
  }
}

TEST_CASE("gpu persistent: several host threads submit concurrently", "[gpu][persistent]") {
  SECTION("one matrix an item, complex float 16") { submit_from_threads<std::complex<float>>(16, 300, 64, 1, 500); }
  SECTION("items of 1 to 40 matrices, float 8") { submit_from_threads<float>(8, 400, 16, 40, 700); }
  SECTION("items of 1 to 40 matrices, float 8, resident") { submit_from_threads<float>(8, 400, 16, 40, 710, true); }
}

TEST_CASE("gpu persistent: a full ring fails or waits, as asked", "[gpu][persistent]") {
  using T = double;
  const index_t n = 64, count = 24;
  const std::vector<Matrix<T>> ms = covariances<T>(n, count, 900);
  Items<T> items(ms);
  PersistentOptions o = options_for(64);
  o.sms = 1, o.blocks_per_sm = 1, o.capacity = 2;  // one consumer, two slots
  PersistentSolver<T> solver(o);
  REQUIRE(solver.consumers() == 1);
  std::vector<Ticket> tickets;
  int refused = 0;
  for (index_t b = 0; b < count; ++b) {
    std::optional<Ticket> t = solver.submit(items.item(b), SubmitMode::fail);
    if (!t) {
      ++refused;
      t = solver.submit(items.item(b), SubmitMode::wait);  // waits for a slot
    }
    REQUIRE(t);
    tickets.push_back(*t);
  }
  // A cold 64 x 64 double solve takes far longer than a submit: the ring must have been full.
  CHECK(refused > 0);
  for (const Ticket& t : tickets) REQUIRE(solver.wait(t) == ItemState::done);
  CHECK(solver.counters().completed == std::uint64_t(count));
  for (index_t b = 0; b < count; b += 7) {
    const Matrix<T> v = items.vectors(b);
    check_evd(ms[std::size_t(b)], items.values(b), &v, reference_eigenvalues(ms[std::size_t(b)]),
              eigstream::Sort::descending, "gpu persistent full ring");
  }
}

TEST_CASE("gpu persistent: shutdown with items in flight drains or cancels them", "[gpu][persistent]") {
  using T = std::complex<float>;
  const index_t n = 64, count = 48;
  const std::vector<Matrix<T>> ms = covariances<T>(n, count, 1300);
  PersistentOptions o = options_for(64);
  o.sms = 1, o.blocks_per_sm = 1, o.capacity = 64;

  SECTION("drain solves everything queued") {
    Items<T> items(ms);
    PersistentSolver<T> solver(o);
    std::vector<Ticket> tickets;
    for (index_t b = 0; b < count; ++b) tickets.push_back(*solver.submit(items.item(b)));
    solver.shutdown(ShutdownMode::drain);
    for (const Ticket& t : tickets) CHECK(solver.poll(t) == ItemState::done);
    CHECK(solver.counters().completed == std::uint64_t(count));
    for (index_t b = 0; b < count; ++b) CHECK(items.info[std::size_t(b)].converged);
    REQUIRE_THROWS_AS(solver.submit(items.item(0)), Error);
  }
  SECTION("cancel solves what was claimed and cancels the rest") {
    Items<T> items(ms);
    PersistentSolver<T> solver(o);
    std::vector<Ticket> tickets;
    for (index_t b = 0; b < count; ++b) tickets.push_back(*solver.submit(items.item(b)));
    solver.shutdown(ShutdownMode::cancel);
    int done = 0, cancelled = 0;
    for (index_t b = 0; b < count; ++b) {
      const ItemState s = solver.poll(tickets[std::size_t(b)]);
      REQUIRE(s != ItemState::pending);
      if (s == ItemState::done) {
        ++done;
        CHECK(items.info[std::size_t(b)].converged);
      } else {
        ++cancelled;
        CHECK(items.info[std::size_t(b)].sweeps == 0);  // never touched
      }
    }
    CHECK(cancelled > 0);  // one consumer cannot have solved 48 cold 64 x 64 matrices that fast
    const auto c = solver.counters();
    CHECK(c.completed == std::uint64_t(done));
    CHECK(c.cancelled == std::uint64_t(cancelled));
  }
}

TEST_CASE("gpu persistent: a cancelling shutdown with batch items in flight", "[gpu][persistent]") {
  using T = std::complex<float>;
  // n = 64: one consumer (a block) takes the matrices two at a time; n = 8: one consumer (a block of
  // four warps) takes 16 at a time, so items of 20 split unevenly.
  const index_t n = GENERATE(64, 8);
  const index_t per_item = n == 64 ? 8 : 20, items_count = n == 64 ? 6 : 40, count = per_item * items_count;
  const std::vector<Matrix<T>> ms = covariances<T>(n, count, 1500);
  StridedBatch<T> batch(ms, 0);
  PersistentOptions o = options_for(int(n));
  o.sms = 1, o.blocks_per_sm = 1;
  PersistentSolver<T> solver(o);
  std::vector<Ticket> tickets;
  for (index_t k = 0; k < items_count; ++k) tickets.push_back(*solver.submit(batch.item(k * per_item, int(per_item))));
  solver.shutdown(ShutdownMode::cancel);
  int solved = 0, untouched = 0, cancelled_items = 0;
  for (index_t k = 0; k < items_count; ++k) {
    const ItemState s = solver.poll(tickets[std::size_t(k)]);
    REQUIRE(s != ItemState::pending);
    int item_solved = 0;
    for (index_t b = k * per_item; b < (k + 1) * per_item; ++b) {
      const bool converged = batch.info[std::size_t(b)].converged;
      item_solved += converged;
      if (!converged) CHECK(batch.info[std::size_t(b)].sweeps == 0);  // never touched
    }
    INFO("n = " << n << " item " << k);
    if (s == ItemState::done) CHECK(item_solved == per_item);  // done: every matrix solved
    if (s == ItemState::cancelled) {
      CHECK(item_solved < per_item);
      ++cancelled_items;
    }
    solved += item_solved;
    untouched += int(per_item) - item_solved;
  }
  CHECK(cancelled_items > 0);  // one block cannot have solved 48 cold 64 x 64 or 800 8 x 8 matrices that fast
  const auto c = solver.counters();
  CHECK(c.submitted == std::uint64_t(count));
  CHECK(c.completed == std::uint64_t(solved));
  CHECK(c.cancelled == std::uint64_t(untouched));
}

TEST_CASE("gpu persistent: a NaN item among good ones is flagged, the others are solved", "[gpu][persistent]") {
  using T = float;
  const index_t n = 20, count = 9;
  std::vector<Matrix<T>> ms = covariances<T>(n, count, 40);
  ms[4](3, 1) = std::numeric_limits<float>::quiet_NaN();
  ms[6](2, 9) += 1.0f;  // not symmetric any more
  Items<T> items(ms);
  PersistentSolver<T> solver(options_for(32));
  std::vector<Ticket> tickets;
  for (index_t b = 0; b < count; ++b) tickets.push_back(*solver.submit(items.item(b)));
  for (const Ticket& t : tickets) REQUIRE(solver.wait(t) == ItemState::done);
  CHECK(solver.counters().failed == 2);
  for (index_t b = 0; b < count; ++b) {
    INFO("item " << b);
    const bool bad = b == 4 || b == 6;
    CHECK(items.info[std::size_t(b)].invalid_input == bad);
    if (bad) {
      CHECK(std::isnan(items.w[std::size_t(b * n)]));
    } else {
      const Matrix<T> v = items.vectors(b);
      check_evd(ms[std::size_t(b)], items.values(b), &v, reference_eigenvalues(ms[std::size_t(b)]),
                eigstream::Sort::descending, "gpu persistent nan");
    }
  }
}

TEST_CASE("gpu persistent: device code submits after a kernel on another stream", "[gpu][persistent]") {
  using T = float;
  const index_t n = 12, count = 16;
  Items<T> items(covariances<T>(n, count, 60));
  Pinned<std::uint64_t> positions{static_cast<std::size_t>(count)};  // freed after the solver stops (see below)
  Pinned<EvdItem<T>> its{static_cast<std::size_t>(count)};
  for (index_t b = 0; b < count; ++b) its[std::size_t(b)] = items.item(b);
  const std::vector<Matrix<T>> host_matrices = covariances<T>(n, 40, 61);
  StridedBatch<T> host_batch(host_matrices, 1);  // pinned before the resident kernel starts, as all memory here
  REQUIRE(preload_producer() == cudaSuccess);
  PersistentOptions o = options_for(16);
  o.park_after_us = 0;  // device code cannot wake a parked kernel
  PersistentSolver<T> solver(o);
  cudaStream_t stream;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  // A kernel on `stream` builds each matrix as diag(1..n) + 0.5 * (ones), then one thread submits it;
  // meanwhile the host submits an item of 40 matrices, so that consumers claim from both rings.
  REQUIRE(launch_build_and_submit(solver.device_queue(), its.get(), int(count), positions.get(), stream) == cudaSuccess);
  const Ticket host_ticket = *solver.submit(host_batch.item(0, 40));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  cudaError_t status;
  while ((status = cudaStreamQuery(stream)) == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  INFO("the producer kernel " << (status == cudaErrorNotReady ? "did not finish in 10 s" : cudaGetErrorString(status)));
  REQUIRE(status == cudaSuccess);
  for (index_t b = 0; b < count; ++b) {
    REQUIRE(positions[std::size_t(b)] != kNotSubmitted);
    REQUIRE(solver.wait(PersistentSolver<T>::device_ticket(positions[std::size_t(b)])) == ItemState::done);
  }
  REQUIRE(solver.wait(host_ticket) == ItemState::done);
  CHECK(solver.counters().submitted == std::uint64_t(count + 40));
  for (index_t b = 0; b < 40; b += 13) {
    INFO("host matrix " << b);
    const Matrix<T> v = host_batch.vectors(b);
    check_evd(host_matrices[std::size_t(b)], host_batch.values(b), &v, reference_eigenvalues(host_matrices[std::size_t(b)]),
              eigstream::Sort::descending, "gpu persistent host submit beside device code");
  }
  for (index_t b = 0; b < count; ++b) {
    Matrix<T> a(n, n);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) a(i, j) = T(0.5) + (i == j ? T(i + 1) : T(0));
    const Matrix<T> v = items.vectors(b);
    check_evd(a, items.values(b), &v, reference_eigenvalues(a), eigstream::Sort::descending, "gpu persistent device submit");
  }
  cudaStreamDestroy(stream);
}

TEST_CASE("gpu persistent: stream_wait orders later stream work after the item", "[gpu][persistent]") {
  using T = double;
  const index_t n = 32;
  Items<T> items(covariances<T>(n, 1, 80));
  PersistentSolver<T> solver(options_for(32));
  cudaStream_t stream;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  std::vector<double> copy(std::size_t(n), -1.0);
  const Ticket t = *solver.submit(items.item(0));
  solver.stream_wait(t, stream);
  REQUIRE(cudaMemcpyAsync(copy.data(), items.w.get(), std::size_t(n) * sizeof(double), cudaMemcpyDefault, stream) ==
          cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(solver.poll(t) == ItemState::done);
  for (index_t k = 0; k < n; ++k) CHECK(copy[std::size_t(k)] == items.w[std::size_t(k)]);
  cudaStreamDestroy(stream);
}

// Parked, the kernel has ended: a call that waits for an idle device, here the first launch of a
// kernel never loaded (lazy module loading), completes; the next submit launches the kernel again.
TEST_CASE("gpu persistent: a parked solver lets the device idle and wakes on the next submit", "[gpu][persistent]") {
  using T = std::complex<float>;
  const index_t n = 8;
  const std::vector<Matrix<T>> ms = covariances<T>(n, 2, 1700);
  Items<T> items(ms);
  PersistentOptions o = options_for(8);
  o.sms = 2;
  o.park_after_us = 200;
  PersistentSolver<T> solver(o);
  REQUIRE(solver.wait(*solver.submit(items.item(0))) == ItemState::done);
  {
    const Watchdog watchdog(std::chrono::seconds(60), "the first launch of a kernel beside a parking solver");
    int echoed = 0;
    REQUIRE(first_launch_round_trip(17, &echoed) == cudaSuccess);
    CHECK(echoed == 17);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // parked by now, 100 times over
  CHECK(solver.counters().launches == 1);
  REQUIRE(solver.wait(*solver.submit(items.item(1))) == ItemState::done);
  CHECK(solver.counters().launches == 2);
  for (index_t b = 0; b < 2; ++b) {
    const Matrix<T> v = items.vectors(b);
    check_evd(ms[std::size_t(b)], items.values(b), &v, reference_eigenvalues(ms[std::size_t(b)]),
              eigstream::Sort::descending, "gpu persistent parked");
  }
  REQUIRE_THROWS_MATCHES(solver.device_queue(), Error, Catch::Predicate<Error>([](const Error& e) {
    return e.code() == ErrorCode::invalid_argument && std::string(e.what()).find("parks") != std::string::npos;
  }, "invalid_argument: a parking solver has no device queue"));
}

// Bursts from four threads with pauses longer than park_after_us: the kernel parks and is woken many
// times, often by two threads at once, and races its last scan against submits. Every item is solved.
TEST_CASE("gpu persistent: parking between bursts from several threads loses no item", "[gpu][persistent]") {
  using T = std::complex<float>;
  const index_t n = 16, bursts = 20, burst = 8;
  const int threads = 4;
  const index_t per_thread = bursts * burst;
  const std::vector<Matrix<T>> ms = covariances<T>(n, per_thread * threads, 2100);
  StridedBatch<T> batch(ms, 1);
  PersistentOptions o = options_for(16);
  o.sms = 4;
  o.park_after_us = 20;
  PersistentSolver<T> solver(o);
  std::atomic<int> wrong_state{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937 random{unsigned(t)};
      std::uniform_int_distribution<int> pause_us(0, 300);
      for (index_t k = 0; k < bursts; ++k) {
        std::vector<Ticket> tickets;  // a burst of `burst` matrices in items of 1 to 5 (claims of 2)
        for (index_t i = 0; i < burst;) {
          const int matrices = int(std::min<index_t>(burst - i, 1 + index_t(random() % 5)));
          tickets.push_back(*solver.submit(batch.item(t * per_thread + k * burst + i, matrices)));
          i += matrices;
        }
        for (const Ticket& ticket : tickets) wrong_state += solver.wait(ticket) != ItemState::done;
        std::this_thread::sleep_for(std::chrono::microseconds(pause_us(random)));
      }
    });
  for (auto& th : pool) th.join();
  CHECK(wrong_state == 0);
  const auto c = solver.counters();
  CHECK(c.completed == std::uint64_t(threads * per_thread));
  CHECK(c.launches > 1);
  INFO("launches " << c.launches);
  for (index_t b = 0; b < batch.count; ++b) {
    INFO("matrix " << b);
    REQUIRE(batch.info[std::size_t(b)].converged);
    if (b % 13 != 0) continue;
    const Matrix<T> v = batch.vectors(b);
    check_evd(ms[std::size_t(b)], batch.values(b), &v, reference_eigenvalues(ms[std::size_t(b)]),
              eigstream::Sort::descending, "gpu persistent parking threads");
  }
}

TEST_CASE("gpu persistent: bad items and options are refused clearly", "[gpu][persistent]") {
  using T = float;
  auto refused = [](auto&& call, const char* text) {
    REQUIRE_THROWS_MATCHES(call(), Error, Catch::Predicate<Error>([&](const Error& e) {
      return e.code() == ErrorCode::invalid_argument && std::string(e.what()).find(text) != std::string::npos;
    }, text));
  };
  PersistentOptions bad = options_for(65);
  refused([&] { PersistentSolver<T> s(bad); }, "max_n");
  bad = options_for(8);
  bad.blocks_per_sm = 1000;
  refused([&] { PersistentSolver<T> s(bad); }, "blocks_per_sm");
  bad = options_for(8);
  bad.park_after_us = -1;
  refused([&] { PersistentSolver<T> s(bad); }, "park_after_us");
  Items<T> items(covariances<T>(9, 1, 3));
  {  // one resident solver at a time: a second one's pinned allocations would wait for the first
    PersistentSolver<T> solver(options_for(8));
    refused([&] { solver.submit(items.item(0)); }, "n must be in [1, max_n]");
  }
  PersistentSolver<T> wide(options_for(16));
  EvdItem<T> it = items.item(0);
  it.info = nullptr;
  refused([&] { wide.submit(it); }, "info is missing");
  it = items.item(0);
  it.lda = 4;
  refused([&] { wide.submit(it); }, "leading dimension");
  it = items.item(0);
  it.count = 0;
  refused([&] { wide.submit(it); }, "count must be in [1, 2^18]");
  it.count = eigstream::cuda::kMaxItemMatrices + 1;
  refused([&] { wide.submit(it); }, "count must be in [1, 2^18]");
  it.count = 2, it.stride_a = 81, it.stride_vectors = 81;
  it.stride_values = 8;
  refused([&] { wide.submit(it); }, "stride_values is below n");
  it.stride_values = 9, it.stride_vectors = 80;
  refused([&] { wide.submit(it); }, "stride_vectors is below ldv * n");
  it.stride_vectors = 81, it.stride_a = -1;
  refused([&] { wide.submit(it); }, "stride_a and stride_warm_start must be >= 0");
  CHECK(wide.counters().submitted == 0);  // nothing refused was queued
}

// Run alone (CTest "gpu: persistent kernel fault"): a fault poisons the CUDA context of the process.
// Hidden, and named so that "gpu persistent*" does not select it: Catch runs a hidden test that a
// name pattern matches, and every test after it would then fail on the poisoned context.
TEST_CASE("gpu fault, run alone: a persistent kernel fault surfaces as an error on the next call", "[.][persistent-fault]") {
  using T = float;
  Items<T> items(covariances<T>(8, 1, 5));
  PersistentSolver<T> solver(options_for(8));
  EvdItem<T> it = items.item(0);
  it.a = reinterpret_cast<const T*>(std::uintptr_t(0x10));  // not an address the GPU can read
  const Ticket t = *solver.submit(it);
  REQUIRE_THROWS_MATCHES(solver.wait(t), Error, Catch::Predicate<Error>([](const Error& e) {
    return e.code() == ErrorCode::cuda && std::string(e.what()).find("persistent kernel failed") != std::string::npos;
  }, "cuda error naming the kernel failure"));
}

