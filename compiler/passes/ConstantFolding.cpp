//===- ConstantFolding.cpp - evaluate constant parts of bodies ------------===//
//
// A node of an elementwise body whose arguments are all constants is
// replaced by its value, computed by the evaluator the simulator uses
// (ir/ScalarEval.h) so that folding cannot change a result: the folded
// constant has the node's type and is exactly what the unfolded node would
// produce. Dropout depends on the element index and is never folded.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/ScalarEval.h"

#include "llvm/ADT/DenseMap.h"

namespace coconet::passes {
namespace {

using ir::ScalarExpr;
using ir::ScalarOp;

class ConstantFoldingPass : public Pass {
public:
  llvm::StringRef getName() const override { return "constfold"; }
  LogicalResult run(ir::Program &program, DiagnosticEngine &) override {
    llvm::DenseMap<const ScalarExpr *, const ScalarExpr *> folded;
    for (const auto &s : program.getStages())
      if (s->kind == ir::StageKind::Elementwise)
        s->body = fold(program, s->body, folded);
    return success();
  }

private:
  /// Children first.
  static const ScalarExpr *
  fold(ir::Program &program, const ScalarExpr *root,
       llvm::DenseMap<const ScalarExpr *, const ScalarExpr *> &folded) {
    for (const ScalarExpr *e : ir::postOrder(
             root, [&](const ScalarExpr *e) { return folded.count(e); })) {
      bool changed = false, allConst = !e->args.empty();
      llvm::SmallVector<const ScalarExpr *, 3> args;
      for (const ScalarExpr *a : e->args) {
        const ScalarExpr *f = folded.lookup(a);
        changed |= f != a;
        allConst &= f->op == ScalarOp::Const;
        args.push_back(f);
      }
      const ScalarExpr *result = e;
      if (changed) {
        ScalarExpr copy = *e;
        copy.args.assign(args.begin(), args.end());
        result = program.addExpr(copy);
      }
      if (allConst && e->op != ScalarOp::Dropout &&
          e->op != ScalarOp::Operand) {
        ir::Scalar v = ir::evalScalar(*result, {}, 0);
        ScalarExpr c;
        c.op = ScalarOp::Const;
        c.dtype = e->dtype;
        if (ir::isFloat(e->dtype))
          c.constValue = v.f;
        else
          c.constInt = static_cast<int64_t>(v.i);
        c.constValue =
            ir::isFloat(e->dtype) ? v.f : static_cast<double>(c.constInt);
        result = program.addExpr(c);
      }
      folded[e] = result;
    }
    return folded.lookup(root);
  }
};

} // namespace

std::unique_ptr<Pass> createConstantFoldingPass() {
  return std::make_unique<ConstantFoldingPass>();
}

} // namespace coconet::passes
