//===- Algorithm.h - collective algorithms as data, and their check -*- C++
//-*-===//
//
// A collective algorithm (docs/synth.md, "Algorithms"): the ranks, how each
// rank's buffer is cut into chunks, and steps, each a set of transfers
// that happen at once: rank `src` sends chunk `chunk` to rank `dst` over
// their link, and `dst` either stores it (a copy) or combines it into its
// own copy of the chunk (a reduction). What a synthesis writes and what a
// user may edit by hand; `verifyAlgorithm` checks either before anything
// uses it, symbolically (which ranks' contributions each copy of each
// chunk holds), and refuses it with the reason:
//
//  - a transfer over a link the topology does not have, or from a rank
//    that does not hold the chunk yet (a step out of order);
//  - a chunk sent where it already is, two transfers into one copy in one
//    step, a reduction that would count a contribution twice, a reduction
//    in a collective that has none;
//  - a link, or a switch port, carrying more chunks in a step than the
//    step's rounds allow;
//  - a rank that ends without what the collective promises it (a chunk
//    missing, a reduction short of a contribution).
//
// Chunks (SCCL's and TACCL's numbering, with `k` chunks a rank and R
// ranks): AllGather and ReduceScatter R x k chunks, chunk c rank c / k's;
// AllToAll R x R x k, chunk (s * R + d) * k + i going from s to d;
// AllReduce R x k, every rank contributing to every chunk.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_ALGORITHM_H
#define COCONET_SYNTH_ALGORITHM_H

#include "synth/Topology.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace coconet::synth {

enum class Collective { AllGather, AllToAll, ReduceScatter, AllReduce };

/// From TACCL's names, case-insensitive: Allgather, Alltoall,
/// ReduceScatter, Allreduce.
std::optional<Collective> parseCollective(llvm::StringRef name);
llvm::StringRef collectiveName(Collective c);
/// Whether transfers of the collective combine (ReduceScatter, AllReduce).
bool reduces(Collective c);

struct Transfer {
  unsigned chunk = 0, src = 0, dst = 0;
  bool reduce = false; ///< combined into dst's copy, not stored over it
};

struct Step {
  /// How many chunks each link (times its parallel links) and each switch
  /// port may carry in this step.
  unsigned rounds = 1;
  std::vector<Transfer> transfers;
};

struct Algorithm {
  std::string name;
  Collective collective = Collective::AllGather;
  unsigned ranks = 0;
  /// k: the chunks each rank's buffer is cut into (input_chunkup).
  unsigned chunksPerRank = 1;
  std::vector<Step> steps;

  /// How many chunks the collective has.
  unsigned chunks() const;
  /// The rank that holds chunk `c` first (AllGather, AllToAll), or holds
  /// its result (ReduceScatter); every rank for AllReduce's inputs.
  unsigned owner(unsigned c) const;
};

/// Checks `alg` against `topology` (whose ranks it must have); returns the
/// first reason it is wrong, or nullopt when it does what its collective
/// promises.
std::optional<std::string> verifyAlgorithm(const Algorithm &alg,
                                           const Topology &topology);
/// The same checks without a topology (any rank may send to any other,
/// links and switches carry any load): what running the algorithm on a
/// communicator needs, for an algorithm a schedule names.
std::optional<std::string> verifyDataFlow(const Algorithm &alg);

} // namespace coconet::synth

#endif // COCONET_SYNTH_ALGORITHM_H
