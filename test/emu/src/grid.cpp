//===- grid.cpp - a grid's CUDA threads as fibers -------------------------===//
//
// A block runs on one OS thread: each of its CUDA threads is a fiber
// (Boost.Context, 64 KiB stacks, kept by the OS thread for its next
// block) resumed in turn until it returns or calls
// __syncthreads. When every thread that has not returned waits at the
// barrier, the barrier opens; when some thread returned and others wait,
// the block is wrong (on a GPU, a barrier not every thread reaches hangs or
// is undefined) and the launch fails with cudaErrorLaunchFailure.
//
// Blocks run one after another on the stream's worker thread; in a
// cooperative launch every block gets its own OS thread at once, so that a
// grid-wide barrier (made of atomics) can be crossed.
//
//===----------------------------------------------------------------------===//

#include "coconet/emu/device.h"
#include "emu_internal.h"

#include <boost/context/fiber.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace ctx = boost::context;

namespace coconet::emu {
namespace {

constexpr size_t kStackBytes = 64 * 1024;

/// What the running OS thread is executing.
struct BlockState {
  dim3 grid, block;
  uint3 blockIdx{};
  uint3 threadIdx{};
  /// The scheduler's side of the running fiber: __syncthreads resumes it.
  ctx::fiber *toScheduler = nullptr;
  /// Set by __syncthreads before it gives control back.
  bool atBarrier = false;
};
thread_local BlockState *current = nullptr;

BlockState &state() {
  if (!current) {
    std::fprintf(stderr, "cuda emulation: threadIdx, blockIdx or "
                         "__syncthreads used outside a kernel\n");
    std::abort();
  }
  return *current;
}

/// Runs one block of `body`; false (and a message) when a barrier was not
/// reached by every thread.
bool runBlock(dim3 grid, dim3 block, uint3 blockIdx,
              const std::function<void()> &body) {
  BlockState s;
  s.grid = grid;
  s.block = block;
  s.blockIdx = blockIdx;
  BlockState *outer = current;
  current = &s;

  const unsigned n = block.x * block.y * block.z;
  struct Thread {
    ctx::fiber fiber;
    bool done = false, waiting = false;
  };
  std::vector<Thread> threads(n);
  // The stacks of the fibers this OS thread ran before, reused: a block's
  // n stacks, allocated and freed again for every block, had their pages
  // faulted in anew each time (most of an emulated program's run time, in
  // the kernel: 1.7 s of a 2.3 s run). The pool grows 64 stacks at a time.
  thread_local ctx::pooled_fixedsize_stack stack(kStackBytes, 64);
  for (unsigned t = 0; t < n; ++t)
    threads[t].fiber =
        ctx::fiber(std::allocator_arg, stack, [&, t](ctx::fiber &&sink) {
          s.toScheduler = &sink;
          body();
          threads[t].done = true;
          return std::move(sink);
        });

  bool good = true;
  for (;;) {
    unsigned live = 0, waiting = 0;
    for (unsigned t = 0; t < n; ++t) {
      Thread &th = threads[t];
      if (th.done || th.waiting)
        continue;
      s.threadIdx = {t % block.x, (t / block.x) % block.y,
                     t / (block.x * block.y)};
      s.atBarrier = false;
      th.fiber = std::move(th.fiber).resume();
      th.waiting = s.atBarrier && !th.done;
    }
    bool anyDone = false;
    for (const Thread &th : threads) {
      live += !th.done;
      waiting += th.waiting;
      anyDone |= th.done;
    }
    if (live == 0)
      break;
    if (waiting == live && anyDone) {
      std::fprintf(stderr,
                   "cuda emulation: block (%u, %u, %u): __syncthreads "
                   "reached by %u of %u threads (the others returned)\n",
                   blockIdx.x, blockIdx.y, blockIdx.z, waiting, n);
      good = false;
      // Let the waiting threads run to their end, past the barrier.
    }
    for (Thread &th : threads)
      th.waiting = false; // the barrier opens
  }
  current = outer;
  return good;
}

/// Every block of the grid, in order.
cudaError_t runGrid(dim3 grid, dim3 block, bool cooperative,
                    const std::function<void()> &body) {
  std::vector<uint3> blocks;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x)
        blocks.push_back({x, y, z});
  if (!cooperative) {
    for (const uint3 &b : blocks)
      if (!runBlock(grid, block, b, body))
        return cudaErrorLaunchFailure;
    return cudaSuccess;
  }
  std::atomic<bool> good{true};
  std::vector<std::thread> workers;
  for (const uint3 &b : blocks)
    workers.emplace_back([&, b] {
      if (!runBlock(grid, block, b, body))
        good = false;
    });
  for (std::thread &w : workers)
    w.join();
  return good ? cudaSuccess : cudaErrorLaunchFailure;
}

} // namespace

