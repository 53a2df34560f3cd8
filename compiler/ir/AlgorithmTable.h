//===- AlgorithmTable.h - a collective algorithm a schedule names -*- C++ -*-=//
//
// `algorithm(s, "ndv2.alg")` runs collective `s` with the algorithm in an
// algorithm file (docs/synth.md, "Algorithms"; what `coconetc synth`
// writes). Sema reads and checks the file; the IR holds what it says, and
// the simulator, lowering and the targets read it from here. The numbering
// is the file's (and coconet/algorithm.h's): with R ranks and k chunks a
// rank, AllGather, ReduceScatter and AllReduce have R x k chunks, AllToAll
// R x R x k; a step's transfers happen at once, each read before any of
// them lands, then stored or combined (the receiver's value first) in the
// step's order.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_IR_ALGORITHMTABLE_H
#define COCONET_IR_ALGORITHMTABLE_H

#include <cstdint>
#include <string>
#include <vector>

namespace coconet::ir {

/// The collective an algorithm runs (ir::stageKindOf gives its stage kind).
enum class AlgorithmCollective : uint8_t {
  AllGather,
  AllToAll,
  ReduceScatter,
  AllReduce
};

/// Plain data (no IR types): what the plan carries to the code generators.
struct AlgorithmTable {
  /// The file as the schedule names it.
  std::string file;
  /// The algorithm's own name (the file's "name").
  std::string name;
  AlgorithmCollective collective = AlgorithmCollective::AllGather;
  uint32_t ranks = 0, chunksPerRank = 1;
  struct Transfer {
    uint32_t chunk = 0, src = 0, dst = 0;
    bool reduce = false;
  };
  std::vector<std::vector<Transfer>> steps;

  /// R x k, or R x R x k for an AllToAll.
  uint64_t numChunks() const;
  /// Chunks of one rank's input.
  uint64_t inputChunks() const;
  uint64_t numTransfers() const;
};

} // namespace coconet::ir

#endif // COCONET_IR_ALGORITHMTABLE_H
