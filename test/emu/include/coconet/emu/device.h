//===- emu/device.h - the device side of the CUDA emulation -----*- C++ -*-===//
//
// What a kernel sees (the thread's and block's indices, the block barrier)
// and the launch that generated code reaches through cc_launch
// (coconet/cuda/kernels.h). prelude.h spells them as CUDA does
// (threadIdx, __syncthreads, ...) for the code under test; the emulation's
// own sources include only this header.
//
// How a grid runs (src/grid.cpp): every block on one OS thread, each of its
// CUDA threads a fiber with a small stack; a fiber runs until it reaches
// __syncthreads or returns, and the block's barrier opens when every thread
// has reached it (a thread that returns while others wait at a barrier is
// an error: on a GPU that hangs or is undefined). Blocks run one after
// another on the stream's worker, except in a cooperative launch, where
// every block runs at once on its own thread.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_EMU_DEVICE_H
#define COCONET_EMU_DEVICE_H

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <type_traits>

namespace coconet::emu {

/// The running CUDA thread's indices and its grid's shape.
uint3 currentThreadIdx();
uint3 currentBlockIdx();
dim3 currentBlockDim();
dim3 currentGridDim();
/// The barrier of the running thread's block.
void syncThreads();

/// Is `p` inside memory from cudaMalloc (the registry)?
bool isDevicePointer(const void *p);
/// Records `error` as the last error (cudaGetLastError) with a message
/// printed to stderr; returns it.
cudaError_t fail(cudaError_t error, const char *what);

/// The stream-race mode: with a nonzero seed every stream's worker pauses
/// a random 0-2 ms before each task, so streams interleave differently
/// from run to run and a missing event wait shows as a wrong result. 0
/// turns it off. The environment variable COCONET_EMU_RACE=SEED sets it
/// when a program starts.
void setRaceSeed(unsigned seed);

/// The most fibers one cooperative launch may hold (every block's threads
/// at once); a larger grid is refused with cudaErrorCooperativeLaunchTooLarge.
constexpr size_t kMaxCooperativeFibers = 16384;

/// Checks a launch's configuration as a GPU of compute capability 9.0
/// would (block at most 1024 threads and 1024 x 1024 x 64, grid at most
/// 2^31-1 x 65535 x 65535, no empty dimension, at most 48 KiB of dynamic
/// shared memory), then queues `body`, run once by every thread of the
/// grid, on `stream`.
cudaError_t enqueueGrid(cudaStream_t stream, dim3 grid, dim3 block,
                        size_t sharedBytes, bool cooperative,
                        std::function<void()> body);

namespace detail {
template <typename T> bool onDevice(const T &) { return true; }
template <typename T> bool onDevice(T *p) {
  return p == nullptr || isDevicePointer(p);
}
} // namespace detail

/// kernel<<<grid, block, sharedBytes, stream>>>(args...): a pointer argument
/// that is not device memory (a host pointer) is refused, as the GPU would
/// fault on it.
template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block,
                   size_t sharedBytes, cudaStream_t stream, Args... args) {
  static_assert(sizeof...(Params) == sizeof...(Args),
                "a kernel launched with the wrong number of arguments");
  if (!(detail::onDevice(static_cast<Params>(args)) && ...))
    return fail(cudaErrorInvalidValue,
                "a kernel argument points to memory that is not from "
                "cudaMalloc (a host pointer?)");
  return enqueueGrid(stream, grid, block, sharedBytes, false,
                     [=] { kernel(static_cast<Params>(args)...); });
}

/// The same, with every block resident at once (grid-wide barriers).
template <typename... Params, typename... Args>
cudaError_t launchCooperative(void (*kernel)(Params...), dim3 grid, dim3 block,
                              size_t sharedBytes, cudaStream_t stream,
                              Args... args) {
  if (!(detail::onDevice(static_cast<Params>(args)) && ...))
    return fail(cudaErrorInvalidValue,
                "a kernel argument points to memory that is not from "
                "cudaMalloc (a host pointer?)");
  return enqueueGrid(stream, grid, block, sharedBytes, true,
                     [=] { kernel(static_cast<Params>(args)...); });
}

} // namespace coconet::emu

#endif // COCONET_EMU_DEVICE_H
