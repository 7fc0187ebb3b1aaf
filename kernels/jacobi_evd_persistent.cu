// The persistent EVD kernel: resident consumers that claim items from the work rings of
// eigstream::cuda::PersistentSolver (protocol in eigstream/detail/persistent_ring.hpp), share out the
// matrices of items that hold several, solve each matrix with the per-matrix solves of
// jacobi_evd_solve.cuh, and publish the completion of items.
//
// Polling: the rings live in mapped host memory, and a read of it crosses PCIe, so only one warp,
// the poller (the grid's first block), reads it while waiting: it scans 32 slots a round for newly
// published items (up to 256 while they keep coming) and advances a per-ring `visible` count in
// device memory. Consumers poll only `visible` and the rings' `head` in device memory, and claim
// position h < visible by a ticket taken from head (see claim_by_ticket); the claimer then reads the
// item once from host memory. Idle, the poller sleeps up to idle_sleep_ns (at most 1 us) between
// scans and consumers up to idle_sleep_ns between polls. With park_after_ns set, the poller stops
// after that long without a new item and the consumers follow once nothing is left to claim: the
// kernel ends ("parks") until a submit launches it again.
//
// Thread mapping: the kernel is compiled for NMAX, the smallest of {4, 8, 16, 32, 64} holding the
// solver's max_n, and pads smaller items, and for one of two consumer shapes:
//  - throughput (default): for NMAX <= 32 a consumer (a block of 256 or 128 threads at NMAX <= 16, a
//    warp at 32; kConsumerThreads) claims a matrix for each NMAX lanes at once and solves them side by
//    side, NMAX lanes each with the register solve, as the batched kernel does (complex double at
//    32, whose rows do not fit in registers, takes the shared-memory solve in its throughput shape, a
//    matrix at a time). Consumers of NMAX lanes each, claiming on their own, diverged within their warp: at
//    n = 8, 4 to a warp, they reached 0.10-0.18 of the batched kernel's rate
//    (bench/results/2026-11-25-h100-warp-claims.md). At NMAX = 64, a block of 256 threads claims
//    two matrices, stages them, starts them side by side, two warps each (cold
//    ones from the tridiagonal start), then solves them in turn with the pairs solve
//    (jacobi_evd_pairs.cuh; solve_pairs_claim). Many items are solved at once, each slowly;
//  - block per item (latency): a block of evd::shared_threads(NMAX, latency) threads (128 at
//    NMAX <= 16, 320 at 32), the shared-memory solve with a thread per 2 x 2 block of A or a row of V
//    in four pairs' columns in a step, a warp for the next step's rotations, and one barrier a step,
//    so one item finishes soonest. At NMAX = 64 this shape is the pairs solve too: the shared-memory
//    solve on 800 threads took 2690 cycles a Jacobi step against the pairs solve's 2756, and solved
//    warm batches at about 0.6 of its rate (H100, complex float, 2026-11-23).
// The consumer's leader (its thread 0) claims, copies the item into shared memory and publishes
// completion.
//
// Memory ordering: the poller reads slot states with acquire at system scope and publishes
// `visible` with release at device scope; consumers read it with acquire, so the item they then read
// is the one the producer published. The leader releases a slot (a release store, system scope), or
// counts the matrices of its claim of a several-matrix item finished (an acquire-release add, system
// scope, skipped when the claim was the whole item), after a barrier of the consumer's threads:
// release is cumulative, so every thread's outputs (in device or host memory) are visible first. A
// fence at system scope in every thread as well cost a lone item about 1.3 us more (H200,
// bench/results/2026-11-26-h200-latency-path.md).
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "eigstream/persistent_submit.cuh"
#include "eigstream_kernels/evd_batched.hpp"
#include "eigstream_kernels/evd_persistent.hpp"
#include "jacobi_evd_pairs.cuh"
#include "jacobi_evd_solve.cuh"
#include "tridiagonal_start.cuh"
#include "tridiagonal_start.hpp"

