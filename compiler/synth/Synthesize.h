//===- Synthesize.h - collective algorithms from a topology and a sketch -*- C++
//-*-===//
//
// TACCL's three stages (docs/synth.md, "Synthesis"):
//
//  1. routing (Routing.cpp): which links each chunk travels, an MILP over
//     the sketch's logical topology, minimising the time the last chunk
//     arrives under TACCL's alpha-beta cost (a link, and a switch port,
//     carries one chunk at a time), with the sketch's symmetry as
//     equalities and its relays as restrictions;
//  2. ordering (Schedule.cpp): a list schedule of every hop of every
//     route, each link and switch port busy for one chunk's cost;
//  3. steps (Schedule.cpp): the timed hops cut into steps wherever a hop
//     needs a chunk that arrives in the step being built.
//
// AllGather and AllToAll are routed as they are; ReduceScatter is an
// AllGather run backwards with every copy a reduction (routed on the
// machine's links where each has its reverse at the same cost, else on the
// reversed links); AllReduce a ReduceScatter then an AllGather (as TACCL's
// `combine`).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_SYNTHESIZE_H
#define COCONET_SYNTH_SYNTHESIZE_H

#include "synth/Algorithm.h"
#include "synth/Topology.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace coconet::synth {

struct SynthOptions {
  /// The routing MILP's time limit, in seconds (the best routing found is
  /// used when it expires).
  double seconds = 60;
  /// CBC's own log (standard output).
  bool solverLog = false;
  /// Where progress lines go (one a stage), or null.
  llvm::raw_ostream *progress = nullptr;
};

/// What the routing MILP said.
struct RoutingReport {
  unsigned vars = 0, binaries = 0, rows = 0;
  bool optimal = false;
  /// The MILP's makespan and the best bound proved, in microseconds.
  double makespan = 0, bound = 0;
  double seconds = 0;
};

struct Synthesis {
  Algorithm algorithm;
  /// The steps' time on the topology's alpha-beta costs (the list
  /// schedule's makespan), microseconds.
  double time = 0;
  /// One per MILP solved (AllReduce on links that differ in each
  /// direction solves two).
  std::vector<RoutingReport> routings;
  double seconds = 0;
};

/// Synthesises `collective` for `topology` as `sketch` asks; the result has
/// passed verifyAlgorithm. Fails with the reason (a symmetry the topology
/// does not have, a rank no allowed path reaches, no routing in time).
llvm::Expected<Synthesis> synthesize(Collective collective,
                                     const Topology &topology,
                                     const Sketch &sketch,
                                     const SynthOptions &options);

// The stages, for the tests.

/// Each chunk's route: the links (indices into Topology::links) it
/// travels, and when the MILP has it arrive at each link's destination.
struct Route {
  std::vector<unsigned> links;
  std::vector<double> arrival;
};

/// Stage 1 for AllGather or AllToAll with `chunkup` chunks a rank;
/// `reversed`: the topology's links are the reverse of the machine's (a
/// ReduceScatter's), so a relay is named by the link's destination.
llvm::Expected<std::vector<Route>>
routeChunks(Collective collective, const Topology &topology,
            const Sketch &sketch, unsigned chunkup, bool reversed,
            const SynthOptions &options, RoutingReport &report);

/// Stages 2 and 3: the algorithm that sends every route's chunk, and its
/// makespan. `ownFirst` (the sketch's enforce_ordering): on every link
/// between nodes, the chunks its source started with go before any chunk
/// it relays.
Algorithm scheduleRoutes(Collective collective, const Topology &topology,
                         unsigned chunkup, const std::vector<Route> &routes,
                         bool ownFirst, double &makespan);

/// The most chunks one link or switch port carries in `step` (its
/// rounds).
unsigned stepRounds(const Step &step, const Topology &topology);

/// The time `alg` takes on the topology's costs (microseconds): its
/// transfers in step order, each starting when its chunk is complete at
/// its source and its link and switch ports are free, busy for the link's
/// cost.
double algorithmTime(const Algorithm &alg, const Topology &topology);

/// The ring algorithm NCCL runs (AllGather, ReduceScatter, AllReduce), on
/// a ring of the topology's links (a Hamiltonian cycle); nullopt for
/// AllToAll or where no ring is found. The baseline of
/// docs/bench/synth.md.
std::optional<Algorithm> ringAlgorithm(Collective collective,
                                       const Topology &topology,
                                       unsigned chunkup);

/// The tree NCCL runs an AllReduce on: in each node a chain of its GPUs
/// (a path over links present both ways, from GPU 0), between nodes two
/// binary trees of the nodes' GPU 0 (NCCL's double binary tree: the
/// second mirrors the first for an even number of nodes, shifts it by one
/// for an odd), each reducing half the chunks up and sending the sums
/// down, pipelined chunk by chunk. nullopt where the links have no such
/// chain or tree.
std::optional<Algorithm> treeAllReduce(const Topology &topology,
                                       unsigned chunkup);

/// The topology with every link and switch port turned around.
Topology reverseTopology(const Topology &topology);

/// An AllGather on the reversed topology, run backwards: a ReduceScatter
/// on the machine's (two reductions into one copy in one step are put in
/// steps of their own).
Algorithm reverseToReduceScatter(const Algorithm &allGather,
                                 const Topology &topology);

} // namespace coconet::synth

#endif // COCONET_SYNTH_SYNTHESIZE_H
