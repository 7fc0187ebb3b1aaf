// A kernel that only the parking test launches, in a file of its own: with lazy module loading
// (CUDA's default) its first launch loads its module, which may wait until no kernel runs on the
// device.
#pragma once

#include <cuda_runtime_api.h>

// Launches the kernel once on a new stream and waits for that stream; `value` comes back through it.
cudaError_t first_launch_round_trip(int value, int* result);
