//===- emu/symmetric.h - device-side communication, emulated ----*- C++ -*-===//
//
// Device-side communication with the emulation's own interface: what
// NCCL's device API gives a kernel on a GPU (symmetric buffers, load/store
// access to a peer's, barriers across the team), here over the ranks of
// one node, each an MPI process, on an MPI-3 shared-memory window
// (MPI_Win_allocate_shared), so a peer's buffer is real memory that loads
// and stores reach and a barrier is real atomics. The CUDA runtime's Team
// (coconet/cuda/team.h), which fused kernels use, does not stand on it:
// it calls NCCL's device API, which the emulation has too
// (nccl_device.h, src/nccl_device.cpp).
//
//   host:   SymmetricWindow::create(comm, bytes, &w)    collective
//           w->local()                                  this rank's bytes
//           w->team()                                   passed to a kernel
//   kernel: peerPointer(team, peer, p)                  p in the peer's
//           teamBarrier(team)                           one thread a block
//
// The window's memory counts as device memory (cudaMalloc's registry), so
// kernels and copies accept it.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_EMU_SYMMETRIC_H
#define COCONET_EMU_SYMMETRIC_H

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace coconet::emu {

/// The most ranks one team holds.
constexpr int kMaxTeam = 64;

/// A kernel's view of a team: its rank and size, every member's window,
/// and the barrier's counters (one per member, in the window's header).
struct Team {
  int rank = 0, size = 1;
  char *base[kMaxTeam] = {};
  size_t bytes = 0;
  /// How many barriers each member has entered (in the members' windows).
  uint64_t *arrivals[kMaxTeam] = {};
};

/// Where `p` (inside this rank's window) is in `peer`'s window.
template <typename T> T *peerPointer(const Team &team, int peer, T *p) {
  const auto offset = reinterpret_cast<const char *>(p) - team.base[team.rank];
  return reinterpret_cast<T *>(team.base[peer] + offset);
}

/// Waits until every member has entered as many barriers as this one
/// (release before, acquire after: writes before a barrier are seen by
/// every member after it). Called by one thread of a block, between
/// __syncthreads, the same number of times on every member. It orders a
/// block after the blocks of the same index on the peers, nothing more: a
/// block may read what the peers' same block wrote before the barrier (as
/// NCCL's one LSA barrier per block), not what other blocks write (they
/// run one after another here, and in no promised order on a GPU).
void teamBarrier(const Team &team);

/// Memory every member of a team allocates alike.
class SymmetricWindow {
public:
  /// Collective over `comm`, whose ranks must share memory (one node:
  /// MPI_Comm_split_type with MPI_COMM_TYPE_SHARED); `bytes` the same on
  /// every rank.
  static cudaError_t create(MPI_Comm comm, size_t bytes,
                            std::unique_ptr<SymmetricWindow> *out);
  /// Collective (MPI_Win_free).
  ~SymmetricWindow();
  SymmetricWindow(const SymmetricWindow &) = delete;
  SymmetricWindow &operator=(const SymmetricWindow &) = delete;

  void *local() const { return team_.base[team_.rank]; }
  const Team &team() const { return team_; }

private:
  SymmetricWindow() = default;
  MPI_Win window_ = MPI_WIN_NULL;
  Team team_;
};

} // namespace coconet::emu

#endif // COCONET_EMU_SYMMETRIC_H
