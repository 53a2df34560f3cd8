//===- Reorder.cpp - move an allgather or alltoall past its consumers -----===//
//
// `reorder(ag, s1, ..., sn)`, where ag = allgather(rs) over axis a, makes
// the listed stages compute on the slices rs holds instead of on the
// gathered tensor. Element by element nothing changes: a listed stage reads
// the same elements of its operands, replicated operands at the slice's
// offset, so elementwise stages and sendrecvs along another axis give
// exactly the block of their old value.
//
// Rules, checked before anything changes (docs/schedules.md):
//   - ag is an allgather over one axis;
//   - each listed stage is elementwise, a reduction or a sendrecv along
//     another axis, is not fused yet, reads ag or an earlier listed stage,
//     and reads no value that is local on axis a;
//   - slices must combine: an elementwise stage cannot mix rs's slicing
//     with an operand sliced differently.
// A reduction over the sliced dimension becomes a per-rank partial value
// (sum/max/min; a norm's partial is its sum of squares, floats accumulate
// in f64) completed by an allreduce over a (and a square root and a
// conversion where needed). A float sum or norm then adds in a different
// order; the program records that (Program::reassociations).
// Every listed value that is still needed whole afterwards (by an unlisted
// stage, as a result or as an update) gets an allgather; the last of them
// in program order inherits the name ag when the old allgather is no
// longer used, the others are named ag.<stage>.
//
// ag may also be an alltoall: the same global value re-sliced, so a listed
// elementwise stage computes on rs's slicing (the blocks it holds before
// the exchange) exactly the elements it computed after it, and every
// listed value still needed afterwards is exchanged by an alltoall like
// ag's. Only elementwise stages move across an alltoall (a reduction or a
// sendrecv would need the other slicing's completion rules).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/LayoutRules.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace coconet::passes {
namespace {

using ir::AxisState;
using ir::Stage;
using ir::StageKind;

class ReorderPass : public DirectivePass {
public:
  using DirectivePass::DirectivePass;
  llvm::StringRef getName() const override { return "reorder"; }
  std::string describe() const override {
    std::string text = "reorder(";
    for (size_t i = 0; i < directive.args.size(); ++i)
      text += (i ? ", " : "") + directive.args[i];
    return text + ")";
  }

  LogicalResult run(ir::Program &program, DiagnosticEngine &diags) override;

private:
  /// Computes the listed stages' types on slices; refuses on the first
  /// stage that cannot move. Changes nothing.
  LogicalResult plan(ir::Program &program, DiagnosticEngine &diags);
  /// Turns reduction `s` (now reading slices) into partial + allreduce.
  void completeReduction(ir::Program &program, Stage *s);
  /// Gives `s` an allgather (or alltoall) for its users outside the group.
  void gather(ir::Program &program, Stage *s, const std::string &name);
  /// Whether an alltoall like ag's takes `s`, computed as `t`, back to the
  /// layout `s` has now.
  bool exchangeable(const Stage *s, const ir::TensorType &t) const;

  const ir::TensorType &typeOf(Stage *s) const {
    if (s == ag)
      return rs->type;
    auto it = newType.find(s);
    return it == newType.end() ? s->type : it->second;
  }

