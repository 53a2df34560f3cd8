//===- runtime.cpp - the CUDA runtime API subset, on the CPU --------------===//
//
// Definitions of the CUDA runtime functions the runtime library and
// generated code call, against the real declarations (cuda_runtime_api.h):
//
// - device memory is host memory that a registry knows, so a copy of the
//   wrong kind, a free of a pointer that is not an allocation, or a host
//   pointer given to a kernel is an error, not silent success;
// - a stream is an ordered queue of tasks that one worker thread runs;
//   events mark a point in a stream, and cudaStreamWaitEvent orders
//   another stream after it;
// - synchronous calls (cudaMemcpy, cudaDeviceSynchronize) wait for every
//   stream first, as the legacy default stream does with blocking streams;
// - an error a task meets (a kernel's barrier misuse) is kept by its
//   stream and returned by the next synchronisation, as a GPU's kernel
//   faults are.
//
//===----------------------------------------------------------------------===//

#include "coconet/emu/device.h"
#include "emu_internal.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace coconet::emu {
namespace {

thread_local cudaError_t lastError = cudaSuccess;

/// Device allocations: start -> bytes.
struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, size_t> blocks;

  bool contains(const void *p, size_t bytes = 1) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> lock(mutex);
    auto it = blocks.upper_bound(a);
    if (it == blocks.begin())
      return false;
    --it;
    return a >= it->first && a + bytes <= it->first + it->second;
  }
};
Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

/// One stream: a queue of tasks run in order by a worker thread.
struct Stream {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<cudaError_t()>> tasks;
  bool busy = false, stopping = false;
  cudaError_t error = cudaSuccess; // the first error a task met
  std::thread worker;

  Stream() : worker([this] { run(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    worker.join();
  }
  void push(std::function<cudaError_t()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      tasks.push_back(std::move(task));
    }
    changed.notify_all();
  }
  /// Waits until every task queued so far has run; returns (and clears)
  /// the error a task met.
  cudaError_t drain() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return tasks.empty() && !busy; });
    const cudaError_t e = error;
    error = cudaSuccess;
    return e;
  }

private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !tasks.empty(); });
      if (tasks.empty())
        return;
      auto task = std::move(tasks.front());
      tasks.pop_front();
      busy = true;
      lock.unlock();
      raceDelay();
      const cudaError_t e = task();
      lock.lock();
      if (e != cudaSuccess && error == cudaSuccess)
        error = e;
      busy = false;
      changed.notify_all();
    }
  }
};

/// An event: how many times it was recorded, and how many of those
/// recordings its stream has reached.
struct Event {
  std::mutex mutex;
  std::condition_variable reached;
  uint64_t recorded = 0, completed = 0;
};

namespace {

struct Streams {
  std::mutex mutex;
  std::vector<std::unique_ptr<Stream>> all;
  Stream *legacy = nullptr; // stream 0
};
Streams &streams() {
  static Streams s;
  return s;
}

Stream *streamOf(cudaStream_t s) {
  Streams &all = streams();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (s == nullptr) {
    if (!all.legacy) {
      all.all.push_back(std::make_unique<Stream>());
      all.legacy = all.all.back().get();
    }
    return all.legacy;
  }
  return reinterpret_cast<Stream *>(s);
}

/// Every stream drained (a synchronous call); the first error met.
cudaError_t drainAll() {
  std::vector<Stream *> list;
  {
    Streams &all = streams();
    std::lock_guard<std::mutex> lock(all.mutex);
    for (auto &s : all.all)
      list.push_back(s.get());
  }
  cudaError_t first = cudaSuccess;
  for (Stream *s : list)
    if (cudaError_t e = s->drain(); e != cudaSuccess && first == cudaSuccess)
      first = e;
  return first;
}

cudaError_t ok() { return cudaSuccess; }

} // namespace

cudaError_t fail(cudaError_t error, const char *what) {
  std::fprintf(stderr, "cuda emulation: %s: %s\n", cudaGetErrorName(error),
               what);
  lastError = error;
  return error;
}

bool isDevicePointer(const void *p) { return registry().contains(p); }

void registerDeviceMemory(void *p, size_t bytes) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.blocks[reinterpret_cast<uintptr_t>(p)] = bytes;
}

