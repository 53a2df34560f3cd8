//===- cpu/team.h - the members of a mesh axis sharing memory ---*- C++ -*-===//
//
// What a fused collective kernel on the CPU target uses to reach its peers
// directly (the CPU counterpart of NCCL's device API): the members of one
// mesh axis, when they run on one node, share an MPI-3 shared-memory
// window (MPI_Win_allocate_shared) of the same size on every member, so a
// member reads and writes a peer's part with plain loads and stores, and a
// barrier is a counter per member in the window (release/acquire atomics).
//
// When the axis's members do not share a node, or the node's shared
// memory (/dev/shm, where MPI keeps such windows) has not room for the
// window, there is no team: create() says why and the caller takes the MPI
// collectives instead (the fallback). All members vote, so they all take
// the same path. The environment variable COCONET_TEAM=off forces the
// fallback (on every member: the same environment, as mpirun gives);
// COCONET_TEAM_SHM_BYTES=N counts N bytes free in /dev/shm instead of what
// the file system says (where it says wrong, and for tests).
//
// A barrier waits at most COCONET_TEAM_TIMEOUT seconds (default 600) for
// the other members: a member that died or hangs makes the others print
// which member they waited for and abort the job (MPI_Abort), instead of
// waiting for ever.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_TEAM_H
#define COCONET_RUNTIME_CPU_TEAM_H

#include "coconet/cpu/runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace coconet::rt::cpu {

class Team {
public:
  /// Collective over the members of `axis` (-1: the world) of `mesh`: a
  /// window of `bytes` (the same on every member) on each. When the
  /// members do not all share a node, `*out` is null and `*why` says so
  /// (on every member); an MPI failure is an error status.
  static Status create(const Mesh &mesh, int axis, size_t bytes,
                       std::unique_ptr<Team> *out, std::string *why);
  /// Collective (MPI_Win_free).
  ~Team();
  Team(const Team &) = delete;
  Team &operator=(const Team &) = delete;

  /// This member's position along the axis, and the axis's size.
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(parts_.size()); }
  size_t bytes() const { return bytes_; }
  /// This member's part of the window, and member `m`'s.
  void *local() const { return parts_[static_cast<size_t>(rank_)]; }
  void *part(int m) const { return parts_[static_cast<size_t>(m)]; }
  /// Where `p` (inside this member's part) is in member `m`'s part.
  template <typename T> T *peer(int m, T *p) const {
    const auto offset =
        reinterpret_cast<const char *>(p) - static_cast<const char *>(local());
    return reinterpret_cast<T *>(static_cast<char *>(part(m)) + offset);
  }
  /// Waits until every member has called barrier() as often as this one:
  /// what a member wrote into the window before it, every member reads
  /// after it. One thread of a member calls it (not inside a parallel
  /// region's other threads). After COCONET_TEAM_TIMEOUT seconds (default
  /// 600) without every member, prints which it waited for and aborts the
  /// job.
  void barrier();
  /// barrier() waiting at most `seconds`: false when some member had not
  /// arrived by then (its position in `*late`); this member's arrival
  /// counts all the same, so the team is of no further use.
  bool barrierWithin(double seconds, int *late = nullptr);
  /// The time limit of barrier(): COCONET_TEAM_TIMEOUT, else 600 s.
  static double timeLimit();

private:
  Team() = default;
  MPI_Comm node_ = MPI_COMM_NULL; ///< owned: the axis, known to share memory
  MPI_Win window_ = MPI_WIN_NULL;
  int rank_ = 0;
  size_t bytes_ = 0;
  std::vector<char *> parts_;
  std::vector<uint64_t *> arrivals_; ///< barrier counts, one per member
};

} // namespace coconet::rt::cpu

#endif // COCONET_RUNTIME_CPU_TEAM_H
