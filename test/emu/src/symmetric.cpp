//===- symmetric.cpp - symmetric memory on an MPI-3 shared window ---------===//
//
// Each member's part of the window: a 64-byte header (its barrier count)
// and then its `bytes`. Members find each other's parts with
// MPI_Win_shared_query once, when the window is made.
//
//===----------------------------------------------------------------------===//

#include "coconet/emu/symmetric.h"
#include "coconet/emu/device.h"
#include "emu_internal.h"

#include <string>

namespace coconet::emu {
namespace {
constexpr size_t kHeader = 64;
} // namespace

void teamBarrier(const Team &team) {
  const uint64_t mine =
      __atomic_add_fetch(team.arrivals[team.rank], 1, __ATOMIC_ACQ_REL);
  for (int p = 0; p < team.size; ++p)
    while (__atomic_load_n(team.arrivals[p], __ATOMIC_ACQUIRE) < mine) {
    }
}

cudaError_t SymmetricWindow::create(MPI_Comm comm, size_t bytes,
                                    std::unique_ptr<SymmetricWindow> *out) {
  std::unique_ptr<SymmetricWindow> w(new SymmetricWindow());
  Team &t = w->team_;
  MPI_Comm_rank(comm, &t.rank);
  MPI_Comm_size(comm, &t.size);
  if (t.size > kMaxTeam)
    return fail(cudaErrorInvalidValue, ("a team of " + std::to_string(t.size) +
                                        " ranks; the emulation holds at most " +
                                        std::to_string(kMaxTeam))
                                           .c_str());
  char *mine = nullptr;
  if (MPI_Win_allocate_shared(static_cast<MPI_Aint>(kHeader + bytes), 1,
                              MPI_INFO_NULL, comm, &mine,
                              &w->window_) != MPI_SUCCESS)
    return fail(cudaErrorMemoryAllocation,
                "MPI_Win_allocate_shared failed (do the ranks share a "
                "node?)");
  t.bytes = bytes;
  for (int p = 0; p < t.size; ++p) {
    MPI_Aint size = 0;
    int unit = 1;
    char *base = nullptr;
    MPI_Win_shared_query(w->window_, p, &size, &unit, &base);
    t.arrivals[p] = reinterpret_cast<uint64_t *>(base);
    t.base[p] = base + kHeader;
  }
  __atomic_store_n(t.arrivals[t.rank], 0, __ATOMIC_RELEASE);
  registerDeviceMemory(t.base[t.rank], bytes);
  MPI_Barrier(comm); // every header zeroed before any barrier
  *out = std::move(w);
  return cudaSuccess;
}

SymmetricWindow::~SymmetricWindow() {
  unregisterDeviceMemory(team_.base[team_.rank]);
  MPI_Win_free(&window_);
}

} // namespace coconet::emu
