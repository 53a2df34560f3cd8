//===- CommonSubexpressionElimination.cpp - compute equal stages once -----===//
//
// Two stages with the same type, kind, attributes, operands and body
// compute the same value (every operation is a pure function of its
// operands, dropout included): the later one's readers read the earlier
// one instead. Results, updates, kernel members and overlapped stages are
// left alone, so the interface and the schedule's structure do not change.
//
// One walk in program order: each stage first reads the survivors of the
// duplicates it reads (so chains of duplicates merge), then is looked up
// by its signature; the duplicates are removed together at the end.
// Linear in the size of the program (and its bodies).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace coconet::passes {
namespace {

class CsePass : public Pass {
public:
  llvm::StringRef getName() const override { return "cse"; }
  LogicalResult run(ir::Program &program, DiagnosticEngine &) override {
    llvm::DenseSet<const ir::Stage *> kept(program.getResults().begin(),
                                           program.getResults().end());
    for (const ir::Kernel &k : program.kernels)
      kept.insert(k.stages.begin(), k.stages.end());
    for (const ir::Overlap &o : program.overlaps) {
      kept.insert(o.producer);
      kept.insert(o.consumer);
    }
    llvm::StringMap<ir::Stage *> seen;
    llvm::DenseMap<const ir::Stage *, ir::Stage *> survivor;
    for (const auto &ptr : program.getStages()) {
      ir::Stage *s = ptr.get();
      for (ir::Stage *&op : s->operands)
        if (ir::Stage *t = survivor.lookup(op))
          op = t;
      if (s->isParam() || s->updates || kept.contains(s))
        continue;
      // Ids do not change during the walk, so equal signatures name the
      // same operands.
      auto [it, inserted] =
          seen.try_emplace(ir::stageSignature(program, *s), s);
      if (!inserted)
        survivor[s] = it->second;
    }
    if (!survivor.empty())
      program.eraseStages(
          [&](const ir::Stage *s) { return survivor.count(s) != 0; });
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createCommonSubexpressionEliminationPass() {
  return std::make_unique<CsePass>();
}

} // namespace coconet::passes