namespace eigstream::kernels {
namespace {

using cuda::EvdItem;
using cuda::detail::ConsumerCounters;
using cuda::detail::item_matrices;
using cuda::detail::kCancelledBit;
using cuda::detail::Ring;
using cuda::detail::load_acquire_system;
using cuda::detail::store_release_system;
using evd::Args;

constexpr std::uint64_t kNone = ~std::uint64_t(0);

// The solve of a consumer, per scalar, NMAX and shape (see the file comment), and its threads.
enum class Solve { registers, pairs, shared };
template <class S, int NMAX, bool BLOCK_PER_ITEM>
inline constexpr Solve kSolve = NMAX == 64                                      ? Solve::pairs
                                : !BLOCK_PER_ITEM && evd::kRegistersFit<S, NMAX> ? Solve::registers
                                                                                 : Solve::shared;
// A consumer claims and finishes matrices together. In the register shape its NMAX-lane groups solve
// a claim's matrices side by side, one each; it is a block of eight warps for float at NMAX <= 8, of
// four warps elsewhere at NMAX <= 16, and a warp at 32. Else it is a block solving one matrix. At
// NMAX <= 16 the work around a claim, not the solve, set the rate of warp consumers: items of 64
// matrices ran at 0.29-0.30 of the batched kernel's rate at float 8 and 0.80-0.82 at float 16 with
// warps, 0.58-0.61 and 0.90-0.91 with blocks of four. Float 8 ran at 0.65-0.71 with blocks of eight
// (against 0.58-0.66; 0.55-0.56 without the register cap below); complex float 8, whose rows take
// 120 registers, did not gain with them (0.70-0.79 against 0.76-0.79) (H200,
// bench/results/2026-11-26-h200-block-consumers.md).
template <class S, int NMAX>
inline constexpr int kRegisterConsumerThreads = NMAX <= 8 && std::is_same_v<S, float> ? 256 : NMAX <= 16 ? 128 : 32;
template <bool BLOCK_PER_ITEM>
inline constexpr evd::StepShape kStepShape = BLOCK_PER_ITEM ? evd::StepShape::latency : evd::StepShape::throughput;
template <class S, int NMAX, bool BLOCK_PER_ITEM>
inline constexpr int kConsumerThreads = kSolve<S, NMAX, BLOCK_PER_ITEM> == Solve::shared
                                            ? evd::shared_threads(NMAX, kStepShape<BLOCK_PER_ITEM>)
                                        : kSolve<S, NMAX, BLOCK_PER_ITEM> == Solve::pairs ? evd::pairs::kThreads
                                                                                          : kRegisterConsumerThreads<S, NMAX>;
template <class S, int NMAX, bool BLOCK_PER_ITEM>
inline constexpr int kSolverThreads =
    kSolve<S, NMAX, BLOCK_PER_ITEM> == Solve::registers ? NMAX : kConsumerThreads<S, NMAX, BLOCK_PER_ITEM>;
// The pairs solve for throughput (NMAX = 64) stages and starts kPairsSides matrices of a claim side by
// side, each by a group of two warps (see solve_pairs_claim), and then solves them in turn. The two
// starts' shared memory lies within the solve's (see solve_bytes), at the same blocks an SM.
template <class S, int NMAX, bool BLOCK_PER_ITEM>
inline constexpr bool kPairsThroughput = kSolve<S, NMAX, BLOCK_PER_ITEM> == Solve::pairs && !BLOCK_PER_ITEM;
constexpr int kPairsSides = 2;
template <class S, int NMAX, bool BLOCK_PER_ITEM>  // matrices a consumer claims at once
inline constexpr int kClaimMatrices = kPairsThroughput<S, NMAX, BLOCK_PER_ITEM>
                                          ? kPairsSides
                                          : kConsumerThreads<S, NMAX, BLOCK_PER_ITEM> / kSolverThreads<S, NMAX, BLOCK_PER_ITEM>;
template <class S, int NMAX, bool BLOCK_PER_ITEM>
inline constexpr int kBlockThreads =
    kSolve<S, NMAX, BLOCK_PER_ITEM> != Solve::registers
        ? kConsumerThreads<S, NMAX, BLOCK_PER_ITEM>
        : std::max(kRegisterConsumerThreads<S, NMAX>, 128);  // warp consumers at 32, four to a block
// Blocks an SM that the kernel is compiled for. The register shape: registers for a lane's rows of
// A and V (2 NMAX scalars) and 48 more at NMAX = 32 and for float at 16 (6 blocks of 128 threads an
// SM, as the batched kernel), 64 more for float at NMAX <= 8 (3 blocks of 256, no spills) and for
// complex float at NMAX <= 16, 80 more elsewhere (left to itself the compiler took up to 255, 2 blocks
// an SM). Complex float with 64 more: at 8, 5 blocks of 128 (12 bytes spilled) where 80 more gave 4,
// and items of 64 ran at 0.79-0.89 of the batched kernel's rate against 0.66-0.74; at 16, 4 blocks
// (96 bytes spilled) where 80 more gave 3, and 0.97-1.00 against 0.92-0.93 (H200,
// bench/results/2026-11-26-h200-block-consumers.md).
// Measured with items of 64 on an H100 (bench/results/2026-11-25-h100-warp-claims.md and
// 2026-11-25-h100-leader-state.md): with 48 everywhere below 32, complex float 8 spilled 256 bytes
// and ran at 0.49 of the batched kernel's rate against 0.65 with 80; float 16 ran at 0.78 with 48,
// 0.65-0.70 with 80 (4 blocks); at float 32, 80 more (3 blocks, not 4) lost 2-3%.
// The pairs solve for throughput: as the batched pairs kernel; left to itself the compiler took 155
// registers at complex float (1 block an SM against the batched kernel's 3), 168 at double and 124
// at float (2 against 4); items of 64 ran at 0.55 / 0.56 / 0.86 of the batched kernel's rate, 1.03 /
// 0.97 / 0.91 with the cap. For latency (block per item) one block is left all it takes, as spills
// lengthen a solve (a lone item 20% longer).
template <class S, int NMAX>
inline constexpr int kRegistersPerThread =
    2 * NMAX * int(sizeof(S)) / 4 +
    (NMAX == 32 || (NMAX == 16 && std::is_same_v<S, float>)                        ? 48
     : (NMAX <= 8 && std::is_same_v<S, float>) || (NMAX <= 16 && std::is_same_v<S, Cx<float>>) ? 64
                                                                                     : 80);
template <class S, int NMAX, bool BLOCK_PER_ITEM>
inline constexpr int kMinBlocksPerSm =
    kSolve<S, NMAX, BLOCK_PER_ITEM> == Solve::registers
        ? 65536 / (kBlockThreads<S, NMAX, BLOCK_PER_ITEM> * kRegistersPerThread<S, NMAX>)
    : kSolve<S, NMAX, BLOCK_PER_ITEM> == Solve::pairs && !BLOCK_PER_ITEM ? evd::pairs::kMinBlocksPerSm<S>
                                                                         : 1;

// The barrier of one consumer's threads: a warp, or a block.
template <int THREADS>
__device__ __forceinline__ void consumer_sync() {
  if constexpr (THREADS == 32) __syncwarp(); else __syncthreads();
}
// The barrier of one solve's threads: NMAX lanes of a warp (`mask`), or a block.
template <int THREADS>
__device__ __forceinline__ void solver_sync(unsigned mask) {
  if constexpr (THREADS <= 32) __syncwarp(mask); else __syncthreads();
}

__device__ __forceinline__ std::uint64_t load_volatile(const std::uint64_t* p) {
  return *reinterpret_cast<const volatile std::uint64_t*>(p);
}
__device__ __forceinline__ std::uint64_t load_relaxed_system(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint64_t load_acquire_device(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release_device(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Loads past the SM's L1 cache (ld.global.cg), for data that other SMs wrote or that is read once:
// the items' matrices and the copies of items. Through L1, with several consumers helping with one
// item, staging a claim once took up to 15 times longer (bench/results/2026-11-26-h200-claim-path.md).
template <class R>
__device__ __forceinline__ R load_past_l1(const R* p) { return __ldcg(p); }
template <class R>
__device__ __forceinline__ Cx<R> load_past_l1(const Cx<R>* p) { return {__ldcg(&p->re), __ldcg(&p->im)}; }
template <class T>
__device__ __forceinline__ T copy_past_l1(const T* from) {
  static_assert(sizeof(T) % 8 == 0 && alignof(T) >= 8, "copied in 8-byte words");
  T to;
#pragma unroll
  for (std::size_t i = 0; i < sizeof(T) / 8; ++i)
    reinterpret_cast<unsigned long long*>(&to)[i] = __ldcg(reinterpret_cast<const unsigned long long*>(from) + i);
  return to;
}

__device__ __forceinline__ std::uint64_t global_time_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Rings in use: device code submits only to a solver that never parks.
template <class T>
__device__ int rings_in_use(const PersistentEvdArgs<T>& args) {
  return args.park_after_ns ? 1 : 2;
}

// The poller (one warp): makes published items visible to the consumers, until a shutdown has been
// asked for and every ticket handed out has been made visible, or (parking) until nothing has been
// published for park_after_ns.
//
// Parking is the store-buffering handshake with PersistentSolver::submit: the poller stores `parked`,
// fences, then scans the rings a last time; a submitter publishes its item, fences, then reads
// `parked`. With both fences sequentially consistent at system scope, at least one side sees the
// other's store: the last scan makes the item visible to this launch's consumers, or the submitter
// launches the kernel again (after this one, on the same stream), or both, which is harmless.
template <class T>
__device__ void poll_rings(const PersistentEvdArgs<T>& args) {
  const int lane = threadIdx.x % 32;
  const int rings = rings_in_use(args);
  // After a park, a new launch goes on from where the last one stopped.
  std::uint64_t visible[2] = {load_volatile(&args.visible[0]), load_volatile(&args.visible[1])};
  // A round reads `chunks` chunks of 32 slots a ring, every load in flight together and one fence
  // after them, so it costs one PCIe round trip however far it reaches. While items come faster than
  // a round takes, chunks doubles (a round that found every slot it read published); idle, it is one.
  constexpr int kMaxChunks = 8;
  int chunks = 1;
  const auto scan = [&] {  // one round over the rings; whether anything became visible
    std::uint64_t state[2][kMaxChunks];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int c = 0; c < kMaxChunks; ++c) {
        const Ring<T>& ring = args.rings[r];
        const std::uint64_t p = visible[r] + c * 32 + lane;
        const bool read = r < rings && c < chunks && c * 32 + lane < ring.capacity;
        state[r][c] = read ? load_relaxed_system(&ring.slots[p & (ring.capacity - 1)].state) : 0;
      }
    asm volatile("fence.acq_rel.sys;" ::: "memory");  // acquire: the items published are seen whole
    __syncwarp();  // every lane's acquire, before lane 0 publishes `visible`
    bool advanced = false, filled = false;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      int run = 0;  // published, in order from `visible`
#pragma unroll
      for (int c = 0; c < kMaxChunks; ++c) {
        if (c >= chunks) break;
        const unsigned ballot = __ballot_sync(0xffffffffu, state[r][c] == visible[r] + c * 32 + lane + 1);
        run += ballot == 0xffffffffu ? 32 : __ffs(~ballot) - 1;
        if (ballot != 0xffffffffu) break;
      }
      if (run == 0) continue;
      visible[r] += run;
      advanced = true;
      filled |= run == chunks * 32;
      if (lane == 0) store_release_device(&args.visible[r], visible[r]);
    }
    chunks = filled ? min(2 * chunks, kMaxChunks) : advanced ? chunks : 1;
    return advanced;
  };
  unsigned sleep_ns = 0;
  std::uint64_t last_published = global_time_ns();
  for (;;) {
    if (scan()) {
      sleep_ns = 0;
      if (args.park_after_ns) last_published = global_time_ns();
      continue;
    }
    // Host submits are all published before the run state changes; device code must have stopped.
    if (*reinterpret_cast<const volatile int*>(args.run_state) != cuda::detail::kRunning &&
        visible[0] >= load_acquire_system(args.rings[0].tail) && visible[1] >= load_volatile(args.rings[1].tail))
      break;
    if (args.park_after_ns && global_time_ns() - last_published >= args.park_after_ns) {
      if (lane == 0) {
        store_release_system(args.parked, 1);
        asm volatile("fence.sc.sys;" ::: "memory");
      }
      __syncwarp();
      asm volatile("fence.sc.sys;" ::: "memory");
      while (scan()) {
      }
      break;
    }
    sleep_ns = min(max(2 * sleep_ns, 64u), min(1000u, unsigned(args.idle_sleep_ns)));
    __nanosleep(sleep_ns);
  }
  if (lane == 0) store_release_device(args.poller_done, 1);
}

// Claiming by tickets. A consumer takes a ticket of ring r, one fetch-and-add on its head made only
// while something visible there is unclaimed, which gives it position t; it claims t once t <
// visible. It holds at most one ticket a ring (ring 1, device code's, is used only without parking:
// device_queue() needs park_after_us = 0). A fetch-and-add always succeeds, where a compare-and-swap
// on head, raced for by every idle consumer, failed more the more consumers there were: items of 64
// float 8 x 8 matrices ran at 0.07 of the batched kernel's rate with it, 0.31 with tickets (H100,
// bench/results/2026-11-25-h100-leader-state.md). A ticket can run ahead of visible (consumers that
// raced for the last item); its holder waits for position t, or leaves when the poller has stopped
// first, and the next launch after a park hands the positions out again from visible
// (PersistentSolver::launch).

// The ring of a ticket the consumer holds that is visible, which it claims next; -1 if none.
template <class T>
__device__ int visible_ticket(const PersistentEvdArgs<T>& args, const std::uint64_t (&ticket)[2]) {
  for (int r = 0; r < rings_in_use(args); ++r)
    if (ticket[r] != kNone && ticket[r] < load_acquire_device(&args.visible[r])) return r;
  return -1;
}

// Returns the position of a ticket the consumer holds that is visible (and drops the ticket, its
// ring in `ring`); else takes a ticket of each ring in turn where it holds none and a visible item is
// unclaimed, and returns the first of those that is visible; else kNone. A ticket held and visible
// goes first, and no ticket is taken past the one claimed, so that a consumer does not sit on a
// visible ticket through a solve.
template <class T>
__device__ std::uint64_t claim_by_ticket(const PersistentEvdArgs<T>& args, std::uint64_t (&ticket)[2], int& ring) {
  const int rings = rings_in_use(args);
  const auto claim = [&](int r) {
    const std::uint64_t claimed = ticket[r];
    ticket[r] = kNone;
    ring = r;
    return claimed;
  };
  const int held = visible_ticket(args, ticket);
  if (held >= 0) return claim(held);
  for (int r = 0; r < rings; ++r) {
    std::uint64_t* head = args.rings[r].head;
    if (ticket[r] != kNone || load_volatile(head) >= load_acquire_device(&args.visible[r])) continue;
    ticket[r] = atomicAdd(reinterpret_cast<unsigned long long*>(head), 1ull);
    if (ticket[r] < load_acquire_device(&args.visible[r])) return claim(r);
  }
  return kNone;
}

// The poller has stopped, and in every ring the consumer's ticket (if any) will not become visible
// in this launch, or without one, nothing visible is unclaimed. visible is read after poller_done,
// so it is final.
template <class T>
__device__ bool ticket_drained(const PersistentEvdArgs<T>& args, const std::uint64_t (&ticket)[2]) {
  if (load_acquire_device(args.poller_done) == 0) return false;
  for (int r = 0; r < rings_in_use(args); ++r) {
    const std::uint64_t visible = load_volatile(&args.visible[r]);
    if (ticket[r] != kNone ? ticket[r] < visible : load_volatile(args.rings[r].head) < visible) return false;
  }
  return true;
}

// Items of several matrices, shared out in claims of up to k matrices, the number a consumer solves
// side by side (kClaimMatrices). The consumer that claims an item's position (by its ticket)
// names the item and its count in the slot's `opened` word and takes its first k matrices; if more
// are left, it first copies the item into the slot's `open_items` entry (device memory, where its
// helpers read it) and sets the slot's `taken` word to "k handed out", and afterwards takes the
// item's matrices k at a time itself, each claim a fetch-and-add of k on `taken`, until none is
// left: every matrix is claimed even if nobody helps. Idle consumers help before they claim a new
// position: from the ring's `help` cursor, the oldest position that may have a matrix left, they
// look for the first named item with a matrix left, passing over positions not yet named, and take
// from it while it lasts, moving the cursor past the items that have none (an item of at most k
// matrices has none once named); see help_oldest. So the oldest items are helped first (helping
// only the newest left items opened earlier to their openers alone, 64 solves in a row: complex
// float 32 ran at 0.75 of the batched kernel, bench/results/2026-11-25-h100-batch-items.md), and an
// item of at most k matrices costs one store more than it did. Helpers share items, so the item
// copies and the matrices are read past L1 (load_past_l1).
// `opened` and `taken` name the item besides counting (item_word), so that an add which meets a later
// item in the slot (the named one finished, and the slot was refilled and opened again) is seen for
// what it is: the claim of that item's matrices, checked against that item's count, read from host
// memory (a rare race; the copy is trusted only if the slot's state still shows the item
// unfinished). An add past the last matrix takes nothing. Each slot's `finished` word counts its
// item's finished (low 32 bits) and cancelled (high 32 bits) matrices, a claim's at once; the
// consumer that finishes the last resets it and releases the slot.
constexpr int kCountBits = cuda::detail::kItemCountBits;  // below: the matrix count; above: the position + 1 (0: no item)
// Adds land past an item's end at most once per consumer and item, each of at most 64 matrices (float
// at NMAX = 4: a block of 256 threads, 3 to an SM; 32 for the other scalars, 16 blocks of 128 to an
// SM), so there is room for 2^13 consumers: 2^9 SMs.
static_assert(cuda::kMaxItemMatrices <= (1 << (kCountBits - 1)), "room for the adds that land past an item's end");
__device__ __forceinline__ std::uint64_t item_word(std::uint64_t position, std::uint64_t number) {
  return (position + 1) << kCountBits | number;
}
__device__ __forceinline__ std::uint64_t word_position(std::uint64_t word) { return (word >> kCountBits) - 1; }
__device__ __forceinline__ int word_number(std::uint64_t word) {
  return int(word & ((std::uint64_t(1) << kCountBits) - 1));
}

struct ItemKey {  // which item the consumer's shared copy (`item`) is
  int ring = -1;
  std::uint64_t position = kNone;
};
struct Claimed {  // the matrices a leader claimed: `number` of them from `index`
  int ring = 0;
  std::uint64_t position = kNone;
  int index = 0;
  int number = 1;
};
struct Share {  // the item of several matrices that a leader takes from, while it lasts
  int ring = -1;
  std::uint64_t position = kNone;
  int count = 0;
  bool opener = false;  // the leader opened it, and so takes from it until none is left
};

// The leader's item copy: reads item `position` of ring r unless it holds it, from host memory (the
// item just claimed), or from its opener's copy in device memory (an item of several matrices that
// the leader helps with: the add on `taken` that took its matrices came after an acquire of its
// name, so the copy is seen whole).
template <class T>
__device__ void load_item(const Ring<T>& ring, int r, std::uint64_t position, EvdItem<T>& item, ItemKey& key,
                          bool opened) {
  if (key.ring == r && key.position == position) return;
  const std::uint64_t slot = position & (ring.capacity - 1);
  item = copy_past_l1(opened ? &ring.open_items[slot] : &ring.slots[slot].item);
  key = {r, position};
}

// Takes the next `per_claim` matrices (fewer at the end) of item `position` (count matrices) of
// ring r, or, if the slot has moved on to a later item, the matrices of that one the add took; false
// when the add took none.
template <class T>
__device__ bool take_matrices(const Ring<T>& ring, int r, std::uint64_t position, int count, int per_claim,
                              EvdItem<T>& item, ItemKey& key, Share& share, Claimed& claimed) {
  std::uint64_t* taken = &ring.taken[position & (ring.capacity - 1)];
  const std::uint64_t before = atomicAdd(reinterpret_cast<unsigned long long*>(taken), (unsigned long long)per_claim);
  if (before < item_word(position, 0)) return false;  // cannot happen: taken is set before the item is named
  const std::uint64_t named = word_position(before);
  const int index = word_number(before);
  if (named != position) {  // a later item of the slot, opened since
    const auto& slot = ring.slots[named & (ring.capacity - 1)];
    key = {};
    // Nothing orders the item's publication before this consumer's reads (its add is relaxed): a
    // state still showing the slot freed for `named` can only be a stale read, so read it again.
    std::uint64_t state;
    while (((state = load_acquire_system(&slot.state)) & ~kCancelledBit) == named) __nanosleep(32);
    if (state != named + 1) return false;  // finished: the add took nothing
    item = slot.item;
    __threadfence_system();  // the item's loads, then the state's
    if (load_acquire_system(&slot.state) != named + 1) return false;
    key = {r, named};
    count = item_matrices(item.count);
  }
  if (index >= count) return false;
  load_item(ring, r, named, item, key, true);
  share = {r, named, count, share.opener && share.ring == r && share.position == named};
  claimed = {r, named, index, min(per_claim, count - index)};
  return true;
}

// Names item `position` of ring r, just claimed (and held in `item`), in its slot, and returns how
// many of its matrices (from matrix 0) the claimer takes; opens the rest, if any, to helpers and to
// the claimer's next claims, with a copy of the item in device memory for the helpers to read (from
// host memory, each helper's read crossed PCIe).
template <class T>
__device__ int name_item(const Ring<T>& ring, int r, std::uint64_t position, const EvdItem<T>& item, int per_claim,
                         Share& share) {
  const std::uint64_t slot = position & (ring.capacity - 1);
  const int count = item_matrices(item.count);
  if (count <= per_claim) {  // none left to open: nothing to order before the name (a release would
                             // delay the claimer's solve); helpers skip it by its count
    *reinterpret_cast<volatile std::uint64_t*>(&ring.opened[slot]) = item_word(position, std::uint64_t(count));
    return count;
  }
  ring.open_items[slot] = item;  // before the name's release
  atomicExch(reinterpret_cast<unsigned long long*>(&ring.taken[slot]), item_word(position, std::uint64_t(per_claim)));
  share = {r, position, count, true};
  store_release_device(&ring.opened[slot], item_word(position, std::uint64_t(count)));  // after taken
  return per_claim;
}

// A help search reads the positions from the ring's help cursor 32 at a time, a lane of the
// consumer's first warp each, all loads in flight together, in up to kHelpRounds rounds. One position
// at a time, by the leader alone, stopping at the first not yet named, a search took about 100 000
// cycles at n = 8, the cursor fell behind the items being opened, and nearly every item was solved by
// its opener alone (bench/results/2026-11-26-h200-claim-path.md); with the warp, float 8 rose from
// 0.50-0.57 of the batched kernel's rate to 0.63-0.67 (2026-11-26-h200-block-consumers.md).
constexpr int kHelpRounds = 2;

// Takes matrices of the oldest named item of ring r that has one left (into share and claimed, in
// lane 0), passing over positions not yet named, and moves the ring's help cursor past the positions
// before the first that may have one; false when it finds none. Called by the 32 lanes of the
// consumer's first warp alike; the result is theirs, the claim lane 0's.
template <class T>
__device__ bool help_oldest(const PersistentEvdArgs<T>& args, int r, int per_claim, EvdItem<T>& item, ItemKey& key,
                            Share& share, Claimed& claimed, int lane) {
  const Ring<T>& ring = args.rings[r];
  const std::uint64_t limit = min(load_volatile(ring.head), load_acquire_device(&args.visible[r]));  // claimed
  std::uint64_t start = load_volatile(ring.help);
  for (int round = 0; round < kHelpRounds && start < limit; ++round, start += 32) {
    const std::uint64_t position = start + lane;
    bool done = false, left = false;  // none left to hand out (the cursor may pass it); some left
    if (position < limit) {
      const std::uint64_t slot = position & (ring.capacity - 1);
      // `taken` first: read before the name, it is at worst an older item's, and the position then
      // counts as neither done nor with matrices left.
      const std::uint64_t taken = load_volatile(&ring.taken[slot]);
      const std::uint64_t name = load_volatile(&ring.opened[slot]);
      const bool named = name != 0 && word_position(name) >= position;  // a later item: this one finished
      const bool several = named && word_position(name) == position && word_number(name) > per_claim;
      const bool counted = word_position(taken) == position;
      left = several && counted && word_number(taken) < word_number(name);
      done = named && (!several || (counted && !left));
    }
    const unsigned all_done = __ballot_sync(0xffffffffu, done);
    const unsigned with_left = __ballot_sync(0xffffffffu, left);
    const int passed = all_done == 0xffffffffu ? 32 : __ffs(~all_done) - 1;
    int got = 0;
    if (lane == 0) {
      if (passed > 0) atomicMax(reinterpret_cast<unsigned long long*>(ring.help), (unsigned long long)(start + passed));
      for (unsigned m = with_left; m != 0 && !got; m &= m - 1) {  // oldest first
        const std::uint64_t p = start + (__ffs(m) - 1);
        // Acquired here, by the lane that reads the item's copy (take_matrices).
        const std::uint64_t name = load_acquire_device(&ring.opened[p & (ring.capacity - 1)]);
        got = word_position(name) == p && take_matrices(ring, r, p, word_number(name), per_claim, item, key, share, claimed);
      }
    }
    if (__shfl_sync(0xffffffffu, got, 0)) return true;
    if (passed < 32) return false;
  }
  return false;
}

__device__ __forceinline__ std::uint64_t fetch_add_acq_rel_system(std::uint64_t* p, std::uint64_t v) {
  std::uint64_t before;
  asm volatile("atom.acq_rel.sys.global.add.u64 %0, [%1], %2;" : "=l"(before) : "l"(p), "l"(v) : "memory");
  return before;
}

// Copies the n x n matrix A (leading dimension lda) into dense staging and, with WITH_V0 and v0 not
// null, V0 (ldw) right after it, as one run of 2 n^2 entries: all of a thread's loads (up to 8)
// issued before its first store. From host memory each load is a PCIe round trip, and a loop that
// stores as it goes waits for them one after another (16 of them per thread at n = 64); A and V0
// staged one after the other take two round trips where one does.
template <int THREADS, bool WITH_V0, class S>
__device__ void stage_in(S* dst, const S* a, index_t lda, const S* v0, index_t ldw, int n, int lane) {
  constexpr int kBatch = 8;
  const int nn = n * n, total = WITH_V0 && v0 ? 2 * nn : nn;
  for (int base = lane; base < total; base += THREADS * kBatch) {
    S x[kBatch];
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      const int idx = base + r * THREADS;
      if (idx >= total) continue;
      if constexpr (WITH_V0) {
        const bool second = idx >= nn;
        const int e = second ? idx - nn : idx;
        x[r] = load_past_l1(second ? &v0[e % n + index_t(e / n) * ldw] : &a[e % n + index_t(e / n) * lda]);
      } else {
        x[r] = load_past_l1(&a[idx % n + index_t(idx / n) * lda]);
      }
    }
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      const int idx = base + r * THREADS;
      if (idx < total) dst[idx] = x[r];
    }
  }
}

// What a consumer's leader keeps from one claim to the next. It lives in shared memory, as does each
// solve's Args (but the latency shape's, copied to registers): what stays in registers through a
// solve is taken from the solve. Held in registers, they made the register and pairs kernels spill
// (float 16 at 6 blocks an SM: 364 bytes against 68 now; float 32: 276 against 52; float 64: 108
// against none), and items of 64 ran at 0.91-0.95 of the batched kernel's rate at float 32 and 64
// against 1.01-1.02 now (bench/results/2026-11-25-h100-leader-state.md).
struct Leader {
  std::uint64_t ticket[2];  // its ticket of each ring, if it holds one (kNone)
  ItemKey key;           // which item the consumer's copy holds
  Share share;           // the item of several matrices it takes from
  ConsumerCounters totals;
};

// Shared memory of one solve's scratch (the pairs solve for throughput: of the claim's starts too).
template <class S, int NMAX, bool BLOCK_PER_ITEM>
constexpr std::size_t solve_bytes() {
  constexpr Solve solve = kSolve<S, NMAX, BLOCK_PER_ITEM>;
  std::size_t bytes = evd::GroupLayout<S, NMAX>::bytes;
  if constexpr (solve == Solve::pairs) bytes = evd::PairsLayout<S>::bytes(true);
  if constexpr (kPairsThroughput<S, NMAX, BLOCK_PER_ITEM>)
    bytes = std::max(bytes, kPairsSides * align16(tridiagonal::Layout<S, NMAX>::bytes));
  if constexpr (solve == Solve::registers)
    bytes = sizeof(evd::RegisterScratch<S, NMAX>) + align16(sizeof(S) * evd::kRegisterWarmScalars<S, NMAX>);
  return align16(bytes);
}
// Solves side by side, each with scratch of its own; the pairs solve for throughput solves in turn.
template <class S, int NMAX, bool BLOCK_PER_ITEM>
inline constexpr int kScratchAreas = kPairsThroughput<S, NMAX, BLOCK_PER_ITEM> ? 1 : kClaimMatrices<S, NMAX, BLOCK_PER_ITEM>;
// Shared memory of one consumer: the claimed item, its leader's state, for each matrix of a claim its
// solve's Args, then the solves' scratch.
template <class S, int NMAX, bool BLOCK_PER_ITEM>
constexpr std::size_t consumer_bytes() {
  return align16(sizeof(EvdItem<std::complex<double>>)) + align16(sizeof(Leader)) +
         kClaimMatrices<S, NMAX, BLOCK_PER_ITEM> * align16(sizeof(Args<S>)) +
         kScratchAreas<S, NMAX, BLOCK_PER_ITEM> * solve_bytes<S, NMAX, BLOCK_PER_ITEM>();
}

// One matrix, by NMAX lanes of a warp (`mask`), or a block.
template <class S, int NMAX, bool BLOCK_PER_ITEM>
__device__ SolveInfo solve_item(const Args<S>& args, int lane, unsigned mask, char* work) {
  constexpr Solve solve = kSolve<S, NMAX, BLOCK_PER_ITEM>;
  if constexpr (solve == Solve::registers) {
    auto& scratch = *reinterpret_cast<evd::RegisterScratch<S, NMAX>*>(work);
    S* warm = reinterpret_cast<S*>(work + align16(sizeof(evd::RegisterScratch<S, NMAX>)));
    // Cold solves compiled apart, without the warm start's code (a claim's matrices are of one item).
    if (args.warm_start) return evd::solve_in_registers<S, NMAX, true>(args, 0, lane, mask, scratch, warm);
    return evd::solve_in_registers<S, NMAX, false>(args, 0, lane, mask, scratch, warm);
  } else if constexpr (solve == Solve::pairs) {
    return evd::solve_in_pairs<S>(args, 0, work, lane);
  } else {
    return evd::solve_in_shared<S, NMAX, kStepShape<BLOCK_PER_ITEM>>(args, 0, work, lane);
  }
}

// The pairs solve for throughput: matrices first .. first + number - 1 of item `it`, number <= kPairsSides,
// by the block's 256 threads (tid) and `staging` (the consumer's), each with Args of its own in `ones`
// and `work` as solve_bytes gives it. Side by side, a group of two warps a matrix (the block's other
// warps wait) takes a cold matrix with vectors through the tridiagonal start, V0 into staging, as in
// the batched kernel, once the block has staged A (and V0 for a warm start). Then the block solves the
// matrices in turn and copies their outputs from staging. Returns the failed matrices' count (in
// thread 0).
// Cold, the rate of the starts, which the QL chain's latency sets, is the solver's: items of 64 cold
// matrices from 4 host threads ran at 0.60 of the batched kernel's rate at float 64 and 0.64 at
// complex float 64 with one start a block, warp 0 following the chain and rotating Q alone, and at
// 0.91 at both with two groups of two warps (H200, bench/results/2026-11-27-h200-persistent-start-sides.md).
// racecheck reports false hazards across __syncthreads once warps have met at these named barriers of
// part of the block (shown with a test kernel in the same file): check this shape with memcheck and
// synccheck.
template <class T>
__device__ int solve_pairs_claim(const PersistentEvdArgs<T>& args, const EvdItem<T>& it, index_t first, int number,
                                 typename DeviceScalar<T>::type* staging, Args<typename DeviceScalar<T>::type>* ones,
                                 char* work, int tid) {
  using S = typename DeviceScalar<T>::type;
  using R = real_of<S>;
  constexpr std::size_t kStartBytes = align16(tridiagonal::Layout<S, 64>::bytes);
  const int n = it.n;
  const bool warm = it.warm_start != nullptr, started = !warm && it.vectors && uses_tridiagonal_start<S>(n);
  auto staged = [&](int s) { return staging + s * (args.staging_stride / kPairsSides); };  // A, V0, V, w
  for (int s = 0; s < number; ++s) {
    const index_t i = first + s;
    stage_in<evd::pairs::kThreads, false, S>(staged(s), reinterpret_cast<const S*>(it.a + i * it.stride_a), it.lda,
                                             nullptr, 0, n, tid);
    if (warm)
      stage_in<evd::pairs::kThreads, false, S>(staged(s) + n * n,
                                               reinterpret_cast<const S*>(it.warm_start + i * it.stride_warm_start),
                                               it.ldw, nullptr, 0, n, tid);
    if (tid == 0) {
      S* v = staged(s) + 2 * n * n;
      ones[s] = {staged(s), n, 0, reinterpret_cast<R*>(v + n * n), 0, v, n, 0, warm || started ? staged(s) + n * n : nullptr,
                 n, 0, it.info + i, n, 1, R(args.tol), R(args.symmetry_tol), args.max_sweeps, args.sort,
                 it.reorthonormalise};
    }
  }
  __syncthreads();
  const int side = tid / tridiagonal::kThreads;
  if (started && side < number)  // the side's barriers: 1 + 2 side for the group, 2 + 2 side for its hand-overs
    tridiagonal::start<S, 64>(staged(side), n, n, staged(side) + n * n, n, work + side * kStartBytes,
                              tid % tridiagonal::kThreads, 1 + 2 * side);
  __syncthreads();
  int failures = 0;
  for (int s = 0; s < number; ++s) {
    const Args<S>& one = ones[s];
    // Without the tensor-core products: their registers made this shape spill more (complex float: 744
    // bytes of stores against 120) and its cold items 5-7% slower (H100,
    // bench/results/2026-12-07-h100-block-tensor-products.md).
    const SolveInfo info = evd::solve_in_pairs<S, false>(one, 0, work, tid);
    __syncthreads();  // its outputs in staging, and its scratch free for the next
    failures += tid == 0 && (info.invalid_input || !info.converged);
    real_t<T>* values = it.values + (first + s) * it.stride_values;
    for (int j = tid; j < n; j += evd::pairs::kThreads) values[j] = one.values[j];
    if (it.vectors) {
      S* out_v = reinterpret_cast<S*>(it.vectors + (first + s) * it.stride_vectors);
      for (int idx = tid; idx < n * n; idx += evd::pairs::kThreads) out_v[idx % n + index_t(idx / n) * it.ldv] = one.vectors[idx];
    }
  }
  return failures;
}

template <class T, int NMAX, bool BLOCK_PER_ITEM>
__global__ void __launch_bounds__(kBlockThreads<typename DeviceScalar<T>::type, NMAX, BLOCK_PER_ITEM>,
                                  (kMinBlocksPerSm<typename DeviceScalar<T>::type, NMAX, BLOCK_PER_ITEM>))
    persistent_evd_kernel(PersistentEvdArgs<T> args) {
  using S = typename DeviceScalar<T>::type;
  using R = real_of<S>;
  constexpr int THREADS = kConsumerThreads<S, NMAX, BLOCK_PER_ITEM>;
  constexpr int kConsumers = kBlockThreads<S, NMAX, BLOCK_PER_ITEM> / THREADS;
  constexpr int SOLVER_THREADS = kSolverThreads<S, NMAX, BLOCK_PER_ITEM>;
  constexpr int kClaim = kClaimMatrices<S, NMAX, BLOCK_PER_ITEM>;
  if (blockIdx.x == 0) {  // the poller's block, first so that it is always resident
    if (threadIdx.x < 32) poll_rings(args);
    return;
  }
  extern __shared__ __align__(16) char smem[];
  const int group = threadIdx.x / THREADS;  // the consumer, in the block
  const int lane = threadIdx.x % THREADS;
  // This thread's solve: the side-by-side matrix of a claim it works on, its lane there and lanes.
  const int side = lane / SOLVER_THREADS;
  const int solver_lane = lane % SOLVER_THREADS;
  const unsigned solver_mask =
      SOLVER_THREADS >= 32 ? 0xffffffffu
                           : ((1u << SOLVER_THREADS) - 1u) << (lane % 32 / SOLVER_THREADS * SOLVER_THREADS);
  char* mine = smem + group * consumer_bytes<S, NMAX, BLOCK_PER_ITEM>();
  auto* item = reinterpret_cast<EvdItem<T>*>(mine);
  mine += align16(sizeof(EvdItem<std::complex<double>>));
  Leader& leader = *reinterpret_cast<Leader*>(mine);  // lane 0's
  mine += align16(sizeof(Leader));
  Args<S>& one = reinterpret_cast<Args<S>*>(mine)[side];  // this thread's solve's
  char* work = mine + kClaim * align16(sizeof(Args<S>)) + side * solve_bytes<S, NMAX, BLOCK_PER_ITEM>();
  __shared__ std::uint64_t claimed_all[kConsumers];
  __shared__ int ring_all[kConsumers], index_all[kConsumers], number_all[kConsumers], stop_all[kConsumers];
  const auto counters = [&]() -> ConsumerCounters& { return args.counters[(blockIdx.x - 1) * kConsumers + group]; };
  if (lane == 0) {
    const volatile ConsumerCounters& before = counters();  // what this consumer's launches before (parking) counted
    leader = {{kNone, kNone}, {}, {}, {before.completed, before.failed, before.cancelled}};
  }
  unsigned sleep_ns = 0;

  for (;;) {
    if (lane < 32) {  // the consumer's first warp: its leader (lane 0) claims, the warp searches for help
      Claimed c;
      int got = 0, ticket_ready = 0;
      Share& share = leader.share;
      if (lane == 0) {
        // A ticket already visible is claimed before helping: its position is not named until it
        // is. But an item's opener first takes the rest of its item (it may hold a ticket of the
        // other ring): every matrix of an opened item must be claimed, and at a drain consumers stop
        // once their searches find nothing.
        ticket_ready = visible_ticket(args, leader.ticket) >= 0;
        if (share.ring >= 0 && (!ticket_ready || share.opener)) {  // the item of several matrices it opened or helps
          got = take_matrices(args.rings[share.ring], share.ring, share.position, share.count, kClaim, *item,
                              leader.key, share, c);
          if (!got) share = {};
        }
        if (ticket_ready && !share.opener) share = {};
      }
      got = __shfl_sync(0xffffffffu, got, 0);
      ticket_ready = __shfl_sync(0xffffffffu, ticket_ready, 0);
      for (int r = 0; r < rings_in_use(args) && !got && !ticket_ready; ++r)
        got = help_oldest(args, r, kClaim, *item, leader.key, share, c, lane);
      if (lane == 0) {
        if (!got) {  // a new position
          int r = 0;
          const std::uint64_t position = claim_by_ticket(args, leader.ticket, r);
          if (position != kNone) {
            load_item(args.rings[r], r, position, *item, leader.key, false);
            c = {r, position, 0, name_item(args.rings[r], r, position, *item, kClaim, share)};
            got = true;
          }
        }
        const int run_state = *reinterpret_cast<const volatile int*>(args.run_state);
        claimed_all[group] = got ? c.position : kNone;
        ring_all[group] = c.ring;
        index_all[group] = c.index;
        number_all[group] = c.number;
        // Stop when the poller has stopped (shutdown or park) and nothing is left; a cancelling
        // shutdown claims the rest unsolved. (An opened item's matrices are all claimed by its opener
        // before it stops.)
        stop_all[group] = !got && ticket_drained(args, leader.ticket);
        stop_all[group] |= run_state == cuda::detail::kCancel ? 2 : 0;
      }
    }
    consumer_sync<THREADS>();
    if (stop_all[group] & 1) break;
    if (claimed_all[group] == kNone) {
      sleep_ns = sleep_ns == 0 ? 32 : min(2 * sleep_ns, unsigned(args.idle_sleep_ns));
      if (lane == 0) __nanosleep(sleep_ns);
      consumer_sync<THREADS>();
      continue;
    }
    sleep_ns = 0;
    // The claim (index_all and number_all: matrices claimed) is read again from shared memory after
    // the solve, rather than held through it.
    S* const staging = reinterpret_cast<S*>(args.staging) +
                       std::size_t((blockIdx.x - 1) * kConsumers + group) * args.staging_stride;
    if (stop_all[group] & 2) {
      if (lane == 0) leader.totals.cancelled += number_all[group];
    } else if constexpr (kPairsThroughput<S, NMAX, BLOCK_PER_ITEM>) {
      const int failures = solve_pairs_claim(args, *item, index_all[group], number_all[group], staging, &one, work, lane);
      if (lane == 0) leader.totals.failed += failures, leader.totals.completed += number_all[group];
    } else {
      // The item's matrices may be in host memory, where every read crosses PCIe: each solve works on
      // copies in its staging area of device memory, read in bulk. Block per item, A and V0 are read
      // in one pass, and the solve writes its outputs straight to the item's: a lone warm complex float
      // item finished 0.8-1.6 us sooner at n = 16 and 32 (bench/results/2026-11-26-h200-latency-path.md).
      // The other shapes read A, then V0, and write their outputs through staging: the same changes
      // there moved the register allocation of the solve inlined in this loop, and lone warm items of
      // warp consumers took 16-25% longer (float 32).
      SolveInfo info;
      if (side < number_all[group]) {
        const EvdItem<T>& it = *item;
        const int n = it.n;
        const index_t i = index_all[group] + side;
        S* a = staging + side * (args.staging_stride / kClaim);
        S* v0 = a + n * n;
        const S* in_a = reinterpret_cast<const S*>(it.a + i * it.stride_a);
        const S* in_v0 = it.warm_start ? reinterpret_cast<const S*>(it.warm_start + i * it.stride_warm_start) : nullptr;
        if constexpr (BLOCK_PER_ITEM) {
          stage_in<SOLVER_THREADS, true>(a, in_a, it.lda, in_v0, it.ldw, n, solver_lane);
          if (solver_lane == 0)
            one = {a, n, 0, it.values + i * it.stride_values, 0,
                   it.vectors ? reinterpret_cast<S*>(it.vectors + i * it.stride_vectors) : nullptr, it.ldv, 0,
                   in_v0 ? v0 : nullptr, n, 0, it.info + i, n, 1,
                   R(args.tol), R(args.symmetry_tol), args.max_sweeps, args.sort, it.reorthonormalise};
        } else {
          S* v = v0 + n * n;
          R* w = reinterpret_cast<R*>(v + n * n);
          stage_in<SOLVER_THREADS, false, S>(a, in_a, it.lda, nullptr, 0, n, solver_lane);
          if (in_v0) stage_in<SOLVER_THREADS, false, S>(v0, in_v0, it.ldw, nullptr, 0, n, solver_lane);
          // Cold solves start from the identity here: the warp consumers of complex float 32 ran 0.67x
          // as fast with the tridiagonal start (H200, bench/results/2026-11-27-h200-tridiagonal-start.md).
          if (solver_lane == 0)
            one = {a, n, 0, w, 0, v, n, 0, in_v0 ? v0 : nullptr, n, 0, it.info + i, n, 1,
                   R(args.tol), R(args.symmetry_tol), args.max_sweeps, args.sort, it.reorthonormalise};
        }
        solver_sync<SOLVER_THREADS>(solver_mask);
        if constexpr (BLOCK_PER_ITEM) {  // latency: a copy in registers, not read again after every barrier
          const Args<S> copy = one;
          info = solve_item<S, NMAX, BLOCK_PER_ITEM>(copy, solver_lane, solver_mask, work);
        } else {
          info = solve_item<S, NMAX, BLOCK_PER_ITEM>(one, solver_lane, solver_mask, work);
          solver_sync<SOLVER_THREADS>(solver_mask);
        }
      }
      if (!BLOCK_PER_ITEM && side < number_all[group]) {  // the outputs, from staging
        const EvdItem<T>& it = *item;
        const int n = one.n;
        const index_t i = index_all[group] + side;
        real_t<T>* values = it.values + i * it.stride_values;
        for (int j = solver_lane; j < n; j += SOLVER_THREADS) values[j] = one.values[j];
        if (it.vectors) {
          S* out_v = reinterpret_cast<S*>(it.vectors + i * it.stride_vectors);
          for (int idx = solver_lane; idx < n * n; idx += SOLVER_THREADS)
            out_v[idx % n + index_t(idx / n) * it.ldv] = one.vectors[idx];
        }
      }
      // Thread 0 of each solve holds its SolveInfo; the consumer's thread 0 counts them all.
      const bool failed = side < number_all[group] && (info.invalid_input || !info.converged);
      int failures = failed;
      if constexpr (kClaim > 1 && THREADS == 32) failures = __popc(__ballot_sync(0xffffffffu, solver_lane == 0 && failed));
      if constexpr (kClaim > 1 && THREADS > 32) failures = __syncthreads_count(solver_lane == 0 && failed);
      if (lane == 0) leader.totals.failed += failures, leader.totals.completed += number_all[group];
    }
    consumer_sync<THREADS>();  // every thread's outputs, before the leader's release (see the top of this file)
    if (lane == 0) {  // counters first: whoever sees the item finished also sees it counted
      volatile ConsumerCounters& out = counters();
      out.completed = leader.totals.completed;
      out.failed = leader.totals.failed;
      out.cancelled = leader.totals.cancelled;
      const std::uint64_t claimed = claimed_all[group];
      const Ring<T>& ring = args.rings[ring_all[group]];
      const bool cancel = stop_all[group] & 2;
      const int number = number_all[group];
      std::uint64_t final_state = (claimed + ring.capacity) | (cancel ? kCancelledBit : 0);
      bool last = true;
      const int count = item_matrices(item->count);
      if (number < count) {
        // Acquire-release, so that the consumer that finishes the last matrix has seen every other's
        // outputs before it releases the slot.
        std::uint64_t* finished = &ring.finished[claimed & (ring.capacity - 1)];
        const std::uint64_t add = std::uint64_t(number) | (cancel ? std::uint64_t(number) << 32 : 0);
        const std::uint64_t before = fetch_add_acq_rel_system(finished, add);
        last = int(before & 0xffffffffu) + number == count;
        if (last) {
          *reinterpret_cast<volatile std::uint64_t*>(finished) = 0;  // for the slot's next item
          if (before >> 32) final_state |= kCancelledBit;
        }
      }
      if (last) store_release_system(&ring.slots[claimed & (ring.capacity - 1)].state, final_state);
    }
  }
}

__global__ void ticket_wait_kernel(const std::uint64_t* state, std::uint64_t ticket, std::uint64_t capacity) {
  while (!cuda::detail::finished(load_acquire_system(state), ticket, capacity)) __nanosleep(1000);
}

template <class T, int NMAX, bool BLOCK_PER_ITEM>
cudaError_t shape_of(PersistentShape* shape) {
  using S = typename DeviceScalar<T>::type;
  auto kernel = persistent_evd_kernel<T, NMAX, BLOCK_PER_ITEM>;
  constexpr int kThreads = kBlockThreads<S, NMAX, BLOCK_PER_ITEM>;
  constexpr int kConsumers = kThreads / kConsumerThreads<S, NMAX, BLOCK_PER_ITEM>;
  const std::size_t bytes = consumer_bytes<S, NMAX, BLOCK_PER_ITEM>() * kConsumers;
  cudaError_t status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  if (status != cudaSuccess) return status;
  shape->threads_per_block = kThreads;
  shape->consumers_per_block = kConsumers;
  shape->shared_bytes = bytes;
  // A and V0 of NMAX x NMAX and, but block per item (whose solve writes its outputs straight to the
  // item's), V and NMAX eigenvalues, in 16-byte units, for each matrix of a claim.
  constexpr std::size_t kStaged = BLOCK_PER_ITEM ? 2 * sizeof(S) * NMAX * NMAX
                                                 : 3 * sizeof(S) * NMAX * NMAX + sizeof(real_of<S>) * NMAX;
  shape->staging_stride = kClaimMatrices<S, NMAX, BLOCK_PER_ITEM> * ((kStaged + 15) / 16 * 16 / sizeof(T));
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&shape->blocks_per_sm, kernel, kThreads, bytes);
}