uint3 currentThreadIdx() { return state().threadIdx; }
uint3 currentBlockIdx() { return state().blockIdx; }
dim3 currentBlockDim() { return state().block; }
dim3 currentGridDim() { return state().grid; }

void syncThreads() {
  BlockState &s = state();
  s.atBarrier = true;
  ctx::fiber *sink = s.toScheduler;
  *sink = std::move(*sink).resume();
  // Resumed by the scheduler: the barrier is open. The fiber's sink for
  // the next switch is the one it was resumed from.
  current->toScheduler = sink;
}

cudaError_t enqueueGrid(cudaStream_t stream, dim3 grid, dim3 block,
                        size_t sharedBytes, bool cooperative,
                        std::function<void()> body) {
  const unsigned long long threads =
      static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (block.x == 0 || block.y == 0 || block.z == 0 || grid.x == 0 ||
      grid.y == 0 || grid.z == 0 || block.x > 1024 || block.y > 1024 ||
      block.z > 64 || threads > 1024 || grid.x > 2147483647u ||
      grid.y > 65535 || grid.z > 65535) {
    const std::string what =
        "a launch of grid (" + std::to_string(grid.x) + ", " +
        std::to_string(grid.y) + ", " + std::to_string(grid.z) + ") x block (" +
        std::to_string(block.x) + ", " + std::to_string(block.y) + ", " +
        std::to_string(block.z) +
        ") is outside what compute capability 9.0 allows";
    return fail(cudaErrorInvalidConfiguration, what.c_str());
  }
  if (sharedBytes > 48 * 1024)
    return fail(cudaErrorInvalidValue,
                "more than 48 KiB of dynamic shared memory");
  if (cooperative) {
    const unsigned long long blocks =
        static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
    if (blocks * threads > kMaxCooperativeFibers) {
      const std::string what =
          "a cooperative launch of " + std::to_string(blocks) + " blocks of " +
          std::to_string(threads) + " threads needs " +
          std::to_string(blocks * threads) + " fibers at once; the " +
          "emulation holds at most " + std::to_string(kMaxCooperativeFibers);
      return fail(cudaErrorCooperativeLaunchTooLarge, what.c_str());
    }
  }
  enqueueTask(stream, [=, body = std::move(body)] {
    return runGrid(grid, block, cooperative, body);
  });
  return cudaSuccess;
}

namespace {
std::atomic<unsigned> &raceSeed() {
  static std::atomic<unsigned> seed{[] {
    const char *text = std::getenv("COCONET_EMU_RACE");
    return text ? static_cast<unsigned>(std::strtoul(text, nullptr, 10)) : 0u;
  }()};
  return seed;
}
} // namespace

void setRaceSeed(unsigned seed) { raceSeed() = seed; }

void raceDelay() {
  const unsigned seed = raceSeed();
  if (seed == 0)
    return;
  // Each worker its own sequence, from the seed and the thread.
  thread_local std::mt19937 random(
      seed ^ static_cast<unsigned>(
                 std::hash<std::thread::id>{}(std::this_thread::get_id())));
  std::uniform_int_distribution<int> micros(0, 2000);
  std::this_thread::sleep_for(std::chrono::microseconds(micros(random)));
}

} // namespace coconet::emu