void unregisterDeviceMemory(void *p) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.blocks.erase(reinterpret_cast<uintptr_t>(p));
}

void enqueueTask(cudaStream_t stream, std::function<cudaError_t()> task) {
  streamOf(stream)->push(std::move(task));
}

} // namespace coconet::emu

using namespace coconet::emu;

extern "C" {

cudaError_t cudaGetLastError() {
  const cudaError_t e = lastError;
  lastError = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return lastError; }

const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration:
    return "cudaErrorInvalidConfiguration";
  case cudaErrorInvalidDevice:
    return "cudaErrorInvalidDevice";
  case cudaErrorInvalidResourceHandle:
    return "cudaErrorInvalidResourceHandle";
  case cudaErrorLaunchFailure:
    return "cudaErrorLaunchFailure";
  case cudaErrorCooperativeLaunchTooLarge:
    return "cudaErrorCooperativeLaunchTooLarge";
  case cudaErrorInvalidMemcpyDirection:
    return "cudaErrorInvalidMemcpyDirection";
  default:
    return "cudaError (emulated)";
  }
}
const char *cudaGetErrorString(cudaError_t error) {
  return cudaGetErrorName(error);
}

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess
                     : fail(cudaErrorInvalidDevice, "the emulation has one "
                                                    "device, 0");
}
cudaError_t cudaGetDevice(int *device) {
  *device = 0;
  return cudaSuccess;
}

/// The emulated device: compute capability 9.0's limits (as the launch
/// checks them) and 1 multiprocessor, a small fixed count, the same on
/// every rank (a team's grid, kTeamBlocksPerSM blocks a multiprocessor,
/// has 4 blocks: each block of an emulated grid costs time).
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr,
                                   int device) {
  if (device != 0)
    return fail(cudaErrorInvalidDevice, "the emulation has one device, 0");
  switch (attr) {
  case cudaDevAttrMultiProcessorCount:
    *value = 1;
    return cudaSuccess;
  case cudaDevAttrComputeCapabilityMajor:
    *value = 9;
    return cudaSuccess;
  case cudaDevAttrComputeCapabilityMinor:
    *value = 0;
    return cudaSuccess;
  case cudaDevAttrMaxThreadsPerBlock:
    *value = 1024;
    return cudaSuccess;
  case cudaDevAttrMaxSharedMemoryPerBlock:
    *value = 48 * 1024;
    return cudaSuccess;
  case cudaDevAttrWarpSize:
    *value = 32;
    return cudaSuccess;
  case cudaDevAttrCooperativeLaunch:
    *value = 1;
    return cudaSuccess;
  default:
    return fail(cudaErrorInvalidValue,
                ("cudaDeviceGetAttribute: attribute " +
                 std::to_string(static_cast<int>(attr)) + " is not emulated")
                    .c_str());
  }
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  // 256-byte aligned as on a GPU, and exactly `bytes` long, so that
  // AddressSanitizer (in the tests) sees a kernel's read past the end.
  void *p = nullptr;
  if (posix_memalign(&p, 256, std::max<size_t>(bytes, 1)) != 0)
    return fail(cudaErrorMemoryAllocation, "cudaMalloc: out of host memory");
  std::memset(p, 0xcd, bytes); // not zero: uninitialised reads show
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.blocks[reinterpret_cast<uintptr_t>(p)] = bytes;
  }
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
  if (!ptr)
    return cudaSuccess;
  if (cudaError_t e = drainAll(); e != cudaSuccess)
    return fail(e, "cudaFree: an earlier kernel failed");
  Registry &r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.blocks.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == r.blocks.end())
      return fail(cudaErrorInvalidValue,
                  "cudaFree of a pointer that cudaMalloc did not return");
    r.blocks.erase(it);
  }
  std::free(ptr);
  return cudaSuccess;
}

} // extern "C"

