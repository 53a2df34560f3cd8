//===- nccl_device.cpp - NCCL 2.28's symmetric memory, on shared memory ---===//
//
// NCCL's device API (nccl_device/core.h) as runtime/src/cuda/team.cpp uses
// it, for ranks that are processes of one node:
//
// - ncclMemAlloc is a memfd (a file in memory that has no name), mapped
//   MAP_SHARED, rounded up to NCCL's 4096-byte granularity; it counts as
//   device memory (the registry of runtime.cpp) for the bytes asked for.
//   A peer maps it by opening /proc/PID/fd/FD of the process that holds
//   it. Nothing ever has a name in /dev/shm, so nothing is left there when
//   a program aborts or is killed, and the same memory registers again on
//   any communicator. (A POSIX shm name would outlive a killed program; a
//   name given only for the length of a registration call, linkat of an
//   O_TMPFILE file, can be given once only: a file that lost its name
//   cannot be linked again.)
// - ncclCommWindowRegister (collective) checks its arguments and agrees on
//   them with every rank before anything is shared (a rank that refuses
//   makes every rank refuse, none waits); then every rank shares (its pid,
//   the memfd, the window's offset) with MPI_Allgather and maps every
//   peer's window; the peers' mappings count as device memory too (a peer
//   pointer is a device address on a GPU). ncclCommWindowDeregister is
//   local (munmap).
// - ncclDevCommCreate (collective) makes the LSA barriers: nBarriers x
//   nRanks 64-bit arrival counters in one memfd, made (zeroed) by rank 0
//   and mapped by every rank before any uses them (an MPI_Allreduce); the
//   device communicator's lsaBarrier.bufHandle is the id of this process's
//   record of them. ncclDevCommDestroy is local (munmap).
// - The device side (coconet/emu/nccl_device.h): lsaPointer is the peer's
//   mapping plus the offset; lsaBarrierSync increments this member's
//   counter of the barrier (release) and waits until every member's is as
//   large (acquire), yielding the CPU while it waits, as a block of a
//   normal launch runs on a stream's worker thread and every rank is a
//   process (every rank runs its blocks in the same order, so the waits
//   meet).
//
// COCONET_EMU_NO_SYMMETRIC=1 makes ncclDevCommCreate refuse as NCCL does
// on a communicator without symmetric memory (ncclInvalidUsage).
//
// What the emulation does not have is refused with a message: GIN,
// multimem (NVLS), resource and team requirement lists, windows other than
// NCCL_WIN_COLL_SYMMETRIC, calls inside a group, and LSA teams smaller than
// the communicator (ranks on several nodes).
//
//===----------------------------------------------------------------------===//

#include "coconet/emu/nccl_device.h"
#include "coconet/arrivals.h"
#include "coconet/emu/device.h"
#include "emu_internal.h"