  Stage *ag = nullptr, *rs = nullptr;
  int axis = 0;
  /// ag is an alltoall: the listed values are re-sliced, not gathered.
  bool exchange = false;
  int exchangeDim = 0;
  llvm::SmallVector<Stage *, 8> listed; ///< program order
  llvm::DenseSet<Stage *> inList;
  llvm::DenseMap<Stage *, unsigned> argOf; ///< directive argument index
  llvm::DenseMap<Stage *, ir::TensorType> newType;
  llvm::DenseMap<Stage *, ir::TensorType> oldType;
  llvm::DenseSet<Stage *> completes; ///< reductions to complete
  llvm::DenseMap<Stage *, ir::ReductionKind> oldKind;
  llvm::SMRange agLoc;
  /// The allgather's algorithm, which the allgathers it makes inherit.
  ir::CollectiveAlgorithm agAlgorithm = ir::CollectiveAlgorithm::Auto;
  std::shared_ptr<const ir::AlgorithmTable> agTable;
};

LogicalResult ReorderPass::plan(ir::Program &program, DiagnosticEngine &diags) {
  ag = lookup(program, diags, 0);
  if (!ag)
    return failure();
  exchange = ag->kind == StageKind::AllToAll;
  if ((ag->kind != StageKind::AllGather && !exchange) ||
      (ag->axis < 0 && program.mesh.size() > 1)) {
    refuse(diags, 0, DiagId::ReorderNotAllGather, ag->name,
           ag->kind == StageKind::AllGather
               ? std::string("an allgather over every mesh axis")
               : describeKind(*ag))
        .note(ag->loc, DiagId::StageDefinedHere, ag->name);
    return failure();
  }
  axis = ag->axis < 0 ? 0 : ag->axis;
  exchangeDim = ag->dim;
  rs = ag->operands[0];
  agLoc = ag->loc;
  agAlgorithm = ag->algorithm;
  agTable = ag->table;
  const std::string &axisName = program.mesh.axes[axis].name;

  for (unsigned i = 1; i < directive.args.size(); ++i) {
    Stage *s = lookup(program, diags, i);
    if (!s)
      return failure();
    if (!inList.insert(s).second) {
      refuse(diags, static_cast<int>(i), DiagId::ListedTwice, s->name);
      return failure();
    }
    argOf[s] = i;
    listed.push_back(s);
  }
  llvm::sort(listed, [](Stage *x, Stage *y) { return x->id < y->id; });

  // Stages computed from ag.
  llvm::DenseSet<Stage *> downstream{ag};
  for (const auto &ptr : program.getStages())
    if (llvm::any_of(ptr->operands,
                     [&](Stage *o) { return downstream.contains(o); }))
      downstream.insert(ptr.get());

  for (Stage *s : listed) {
    int arg = static_cast<int>(argOf[s]);
    if (!downstream.contains(s)) {
      refuse(diags, arg, DiagId::ReorderIndependent, ag->name, s->name)
          .note(s->loc, DiagId::StageDefinedHere, s->name);
      return failure();
    }
    bool movable = s->kind == StageKind::Elementwise ||
                   s->kind == StageKind::Reduction ||
                   s->kind == StageKind::SendRecv;
    // An alltoall's own rule for every stage it cannot move past (a
    // matmul too: the allgather's rule would list what an alltoall cannot
    // move past either).
    if (exchange && (s->kind != StageKind::Elementwise || s == ag)) {
      refuse(diags, arg, DiagId::ReorderAllToAllKind, ag->name, s->name,
             s == ag ? std::string("the alltoall itself") : describeKind(*s))
          .note(s->loc, DiagId::StageDefinedHere, s->name);
      return failure();
    }
    if (!movable || s == ag) {
      refuse(diags, arg, DiagId::ReorderStageKind, ag->name, s->name,
             s == ag ? std::string("the allgather itself") : describeKind(*s))
          .note(s->loc, DiagId::StageDefinedHere, s->name);
      return failure();
    }
    if (program.kernelOf(s)) {
      refuse(diags, arg, DiagId::ReorderLayoutMismatch, ag->name, s->name,
             "change the layout of a fused stage; reorder before fusing");
      return failure();
    }
    bool connected = llvm::any_of(s->operands, [&](Stage *o) {
      return o == ag || (inList.contains(o) && o->id < s->id);
    });
    if (!connected) {
      refuse(diags, arg, DiagId::ReorderNotConnected, ag->name, s->name)
          .note(s->loc, DiagId::StageDefinedHere, s->name);
      return failure();
    }
    for (Stage *o : s->operands)
      if (typeOf(o).layout[axis].state == AxisState::Local) {
        refuse(diags, arg, DiagId::ReorderLocalOperand, ag->name, s->name,
               o->name)
            .note(o->loc, DiagId::StageDefinedHere, o->name);
        return failure();
      }

    ir::TensorType t = s->type;
    oldType[s] = s->type;
    switch (s->kind) {
    case StageKind::Elementwise: {
      ir::Layout joined = ir::Layout::replicated(program.mesh.size());
      for (Stage *o : s->operands) {
        const ir::TensorType &ot = typeOf(o);
        ir::Layout aligned = ir::alignLayout(ot.layout, ot.rank(), t.rank());
        std::string hint;
        auto j = ir::joinLayouts(joined, aligned, hint);
        if (!j) {
          refuse(diags, arg, DiagId::ReorderLayoutMismatch, ag->name, s->name,
                 "combine '" + o->name + "' (" + ot.layout.str(program.mesh) +
                     ") with the slices of '" + rs->name + "' (" +
                     joined.str(program.mesh) + ")" + hint);
          return failure();
        }
        joined = *j;
      }
      t.layout = joined;
      if (exchange && !exchangeable(s, t)) {
        refuse(diags, arg, DiagId::ReorderLayoutMismatch, ag->name, s->name,
               "yield " + t.layout.str(program.mesh) +
                   ", which an alltoall over '" + axisName +
                   "' cannot re-slice to " + s->type.layout.str(program.mesh));
        return failure();
      }
      break;
    }
    case StageKind::Reduction: {
      const ir::TensorType &in = typeOf(s->operands[0]);
      ir::Layout l = ir::reductionLayout(in.layout, in.rank(), s->dim);
      // Only a reduction whose input becomes sliced here is completed: of
      // an input already sliced on the axis, it was a per-rank partial
      // value before and stays one.
      bool wasSliced =
          s->operands[0]->type.layout[axis].state == AxisState::Sliced;
      if (!wasSliced && in.layout[axis].state == AxisState::Sliced &&
          l[axis].state == AxisState::Local)
        completes.insert(s); // keeps its type once completed
      else
        t.layout = l;
      break;
    }
    case StageKind::SendRecv: {
      if (s->axis < 0 || s->axis == axis) {
        refuse(diags, arg, DiagId::ReorderSendSameAxis, ag->name, s->name,
               axisName);
        return failure();
      }
      std::string need;
      unsigned bad = 0;
      auto l = ir::communicationLayout(StageKind::SendRecv,
                                       typeOf(s->operands[0]).layout, s->axis,
                                       0, need, bad);
      if (!l) {
        refuse(diags, arg, DiagId::ReorderLayoutMismatch, ag->name, s->name,
               "send a value that is not " + need);
        return failure();
      }
      t.layout = *l;
      break;
    }
    case StageKind::Param:
    case StageKind::MatMul:
    case StageKind::Transpose:
    case StageKind::Reshape:
    case StageKind::LayerNorm:
    case StageKind::RmsNorm:
    case StageKind::TopK:
    case StageKind::CumSum:
    case StageKind::Gather:
    case StageKind::Scatter:
    case StageKind::AllReduce:
    case StageKind::ReduceScatter:
    case StageKind::AllGather:
    case StageKind::Broadcast:
    case StageKind::Reduce:
    case StageKind::AllToAll:
    case StageKind::AllToAllV:
    case StageKind::GroupedMatMul:
      llvm_unreachable("refused above: not movable");
    }
    newType[s] = t;
  }
  return success();
}

void ReorderPass::completeReduction(ir::Program &program, Stage *s) {
  const ir::TensorType type = oldType[s];
  const std::string name = s->name;
  const bool isF = ir::isFloat(type.dtype);
  const bool sumLike = s->reduction == ir::ReductionKind::Sum ||
                       s->reduction == ir::ReductionKind::Norm;
  // The partial value: per-rank, in f64 for float sums.
  ir::TensorType partial = type;
  partial.layout = ir::reductionLayout(s->operands[0]->type.layout,
                                       s->operands[0]->type.rank(), s->dim);
  if (isF && sumLike)
    partial.dtype = ir::DType::F64;
  ir::ReductionKind kind = s->reduction;
  if (kind == ir::ReductionKind::Norm)
    kind = ir::ReductionKind::SumSquares;
  s->name = program.uniqueName(name + ".partial");
  s->type = partial;
  s->reduction = kind;

  ir::TensorType combined = partial;
  combined.layout[axis] = {AxisState::Replicated, 0};
  bool finish = s->reduction == ir::ReductionKind::SumSquares ||
                partial.dtype != type.dtype;
  Stage *ar = program.insertStage(
      s->id + 1, StageKind::AllReduce,
      finish ? program.uniqueName(name + ".sum") : name, combined, {s}, s->loc);
  ar->axis = axis;
  ar->reduceOp = kind == ir::ReductionKind::Max   ? ir::ReduceOp::Max
                 : kind == ir::ReductionKind::Min ? ir::ReduceOp::Min
                                                  : ir::ReduceOp::Sum;
  Stage *result = ar;
  if (finish) {
    ir::ScalarExpr read;
    read.op = ir::ScalarOp::Operand;
    read.dtype = combined.dtype;
    const ir::ScalarExpr *body = program.addExpr(read);
    if (kind == ir::ReductionKind::SumSquares) {
      ir::ScalarExpr root;
      root.op = ir::ScalarOp::Sqrt;
      root.dtype = combined.dtype;
      root.args.push_back(body);
      body = program.addExpr(root);
    }
    if (type.dtype != combined.dtype) {
      ir::ScalarExpr cast;
      cast.op = ir::ScalarOp::Cast;
      cast.dtype = type.dtype;
      cast.args.push_back(body);
      body = program.addExpr(cast);
    }
    result = program.insertStage(ar->id + 1, StageKind::Elementwise, name, type,
                                 {ar}, s->loc);
    result->body = body;
  }
  program.replaceUses(s, result,
                      [&](const Stage &user) { return &user != ar; });
  program.replaceResult(s, result);
  result->updates = s->updates;
  s->updates = nullptr;
  if (isF && sumLike)
    program.reassociations.push_back(
        "'" + name + "' (" + ir::reductionKindName(oldKind[s]).str() +
        ") adds per-rank partial values in f64, then allreduces them over '" +
        program.mesh.axes[axis].name + "'");
}

bool ReorderPass::exchangeable(const Stage *s, const ir::TensorType &t) const {
  std::string need;
  unsigned bad = 0;
  auto l = ir::communicationLayout(StageKind::AllToAll, t.layout, axis,
                                   exchangeDim, need, bad);
  return l && *l == s->type.layout;
}

void ReorderPass::gather(ir::Program &program, Stage *s,
                         const std::string &name) {
  Stage *g = program.insertStage(
      s->id + 1, exchange ? StageKind::AllToAll : StageKind::AllGather, name,
      oldType[s], {s}, agLoc);
  g->axis = axis;
  if (exchange)
    g->dim = exchangeDim;
  g->algorithm = agAlgorithm;
  g->table = agTable;
  program.replaceUses(s, g, [&](const Stage &user) {
    return &user != g && !inList.contains(const_cast<Stage *>(&user));
  });
  program.replaceResult(s, g);
  g->updates = s->updates;
  s->updates = nullptr;
}

LogicalResult ReorderPass::run(ir::Program &program, DiagnosticEngine &diags) {
  if (failed(plan(program, diags)))
    return failure();
  for (Stage *s : completes)
    oldKind[s] = s->reduction;

  // Listed stages read the slices instead of the gathered tensor.
  program.replaceUses(ag, rs, [&](const Stage &user) {
    return inList.contains(const_cast<Stage *>(&user));
  });
  for (Stage *s : listed)
    if (!completes.contains(s))
      s->type = newType[s];
  for (Stage *s : listed)
    if (completes.contains(s))
      completeReduction(program, s);

  // Values still needed whole: those that became sliced here. A listed
  // stage that was sliced on the axis before keeps its type, and its
  // readers already read it sliced.
  llvm::SmallVector<Stage *, 4> leaving;
  for (Stage *s : listed) {
    if (completes.contains(s))
      continue;
    // Across an alltoall every listed value changes its slicing; across an
    // allgather those that become sliced here.
    if (exchange ? s->type.layout == oldType[s].layout
                 : s->type.layout[axis].state != AxisState::Sliced ||
                       oldType[s].layout[axis].state == AxisState::Sliced)
      continue;
    bool outside = llvm::any_of(program.getUsers(s),
                                [&](Stage *u) { return !inList.contains(u); });
    if (outside || program.isResult(s) || s->updates)
      leaving.push_back(s);
  }
  const std::string agName = ag->name;
  bool agFree =
      program.getUsers(ag).empty() && !program.isResult(ag) && !ag->updates;
  if (agFree) {
    program.eraseStage(ag);
    ag = nullptr;
  }
  for (size_t i = 0; i < leaving.size(); ++i) {
    Stage *s = leaving[i];
    bool inherits = agFree && i + 1 == leaving.size();
    gather(program, s,
           inherits ? agName : program.uniqueName(agName + "." + s->name));
  }
  return success();
}

} // namespace

std::unique_ptr<Pass> createReorderPass(Directive d, AppliedStack from) {
  return std::make_unique<ReorderPass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