template <class T, int NMAX, bool BLOCK_PER_ITEM>
cudaError_t launch(const PersistentEvdArgs<T>& args, int blocks, cudaStream_t stream) {
  PersistentShape shape;
  cudaError_t status = shape_of<T, NMAX, BLOCK_PER_ITEM>(&shape);
  if (status != cudaSuccess) return status;
  persistent_evd_kernel<T, NMAX, BLOCK_PER_ITEM>
      <<<blocks + 1, shape.threads_per_block, shape.shared_bytes, stream>>>(args);  // + the poller
  return cudaGetLastError();
}

// Calls f(std::integral_constant<int, NMAX>, std::bool_constant<BLOCK_PER_ITEM>) for the smallest
// NMAX in {4, 8, 16, 32, 64} holding max_n: the kernel is compiled for these, and items of size
// n <= NMAX are padded.
template <class F>
cudaError_t with_shape(int max_n, bool block_per_item, F&& f) {
  if (max_n < 1 || max_n > kEvdMaxN) return cudaErrorInvalidValue;
  auto with_nmax = [&](auto block) {
    if (max_n <= 4) return f(std::integral_constant<int, 4>{}, block);
    if (max_n <= 8) return f(std::integral_constant<int, 8>{}, block);
    if (max_n <= 16) return f(std::integral_constant<int, 16>{}, block);
    if (max_n <= 32) return f(std::integral_constant<int, 32>{}, block);
    return f(std::integral_constant<int, 64>{}, block);
  };
  return block_per_item ? with_nmax(std::true_type{}) : with_nmax(std::false_type{});
}

