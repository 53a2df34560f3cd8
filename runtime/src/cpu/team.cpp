//===- team.cpp - a mesh axis's members on one shared-memory window -------===//
//
// Each member's part: a 64-byte header (its barrier count) and then its
// bytes. The window is locked for the whole lifetime (MPI_Win_lock_all,
// no checks), so loads and stores are always allowed; MPI_Win_sync around
// a barrier makes them visible, as the MPI-3 unified model asks.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/team.h"

#include <cstdlib>
#include <string>

namespace coconet::rt::cpu {
namespace {
constexpr size_t kHeader = 64;
} // namespace

#define COCONET_TEAM_MPI_CHECK(call)                                           \
  do {                                                                         \
    int coconet_rc_ = (call);                                                  \
    if (coconet_rc_ != MPI_SUCCESS)                                            \
      return mpiStatus(coconet_rc_, #call, __FILE__, __LINE__);                \
  } while (0)

Status Team::create(const Mesh &mesh, int axis, size_t bytes,
                    std::unique_ptr<Team> *out, std::string *why) {
  out->reset();
  MPI_Comm comm = mesh.communicator(axis);
  int rank = 0, size = 1;
  COCONET_TEAM_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COCONET_TEAM_MPI_CHECK(MPI_Comm_size(comm, &size));
  // The members that share this member's node, in the axis's order.
  MPI_Comm node = MPI_COMM_NULL;
  COCONET_TEAM_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank,
                                             MPI_INFO_NULL, &node));
  int nodeSize = 1;
  COCONET_TEAM_MPI_CHECK(MPI_Comm_size(node, &nodeSize));
  // The vote: a team only if every member's node holds the whole axis
  // (and COCONET_TEAM=off does not force the fallback).
  const char *setting = std::getenv("COCONET_TEAM");
  const bool off = setting && std::string(setting) == "off";
  int whole = nodeSize == size && !off ? 1 : 0, all = 0;
  COCONET_TEAM_MPI_CHECK(
      MPI_Allreduce(&whole, &all, 1, MPI_INT, MPI_MIN, comm));
  if (!all && off) {
    MPI_Comm_free(&node);
    *why = "COCONET_TEAM=off";
    return Status::success();
  }
  if (!all) {
    MPI_Comm_free(&node);
    *why = "the " + std::to_string(size) +
           " members of the axis do not share one node (this member's node "
           "holds " +
           std::to_string(nodeSize) + ")";
    return Status::success();
  }
  std::unique_ptr<Team> team(new Team());
  team->node_ = node;
  team->rank_ = rank;
  team->bytes_ = bytes;
  char *mine = nullptr;
  COCONET_TEAM_MPI_CHECK(
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(kHeader + bytes), 1,
                              MPI_INFO_NULL, node, &mine, &team->window_));
  COCONET_TEAM_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, team->window_));
  for (int m = 0; m < size; ++m) {
    MPI_Aint partBytes = 0;
    int unit = 1;
    char *base = nullptr;
    COCONET_TEAM_MPI_CHECK(
        MPI_Win_shared_query(team->window_, m, &partBytes, &unit, &base));
    team->arrivals_.push_back(reinterpret_cast<uint64_t *>(base));
    team->parts_.push_back(base + kHeader);
  }
  __atomic_store_n(team->arrivals_[static_cast<size_t>(rank)], 0,
                   __ATOMIC_RELEASE);
  COCONET_TEAM_MPI_CHECK(MPI_Win_sync(team->window_));
  COCONET_TEAM_MPI_CHECK(MPI_Barrier(node)); // every count zero first
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

void Team::barrier() {
  MPI_Win_sync(window_);
  const uint64_t mine = __atomic_add_fetch(
      arrivals_[static_cast<size_t>(rank_)], 1, __ATOMIC_ACQ_REL);
  for (uint64_t *count : arrivals_)
    while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < mine) {
    }
  MPI_Win_sync(window_);
}

} // namespace coconet::rt::cpu
