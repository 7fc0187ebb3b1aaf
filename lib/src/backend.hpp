// Which backend runs a call: the CPU solvers, or the CUDA kernels where this build has them, a
// device is present and the kernels take the problem.
#pragma once

#include "eigstream/options.hpp"
#include "eigstream/views.hpp"

namespace eigstream::detail {

// Backend::automatic picks the GPU only for batches at least this large: below it, the copies to
// and from the device cost more than the CPU solve.
inline constexpr index_t kAutoGpuMinBatch = 16;

// Returns Backend::cpu or Backend::cuda. Throws Error(cuda) when cuda is asked for and cannot run;
// `kernel_limits` says what the kernels take, for that message.
Backend resolve_backend(const char* op, Backend requested, bool kernel_fits, const char* kernel_limits,
                        index_t count);

}  // namespace eigstream::detail