template <class T>
cudaError_t load_for() {
  PersistentShape shape;
  for (bool block_per_item : {false, true})
    for (int max_n : {4, 8, 16, 32, 64}) {
      const cudaError_t status = with_shape(max_n, block_per_item, [&](auto nmax, auto block) {
        return shape_of<T, decltype(nmax)::value, decltype(block)::value>(&shape);
      });
      if (status != cudaSuccess) return status;
    }
  return cudaSuccess;
}

}  // namespace

cudaError_t load_persistent_evd_kernels() {
  cudaFuncAttributes attributes;
  for (cudaError_t status : {load_for<float>(), load_for<double>(), load_for<std::complex<float>>(),
                             load_for<std::complex<double>>(), cudaFuncGetAttributes(&attributes, ticket_wait_kernel)})
    if (status != cudaSuccess) return status;
  return cudaSuccess;
}

template <class T>
cudaError_t persistent_evd_shape(int max_n, bool block_per_item, PersistentShape* shape) {
  return with_shape(max_n, block_per_item, [&](auto nmax, auto block) {
    return shape_of<T, decltype(nmax)::value, decltype(block)::value>(shape);
  });
}

template <class T>
cudaError_t launch_persistent_evd(const PersistentEvdArgs<T>& args, int blocks, cudaStream_t stream) {
  return with_shape(args.max_n, args.block_per_item, [&](auto nmax, auto block) {
    return launch<T, decltype(nmax)::value, decltype(block)::value>(args, blocks, stream);
  });
}

cudaError_t launch_ticket_wait(const std::uint64_t* state, std::uint64_t ticket, std::uint64_t capacity,
                               cudaStream_t stream) {
  ticket_wait_kernel<<<1, 1, 0, stream>>>(state, ticket, capacity);
  return cudaGetLastError();
}

#define EIGSTREAM_INSTANTIATE(T)                                                   \
  template cudaError_t persistent_evd_shape<T>(int, bool, PersistentShape*);             \
  template cudaError_t launch_persistent_evd<T>(const PersistentEvdArgs<T>&, int, cudaStream_t);
EIGSTREAM_INSTANTIATE(float)
EIGSTREAM_INSTANTIATE(double)
EIGSTREAM_INSTANTIATE(std::complex<float>)
EIGSTREAM_INSTANTIATE(std::complex<double>)

}  // namespace eigstream::kernels
