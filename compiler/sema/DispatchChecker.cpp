//===- DispatchChecker.cpp - alltoallv and grouped_matmul -----------------===//
//
// Dropless routing: `(rows, counts) = alltoallv(x, counts, R, axis)` moves
// each member's rows to the members whose experts they are addressed to,
// in segments whose lengths are known only at run time, and
// `grouped_matmul(a, b, counts)` multiplies each segment of rows by its
// expert's weights (ir/Program.h states both). Every operand is a block
// per member of one axis: dimension 0 is the axis's size, sliced(0) over
// it; no other axis slices the rows or the experts. A grouped matmul's
// weights may also be cut over another axis as a matmul's are (expert x
// tensor parallel: by columns N, or by K with the rows' K, whose partial
// sums an allreduce over that axis completes).
//
//===----------------------------------------------------------------------===//

#include "sema/CallChecker.h"

#include "ir/LayoutRules.h"

namespace coconet::sema {

namespace {

/// Does `t` hold one block per member of `axis` along dimension 0 (its
/// size the axis's, sliced(0) over it), with no other axis slicing
/// dimensions [0, unsliced)?
bool perMember(const TensorType &t, const ir::Mesh &mesh, int axis,
               unsigned unsliced) {
  if (t.rank() < 2 || t.shape[0] != ir::Dim::symbol(mesh.axes[axis].size))
    return false;
  for (unsigned a = 0; a < t.layout.size(); ++a) {
    const ir::AxisLayout &l = t.layout[a];
    if (static_cast<int>(a) == axis) {
      if (l.state != ir::AxisState::Sliced || l.dim != 0)
        return false;
    } else if (l.state == ir::AxisState::Local ||
               (l.state == ir::AxisState::Sliced &&
                l.dim < static_cast<int>(unsliced))) {
      return false;
    }
  }
  return true;
}

/// The counts operand `e`: i32[P, E] one block per member of `axis`.
ir::Stage *countsArg(CallChecker &cc, const ast::Expr *e, int axis,
                     llvm::function_ref<void(ir::Stage *)> report) {
  ir::Stage *counts = tensorArg(cc, e);
  if (!counts)
    return nullptr;
  const TensorType &t = counts->type;
  if (t.dtype != DType::I32 || t.rank() != 2 ||
      !perMember(t, cc.c.program.mesh, axis, 2)) {
    report(counts);
    return nullptr;
  }
  return counts;
}

} // namespace

Value CallChecker::checkAllToAllV() {
  const bool tuple = std::exchange(c.tupleCall, false);
  if (!tuple) {
    diags().report(call.range, DiagId::AlltoallvNeedsTuple);
    return Value::error();
  }
  auto axis = axisArg(args[3], /*required=*/true);
  if (!axis)
    return Value::error();
  const ir::Mesh &mesh = c.program.mesh;
  const std::string &axisName = mesh.axes[*axis].name;
  const std::string &p = mesh.axes[*axis].size;
  ir::Stage *x = tensorArg(*this, args[0]);
  if (!x)
    return Value::error();
  if (!perMember(x->type, mesh, *axis, 2)) {
    diags().report(args[0]->range, DiagId::AlltoallvOperand, axisName,
                   "the rows as [" + p +
                       ", M, ...] sliced(0) over it, no other axis "
                       "slicing the rows",
                   x->name, x->type.str(mesh));
    return Value::error();
  }
  ir::Stage *counts = countsArg(*this, args[1], *axis, [&](ir::Stage *s) {
    diags().report(args[1]->range, DiagId::AlltoallvOperand, axisName,
                   "the counts as i32[" + p +
                       ", E] sliced(0) over it (E a multiple of " + p + ")",
                   s->name, s->type.str(mesh));
  });
  if (!counts)
    return Value::error();
  std::optional<ir::Dim> rows = sizeArg(*this, args[2]);
  if (!rows) {
    diags().report(args[2]->range, DiagId::ExpectedSize, name, "rows",
                   sourceText(args[2]));
    return Value::error();
  }
  TensorType out = x->type;
  out.shape[1] = *rows;
  ir::Stage *data = newStage(StageKind::AllToAllV, std::move(out), {x, counts});
  data->axis = *axis;
  ir::Stage *received = newStage(StageKind::AllToAllV, counts->type, {counts});
  received->axis = *axis;
  received->countsResult = true;
  c.secondResult = received;
  return stageValue(data);
}

Value CallChecker::checkGroupedMatMul() {
  const ir::Mesh &mesh = c.program.mesh;
  ir::Stage *a = tensorArg(*this, args[0]);
  ir::Stage *b = a ? tensorArg(*this, args[1]) : nullptr;
  if (!b)
    return Value::error();
  // The axis: the one that slices a's rows by member.
  std::optional<int> axis;
  for (unsigned i = 0; i < a->type.layout.size(); ++i)
    if (a->type.layout[i].state == ir::AxisState::Sliced &&
        a->type.layout[i].dim == 0)
      axis = static_cast<int>(i);
  auto bad = [&](const ast::Expr *e, const ir::Stage *s, std::string need) {
    diags().report(e->range, DiagId::GroupedMatmulOperand, need, s->name,
                   s->type.str(mesh));
    return Value::error();
  };
  const std::string p = axis ? mesh.axes[*axis].size : std::string("P");
  if (!axis || a->type.rank() != 3 || !ir::isFloat(a->type.dtype) ||
      !perMember(a->type, mesh, *axis, 2))
    return bad(args[0], a,
               "the rows as a float [" + p +
                   ", R, K] sliced(0) over one axis, no other axis slicing "
                   "the rows");
  const TensorType &ta = a->type, &tb = b->type;
  bool bOk =
      tb.rank() == 3 && tb.dtype == ta.dtype && tb.shape[1] == ta.shape[2];
  for (unsigned i = 0; bOk && i < tb.layout.size(); ++i)
    bOk = static_cast<int>(i) == *axis
              ? tb.layout[i].state == ir::AxisState::Sliced &&
                    tb.layout[i].dim == 0
              : tb.layout[i].state == ir::AxisState::Replicated ||
                    (tb.layout[i].state == ir::AxisState::Sliced &&
                     tb.layout[i].dim > 0);
  // Another axis cuts K (with the rows' K: partial sums) or N, as a
  // matmul's layout rule allows.
  std::string hint;
  std::optional<ir::Layout> layout;
  if (bOk)
    layout = ir::matmulLayout(ta.layout, 3, tb.layout, 3, hint);
  if (!layout)
    return bad(args[1], b,
               "the experts' weights as " +
                   std::string(ir::dtypeName(ta.dtype)) + "[E, " +
                   ta.shape[2].str() + ", N] sliced(0) over axis '" +
                   mesh.axes[*axis].name +
                   "' (another axis may cut N, or K where it cuts the rows' "
                   "K)");
  ir::Stage *counts = countsArg(*this, args[2], *axis, [&](ir::Stage *s) {
    bad(args[2], s,
        "the counts as i32[" + p + ", " + tb.shape[0].str() +
            "] sliced(0) over axis '" + mesh.axes[*axis].name + "'");
  });
  if (!counts)
    return Value::error();
  if (counts->type.shape[1] != tb.shape[0])
    return bad(args[2], counts,
               "the counts as i32[" + p + ", " + tb.shape[0].str() +
                   "], one per expert of the weights");
  TensorType out = ta;
  out.shape[2] = tb.shape[2];
  out.layout = *layout;
  ir::Stage *s =
      newStage(StageKind::GroupedMatMul, std::move(out), {a, counts, b});
  s->axis = *axis;
  return stageValue(s);
}

} // namespace coconet::sema
