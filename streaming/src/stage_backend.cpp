// Where a processing stage runs (stage_backend.hpp).
#include "stage_backend.hpp"

#include "eigstream/error.hpp"
#if defined(EIGSTREAM_HAVE_CUDA)
#include "eigstream/cuda.hpp"
#endif

namespace eigstream::streaming {

Backend resolve_stage_backend(const std::string& where, Backend requested) {
  if (requested == Backend::cpu) return Backend::cpu;
#if defined(EIGSTREAM_HAVE_CUDA)
  if (cuda::device_available()) return Backend::cuda;
  if (requested == Backend::automatic) return Backend::cpu;
  throw Error(ErrorCode::cuda, where + "backend cuda was asked for, but no usable CUDA device was found");
#else
  if (requested == Backend::automatic) return Backend::cpu;
  throw Error(ErrorCode::cuda, where + "backend cuda was asked for, but this build of eigstream has no CUDA backend");
#endif
}

}  // namespace eigstream::streaming