#include <nccl.h>
// NCCL's device headers leave parameters unused.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <nccl_device.h>
#pragma GCC diagnostic pop

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace coconet::emu {
namespace {

/// NCCL's allocation granularity here, and the alignment of a window's
/// start in its allocation.
constexpr size_t kGranularity = NCCL_WIN_REQUIRED_ALIGNMENT;
static_assert(kGranularity == 4096, "NCCL's window alignment changed");

/// How long a member waits at an LSA barrier before the program is
/// stopped as broken: 60 s, or COCONET_EMU_BARRIER_TIMEOUT seconds.
double barrierTimeoutSeconds() {
  static const double seconds =
      ::coconet::rt::secondsFromEnv("COCONET_EMU_BARRIER_TIMEOUT", 60);
  return seconds;
}

std::string errnoText() { return std::strerror(errno); }

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

//===-- Shared files ------------------------------------------------------===//

/// A file of `bytes` zero bytes in memory, with no name (memfd); -1 (and
/// `why`) when it cannot be made.
int createSharedFile(size_t bytes, std::string *why) {
  const int fd = memfd_create("coconet-emu", MFD_CLOEXEC);
  if (fd < 0) {
    *why = "memfd_create: " + errnoText();
    return -1;
  }
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    *why = "ftruncate of a memfd to " + std::to_string(bytes) +
           " bytes: " + errnoText();
    close(fd);
    return -1;
  }
  return fd;
}

/// How a peer finds a shared file: its process and descriptor.
struct FileRef {
  int pid = 0, fd = -1;
};

/// A mapping of part of a shared file.
struct Mapping {
  void *start = nullptr; // what munmap takes
  size_t length = 0;
  char *at = nullptr; // the byte asked for
};

/// Maps `length` bytes from byte `offset` of the file that process
/// `file.pid` holds open as `file.fd` (opened through /proc, which reaches
/// a file without a name).
bool mapSharedFile(FileRef file, size_t offset, size_t length, Mapping *out,
                   std::string *why) {
  const std::string path =
      "/proc/" + std::to_string(file.pid) + "/fd/" + std::to_string(file.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *why = "open(" + path + ") (a peer's memory): " + errnoText();
    return false;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t first = offset / page * page;
  const size_t bytes = offset - first + length;
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 static_cast<off_t>(first));
  close(fd);
  if (p == MAP_FAILED) {
    *why = "mmap of " + path + ": " + errnoText();
    return false;
  }
  out->start = p;
  out->length = bytes;
  out->at = static_cast<char *>(p) + (offset - first);
  return true;
}

//===-- Process-local records ---------------------------------------------===//

/// Memory from ncclMemAlloc.
struct Allocation {
  int fd = -1;
  size_t bytes = 0;  // asked for (what counts as device memory)
  size_t mapped = 0; // rounded up to the granularity
  int windows = 0;   // registered windows over it
};

/// A window (what the ncclWindow_vidmem's winHost points to).
struct Window {
  static constexpr uint64_t kMagic = 0x636f636f6e657457; // "coconetW"
  uint64_t magic = kMagic;
  size_t size = 0;
  int lsaRank = 0, lsaSize = 1;
  uintptr_t allocation = 0;
  /// Every member's first byte of the window (this member's: the buffer).
  std::vector<char *> base;
  /// The peers' windows as this process maps them.
  std::vector<Mapping> peers;
};

/// A device communicator's LSA barriers: counters[barrier * nRanks +
/// member], how often `member` has arrived at `barrier`.
struct Barriers {
  Mapping mapping;
  uint64_t *counters = nullptr;
  int nBarriers = 0, nRanks = 1, rank = 0;
};

struct Records {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> allocations; // by start
  std::map<ncclWindow_t, Window *> windows;    // by handle
  std::map<uint32_t, Barriers> barriers;       // by bufHandle
  uint32_t nextBarriers = 1;
};
Records &records() {
  static Records r;
  return r;
}

//===-- Helpers -----------------------------------------------------------===//

/// A fault of device code: on a GPU the kernel stops with an error that
/// every later call returns; here the program stops.
[[noreturn]] void deviceFault(const std::string &what) {
  std::fprintf(stderr, "nccl emulation: device fault: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// The window of `w`, or null when it is none.
Window *windowOf(ncclWindow_t w) {
  if (!w || !w->winHost)
    return nullptr;
  auto *window = static_cast<Window *>(w->winHost);
  return window->magic == Window::kMagic ? window : nullptr;
}

/// The first reason a rank refuses a collective call, kept until every
/// rank has agreed.
struct Refusal {
  ncclResult_t result = ncclSuccess;
  std::string why;
  void operator()(ncclResult_t r, const std::string &what) {
    if (result == ncclSuccess) {
      result = r;
      why = what;
    }
  }
};

/// Collective over `comm`: every rank's refusal and `value` agreed. A
/// refusal anywhere is returned everywhere (its reason printed where it
/// was made); then `value` must be the same on every rank (`what` names
/// it), or every rank refuses with ncclInvalidArgument.
ncclResult_t agree(const char *call, MPI_Comm comm, const Refusal &mine,
                   uint64_t value, const char *what) {
  uint64_t mineAll[3] = {static_cast<uint64_t>(mine.result), value, ~value};
  uint64_t all[3] = {};
  MPI_Allreduce(mineAll, all, 3, MPI_UINT64_T, MPI_MAX, comm);
  const std::string name = call;
  if (all[0] != ncclSuccess) {
    const auto result = static_cast<ncclResult_t>(all[0]);
    return ncclFail(result, mine.result != ncclSuccess
                                ? name + ": " + mine.why
                                : name + ": refused on another rank (see "
                                         "its message)");
  }
  if (all[1] != ~all[2])
    return ncclFail(ncclInvalidArgument,
                    name + ": " + what + " differs between the ranks (from " +
                        std::to_string(~all[2]) + " to " +
                        std::to_string(all[1]) +
                        "); it must be the same on every rank");
  return ncclSuccess;
}

/// The checks of the communicator every collective call of the device API
/// makes.
void checkComm(ncclComm_t comm, Refusal &refuse) {
  if (ncclInGroup())
    refuse(ncclInvalidUsage,
           "called between ncclGroupStart and ncclGroupEnd: the emulation "
           "runs it at once, outside groups");
  if (comm->lsaSize != comm->size)
    refuse(ncclInvalidUsage,
           "the communicator's LSA team (ranks on one node) has " +
               std::to_string(comm->lsaSize) + " of its " +
               std::to_string(comm->size) +
               " ranks: the emulation has symmetric memory only when "
               "every rank is in it (NCCL would need GIN)");
}

} // namespace

//===-- Device side -------------------------------------------------------===//

void *lsaPointer(ncclWindow_vidmem *w, size_t offset, int peer) {
  Window *window = windowOf(w);
  if (!window)
    deviceFault("lsaPointer (ncclGetLsaPointer) of a window that "
                "ncclCommWindowRegister did not make, or that was "
                "deregistered");
  if (peer < 0 || peer >= window->lsaSize)
    deviceFault("lsaPointer (ncclGetLsaPointer): peer " + std::to_string(peer) +
                " is outside the LSA team [0, " +
                std::to_string(window->lsaSize) + ")");
  if (offset >= window->size)
    deviceFault("lsaPointer (ncclGetLsaPointer): offset " +
                std::to_string(offset) + " is past the window's " +
                std::to_string(window->size) + " bytes");
  return window->base[static_cast<size_t>(peer)] + offset;
}

void lsaBarrierSync(const ncclDevComm &comm, unsigned index) {
  Barriers b;
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.barriers.find(comm.lsaBarrier.bufHandle);
    if (it == r.barriers.end())
      deviceFault("an LSA barrier of a device communicator that "
                  "ncclDevCommCreate did not make, or that was destroyed");
    b = it->second;
  }
  auto where = [&] {
    const uint3 block = currentBlockIdx();
    return "LSA barrier " + std::to_string(index) + " of block (" +
           std::to_string(block.x) + ", " + std::to_string(block.y) + ", " +
           std::to_string(block.z) + ") on LSA rank " + std::to_string(b.rank);
  };
  if (index >= static_cast<unsigned>(b.nBarriers))
    deviceFault(where() + ": the device communicator has " +
                std::to_string(b.nBarriers) +
                " barriers (lsaBarrierCount; a grid has no more blocks "
                "than that)");
  uint64_t *row = b.counters + static_cast<size_t>(index) * b.nRanks;
  // Release: what this block wrote before is seen by whoever sees this
  // (the runtime's barrier of arrival counters, coconet/arrivals.h).
  const uint64_t mine = ::coconet::rt::arrive(&row[b.rank]);
  const double timeout = barrierTimeoutSeconds();
  const int q = ::coconet::rt::waitForArrivals([&](int m) { return &row[m]; },
                                               b.nRanks, mine, timeout);
  if (q >= 0)
    deviceFault(where() + " never completed: this member's arrival " +
                std::to_string(mine) + " waited " +
                std::to_string(static_cast<int>(timeout)) + " s for LSA rank " +
                std::to_string(q) + ", which arrived " +
                std::to_string(__atomic_load_n(&row[q], __ATOMIC_ACQUIRE)) +
                " times (a member's grid has fewer blocks, one of its "
                "blocks skipped the barrier, or it stopped)");
}

} // namespace coconet::emu

