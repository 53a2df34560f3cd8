//===- Split.cpp - allreduce -> reducescatter + allgather -----------------===//
//
// `(rs, ag) = split(s)` replaces the allreduce `s` over axis a by a
// reducescatter over a, which leaves rank i with block i of the reduced
// tensor along dimension d, and an allgather over a of those blocks. Every
// reduce operator of the language combines each element independently, so
// block i of the reduction is the reduction of block i: the values are
// bitwise the same (both reduce in ascending rank order, in f64, rounding
// once). d is the first dimension of the input no other axis slices.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/AlgorithmTable.h"

#include "ir/LayoutRules.h"

namespace coconet::passes {
namespace {

class SplitPass : public DirectivePass {
public:
  using DirectivePass::DirectivePass;
  llvm::StringRef getName() const override { return "split"; }
  std::string describe() const override {
    return "split(" + directive.args[0] + ")";
  }

  LogicalResult run(ir::Program &program, DiagnosticEngine &diags) override {
    ir::Stage *s = lookup(program, diags, 0);
    if (!s)
      return failure();
    if (s->kind != ir::StageKind::AllReduce) {
      refuse(diags, 0, DiagId::SplitNotAllReduce, s->name, describeKind(*s))
          .note(s->loc, DiagId::StageDefinedHere, s->name);
      return failure();
    }
    if (s->type.isScalar()) {
      refuse(diags, 0, DiagId::SplitScalar, s->name);
      return failure();
    }
    if (program.kernelOf(s)) {
      refuse(diags, 0, DiagId::SplitFused, s->name);
      return failure();
    }
    if (s->table) {
      refuse(diags, 0, DiagId::SplitAlgorithmFile, s->name, s->table->file);
      return failure();
    }
    if (s->axis < 0 && program.mesh.size() > 1) {
      refuse(diags, 0, DiagId::SplitAllAxes, s->name);
      return failure();
    }
    const int axis = s->axis < 0 ? 0 : s->axis;
    ir::Stage *input = s->operands[0];
    const ir::Layout &in = input->type.layout;
    int dim = -1;
    for (unsigned d = 0; d < input->type.rank() && dim < 0; ++d)
      if (!in.slicesDim(static_cast<int>(d)))
        dim = static_cast<int>(d);
    if (dim < 0) {
      refuse(diags, 0, DiagId::SplitNoFreeDim, s->name);
      return failure();
    }
    std::string need;
    unsigned badAxis = 0;
    auto rsLayout = ir::communicationLayout(ir::StageKind::ReduceScatter, in,
                                            axis, dim, need, badAxis);
    if (!rsLayout) {
      // Sema accepted the allreduce, so its input is local on the axis.
      refuse(diags, 0, DiagId::SplitNotAllReduce, s->name,
             "an allreduce of " + need);
      return failure();
    }

    // An overlap with the allreduce moves to the reducescatter, chunked
    // along the scattered dimension: that size must divide into the chunks
    // as overlap itself requires.
    for (const ir::Overlap &o : program.overlaps) {
      if (o.consumer != s)
        continue;
      const ir::Dim &size = o.producer->type.shape[dim];
      if (size.isConstant() && size.coefficient() % o.chunks != 0) {
        refuse(diags, 0, DiagId::SplitOverlapIndivisible, s->name,
               o.producer->name, o.chunks, dim, size.str())
            .note(o.loc, DiagId::OverlapDeclaredHere);
        return failure();
      }
    }

    std::string rsName = directive.results.size() == 2
                             ? directive.results[0]
                             : program.uniqueName(s->name + ".rs");
    std::string agName = directive.results.size() == 2
                             ? directive.results[1]
                             : program.uniqueName(s->name + ".ag");
    ir::TensorType rsType = s->type;
    rsType.layout = *rsLayout;
    unsigned at = s->id;
    ir::Stage *rs = program.insertStage(at, ir::StageKind::ReduceScatter,
                                        rsName, rsType, {input}, s->loc);
    rs->reduceOp = s->reduceOp;
    rs->axis = axis;
    rs->dim = dim;
    ir::Stage *ag = program.insertStage(at + 1, ir::StageKind::AllGather,
                                        agName, s->type, {rs}, s->loc);
    ag->axis = axis;
    // A chosen algorithm carries over: two-shot is a one-shot
    // reducescatter and then a one-shot allgather.
    rs->algorithm = ag->algorithm =
        s->algorithm == ir::CollectiveAlgorithm::TwoShot
            ? ir::CollectiveAlgorithm::OneShot
            : s->algorithm;
    rs->holds = ag->holds = s->valueName().str();
    program.replaceUses(s, ag);
    program.replaceResult(s, ag);
    ag->updates = s->updates;
    s->updates = nullptr;
    // An overlap with the allreduce now overlaps the reducescatter, chunked
    // along the scattered dimension.
    for (ir::Overlap &o : program.overlaps)
      if (o.consumer == s) {
        o.consumer = rs;
        o.dim = dim;
      }
    program.eraseStage(s);
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createSplitPass(Directive d, AppliedStack from) {
  return std::make_unique<SplitPass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
