//===- IndexChecker.cpp - topk, cumsum, gather, scatter, flatten ----------===//
//
// The operations that read or write by position along one dimension, and
// flatten/unflatten, which change the shape around them: their arguments,
// shapes and layouts (ir/LayoutRules.h's reshapeLayout, alongLayout,
// gatherLayout, scatterLayout). `topk` gives two values, so only the
// statement `(values, indices) = topk(...)` may call it (Sema.cpp).
//
//===----------------------------------------------------------------------===//

#include "sema/CallChecker.h"

#include "ir/LayoutRules.h"

namespace coconet::sema {

namespace {

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

/// The data operand `xe` (a tensor; not bool where `numeric`) and the
/// dimension `de` of it an operation works along.
std::optional<std::pair<ir::Stage *, int>> dataAlong(CallChecker &cc,
                                                     const ast::Expr *xe,
                                                     const ast::Expr *de,
                                                     bool numeric) {
  ir::Stage *x = tensorArg(cc, xe);
  if (!x)
    return std::nullopt;
  if (numeric && x->type.dtype == DType::Bool) {
    cc.diags().report(xe->range, DiagId::BoolArithmetic, cc.name);
    return std::nullopt;
  }
  auto dim = dimArg(cc, de, x->type);
  if (!dim)
    return std::nullopt;
  return std::make_pair(x, *dim);
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

/// A size written as a dimension is (`C`, `4`, `2 * N`), or nullopt.
std::optional<ir::Dim> sizeArg(CallChecker &cc, const ast::Expr *e) {
  if (e->kind == ast::Expr::Kind::IntLit && e->intValue > 0 &&
      e->intValue <= static_cast<uint64_t>(INT32_MAX))
    return ir::Dim::constant(static_cast<int64_t>(e->intValue));
  if (e->kind == ast::Expr::Kind::Name &&
      llvm::is_contained(cc.c.program.sizeNames, e->text) &&
      !cc.c.names.count(e->text))
    return ir::Dim::symbol(e->text);
  if (e->kind == ast::Expr::Kind::Binary && e->binaryOp == ast::BinaryOp::Mul) {
    auto a = sizeArg(cc, e->operands[0].get());
    auto b = a ? sizeArg(cc, e->operands[1].get()) : std::nullopt;
    if (b)
      return *a * *b;
  }
  return std::nullopt;
}

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
  const bool tuple = std::exchange(c.tupleCall, false);
  if (!tuple) {
    diags().report(call.range, DiagId::TopkNeedsTuple);
    return Value::error();
  }
  auto data = dataAlong(*this, args[0], args[2], /*numeric=*/true);
  if (!data)
    return Value::error();
  auto [x, dim] = *data;
  auto k = constantInt(args[1], "count k");
  if (!k)
    return Value::error();
  if (*k < 1 || *k > 64) {
    diags().report(args[1]->range, DiagId::TopkCount, *k);
    return Value::error();
  }
  const ir::Dim &along = x->type.shape[dim];
  if (along.isConstant() && along.coefficient() < *k) {
    diags().report(call.range, DiagId::TopkTooMany, *k, dim, along.str());
    return Value::error();
  }
  TensorType out = x->type;
  out.shape[dim] = ir::Dim::constant(*k);
  ir::Stage *values = alongStage(*this, StageKind::TopK, x, dim, out);
  if (!values)
    return Value::error();
  values->k = *k;
  out.dtype = DType::I32;
  ir::Stage *indices = alongStage(*this, StageKind::TopK, x, dim, out);
  indices->k = *k;
  indices->topkIndices = true;
  c.secondResult = indices;
  return stageValue(values);
}

Value CallChecker::checkReshape() {
  ir::Stage *x = tensorArg(*this, args[0]);
  if (!x)
    return Value::error();
  const TensorType &t = x->type;
  const bool flatten = name == "flatten";
  if (flatten && t.rank() < 2) {
    diags().report(args[0]->range, DiagId::RankTooLow, name, 2,
                   ir::shapeStr(t.shape));
    return Value::error();
  }
  auto dim = dimArg(*this, args[1], t);
  if (!dim)
    return Value::error();
  TensorType out = t;
  if (flatten) {
    if (static_cast<unsigned>(*dim) + 1 >= t.rank()) {
      diags().report(args[1]->range, DiagId::DimOutOfRange, *dim,
                     ir::shapeStr(t.shape));
      return Value::error();
    }
    out.shape[*dim] = t.shape[*dim] * t.shape[*dim + 1];
    out.shape.erase(out.shape.begin() + *dim + 1);
  } else {
    // The size of the groups, as a dimension is written: a product of
    // positive literals and size names.
    const ast::Expr *e = args[2];
    std::optional<ir::Dim> n = sizeArg(*this, e);
    if (!n) {
      diags().report(e->range, DiagId::ExpectedSize, name, "size",
                     sourceText(e));
      return Value::error();
    }
    auto outer = t.shape[*dim].divideBy(*n);
    if (!outer) {
      diags().report(e->range, DiagId::UnflattenSize, *dim, t.shape[*dim].str(),
                     n->str());
      return Value::error();
    }
    out.shape[*dim] = *outer;
    out.shape.insert(out.shape.begin() + *dim + 1, *n);
  }
  std::string hint;
  const bool outerIsOne =
      (flatten ? t : out).shape[*dim] == ir::Dim::constant(1);
  auto layout = ir::reshapeLayout(t.layout, *dim, flatten, outerIsOne, hint);
  if (!layout) {
    diags().report(call.range, DiagId::ReshapeLayout, name, x->name,
                   t.layout.str(c.program.mesh), hint);
    return Value::error();
  }
  out.layout = *layout;
  ir::Stage *s = newStage(StageKind::Reshape, std::move(out), {x});
  s->dim = *dim;
  return stageValue(s);
}

Value CallChecker::checkCumSum() {
  auto along = dataAlong(*this, args[0], args[1], /*numeric=*/true);
  if (!along)
    return Value::error();
  auto [x, dim] = *along;
  ir::Stage *s = alongStage(*this, StageKind::CumSum, x, dim, x->type);
  return s ? stageValue(s) : Value::error();
}

Value CallChecker::checkGather() {
  auto along = dataAlong(*this, args[0], args[2], /*numeric=*/false);
  if (!along)
    return Value::error();
  auto [x, dim] = *along;
  ir::Stage *index = indexArg(*this, args[1], x->type, dim);
  if (!index)
    return Value::error();
  std::string hint;
  auto layout = ir::gatherLayout(x->type.layout, index->type.layout,
                                 index->type.rank(), dim, hint);
  if (!layout) {
    diags().report(call.range, DiagId::IndexLayout, name,
                   "'" + x->name + "' is " + layoutOf(x) + " and its index '" +
                       index->name + "' " + layoutOf(index) + "; " + hint);
    return Value::error();
  }
  TensorType out = x->type;
  out.shape[dim] = index->type.shape[dim];
  out.layout = *layout;
  ir::Stage *s = newStage(StageKind::Gather, std::move(out), {x, index});
  s->dim = dim;
  return stageValue(s);
}

Value CallChecker::checkScatter() {
  auto along = dataAlong(*this, args[3], args[2], /*numeric=*/false);
  if (!along)
    return Value::error();
  auto [into, dim] = *along;
  ir::Stage *index = indexArg(*this, args[1], into->type, dim);
  ir::Stage *x = index ? tensorArg(*this, args[0]) : nullptr;
  if (!x)
    return Value::error();
  ir::Shape want = into->type.shape;
  want[dim] = index->type.shape[dim];
  if (x->type.shape != want) {
    diags().report(args[0]->range, DiagId::ScatterSource, ir::shapeStr(want),
                   dim, ir::shapeStr(x->type.shape));
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
                        index->type.rank(), x->type.layout, dim, hint);
  if (!layout) {
    diags().report(call.range, DiagId::IndexLayout, name,
                   "'" + x->name + "' is " + layoutOf(x) + ", its index '" +
                       index->name + "' " + layoutOf(index) +
                       " and the destination '" + into->name + "' " +
                       layoutOf(into) + "; " + hint);
    return Value::error();
  }
  TensorType out = into->type;
  out.layout = *layout;
  ir::Stage *s = newStage(StageKind::Scatter, std::move(out), {into, index, x});
  s->dim = dim;
  return stageValue(s);
}

} // namespace coconet::sema
