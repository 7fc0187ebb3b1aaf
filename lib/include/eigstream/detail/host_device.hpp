// EIGSTREAM_HD marks small math shared by the CPU solvers and the CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define EIGSTREAM_HD __host__ __device__ __forceinline__
#else
#define EIGSTREAM_HD inline
#endif
