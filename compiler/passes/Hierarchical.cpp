//===- Hierarchical.cpp - an allreduce over two axes, axis by axis --------===//
//
// `(rs, ar, ag) = hierarchical(s)` replaces the allreduce `s` over both
// axes of a two-axis mesh [outer, inner] (ranks row-major: the inner axis
// is the one whose ranks are neighbours, within a node) by
//
//   rs = reducescatter(op, x, inner)   block i of the sum over the inner
//                                      axis, on inner rank i;
//   ar = allreduce(op, rs, outer)      that block summed over the outer
//                                      axis: 1/I of the data crosses it;
//   ag = allgather(ar, inner)          every block on every rank;
//
// the algorithm NCCL and Horovod run across nodes. Max and min, and
// integer sums and products (wrapping), do not depend on the order in
// which members meet: the values are bitwise the same. A float sum adds
// the inner members first and rounds that partial sum to the element type
// before the outer members add them: the program records the
// reassociation, and the verifier checks `ar` and `ag` (they hold `s`)
// against the unscheduled sum within the bound of adding its terms in
// another order plus that one rounding (docs/schedules.md). Float
// products and averages, whose partial results would need another bound,
// are refused.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/LayoutRules.h"

namespace coconet::passes {
namespace {

class HierarchicalPass : public DirectivePass {
public:
  using DirectivePass::DirectivePass;
  llvm::StringRef getName() const override { return "hierarchical"; }
  std::string describe() const override {
    return "hierarchical(" + directive.args[0] + ")";
  }

  LogicalResult run(ir::Program &program, DiagnosticEngine &diags) override {
    ir::Stage *s = lookup(program, diags, 0);
    if (!s)
      return failure();
    if (s->kind != ir::StageKind::AllReduce) {
      refuse(diags, 0, DiagId::HierarchicalNotAllReduce, s->name,
             describeKind(*s))
          .note(s->loc, DiagId::StageDefinedHere, s->name);
      return failure();
    }
    if (s->axis >= 0 || program.mesh.size() != 2) {
      refuse(diags, 0, DiagId::HierarchicalMesh, s->name,
             s->axis >= 0 ? "axis '" + program.mesh.axes[s->axis].name + "'"
                          : "a mesh of " + std::to_string(program.mesh.size()) +
                                (program.mesh.size() == 1 ? " axis" : " axes"));
      return failure();
    }
    if (s->type.isScalar()) {
      refuse(diags, 0, DiagId::HierarchicalScalar, s->name);
      return failure();
    }
    // (A kernel holds no collective over every axis: fuse refuses them.)
    for (const ir::Overlap &o : program.overlaps)
      if (o.consumer == s) {
        refuse(diags, 0, DiagId::HierarchicalOverlapped, s->name,
               o.producer->name)
            .note(o.loc, DiagId::OverlapDeclaredHere);
        return failure();
      }
    const bool isF = ir::isFloat(s->type.dtype);
    const bool exact = s->reduceOp == ir::ReduceOp::Max ||
                       s->reduceOp == ir::ReduceOp::Min || !isF;
    if (!exact && s->reduceOp != ir::ReduceOp::Sum) {
      refuse(diags, 0, DiagId::HierarchicalOp, s->name,
             ir::reduceOpName(s->reduceOp), ir::dtypeName(s->type.dtype));
      return failure();
    }

    const int outer = 0, inner = 1;
    ir::Stage *input = s->operands[0];
    const ir::Layout &in = input->type.layout;
    int dim = -1;
    for (unsigned d = 0; d < input->type.rank() && dim < 0; ++d)
      if (!in.slicesDim(static_cast<int>(d)))
        dim = static_cast<int>(d);
    std::string need = "a dimension no axis slices";
    if (dim < 0) { // an input local on both axes slices none
      refuse(diags, 0, DiagId::HierarchicalNotAllReduce, s->name,
             "an allreduce of " + need);
      return failure();
    }
    unsigned badAxis = 0;
    auto rsLayout = ir::communicationLayout(ir::StageKind::ReduceScatter, in,
                                            inner, dim, need, badAxis);
    auto arLayout =
        rsLayout ? ir::communicationLayout(ir::StageKind::AllReduce, *rsLayout,
                                           outer, -1, need, badAxis)
                 : std::nullopt;
    if (!arLayout) {
      // Sema accepted the allreduce, so its input is local on both axes.
      refuse(diags, 0, DiagId::HierarchicalNotAllReduce, s->name,
             "an allreduce of " + need);
      return failure();
    }

    auto name = [&](size_t i, const char *suffix) {
      return directive.results.size() == 3
                 ? directive.results[i]
                 : program.uniqueName(s->name + suffix);
    };
    const std::string rsName = name(0, ".rs"), arName = name(1, ".ar"),
                      agName = name(2, ".ag");
    ir::TensorType rsType = s->type, arType = s->type;
    rsType.layout = *rsLayout;
    arType.layout = *arLayout;
    unsigned at = s->id;
    ir::Stage *rs = program.insertStage(at, ir::StageKind::ReduceScatter,
                                        rsName, rsType, {input}, s->loc);
    rs->reduceOp = s->reduceOp;
    rs->axis = inner;
    rs->dim = dim;
    ir::Stage *ar = program.insertStage(at + 1, ir::StageKind::AllReduce,
                                        arName, arType, {rs}, s->loc);
    ar->reduceOp = s->reduceOp;
    ar->axis = outer;
    ir::Stage *ag = program.insertStage(at + 2, ir::StageKind::AllGather,
                                        agName, s->type, {ar}, s->loc);
    ag->axis = inner;
    // `ar` holds a block of s, `ag` all of it; `rs` holds partial sums (of
    // the inner members only), no block of s.
    ar->holds = ag->holds = s->valueName().str();
    program.replaceUses(s, ag);
    program.replaceResult(s, ag);
    ag->updates = s->updates;
    s->updates = nullptr;
    if (!exact)
      program.reassociatedCollectives.push_back(s->valueName().str());
    if (!exact)
      program.reassociations.push_back(
          "'" + s->valueName().str() + "' (sum) adds over '" +
          program.mesh.axes[inner].name + "' first, rounds to " +
          ir::dtypeName(s->type.dtype).str() + ", then over '" +
          program.mesh.axes[outer].name + "'");
    program.eraseStage(s);
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createHierarchicalPass(Directive d, AppliedStack from) {
  return std::make_unique<HierarchicalPass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
