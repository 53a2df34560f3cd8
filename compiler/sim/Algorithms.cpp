//===- Algorithms.cpp - collectives run by an algorithm file --------------===//
//
// A collective a schedule runs with an algorithm file (ir/AlgorithmTable.h)
// computes what the algorithm computes: a gather or an all-to-all moves
// values (the simulator's plain collective gives the same), a reduction
// combines its members' values in the algorithm's order, the receiver's
// value first, rounded to the element type at each combine. The buffers
// are the flat blocks the targets hand the runtime (docs/synth.md,
// "Algorithms in schedules"): the input cut into the algorithm's chunks,
// a reducescatter's input packed so that member j's block is contiguous.
//
//===----------------------------------------------------------------------===//

#include "sim/SimImpl.h"

#include "coconet/combine.h"
#include "ir/AlgorithmTable.h"

#include "llvm/Support/FormatVariadic.h"

namespace coconet::sim::detail {

AlgorithmRun::AlgorithmRun(const ir::AlgorithmTable &table) : table(table) {
  perChunk.resize(table.numChunks());
  for (size_t s = 0; s < table.steps.size(); ++s)
    for (const ir::AlgorithmTable::Transfer &t : table.steps[s])
      if (t.chunk < perChunk.size())
        perChunk[t.chunk].push_back({static_cast<uint32_t>(s), t});
}

llvm::Error AlgorithmRun::check(const ir::Stage &stage, llvm::StringRef axis,
                                int64_t members, int64_t inputElements) const {
  if (members != static_cast<int64_t>(table.ranks))
    return llvm::createStringError(
        llvm::formatv("{0} '{1}': the algorithm in '{2}' is for {3} ranks; "
                      "{4} has {5}",
                      ir::stageKindName(stage.kind), stage.name, table.file,
                      table.ranks, axis, members)
            .str());
  const uint64_t chunks = table.inputChunks();
  if (inputElements % static_cast<int64_t>(chunks) != 0)
    return llvm::createStringError(
        llvm::formatv("{0} '{1}': the algorithm in '{2}' cuts each rank's "
                      "input into {3} chunks, and {4} elements are not a "
                      "multiple of {3}",
                      ir::stageKindName(stage.kind), stage.name, table.file,
                      chunks, inputElements)
            .str());
  return llvm::Error::success();
}

ir::Scalar AlgorithmRun::value(
    uint64_t chunk, llvm::ArrayRef<ir::Scalar> contributions, unsigned rank,
    llvm::function_ref<ir::Scalar(ir::Scalar, ir::Scalar)> combine) const {
  const unsigned R = table.ranks;
  held.assign(contributions.begin(), contributions.end());
  const auto &transfers = perChunk[chunk];
  for (size_t x = 0; x < transfers.size();) {
    // One step: every transfer reads the values before any of them lands.
    size_t end = x;
    while (end < transfers.size() && transfers[end].step == transfers[x].step)
      ++end;
    sent.clear();
    for (size_t y = x; y < end; ++y)
      sent.push_back(held[transfers[y].transfer.src % R]);
    for (size_t y = x; y < end; ++y) {
      const ir::AlgorithmTable::Transfer &t = transfers[y].transfer;
      ir::Scalar &to = held[t.dst % R];
      to = t.reduce ? combine(to, sent[y - x]) : sent[y - x];
    }
    x = end;
  }
  return held[rank];
}

} // namespace coconet::sim::detail
