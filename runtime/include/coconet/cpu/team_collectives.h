//===- cpu/team_collectives.h - collectives on a team's window --*- C++ -*-===//
//
// Allreduce, reducescatter, allgather and alltoall among the members of a
// cpu::Team (cpu/team.h) through their shared-memory window instead of
// MPI: each
// member copies its input into its part of the window, meets the others at
// the team's barrier, and reads its peers' parts with plain loads. They are
// the exact collectives of cpu/runtime.h by other means: every element is
// combined from the members' values in the members' order by the same
// functions (combineMembers), so the results are bit for bit those of
// Mesh::allReduce, Mesh::reduceScatter, Mesh::allGather and
// Mesh::allToAll (and of the simulator). Two algorithms for allreduce:
//
//   OneShot  every member combines every member's whole input into its
//            output: one round of barriers, each member reads P times the
//            data (the least latency, for small messages);
//   TwoShot  member j combines block j of every member (the count split as
//            Mesh::allReduce splits it) into a second region of its part,
//            and every member then copies every member's block out: each
//            member reads about twice the data whatever P is, with one
//            barrier more (for large messages).
//
// reduceScatter is one shot (member j combines block j of every member),
// allGather copies every member's block out, and allToAll copies block j
// of every member's part out (one shot: the shared-memory alltoall of a
// mixture-of-experts layer).
//
// Data larger than what the window holds at once runs in pieces: ranges of
// element positions, in order, each as the whole collective would run;
// the combine is per element, so the bits do not depend on the pieces.
// team*WindowBytes() say how large a window runs a collective in one piece
// (what a caller gives Team::create); any window of at least their value
// for one element works.
//
// Every member calls a collective with the same arguments (but its buffers)
// from one thread, outside a parallel region; the work between the barriers
// is shared by OpenMP's threads. Arguments are checked before any barrier,
// so a refusal of what every member passes alike (counts, types, operators,
// the window's size) is the same on every member and none waits; a refusal
// of one member's pointers leaves its peers at the barrier, which gives up
// after its time limit (cpu/team.h). The buffers: `out` lies outside the
// window; `in` lies outside it too, or is exactly this member's part
// (team.local()), the input already in place, when the collective fits the
// window in one piece (its copy is then skipped). A team of one member
// moves `in` to `out` (nothing when they are the same memory).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_TEAM_COLLECTIVES_H
#define COCONET_RUNTIME_CPU_TEAM_COLLECTIVES_H

#include "coconet/cpu/team.h"
#include "coconet/status.h"
#include "coconet/types.h"

#include <cstddef>
#include <cstdint>

namespace coconet::rt::cpu {

enum class TeamAlgorithm {
#define TEAM_ALGORITHM(Name, Printed) Name,
#include "coconet/team_algorithms.def"
};

/// "one-shot" or "two-shot".
const char *teamAlgorithmName(TeamAlgorithm algorithm);

/// The bytes of window (Team::bytes()) with which an allreduce of `count`
/// elements of `dtype` among `members` runs in one piece: one-shot
/// count * size; two-shot that plus one block of ceil(count / members)
/// elements. SIZE_MAX where that overflows; 0 for a bad argument (a
/// negative count or member count, an unknown type or algorithm).
size_t teamAllReduceWindowBytes(TeamAlgorithm algorithm, int64_t count,
                                DType dtype, int64_t members);
/// The same for reduceScatter: every member's whole input,
/// countPerRank * members elements.
size_t teamReduceScatterWindowBytes(int64_t countPerRank, DType dtype,
                                    int64_t members);
/// The same for allGather: one block, countPerRank elements.
size_t teamAllGatherWindowBytes(int64_t countPerRank, DType dtype);
/// The same for allToAll: every block, countPerRank * members elements.
size_t teamAllToAllWindowBytes(int64_t countPerRank, DType dtype,
                               int64_t members);

/// Every member gets the combination of all members' `count` elements
/// (Mesh::allReduce's result). `in == out` is allowed.
Status teamAllReduce(Team &team, TeamAlgorithm algorithm, const void *in,
                     void *out, int64_t count, DType dtype, ReduceOp op);
/// Member i gets block i (`countPerRank` elements) of the combination of
/// all members' `countPerRank * P` elements (Mesh::reduceScatter's).
Status teamReduceScatter(Team &team, const void *in, void *out,
                         int64_t countPerRank, DType dtype, ReduceOp op);
/// Every member gets the members' `countPerRank`-element blocks
/// concatenated in member order. `in` may be this member's block of `out`.
Status teamAllGather(Team &team, const void *in, void *out,
                     int64_t countPerRank, DType dtype);
/// Member i sends block j (`countPerRank` elements) of its `countPerRank *
/// P` to member j, which gets the blocks sent to it in member order
/// (Mesh::allToAll's result): each member copies its blocks into its part,
/// and after the barrier copies block i of every member's part out.
Status teamAllToAll(Team &team, const void *in, void *out, int64_t countPerRank,
                    DType dtype);

} // namespace coconet::rt::cpu

#endif // COCONET_RUNTIME_CPU_TEAM_COLLECTIVES_H
