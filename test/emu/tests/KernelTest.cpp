//===- KernelTest.cpp - kernels under the CUDA emulation ------------------===//
//
// CUDA source compiled by the host compiler (prelude force-included):
// grid-stride loops over more items than the grid has threads, the block
// reduction of coconet/cuda/kernels.h (shared memory and __syncthreads)
// in a fixed order, a barrier that only some threads reach, a host pointer
// given to a kernel, configurations a GPU refuses, cooperative launches
// whose blocks meet at a grid-wide barrier, and threads' own stacks kept
// apart across barriers while the blocks before them left theirs for reuse.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/kernels.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

using namespace coconet::rt::cuda::kernels;

namespace {

__global__ void iota(int64_t n, int64_t *out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = i * 3 + 1;
}

/// One value per block: the block's sum of in[first .. first + kThreads),
/// through cc_block_reduce.
__global__ void blockSums(const float *in, float *out) {
  const float v = in[blockIdx.x * kThreads + threadIdx.x];
  const float sum =
      cc_block_reduce(v, [](float a, float b) { return __fadd_rn(a, b); });
  if (threadIdx.x == 0)
    out[blockIdx.x] = sum;
}

/// Threads 0..31 return early; the others wait at a barrier.
__global__ void divergentBarrier(int *out) {
  if (threadIdx.x < 32)
    return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

/// Every block adds 1, waits for all blocks, then reads the total.
__global__ void gridBarrier(int *counter, int *seen, int blocks) {
  if (threadIdx.x == 0) {
    __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(counter, __ATOMIC_SEQ_CST) < blocks) {
    }
    seen[blockIdx.x] = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
  }
}

/// Each thread fills an array on its own stack from its global index,
/// crosses two barriers (every thread of the block runs in between), and
/// writes the array's sum: a stack that two live threads shared, or one
/// reused before its thread ended, gives another thread's sum.
__global__ void stackSums(int64_t *out) {
  const int64_t id =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  volatile int64_t local[256];
  for (int i = 0; i < 256; ++i)
    local[i] = id * 1000 + i;
  __syncthreads();
  __syncthreads();
  int64_t sum = 0;
  for (int i = 0; i < 256; ++i)
    sum += local[i];
  out[id] = sum;
}

template <typename T> T *deviceArray(size_t n) {
  T *p = nullptr;
  REQUIRE(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess);
  return p;
}

} // namespace

