#include "backend.hpp"

#include <string>

#include "eigstream/error.hpp"
#if defined(EIGSTREAM_HAVE_CUDA)
#include "eigstream/cuda.hpp"
#endif

namespace eigstream {

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
    case Backend::automatic: return "auto";
  }
  return "?";
}

bool parse_backend(const std::string& name, Backend& backend) noexcept {
  for (Backend b : {Backend::cpu, Backend::cuda, Backend::automatic})
    if (name == to_string(b)) {
      backend = b;
      return true;
    }
  return false;
}

}  // namespace eigstream

namespace eigstream::detail {

Backend resolve_backend(const char* op, Backend requested, bool kernel_fits, const char* kernel_limits,
                        index_t count) {
  if (requested == Backend::cpu) return Backend::cpu;
#if defined(EIGSTREAM_HAVE_CUDA)
  const bool gpu = cuda::device_available();
  if (requested == Backend::automatic) return gpu && kernel_fits && count >= kAutoGpuMinBatch ? Backend::cuda : Backend::cpu;
  if (!gpu) throw Error(ErrorCode::cuda, std::string(op) + ": backend cuda was asked for, but no usable CUDA device was found");
  if (!kernel_fits)
    throw Error(ErrorCode::cuda, std::string(op) + ": the CUDA kernel does not take this problem (it takes " + kernel_limits +
                                     "); use backend cpu or auto");
  return Backend::cuda;
#else
  (void)kernel_fits, (void)kernel_limits, (void)count;
  if (requested == Backend::automatic) return Backend::cpu;
  throw Error(ErrorCode::cuda, std::string(op) +
                                   ": this build of eigstream has no CUDA backend (built without nvcc or with "
                                   "EIGSTREAM_WITH_CUDA=OFF); use backend cpu or auto");
#endif
}

}  // namespace eigstream::detail
