// A producer kernel for the persistent solver's tests: device code that builds matrices and submits
// them itself (eigstream/persistent_submit.cuh), as a covariance kernel would.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "eigstream/persistent.hpp"

inline constexpr std::uint64_t kNotSubmitted = ~std::uint64_t(0);

// Loads the producer kernel: call before a PersistentSolver starts (see eigstream/persistent.hpp on
// lazy module loading).
cudaError_t preload_producer();

// On `stream`: for each item b, writes A = diag(1, ..., n) + 0.5 * ones into items[b].a (which must be
// writable), then submits the item; its ring position goes to positions[b], or kNotSubmitted if the
// ring refused it. `items` and `positions` must be device-accessible.
cudaError_t launch_build_and_submit(eigstream::cuda::DeviceQueue<float> queue,
                                    const eigstream::cuda::EvdItem<float>* items, int count,
                                    std::uint64_t* positions, cudaStream_t stream);
