//===- DeadStageElimination.cpp - remove stages nothing needs -------------===//
//
// A stage that is no parameter, no result and read by no stage computes
// nothing the program returns: remove it. One walk in reverse program
// order, counting each stage's readers, finds whole dead chains (a stage
// whose readers are all dead is dead); they are removed in one pass.
// Linear in the size of the program.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace coconet::passes {
namespace {

class DeadStageEliminationPass : public Pass {
public:
  llvm::StringRef getName() const override { return "dse"; }
  LogicalResult run(ir::Program &program, DiagnosticEngine &) override {
    llvm::DenseMap<const ir::Stage *, unsigned> readers;
    for (const auto &s : program.getStages())
      for (const ir::Stage *op : s->operands)
        ++readers[op];
    llvm::DenseSet<const ir::Stage *> results(program.getResults().begin(),
                                              program.getResults().end());
    llvm::DenseSet<const ir::Stage *> dead;
    for (size_t i = program.getStages().size(); i-- > 0;) {
      const ir::Stage *s = program.getStages()[i].get();
      if (s->isParam() || s->updates || results.contains(s) ||
          readers.lookup(s) != 0)
        continue;
      dead.insert(s);
      // Each operand reads once less (an operand listed twice, twice).
      for (const ir::Stage *op : s->operands)
        --readers[op];
    }
    if (!dead.empty())
      program.eraseStages([&](const ir::Stage *s) { return dead.contains(s); });
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createDeadStageEliminationPass() {
  return std::make_unique<DeadStageEliminationPass>();
}

} // namespace coconet::passes
