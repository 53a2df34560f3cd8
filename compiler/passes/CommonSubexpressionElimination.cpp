//===- CommonSubexpressionElimination.cpp - compute equal stages once -----===//
//
// Two stages with the same type, kind, attributes, operands and body
// compute the same value (every operation is a pure function of its
// operands, dropout included): the later one's readers read the earlier
// one instead. Results, updates, kernel members and overlapped stages are
// left alone, so the interface and the schedule's structure do not change.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/StringMap.h"

namespace coconet::passes {
namespace {

class CsePass : public Pass {
public:
  llvm::StringRef getName() const override { return "cse"; }
  LogicalResult run(ir::Program &program, DiagnosticEngine &) override {
    llvm::StringMap<ir::Stage *> seen;
    for (size_t i = 0; i < program.getStages().size(); ++i) {
      ir::Stage *s = program.getStages()[i].get();
      if (s->isParam() || s->updates || program.isResult(s) ||
          program.kernelOf(s) || isOverlapped(program, s))
        continue;
      auto [it, inserted] =
          seen.try_emplace(ir::stageSignature(program, *s), s);
      if (inserted)
        continue;
      program.replaceUses(s, it->second);
      program.eraseStage(s);
      --i;
    }
    return success();
  }

private:
  static bool isOverlapped(const ir::Program &program, const ir::Stage *s) {
    for (const ir::Overlap &o : program.overlaps)
      if (o.producer == s || o.consumer == s)
        return true;
    return false;
  }
};

} // namespace

std::unique_ptr<Pass> createCommonSubexpressionEliminationPass() {
  return std::make_unique<CsePass>();
}

} // namespace coconet::passes
