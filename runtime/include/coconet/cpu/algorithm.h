//===- cpu/algorithm.h - running a collective algorithm over MPI -*- C++
//-*-===//
//
// Runs a collective algorithm table (coconet/algorithm.h, written by
// `coconetc synth --emit=cpp`) among the ranks of an MPI communicator with
// point-to-point messages: step by step, each rank posts a receive for
// every transfer it is the destination of and a send for every transfer it
// is the source of, waits for them, then stores or combines what arrived in
// the step's order. Messages between two ranks are matched in the order
// both post them (the step's transfer order), so one tag serves them all;
// a chunk over 1 GiB goes in pieces.
//
// The results are the algorithm's, bit for bit the same on every run and
// every thread count: copies move bytes; a reduction combines two values
// in f64 (floats) or as 64-bit patterns (integers), the receiver's first,
// and rounds to the element type at once (coconet/combine.h). Avg is not
// offered (the division would need a step the algorithm does not have).
//
// Every rank calls runAlgorithm with the same table, count, type and
// operator, from one thread. Refused (InvalidArgument, before any message)
// when the table's ranks are not the communicator's size, a transfer
// names a rank or chunk out of range, or the type or operator do not fit.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_ALGORITHM_H
#define COCONET_RUNTIME_CPU_ALGORITHM_H

#include "coconet/algorithm.h"
#include "coconet/algorithm_check.h"
#include "coconet/cpu/runtime.h" // MPI's C API
#include "coconet/status.h"
#include "coconet/types.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace coconet::rt::cpu {

/// Runs `table` on this rank: `in` holds algorithm::inputChunks(table)
/// chunks of `chunkElements` elements of `dtype`, `out` room for
/// algorithm::outputChunks(table) of them (neither overlapping the other).
/// `op` matters only for ReduceScatter and AllReduce.
Status runAlgorithm(const algorithm::Table &table, MPI_Comm comm,
                    const void *in, void *out, int64_t chunkElements,
                    DType dtype, ReduceOp op);

/// How a transfer lands (both runners): a reduction combines the arrival
/// into `to` (the receiver's value first, coconet/combine.h, rounded at
/// once), a copy stores it over `to`; `elements` of `dtype`.
void landTransfer(bool reduce, void *to, const void *value, int64_t elements,
                  DType dtype, ReduceOp op);

/// The same among the members of `team` (one node, cpu/team.h) through
/// its shared window instead of messages: per step, every member copies
/// what it receives from the senders' parts into `staging`, a barrier, then
/// lands it in the step's order, a barrier (a transfer no other transfer
/// of the step can disturb lands at once: algorithmTeamDirect). The same bits
/// as runAlgorithm. Chunks run in pieces of algorithmTeamPieceElements elements
/// (the window holds every chunk's piece); `staging` holds at least
/// algorithmTeamStagingBytes. Refused where the window has not room for
/// one element of every chunk (algorithmTeamPieceElements is 0).
class Team;
Status runAlgorithmOnTeam(const algorithm::Table &table, Team &team,
                          const void *in, void *out, int64_t chunkElements,
                          DType dtype, ReduceOp op, void *staging);
int64_t algorithmTeamPieceElements(const algorithm::Table &table,
                                   const Team &team, int64_t chunkElements,
                                   DType dtype);
size_t algorithmTeamStagingBytes(const algorithm::Table &table, int rank,
                                 int64_t pieceElements, DType dtype);
/// Which transfers of step `step` runAlgorithmOnTeam lands at once, while
/// members read (direct[i] for the step's transfer i): those whose source
/// copy no transfer of the step writes and whose destination copy none
/// reads; the others go through staging and a second barrier. `scratch`
/// is working room (reused between calls).
void algorithmTeamDirect(const algorithm::Table &table, uint32_t step,
                         std::vector<uint8_t> &direct,
                         std::vector<std::pair<uint32_t, uint32_t>> &scratch);

} // namespace coconet::rt::cpu

#endif // COCONET_RUNTIME_CPU_ALGORITHM_H
