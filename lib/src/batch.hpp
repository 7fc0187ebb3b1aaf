// Runs the matrices of a batch over the host's cores, and turns per-matrix failures into either a
// flag in that matrix's SolveInfo (Options::flag_invalid) or one exception for the whole call.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "eigstream/error.hpp"
#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::detail {

// solve(b) returns matrix b's SolveInfo. With flag_invalid, an invalid_input error marks info[b]
// and calls poison(b) to fill that matrix's outputs with NaN. Any other error is rethrown after
// every matrix was tried: the one of the lowest matrix index, so the report does not depend on
// thread timing.
template <class Solve, class Poison>
void run_batch(index_t count, bool flag_invalid, SolveInfo* info, Solve&& solve, Poison&& poison) {
  std::mutex mutex;
  index_t failed_index = count;
  std::exception_ptr failure;
  auto one = [&](index_t b) {
    try {
      const SolveInfo result = solve(b);
      if (info) info[b] = result;
    } catch (const Error& e) {
      if (flag_invalid && e.code() == ErrorCode::invalid_input) {
        poison(b);
        if (info) info[b] = SolveInfo{0, 0.0, false, true};
        return;
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (b < failed_index) failed_index = b, failure = std::current_exception();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (b < failed_index) failed_index = b, failure = std::current_exception();
    }
  };
  const index_t workers = std::min<index_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    for (index_t b = 0; b < count; ++b) one(b);
  } else {
    std::atomic<index_t> next{0};
    std::vector<std::thread> threads;
    for (index_t t = 0; t < workers; ++t)
      threads.emplace_back([&] {
        for (index_t b = next++; b < count; b = next++) one(b);
      });
    for (auto& t : threads) t.join();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace eigstream::detail
