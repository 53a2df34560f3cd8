//===- cuda/team_collectives.h - one- and two-shot collectives --*- C++ -*-===//
//
// The CUDA target's collectives other than NCCL's own: what a schedule's
// `algorithm(s, oneshot|twoshot)` asks for (docs/schedules.md). Each runs
// on a Team of the axis's members (cuda/team.h: symmetric memory and a
// barrier per block on NCCL's device API) as one kernel:
//
//   allReduce  oneshot  every member combines every member's elements;
//              twoshot  member j combines block j of every member, in its
//                       own symmetric memory, then every member gathers
//                       the combined blocks;
//   reduceScatter       member j combines block j of every member (one
//                       shot; twoshot is the same);
//   allGather           every member copies every member's block (one
//                       shot; twoshot is the same);
//   allToAll            every member copies its block of every member's
//                       blocks (one shot; twoshot is the same).
//
// The input is first copied into the team's symmetric memory (on the
// stream, device to device), so any device pointers may be passed; calls
// larger than the window (COCONET_TEAM_ALGORITHM_BYTES, default 32 MiB)
// run in pieces. Members are combined in ascending order with the
// simulator's rule (coconet/combine.h): the simulator's bits, where NCCL's
// own collectives combine in the order of their rings and trees. Where no
// team can be made (create() says why), every call runs NCCL's collective
// instead. Asynchronous on `stream`, like NCCL's calls; collective over
// the axis.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_TEAM_COLLECTIVES_H
#define COCONET_RUNTIME_CUDA_TEAM_COLLECTIVES_H

#include "coconet/cuda/runtime.h"
#include "coconet/types.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace coconet::rt::cuda {

class Team;

class TeamCollectives {
public:
  enum class Algorithm {
#define TEAM_ALGORITHM(Name, Printed) Name,
#include "coconet/team_algorithms.def"
  };

  /// A team for each axis in `axes` (-1: the world) of `mesh`, with a
  /// window of `windowBytes` (0: COCONET_TEAM_ALGORITHM_BYTES, else 32
  /// MiB). Collective over the mesh; synchronises the host (setup, not a
  /// step). `mesh` must outlive the object.
  static Status create(const Mesh &mesh, const std::vector<int> &axes,
                       size_t windowBytes,
                       std::unique_ptr<TeamCollectives> *out);
  ~TeamCollectives();
  TeamCollectives(const TeamCollectives &) = delete;
  TeamCollectives &operator=(const TeamCollectives &) = delete;

  /// How `axis` runs: "a team of N members" or "NCCL's collectives
  /// (WHY)".
  std::string path(int axis) const;

  /// Every member gets the combination of all members' `count` elements.
  /// `in == out` is allowed.
  Status allReduce(const void *in, void *out, int64_t count, DType dtype,
                   ReduceOp op, int axis, Algorithm algorithm,
                   cudaStream_t stream);
  /// Member j gets block j (`countPerRank` elements) of the combination of
  /// all members' `countPerRank * P` elements.
  Status reduceScatter(const void *in, void *out, int64_t countPerRank,
                       DType dtype, ReduceOp op, int axis, Algorithm algorithm,
                       cudaStream_t stream);
  /// Every member gets the members' `countPerRank`-element blocks in
  /// member order. `in` may be this member's block of `out`.
  Status allGather(const void *in, void *out, int64_t countPerRank, DType dtype,
                   int axis, Algorithm algorithm, cudaStream_t stream);
  /// Member i's block j (`countPerRank` elements of its `countPerRank * P`)
  /// goes to member j, which gets them in member order (ncclAlltoAll's
  /// result): one shot, every member's blocks through the window.
  Status allToAll(const void *in, void *out, int64_t countPerRank, DType dtype,
                  int axis, Algorithm algorithm, cudaStream_t stream);

private:
  TeamCollectives() = default;
  /// The team of `axis`, or null (the reason in why_).
  Team *team(int axis) const;

  const Mesh *mesh_ = nullptr;
  size_t windowBytes_ = 0;
  std::vector<int> axes_;
  std::vector<std::unique_ptr<Team>> teams_;
  std::vector<std::string> why_;
};

} // namespace coconet::rt::cuda

#endif // COCONET_RUNTIME_CUDA_TEAM_COLLECTIVES_H
