// Shared-memory layouts: their regions' alignment, and raising a kernel's limit of dynamic shared
// memory only where a launch needs it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace eigstream::kernels {

// A block may take 48 KiB of shared memory, static and dynamic together, without asking; more needs
// the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize raised first. Setting the attribute is a
// driver call on the host's path to each launch, so it is made only for a launch that needs more than
// the default: without it, warm batches of 1024 at float 8 ran 5-7% faster with the host waiting for
// each step, the rest within their spread (H200,
// bench/results/2026-11-27-h200-shared-memory-attribute-where-needed.md).
// No state is kept, so nothing goes stale when a context is reset.
inline constexpr std::size_t kDefaultSharedMemoryPerBlock = 48 * 1024;

// A size rounded up to 16 bytes: the regions of the kernels' shared-memory layouts start aligned for
// 16-byte accesses.
constexpr std::size_t align16(std::size_t x) { return (x + 15) / 16 * 16; }

template <class Kernel>
cudaError_t allow_dynamic_shared_memory(Kernel kernel, std::size_t dynamic_bytes, std::size_t static_bytes = 0) {
  if (static_bytes + dynamic_bytes <= kDefaultSharedMemoryPerBlock) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_bytes));
}

}  // namespace eigstream::kernels
