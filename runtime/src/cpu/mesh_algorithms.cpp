//===- mesh_algorithms.cpp - a mesh's collectives by a chosen algorithm ---===//
//
// Mesh::allReduce / reduceScatter / allGather / allToAll with a schedule's
// algorithm: one-shot (and two-shot, allreduce) on a team of the axis's members
// (made at the axis's first such call, collectively, as every member makes the
// same calls in the same order), or the library's collective where no team can
// be made. Every path gives the bits of the library's (the combine is the
// same, in member order: cpu/team_collectives.h).
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"
#include "coconet/cpu/team.h"
#include "coconet/cpu/team_collectives.h"
#include "coconet/sizes.h"

#include <string>

namespace coconet::rt::cpu {

Status Mesh::team(int axis, Team **out) {
  const size_t index = axis < 0 ? axes_.size() : static_cast<size_t>(axis);
  if (teams_.size() <= index) {
    teams_.resize(axes_.size() + 1);
    teamTried_.resize(axes_.size() + 1, false);
  }
  if (!teamTried_[index]) {
    teamTried_[index] = true;
    // No team (the members on several nodes, COCONET_TEAM=off, no room):
    // the library's collectives; an MPI failure is an error.
    std::string why;
    COCONET_RETURN_IF_ERROR(Team::create(
        *this, axis, teamAlgorithmWindowBytes(), &teams_[index], &why));
  }
  *out = teams_[index].get();
  return Status::success();
}

Status Mesh::allReduce(const void *in, void *out, int64_t count, DType dtype,
                       ReduceOp op, int axis, Algorithm algorithm) {
  Team *t = nullptr;
  if (algorithm != Algorithm::Library)
    COCONET_RETURN_IF_ERROR(team(axis, &t));
  if (t)
    return teamAllReduce(*t,
                         algorithm == Algorithm::TwoShot
                             ? TeamAlgorithm::TwoShot
                             : TeamAlgorithm::OneShot,
                         in, out, count, dtype, op);
  return allReduce(in, out, count, dtype, op, axis);
}

Status Mesh::reduceScatter(const void *in, void *out, int64_t countPerRank,
                           DType dtype, ReduceOp op, int axis,
                           Algorithm algorithm) {
  Team *t = nullptr;
  if (algorithm != Algorithm::Library)
    COCONET_RETURN_IF_ERROR(team(axis, &t));
  if (t)
    return teamReduceScatter(*t, in, out, countPerRank, dtype, op);
  return reduceScatter(in, out, countPerRank, dtype, op, axis);
}

Status Mesh::allGather(const void *in, void *out, int64_t countPerRank,
                       DType dtype, int axis, Algorithm algorithm) {
  Team *t = nullptr;
  if (algorithm != Algorithm::Library)
    COCONET_RETURN_IF_ERROR(team(axis, &t));
  if (t)
    return teamAllGather(*t, in, out, countPerRank, dtype);
  return allGather(in, out, countPerRank, dtype, axis);
}

Status Mesh::allToAll(const void *in, void *out, int64_t countPerRank,
                      DType dtype, int axis, Algorithm algorithm) {
  Team *t = nullptr;
  if (algorithm != Algorithm::Library)
    COCONET_RETURN_IF_ERROR(team(axis, &t));
  if (t)
    return teamAllToAll(*t, in, out, countPerRank, dtype);
  return allToAll(in, out, countPerRank, dtype, axis);
}

} // namespace coconet::rt::cpu
