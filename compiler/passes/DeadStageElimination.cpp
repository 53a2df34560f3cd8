//===- DeadStageElimination.cpp - remove stages nothing needs -------------===//
//
// A stage that is no parameter, no result and read by no stage computes
// nothing the program returns: remove it. One walk in reverse program
// order removes whole dead chains.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace coconet::passes {
namespace {

class DeadStageEliminationPass : public Pass {
public:
  llvm::StringRef getName() const override { return "dse"; }
  LogicalResult run(ir::Program &program, DiagnosticEngine &) override {
    for (size_t i = program.getStages().size(); i-- > 0;) {
      ir::Stage *s = program.getStages()[i].get();
      if (s->isParam() || s->updates || program.isResult(s) ||
          !program.getUsers(s).empty())
        continue;
      program.eraseStage(s);
    }
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createDeadStageEliminationPass() {
  return std::make_unique<DeadStageEliminationPass>();
}

} // namespace coconet::passes
