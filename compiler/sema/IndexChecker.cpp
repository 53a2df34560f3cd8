//===- IndexChecker.cpp - topk, cumsum, gather and scatter ----------------===//
//
// The operations that read or write by position along one dimension: their
// arguments, shapes and layouts (ir/LayoutRules.h's alongLayout,
// gatherLayout, scatterLayout). `topk` gives two values, so only the
// statement `(values, indices) = topk(...)` may call it (Sema.cpp).
//
//===----------------------------------------------------------------------===//

#include "sema/CallChecker.h"

#include "ir/LayoutRules.h"

namespace coconet::sema {

namespace {

/// A tensor operand of an index operation: not a scalar, not segmented.
ir::Stage *tensorArg(CallChecker &cc, const ast::Expr *e) {
  ir::Stage *s = cc.stageArg(e);
  if (!s)
    return nullptr;
  if (s->type.isScalar()) {
    cc.diags().report(e->range, DiagId::ExpectedTensor, cc.name);
    return nullptr;
  }
  if (s->type.isSegmented()) {
    cc.diags().report(e->range, DiagId::IndexSegmented, cc.name, s->name,
                      s->type.segments);
    return nullptr;
  }
  return s;
}

/// The dimension argument `e` of a rank-`rank` operand (negative counts
/// from the end; absent: the last).
std::optional<int> dimArg(CallChecker &cc, const ast::Expr *e,
                          const TensorType &t) {
  if (!e)
    return static_cast<int>(t.rank()) - 1;
  auto d = cc.constantInt(e, "dimension");
  if (!d)
    return std::nullopt;
  int64_t rank = t.rank();
  int64_t resolved = *d < 0 ? *d + rank : *d;
  if (resolved < 0 || resolved >= rank) {
    cc.diags().report(e->range, DiagId::DimOutOfRange, *d,
                      ir::shapeStr(t.shape));
    return std::nullopt;
  }
  return static_cast<int>(resolved);
}

/// An index operand of a data operand `data` along `dim`: i32 or i64, the
/// data's shape in every dimension but `dim`, possibly ending after `dim`.
ir::Stage *indexArg(CallChecker &cc, const ast::Expr *e, const TensorType &data,
                    int dim) {
  ir::Stage *index = tensorArg(cc, e);
  if (!index)
    return nullptr;
  const TensorType &t = index->type;
  if (t.dtype != DType::I32 && t.dtype != DType::I64) {
    cc.diags().report(e->range, DiagId::IndexType, cc.name, index->name,
                      t.str(cc.c.program.mesh));
    return nullptr;
  }
  bool ok = t.rank() > static_cast<unsigned>(dim) && t.rank() <= data.rank();
  for (unsigned d = 0; ok && d < t.rank(); ++d)
    ok = d == static_cast<unsigned>(dim) || t.shape[d] == data.shape[d];
  if (!ok) {
    cc.diags().report(e->range, DiagId::IndexShape, cc.name,
                      ir::shapeStr(data.shape), dim, ir::shapeStr(t.shape));
    return nullptr;
  }
  return index;
}

} // namespace

/// topk and cumsum: x along a dimension that no axis slices.
static ir::Stage *alongStage(CallChecker &cc, StageKind kind, ir::Stage *x,
                             int dim, TensorType out) {
  std::string hint;
  auto layout = ir::alongLayout(x->type.layout, dim, hint);
  if (!layout) {
    cc.diags().report(cc.args[0]->range, DiagId::SlicedAlongDim, cc.name, dim);
    return nullptr;
  }
  out.layout = *layout;
  ir::Stage *s = cc.newStage(kind, std::move(out), {x});
  s->dim = dim;
  return s;
}

Value CallChecker::checkTopK() {
  // Only the statement `(values, indices) = topk(...)` names both results.
  const bool tuple = std::exchange(c.topkTuple, false);
  if (!tuple) {
    diags().report(call.range, DiagId::TopkNeedsTuple);
    return Value::error();
  }
  ir::Stage *x = tensorArg(*this, args[0]);
  if (!x)
    return Value::error();
  if (x->type.dtype == DType::Bool) {
    diags().report(args[0]->range, DiagId::BoolArithmetic, name);
    return Value::error();
  }
  auto k = constantInt(args[1], "count k");
  if (!k)
    return Value::error();
  if (*k < 1 || *k > 64) {
    diags().report(args[1]->range, DiagId::TopkCount, *k);
    return Value::error();
  }
  auto dim = dimArg(*this, args[2], x->type);
  if (!dim)
    return Value::error();
  const ir::Dim &along = x->type.shape[*dim];
  if (along.isConstant() && along.coefficient() < *k) {
    diags().report(call.range, DiagId::TopkTooMany, *k, *dim, along.str());
    return Value::error();
  }
  TensorType out = x->type;
  out.shape[*dim] = ir::Dim::constant(*k);
  ir::Stage *values = alongStage(*this, StageKind::TopK, x, *dim, out);
  if (!values)
    return Value::error();
  values->k = *k;
  out.dtype = DType::I32;
  ir::Stage *indices = alongStage(*this, StageKind::TopK, x, *dim, out);
  indices->k = *k;
  indices->topkIndices = true;
  c.topkIndices = indices;
  return stageValue(values);
}

Value CallChecker::checkCumSum() {
  ir::Stage *x = tensorArg(*this, args[0]);
  if (!x)
    return Value::error();
  if (x->type.dtype == DType::Bool) {
    diags().report(args[0]->range, DiagId::BoolArithmetic, name);
    return Value::error();
  }
  auto dim = dimArg(*this, args[1], x->type);
  if (!dim)
    return Value::error();
  ir::Stage *s = alongStage(*this, StageKind::CumSum, x, *dim, x->type);
  return s ? stageValue(s) : Value::error();
}

Value CallChecker::checkGather() {
  ir::Stage *x = tensorArg(*this, args[0]);
  if (!x)
    return Value::error();
  auto dim = dimArg(*this, args[2], x->type);
  if (!dim)
    return Value::error();
  ir::Stage *index = indexArg(*this, args[1], x->type, *dim);
  if (!index)
    return Value::error();
  std::string hint;
  auto layout = ir::gatherLayout(x->type.layout, index->type.layout,
                                 index->type.rank(), *dim, hint);
  if (!layout) {
    diags().report(call.range, DiagId::IndexLayout, name,
                   "'" + x->name + "' is " +
                       x->type.layout.str(c.program.mesh) + " and its index '" +
                       index->name + "' " +
                       index->type.layout.str(c.program.mesh) + "; " + hint);
    return Value::error();
  }
  TensorType out = x->type;
  out.shape[*dim] = index->type.shape[*dim];
  out.layout = *layout;
  ir::Stage *s = newStage(StageKind::Gather, std::move(out), {x, index});
  s->dim = *dim;
  return stageValue(s);
}

Value CallChecker::checkScatter() {
  ir::Stage *into = tensorArg(*this, args[3]);
  if (!into)
    return Value::error();
  auto dim = dimArg(*this, args[2], into->type);
  if (!dim)
    return Value::error();
  ir::Stage *index = indexArg(*this, args[1], into->type, *dim);
  ir::Stage *x = index ? tensorArg(*this, args[0]) : nullptr;
  if (!x)
    return Value::error();
  ir::Shape want = into->type.shape;
  want[*dim] = index->type.shape[*dim];
  if (x->type.shape != want) {
    diags().report(args[0]->range, DiagId::ScatterSource, ir::shapeStr(want),
                   *dim, ir::shapeStr(x->type.shape));
    return Value::error();
  }
  if (x->type.dtype != into->type.dtype) {
    diags().report(
        call.range, DiagId::MixedTypes, name, ir::dtypeName(x->type.dtype),
        ir::dtypeName(into->type.dtype), ir::dtypeName(into->type.dtype));
    return Value::error();
  }
  std::string hint;
  auto layout =
      ir::scatterLayout(into->type.layout, index->type.layout,
                        index->type.rank(), x->type.layout, *dim, hint);
  if (!layout) {
    const ir::Mesh &mesh = c.program.mesh;
    diags().report(call.range, DiagId::IndexLayout, name,
                   "'" + x->name + "' is " + x->type.layout.str(mesh) +
                       ", its index '" + index->name + "' " +
                       index->type.layout.str(mesh) + " and the destination '" +
                       into->name + "' " + into->type.layout.str(mesh) + "; " +
                       hint);
    return Value::error();
  }
  TensorType out = into->type;
  out.layout = *layout;
  ir::Stage *s = newStage(StageKind::Scatter, std::move(out), {into, index, x});
  s->dim = *dim;
  return stageValue(s);
}

} // namespace coconet::sema
