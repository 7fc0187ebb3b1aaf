// Where a processing stage runs: the backend asked for, resolved when the pipeline starts.
#pragma once

#include <string>

#include "eigstream/options.hpp"

namespace eigstream::streaming {

// cpu -> cpu; automatic -> cuda when the build has CUDA and a device is present, else cpu; cuda ->
// cuda, or Error(cuda) naming `where` when there is no device or no CUDA in the build.
Backend resolve_stage_backend(const std::string& where, Backend requested);

}  // namespace eigstream::streaming