using namespace coconet::emu;

extern "C" {

ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (!ptr)
    return ncclFail(ncclInvalidArgument, "ncclMemAlloc: a null pointer");
  if (size == 0)
    return ncclFail(ncclInvalidArgument, "ncclMemAlloc of 0 bytes");
  Allocation a;
  a.bytes = size;
  a.mapped = roundUp(size, kGranularity);
  std::string why;
  a.fd = createSharedFile(a.mapped, &why);
  if (a.fd < 0)
    return ncclFail(ncclSystemError, "ncclMemAlloc: " + why);
  void *p =
      mmap(nullptr, a.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, a.fd, 0);
  if (p == MAP_FAILED) {
    close(a.fd);
    return ncclFail(ncclSystemError, "ncclMemAlloc: mmap: " + errnoText());
  }
  std::memset(p, 0xcd, size); // not zero: uninitialised reads show
  registerDeviceMemory(p, size);
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.allocations[reinterpret_cast<uintptr_t>(p)] = a;
  }
  *ptr = p;
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void *ptr) {
  if (!ptr)
    return ncclSuccess;
  Allocation a;
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == r.allocations.end())
      return ncclFail(ncclInvalidArgument,
                      "ncclMemFree of a pointer that ncclMemAlloc did not "
                      "return");
    if (it->second.windows > 0)
      return ncclFail(ncclInvalidUsage,
                      "ncclMemFree of memory still registered as a window "
                      "(ncclCommWindowDeregister first)");
    a = it->second;
    r.allocations.erase(it);
  }
  // As cudaFree: no kernel may still use it.
  const cudaError_t drained = cudaDeviceSynchronize();
  unregisterDeviceMemory(ptr);
  munmap(ptr, a.mapped);
  close(a.fd);
  if (drained != cudaSuccess)
    return ncclFail(ncclUnhandledCudaError,
                    "ncclMemFree: an earlier kernel failed");
  return ncclSuccess;
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size,
                                    ncclWindow_t *win, int winFlags) {
  const char *call = "ncclCommWindowRegister";
  if (!comm)
    return ncclFail(ncclInvalidArgument, "ncclCommWindowRegister: a null "
                                         "communicator");
  Refusal refuse;
  if (!win)
    refuse(ncclInvalidArgument, "a null ncclWindow_t *");
  if (winFlags != NCCL_WIN_COLL_SYMMETRIC)
    refuse(ncclInvalidArgument,
           "winFlags " + std::to_string(winFlags) +
               ": the emulation has only symmetric windows "
               "(NCCL_WIN_COLL_SYMMETRIC)");
  checkComm(comm, refuse);
  if (size == 0)
    refuse(ncclInvalidArgument, "an empty window");
  // The allocation the buffer is in.
  const auto address = reinterpret_cast<uintptr_t>(buff);
  uintptr_t start = 0;
  Allocation allocation;
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.allocations.upper_bound(address);
    if (it != r.allocations.begin() &&
        address < std::prev(it)->first + std::prev(it)->second.bytes) {
      start = std::prev(it)->first;
      allocation = std::prev(it)->second;
    }
  }
  const size_t offset = address - start;
  if (start == 0)
    refuse(ncclInvalidArgument,
           "the buffer is not in memory from ncclMemAlloc (peers cannot "
           "map memory from cudaMalloc)");
  else if (offset % kGranularity != 0)
    refuse(ncclInvalidArgument,
           "the buffer starts " + std::to_string(offset) +
               " bytes into its ncclMemAlloc allocation, not at a multiple "
               "of NCCL_WIN_REQUIRED_ALIGNMENT (4096)");
  else if (size > allocation.bytes - offset)
    refuse(ncclInvalidArgument,
           "the window's " + std::to_string(size) + " bytes from byte " +
               std::to_string(offset) +
               " run past its ncclMemAlloc "
               "allocation's " +
               std::to_string(allocation.bytes) + " bytes");
  if (ncclResult_t r =
          agree(call, comm->comm, refuse, size, "the window's size in bytes");
      r != ncclSuccess)
    return r;

  // Every rank shares how to reach its memory, and maps every peer's
  // window.
  struct Shared {
    FileRef file;
    uint64_t offset;
  };
  const Shared mine{{static_cast<int>(getpid()), allocation.fd}, offset};
  std::vector<Shared> all(static_cast<size_t>(comm->size));
  MPI_Allgather(&mine, sizeof(Shared), MPI_BYTE, all.data(), sizeof(Shared),
                MPI_BYTE, comm->comm);
  auto window = std::make_unique<Window>();
  window->size = size;
  window->lsaRank = comm->lsaRank;
  window->lsaSize = comm->lsaSize;
  window->allocation = start;
  window->base.assign(all.size(), nullptr);
  std::string why;
  int mapped = 1;
  for (int p = 0; p < comm->size; ++p) {
    const Shared &peer = all[static_cast<size_t>(p)];
    if (p == comm->rank) {
      window->base[static_cast<size_t>(p)] = static_cast<char *>(buff);
      continue;
    }
    Mapping m;
    if (!mapSharedFile(peer.file, peer.offset, size, &m, &why)) {
      mapped = 0;
      break;
    }
    window->peers.push_back(m);
    window->base[static_cast<size_t>(p)] = m.at;
  }
  // Every rank has mapped every peer's window, or every rank fails.
  int everyone = 0;
  MPI_Allreduce(&mapped, &everyone, 1, MPI_INT, MPI_MIN, comm->comm);
  if (!everyone) {
    for (const Mapping &m : window->peers)
      munmap(m.start, m.length);
    return ncclFail(ncclSystemError,
                    std::string(call) + ": " +
                        (mapped ? "another rank could not map its peers' "
                                  "windows (see its message)"
                                : "mapping the peers' windows: " + why));
  }
  for (const Mapping &m : window->peers)
    registerDeviceMemory(m.at, size);
  auto *handle = new ncclWindow_vidmem;
  std::memset(static_cast<void *>(handle), 0, sizeof *handle);
  handle->lsaRank = comm->lsaRank;
  handle->worldRank = comm->rank;
  handle->winHost = window.get();
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.allocations[start].windows++;
    r.windows[handle] = window.release();
  }
  *win = handle;
  return ncclSuccess;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  if (!comm)
    return ncclFail(ncclInvalidArgument,
                    "ncclCommWindowDeregister: a null communicator");
  Window *window = nullptr;
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.windows.find(win); // not read: it may be freed
    if (it == r.windows.end())
      return ncclFail(ncclInvalidArgument,
                      "ncclCommWindowDeregister of a window that "
                      "ncclCommWindowRegister did not make, or that was "
                      "deregistered");
    window = it->second;
    r.windows.erase(it);
    auto a = r.allocations.find(window->allocation);
    if (a != r.allocations.end())
      a->second.windows--;
  }
  for (const Mapping &m : window->peers) {
    unregisterDeviceMemory(m.at);
    munmap(m.start, m.length);
  }
  window->magic = 0;
  delete window;
  delete win;
  return ncclSuccess;
}

