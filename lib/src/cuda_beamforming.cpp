// Beam powers on the GPU: the device-memory interface of eigstream/cuda.hpp (argument checks, then
// the kernel launcher of kernels/).
#include <complex>
#include <sstream>
#include <string>

#include "eigstream/cuda.hpp"
#include "eigstream/detail/device_array.hpp"
#include "eigstream/error.hpp"
#include "eigstream_kernels/beam_power_batched.hpp"
#include "validate.hpp"

namespace eigstream::cuda {

index_t max_beam_power_elements() { return kernels::kBeamPowerMaxN; }

template <class R>
void beam_power_batched(BatchView<const std::complex<R>> vectors, VectorBatchView<const R> weights,
                        MatrixView<const std::complex<R>> steering, VectorBatchView<R> power, cudaStream_t stream) {
  const char* op = "cuda::beam_power_batched";
  const index_t n = vectors.rows, count = vectors.count, angles = steering.cols;
  if (n > kernels::kBeamPowerMaxN) {
    std::ostringstream s;
    s << op << ": the kernel takes up to " << kernels::kBeamPowerMaxN << " elements, not " << n;
    throw Error(ErrorCode::invalid_argument, s.str());
  }
  eigstream::detail::check_batch(op, "vectors", vectors, n, n, count, true);
  eigstream::detail::check_vector_batch(op, "weights", weights, n, count);
  eigstream::detail::check_matrix(op, "steering", steering, n, angles);
  eigstream::detail::check_vector_batch(op, "power", power, angles, count);
  if (n == 0 || count == 0 || angles == 0) return;
  kernels::BeamPowerBatchedArgs<R> args;
  args.vectors = vectors.data, args.ldv = vectors.ld, args.stride_v = vectors.stride;
  args.weights = weights.data, args.stride_weights = weights.stride;
  args.steering = steering.data, args.ld_steering = steering.ld;
  args.power = power.data, args.stride_power = power.stride;
  args.n = int(n), args.angles = angles, args.count = count;
  eigstream::detail::check_cuda(kernels::launch_beam_power_batched(args, stream), "cuda::beam_power_batched: kernel launch");
}

template void beam_power_batched<float>(BatchView<const std::complex<float>>, VectorBatchView<const float>,
                                        MatrixView<const std::complex<float>>, VectorBatchView<float>, cudaStream_t);
template void beam_power_batched<double>(BatchView<const std::complex<double>>, VectorBatchView<const double>,
                                         MatrixView<const std::complex<double>>, VectorBatchView<double>, cudaStream_t);

}  // namespace eigstream::cuda