namespace coconet::emu {
namespace {

/// Checks a copy's pointers against its kind.
cudaError_t checkCopy(void *dst, const void *src, size_t bytes,
                      cudaMemcpyKind kind, const char *what) {
  const bool dstDevice = registry().contains(dst, bytes);
  const bool srcDevice = registry().contains(src, bytes);
  bool good = false;
  switch (kind) {
  case cudaMemcpyHostToDevice:
    good = dstDevice && !srcDevice;
    break;
  case cudaMemcpyDeviceToHost:
    good = srcDevice && !dstDevice;
    break;
  case cudaMemcpyDeviceToDevice:
    good = srcDevice && dstDevice;
    break;
  case cudaMemcpyHostToHost:
    good = !srcDevice && !dstDevice;
    break;
  case cudaMemcpyDefault:
    good = true;
    break;
  }
  if (!good) {
    std::string message = std::string(what) +
                          ": the pointers do not match the copy's kind "
                          "(destination " +
                          (dstDevice ? "device" : "not device") +
                          " memory, source " +
                          (srcDevice ? "device" : "not device") +
                          " memory, or a range past an allocation's end)";
    return fail(cudaErrorInvalidMemcpyDirection, message.c_str());
  }
  return cudaSuccess;
}

} // namespace
} // namespace coconet::emu

extern "C" {

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
  if (cudaError_t e = checkCopy(dst, src, bytes, kind, "cudaMemcpy");
      e != cudaSuccess)
    return e;
  if (cudaError_t e = drainAll(); e != cudaSuccess)
    return fail(e, "cudaMemcpy: an earlier kernel failed");
  if (bytes)
    std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream) {
  if (cudaError_t e = checkCopy(dst, src, bytes, kind, "cudaMemcpyAsync");
      e != cudaSuccess)
    return e;
  enqueueTask(stream, [=] {
    if (bytes)
      std::memmove(dst, src, bytes);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes,
                            cudaStream_t stream) {
  if (!registry().contains(ptr, bytes))
    return fail(cudaErrorInvalidValue,
                "cudaMemsetAsync: not device memory (or past its end)");
  enqueueTask(stream, [=] {
    std::memset(ptr, value, bytes);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaMemset2DAsync(void *ptr, size_t pitch, int value, size_t width,
                              size_t height, cudaStream_t stream) {
  if (height > 0 && !registry().contains(ptr, pitch * (height - 1) + width))
    return fail(cudaErrorInvalidValue,
                "cudaMemset2DAsync: not device memory (or past its end)");
  enqueueTask(stream, [=] {
    for (size_t row = 0; row < height; ++row)
      std::memset(static_cast<char *>(ptr) + row * pitch, value, width);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  Streams &all = streams();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.all.push_back(std::make_unique<Stream>());
  *stream = reinterpret_cast<cudaStream_t>(all.all.back().get());
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned) {
  return cudaStreamCreate(stream);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  Stream *s = streamOf(stream);
  const cudaError_t e = s->drain();
  Streams &all = streams();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto it = std::find_if(all.all.begin(), all.all.end(),
                         [&](const auto &p) { return p.get() == s; });
  if (it == all.all.end() || s == all.legacy)
    return fail(cudaErrorInvalidResourceHandle,
                "cudaStreamDestroy of a stream that does not exist");
  all.all.erase(it);
  return e;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (cudaError_t e = streamOf(stream)->drain(); e != cudaSuccess)
    return fail(e, "cudaStreamSynchronize: a task on the stream failed");
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  if (cudaError_t e = drainAll(); e != cudaSuccess)
    return fail(e, "cudaDeviceSynchronize: a task failed");
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  *event = reinterpret_cast<cudaEvent_t>(new Event);
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned) {
  return cudaEventCreate(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<Event *>(event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  auto *e = reinterpret_cast<Event *>(event);
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    generation = ++e->recorded;
  }
  enqueueTask(stream, [e, generation] {
    {
      std::lock_guard<std::mutex> lock(e->mutex);
      e->completed = std::max(e->completed, generation);
    }
    e->reached.notify_all();
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned) {
  auto *e = reinterpret_cast<Event *>(event);
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    generation = e->recorded; // the last recording before this call
  }
  enqueueTask(stream, [e, generation] {
    std::unique_lock<std::mutex> lock(e->mutex);
    e->reached.wait(lock, [&] { return e->completed >= generation; });
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  auto *e = reinterpret_cast<Event *>(event);
  std::unique_lock<std::mutex> lock(e->mutex);
  const uint64_t generation = e->recorded;
  e->reached.wait(lock, [&] { return e->completed >= generation; });
  return cudaSuccess;
}

} // extern "C"
