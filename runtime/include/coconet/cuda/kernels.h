//===- cuda/kernels.h - what the CUDA target's kernels use ------*- C++ -*-===//
//
// The fixed helpers every generated .cu file shares: the block size, the
// grid of a grid-stride loop, the launch of a kernel, aligned vectors for
// 16-byte loads and stores, f16/bf16 rounding, a one-value store, and a
// block reduction in a fixed order (so a result does not depend on
// scheduling). CUDA code: nvcc, or a host compiler with the tests' CPU
// emulation of CUDA (test/emu/). Generated code brings them in with
//
//   using namespace coconet::rt::cuda::kernels;
//
// inside its own anonymous namespace. Their names start with cc_ (or are
// reserved: kThreads), like every name generated code makes, so they never
// meet a name from a program.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_KERNELS_H
#define COCONET_RUNTIME_CUDA_KERNELS_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace coconet::rt::cuda::kernels {

/// Threads per block of every generated kernel.
constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `n` items (at least 1, at most 65535).
inline unsigned cc_grid(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1       ? 1
                               : blocks > 65535 ? 65535
                                                : blocks);
}

/// Launches `kernel` with `grid` blocks of `block` threads and `shared`
/// bytes of dynamic shared memory on `stream`, and returns the launch's
/// error (a bad configuration; a kernel's own faults show later, at a
/// synchronisation). The only spelling of a launch in generated code: the
/// triple chevrons stay in this header, so generated host code is plain
/// C++ that another implementation of this function can compile.
template <typename... Params, typename... Args>
cudaError_t cc_launch(void (*kernel)(Params...), dim3 grid, dim3 block,
                      size_t shared, cudaStream_t stream, Args... args) {
#if defined(__CUDACC__)
  kernel<<<grid, block, shared, stream>>>(static_cast<Params>(args)...);
  return cudaGetLastError();
#else
  // A host compiler: the CPU emulation of CUDA used by the tests
  // (test/emu/, force-included as coconet/emu/prelude.h).
  return ::coconet::emu::launch(kernel, grid, block, shared, stream, args...);
#endif
}

/// `W` elements moved as one aligned load or store.
template <typename T, int W> struct alignas(sizeof(T) * W) cc_vec {
  T v[W];
};

/// Is `p` aligned for loads of `bytes` bytes?
inline bool cc_aligned(const void *p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/// Rounds to f16 / bf16 (to nearest even) and widens back.
__device__ __forceinline__ float cc_round_f16(float x) {
  return __half2float(__float2half_rn(x));
}
__device__ __forceinline__ float cc_round_bf16(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

/// Stores one value (a scalar argument some step needs in memory).
template <typename T> __global__ void cc_store(T *out, T value) {
  *out = value;
}
/// Stores `value` into device memory at `out`, in order on `stream`.
template <typename T>
cudaError_t cc_store_async(T *out, T value, cudaStream_t stream) {
  return cc_launch(cc_store<T>, 1, 1, 0, stream, out, value);
}

/// Combines `value` over the block (kThreads threads) through a fixed tree;
/// the result is valid in thread 0.
template <typename T, typename Combine>
__device__ T cc_block_reduce(T value, Combine combine) {
  __shared__ T cc_shared[kThreads];
  cc_shared[threadIdx.x] = value;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s)
      cc_shared[threadIdx.x] =
          combine(cc_shared[threadIdx.x], cc_shared[threadIdx.x + s]);
    __syncthreads();
  }
  const T result = cc_shared[0];
  __syncthreads();
  return result;
}

} // namespace coconet::rt::cuda::kernels

#endif // COCONET_RUNTIME_CUDA_KERNELS_H
