// Hermitian from the lower triangle on the GPU: the device-memory interface of eigstream/cuda.hpp
// (argument checks, then the kernel launcher of kernels/).
#include <complex>
#include <limits>
#include <string>

#include "eigstream/cuda.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/error.hpp"
#include "eigstream_kernels/hermitian_from_lower.hpp"
#include "validate.hpp"

namespace eigstream::cuda {

template <class R>
void hermitian_from_lower(BatchView<std::complex<R>> a, cudaStream_t stream) {
  const char* op = "cuda::hermitian_from_lower";
  eigstream::detail::check_batch(op, "a", a, a.rows, a.rows, a.count, true);  // square, no negative size
  if (a.rows > std::numeric_limits<int>::max())
    throw Error(ErrorCode::invalid_argument, std::string(op) + ": a has " + std::to_string(a.rows) + " rows, more than " +
                                                 std::to_string(std::numeric_limits<int>::max()));
  if (a.rows == 0 || a.count == 0) return;
  eigstream::detail::check_cuda(
      kernels::launch_hermitian_from_lower(a.data, int(a.rows), a.ld, a.stride, a.count, stream),
      "cuda::hermitian_from_lower: kernel launch");
}

template void hermitian_from_lower<float>(BatchView<std::complex<float>>, cudaStream_t);
template void hermitian_from_lower<double>(BatchView<std::complex<double>>, cudaStream_t);

}  // namespace eigstream::cuda