ncclResult_t ncclDevCommCreate(ncclComm_t comm,
                               const ncclDevCommRequirements_t *reqs,
                               ncclDevComm_t *outDevComm) {
  const char *call = "ncclDevCommCreate";
  if (!comm)
    return ncclFail(ncclInvalidArgument,
                    "ncclDevCommCreate: a null communicator");
  Refusal refuse;
  int nBarriers = 0;
  if (!reqs || !outDevComm) {
    refuse(ncclInvalidArgument, "null requirements or a null output");
  } else {
    if (reqs->resourceRequirementsList || reqs->teamRequirementsList)
      refuse(ncclInvalidUsage,
             "resource and team requirement lists are not emulated");
    if (reqs->lsaMultimem)
      refuse(ncclInvalidUsage, "multimem (NVLS, lsaMultimem) is not "
                               "emulated");
    if (reqs->ginForceEnable || reqs->ginSignalCount != 0 ||
        reqs->ginCounterCount != 0 || reqs->railGinBarrierCount != 0)
      refuse(ncclInvalidUsage,
             "GIN (ginForceEnable, ginSignalCount, ginCounterCount, "
             "railGinBarrierCount) is not emulated");
    // A communicator without symmetric memory, as NCCL makes one where the
    // local ranks are not all CUDA P2P reachable or cuMem is off (seen on
    // one H200 with NCCL 2.28.3): refused, with NCCL's words.
    if (const char *off = std::getenv("COCONET_EMU_NO_SYMMETRIC");
        off && *off && std::strcmp(off, "0") != 0)
      refuse(ncclInvalidUsage, "Communicator does not support symmetric "
                               "memory! (COCONET_EMU_NO_SYMMETRIC)");
    if (reqs->barrierCount < 0 || reqs->lsaBarrierCount < 0)
      refuse(ncclInvalidArgument, "a negative barrier count");
    else
      nBarriers = std::max(reqs->barrierCount, reqs->lsaBarrierCount);
  }
  checkComm(comm, refuse);
  if (ncclResult_t r =
          agree(call, comm->comm, refuse, static_cast<uint64_t>(nBarriers),
                "the LSA barrier count");
      r != ncclSuccess)
    return r;

  // The counters: made and zeroed by rank 0, mapped by every rank.
  const size_t bytes =
      roundUp(static_cast<size_t>(std::max(nBarriers, 1)) *
                  static_cast<size_t>(comm->size) * sizeof(uint64_t),
              kGranularity);
  FileRef file;
  std::string why;
  if (comm->rank == 0) {
    file.pid = static_cast<int>(getpid());
    file.fd = createSharedFile(bytes, &why); // zeroed
  }
  MPI_Bcast(&file, sizeof file, MPI_BYTE, 0, comm->comm);
  Barriers b;
  int mapped = 0;
  if (file.fd < 0) {
    if (comm->rank != 0)
      why = "rank 0 could not make the barriers' memory (see its message)";
  } else {
    mapped = mapSharedFile(file, 0, bytes, &b.mapping, &why) ? 1 : 0;
  }
  // Every rank has mapped the counters (then rank 0's descriptor can go),
  // or every rank fails.
  int everyone = 0;
  MPI_Allreduce(&mapped, &everyone, 1, MPI_INT, MPI_MIN, comm->comm);
  if (comm->rank == 0 && file.fd >= 0)
    close(file.fd);
  if (!everyone) {
    if (mapped)
      munmap(b.mapping.start, b.mapping.length);
    return ncclFail(ncclSystemError,
                    std::string(call) + ": " +
                        (mapped ? "another rank could not map the barriers "
                                  "(see its message)"
                                : "the barriers' memory: " + why));
  }
  b.counters = reinterpret_cast<uint64_t *>(b.mapping.at);
  b.nBarriers = nBarriers;
  b.nRanks = comm->lsaSize;
  b.rank = comm->lsaRank;
  uint32_t id = 0;
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    id = r.nextBarriers++;
    r.barriers[id] = b;
  }
  std::memset(static_cast<void *>(outDevComm), 0, sizeof *outDevComm);
  outDevComm->rank = comm->rank;
  outDevComm->nRanks = comm->size;
  outDevComm->nRanks_rcp32 =
      nccl::utility::idivRcp32(static_cast<uint32_t>(comm->size));
  outDevComm->lsaRank = comm->lsaRank;
  outDevComm->lsaSize = comm->lsaSize;
  outDevComm->lsaSize_rcp32 =
      nccl::utility::idivRcp32(static_cast<uint32_t>(comm->lsaSize));
  outDevComm->lsaBarrier.bufHandle = id;
  outDevComm->lsaBarrier.nBarriers = nBarriers;
  return ncclSuccess;
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t *devComm) {
  if (!comm || !devComm)
    return ncclFail(ncclInvalidArgument,
                    "ncclDevCommDestroy: a null communicator or device "
                    "communicator");
  Barriers b;
  {
    Records &r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.barriers.find(devComm->lsaBarrier.bufHandle);
    if (it == r.barriers.end())
      return ncclFail(ncclInvalidArgument,
                      "ncclDevCommDestroy of a device communicator that "
                      "ncclDevCommCreate did not make, or that was "
                      "destroyed");
    b = it->second;
    r.barriers.erase(it);
  }
  munmap(b.mapping.start, b.mapping.length);
  return ncclSuccess;
}

ncclTeam_t ncclTeamLsa(ncclComm_t comm) {
  ncclTeam_t team;
  team.nRanks = comm->lsaSize;
  team.rank = comm->lsaRank;
  team.stride = 1;
  return team;
}

ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  ncclTeam_t team;
  team.nRanks = comm->size;
  team.rank = comm->rank;
  team.stride = 1;
  return team;
}

} // extern "C"
