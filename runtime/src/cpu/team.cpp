//===- team.cpp - a mesh axis's members on one shared-memory window -------===//
//
// Each member's part: a 64-byte header (its barrier count) and then its
// bytes. The window is locked for the whole lifetime (MPI_Win_lock_all,
// no checks), so loads and stores are always allowed; MPI_Win_sync around
// a barrier makes them visible, as the MPI-3 unified model asks.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/team.h"

#include "coconet/arrivals.h"
#include "coconet/environment.h"

#include "../mpi_error.h"

#include <sys/statvfs.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace coconet::rt::cpu {
namespace {
/// A member's window: its barrier count, then its part at the first
/// kAlign boundary kHeader bytes on. MPI_Win_allocate_shared promises no
/// alignment (Open MPI's windows start 8 or 16 bytes past one), and a part
/// that is not on a cache line's boundary splits every vector load and
/// store of a fused kernel in two.
constexpr size_t kHeader = 64;
constexpr size_t kAlign = 64;
/// Where MPI implementations keep shared-memory windows on Linux.
constexpr const char *kSharedMemory = "/dev/shm";

/// The bytes free in kSharedMemory (COCONET_TEAM_SHM_BYTES, where set,
/// says how many instead); unlimited where it cannot be read.
unsigned long long sharedMemoryRoom() {
  if (const char *v = std::getenv("COCONET_TEAM_SHM_BYTES"); v && *v) {
    uint64_t n = 0;
    if (parseWholeNumber(v, 0, UINT64_MAX, &n))
      return n;
  }
  struct statvfs fs;
  if (statvfs(kSharedMemory, &fs) != 0)
    return ULLONG_MAX;
  return static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
}
} // namespace

Status Team::create(const Mesh &mesh, int axis, size_t bytes,
                    std::unique_ptr<Team> *out, std::string *why) {
  out->reset();
  MPI_Comm comm = mesh.communicator(axis);
  int rank = 0, size = 1;
  COCONET_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COCONET_MPI_CHECK(MPI_Comm_size(comm, &size));
  // The members that share this member's node, in the axis's order.
  MPI_Comm node = MPI_COMM_NULL;
  COCONET_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank,
                                        MPI_INFO_NULL, &node));
  int nodeSize = 1;
  COCONET_MPI_CHECK(MPI_Comm_size(node, &nodeSize));
  // The vote: a team only if COCONET_TEAM=off does not force the
  // fallback, every member's node holds the whole axis, and the node's
  // shared memory has room for every member's part (MPI keeps the window
  // in /dev/shm; one too small made Open MPI warn and then hang). The
  // largest reason any member has wins.
  const char *setting = std::getenv("COCONET_TEAM");
  const bool off = setting && std::string(setting) == "off";
  // Each member allocates its header, its part and room to align it.
  const size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  const unsigned long long need =
      static_cast<unsigned long long>(nodeSize) *
      (kHeader + kAlign + static_cast<unsigned long long>(padded));
  const unsigned long long room = sharedMemoryRoom();
  enum : int { kTeam = 0, kNoRoom, kNotShared, kOff };
  int vote = off                ? kOff
             : nodeSize != size ? kNotShared
             : need > room      ? kNoRoom
                                : kTeam;
  int worst = vote;
  COCONET_MPI_CHECK(MPI_Allreduce(&vote, &worst, 1, MPI_INT, MPI_MAX, comm));
  if (worst != kTeam) {
    MPI_Comm_free(&node);
    if (worst == kOff)
      *why = "COCONET_TEAM=off";
    else if (worst == kNotShared)
      *why = "the " + std::to_string(size) +
             " members of the axis do not share one node" +
             (vote == kNotShared ? " (this member's node holds " +
                                       std::to_string(nodeSize) + ")"
                                 : std::string());
    else
      *why = "the node's shared memory (" + std::string(kSharedMemory) +
             ") has not room for the team's window" +
             (vote == kNoRoom ? " (" + std::to_string(need) + " bytes, " +
                                    std::to_string(room) + " free)"
                              : std::string(" on some member"));
    return Status::success();
  }
  std::unique_ptr<Team> team(new Team());
  team->node_ = node;
  team->rank_ = rank;
  team->bytes_ = bytes;
  char *mine = nullptr;
  COCONET_MPI_CHECK(
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(kHeader + kAlign + padded),
                              1, MPI_INFO_NULL, node, &mine, &team->window_));
  COCONET_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, team->window_));
  for (int m = 0; m < size; ++m) {
    MPI_Aint partBytes = 0;
    int unit = 1;
    char *base = nullptr;
    COCONET_MPI_CHECK(
        MPI_Win_shared_query(team->window_, m, &partBytes, &unit, &base));
    team->arrivals_.push_back(reinterpret_cast<uint64_t *>(base));
    // The same boundary in every process: the segment is mapped at page
    // boundaries, so an address's offset within a cache line is the same
    // in each.
    const uintptr_t at = reinterpret_cast<uintptr_t>(base + kHeader);
    team->parts_.push_back(base + kHeader + (kAlign - at % kAlign) % kAlign);
  }
  __atomic_store_n(team->arrivals_[static_cast<size_t>(rank)], 0,
                   __ATOMIC_RELEASE);
  COCONET_MPI_CHECK(MPI_Win_sync(team->window_));
  COCONET_MPI_CHECK(MPI_Barrier(node)); // every count zero first
  *out = std::move(team);
  return Status::success();
}

Team::~Team() {
  if (window_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
  }
  if (node_ != MPI_COMM_NULL)
    MPI_Comm_free(&node_);
}

double Team::timeLimit() { return secondsFromEnv("COCONET_TEAM_TIMEOUT", 600); }

bool Team::barrierWithin(double seconds, int *late) {
  MPI_Win_sync(window_);
  const uint64_t mine = arrive(arrivals_[static_cast<size_t>(rank_)]);
  const int missing =
      waitForArrivals([&](int m) { return arrivals_[static_cast<size_t>(m)]; },
                      static_cast<int>(arrivals_.size()), mine, seconds);
  if (missing >= 0) {
    if (late)
      *late = missing;
    return false;
  }
  MPI_Win_sync(window_);
  return true;
}

void Team::barrier() {
  static const double limit = timeLimit();
  int late = -1;
  if (barrierWithin(limit, &late))
    return;
  std::fprintf(stderr,
               "coconet: a team barrier waited %.0f s for member %d of %d "
               "(member %d waits): it died or hangs; aborting "
               "(COCONET_TEAM_TIMEOUT sets the limit)\n",
               limit, late, size(), rank_);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

} // namespace coconet::rt::cpu