TEST_CASE("a grid-stride loop covers more items than the grid has threads",
          "[emu]") {
  // 3 blocks of 64 threads, 1000 items: every thread loops 5 or 6 times.
  const int64_t n = 1000;
  int64_t *out = deviceArray<int64_t>(n);
  REQUIRE(cc_launch(iota, 3, 64, 0, nullptr, n, out) == cudaSuccess);
  std::vector<int64_t> host(n);
  REQUIRE(cudaMemcpy(host.data(), out, n * sizeof(int64_t),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int64_t i = 0; i < n; ++i)
    REQUIRE(host[i] == i * 3 + 1);
  REQUIRE(cudaFree(out) == cudaSuccess);
}

TEST_CASE("cc_block_reduce combines a block's values in its fixed tree",
          "[emu]") {
  // Values whose float sum depends on the order: 1e8 and small ones.
  const int blocks = 3;
  std::vector<float> in(blocks * kThreads);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = i % kThreads == 0 ? 1e8f : 0.75f + static_cast<float>(i % 7);
  float *dIn = deviceArray<float>(in.size());
  float *dOut = deviceArray<float>(blocks);
  REQUIRE(cudaMemcpy(dIn, in.data(), in.size() * sizeof(float),
                     cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cc_launch(blockSums, blocks, kThreads, 0, nullptr, dIn, dOut) ==
          cudaSuccess);
  std::vector<float> out(blocks);
  REQUIRE(cudaMemcpy(out.data(), dOut, blocks * sizeof(float),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int b = 0; b < blocks; ++b) {
    // The tree: s = 128, 64, ..., 1, element i += element i + s.
    std::vector<float> tree(in.begin() + b * kThreads,
                            in.begin() + (b + 1) * kThreads);
    for (int s = kThreads / 2; s > 0; s /= 2)
      for (int i = 0; i < s; ++i)
        tree[i] = tree[i] + tree[i + s];
    float sequential = 0;
    for (int i = 0; i < kThreads; ++i)
      sequential += in[b * kThreads + i];
    REQUIRE(tree[0] != sequential); // the inputs can tell the orders apart
    CHECK(out[b] == tree[0]);
  }
  cudaFree(dIn);
  cudaFree(dOut);
}

TEST_CASE("a barrier that some threads never reach fails the launch", "[emu]") {
  int *out = deviceArray<int>(kThreads);
  REQUIRE(cc_launch(divergentBarrier, 1, kThreads, 0, nullptr, out) ==
          cudaSuccess);
  // A kernel's fault shows at the next synchronisation.
  CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  cudaGetLastError();
  cudaFree(out);
}

TEST_CASE("a kernel given a host pointer is refused", "[emu]") {
  std::vector<int64_t> host(10);
  CHECK(cc_launch(iota, 1, 32, 0, nullptr, int64_t(10), host.data()) ==
        cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("launch configurations a GPU refuses are refused", "[emu]") {
  int64_t *out = deviceArray<int64_t>(1);
  CHECK(cc_launch(iota, 1, 1025, 0, nullptr, int64_t(1), out) ==
        cudaErrorInvalidConfiguration);
  CHECK(cc_launch(iota, dim3(1, 65536), 32, 0, nullptr, int64_t(1), out) ==
        cudaErrorInvalidConfiguration);
  CHECK(cc_launch(iota, 0, 32, 0, nullptr, int64_t(1), out) ==
        cudaErrorInvalidConfiguration);
  CHECK(cc_launch(iota, 1, 32, 64 * 1024, nullptr, int64_t(1), out) ==
        cudaErrorInvalidValue);
  cudaGetLastError();
  cudaFree(out);
}

TEST_CASE("a cooperative launch runs every block at once", "[emu]") {
  const int blocks = 4;
  int *counter = deviceArray<int>(1);
  int *seen = deviceArray<int>(blocks);
  REQUIRE(cudaMemsetAsync(counter, 0, sizeof(int), nullptr) == cudaSuccess);
  // Blocks one after another would wait for ever at the grid barrier.
  REQUIRE(coconet::emu::launchCooperative(gridBarrier, blocks, 32, 0, nullptr,
                                          counter, seen,
                                          blocks) == cudaSuccess);
  std::vector<int> host(blocks);
  REQUIRE(cudaMemcpy(host.data(), seen, blocks * sizeof(int),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int b = 0; b < blocks; ++b)
    CHECK(host[b] == blocks);
  // More fibers than the emulation holds at once: refused, and said so.
  CHECK(coconet::emu::launchCooperative(gridBarrier, 65, 256, 0, nullptr,
                                        counter, seen, 65) ==
        cudaErrorCooperativeLaunchTooLarge);
  cudaGetLastError();
  cudaFree(counter);
  cudaFree(seen);
}

TEST_CASE("every thread keeps its own stack across barriers, block after "
          "block",
          "[emu]") {
  // 6 blocks of 128 threads, one after another on the stream's thread: the
  // later blocks run on the stacks the first one's threads left.
  const int blocks = 6, threads = 128;
  const int64_t n = static_cast<int64_t>(blocks) * threads;
  int64_t *out = deviceArray<int64_t>(n);
  for (int launch = 0; launch < 2; ++launch) {
    REQUIRE(cc_launch(stackSums, blocks, threads, 0, nullptr, out) ==
            cudaSuccess);
    std::vector<int64_t> host(n);
    REQUIRE(cudaMemcpy(host.data(), out, n * sizeof(int64_t),
                       cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int64_t id = 0; id < n; ++id)
      REQUIRE(host[id] == id * 1000 * 256 + 255 * 256 / 2);
  }
  REQUIRE(cudaFree(out) == cudaSuccess);
}
