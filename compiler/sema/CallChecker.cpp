//===- CallChecker.cpp - the built-in operations --------------------------===//
//
// Checks calls of built-in operations: binds positional and keyword
// arguments to the operation's signature, then applies its element type,
// shape and layout rule. Elementwise operations extend the statement's body;
// the others (reductions, matmul, norms, collectives) become stages.
//
//===----------------------------------------------------------------------===//

#include "sema/CallChecker.h"

#include "ir/LayoutRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

namespace coconet::sema {

Value CallChecker::checkElementwiseCall(const Builtin &b) {
  llvm::SmallVector<Value, 3> vals;
  for (const ast::Expr *e : args) {
    vals.push_back(c.checkExpr(*e));
    if (vals.back().isError())
      return Value::error();
  }
  switch (b.family) {
  case Family::Cast: {
    DType to = *ir::parseDType(name);
    Value &x = vals[0];
    if (x.isLiteral()) {
      if (x.lit == Value::LitKind::Bool) {
        diags().report(call.range, DiagId::CastFromBool, name);
        return Value::error();
      }
      if (x.lit == Value::LitKind::Float && !ir::isFloat(to)) {
        // A float literal converted to an integer type truncates.
        Value t = x;
        t.lit = Value::LitKind::Int;
        t.litInt = static_cast<__int128>(x.litFloat);
        return typeLiteral(c, t, to);
      }
      return typeLiteral(c, x, to);
    }
    if (x.type.dtype == DType::Bool) {
      diags().report(call.range, DiagId::CastFromBool, name);
      return Value::error();
    }
    return combine(c, ScalarOp::Cast, to, vals, call.range, name);
  }
  case Family::FloatMath:
  case Family::NumMath: {
    Value &x = vals[0];
    if (x.isLiteral())
      x = typeLiteral(c, x,
                      x.lit == Value::LitKind::Float  ? DType::F32
                      : b.family == Family::FloatMath ? DType::F32
                                                      : DType::I32);
    if (x.isError())
      return x;
    if (b.family == Family::FloatMath && !requireFloat(args[0], x.type.dtype))
      return Value::error();
    if (x.type.dtype == DType::Bool) {
      diags().report(call.range, DiagId::BoolArithmetic, name);
      return Value::error();
    }
    return combine(c, *ir::lookupCallableScalarOp(name), x.type.dtype, vals,
                   call.range, name);
  }
  case Family::Pow:
  case Family::MinMax: {
    auto dtype = unifyDTypes(c, vals, call.range, name);
    if (!dtype)
      return Value::error();
    if (!*dtype) { // two literals: give them the default type
      DType d = vals[0].lit == Value::LitKind::Float ||
                        vals[1].lit == Value::LitKind::Float ||
                        b.family == Family::Pow
                    ? DType::F32
                    : DType::I32;
      for (Value &v : vals)
        if ((v = typeLiteral(c, v, d)).isError())
          return v;
      *dtype = d;
    }
    if (b.family == Family::Pow && !requireFloat(&call, **dtype))
      return Value::error();
    if (**dtype == DType::Bool) {
      diags().report(call.range, DiagId::BoolArithmetic, name);
      return Value::error();
    }
    return combine(c, *ir::lookupCallableScalarOp(name), **dtype, vals,
                   call.range, name);
  }
  case Family::Select: {
    Value &cond = vals[0];
    if (cond.isLiteral())
      cond = typeLiteral(c, cond, DType::Bool);
    if (cond.isError())
      return cond;
    if (cond.type.dtype != DType::Bool) {
      diags().report(args[0]->range, DiagId::ExpectedBool, name,
                     ir::dtypeName(cond.type.dtype));
      return Value::error();
    }
    auto dtype = unifyDTypes(c, llvm::MutableArrayRef<Value>(vals).drop_front(),
                             call.range, name);
    if (!dtype)
      return Value::error();
    if (!*dtype) {
      DType d = vals[1].lit == Value::LitKind::Float ||
                        vals[2].lit == Value::LitKind::Float
                    ? DType::F32
                : vals[1].lit == Value::LitKind::Bool ? DType::Bool
                                                      : DType::I32;
      for (unsigned i = 1; i < 3; ++i)
        if ((vals[i] = typeLiteral(c, vals[i], d)).isError())
          return vals[i];
      *dtype = d;
    }
    return combine(c, ScalarOp::Select, **dtype, vals, call.range, name);
  }
  case Family::Dropout: {
    Value &x = vals[0];
    if (x.isLiteral() || !ir::isFloat(x.type.dtype)) {
      diags().report(args[0]->range, DiagId::ExpectedFloat, name,
                     x.isLiteral() ? "a literal" : ir::dtypeName(x.type.dtype));
      return Value::error();
    }
    // p: a float scalar, used as f32.
    Value &p = vals[1];
    if (p.isLiteral()) {
      p = typeLiteral(c, p, DType::F32);
      if (p.isError())
        return p;
    } else if (!p.type.isScalar() || !ir::isFloat(p.type.dtype)) {
      if (!p.type.isScalar())
        diags().report(args[1]->range, DiagId::ExpectedScalar, name,
                       "probability", ir::shapeStr(p.type.shape));
      else
        diags().report(args[1]->range, DiagId::ExpectedFloat, name,
                       ir::dtypeName(p.type.dtype));
      return Value::error();
    } else if (p.type.dtype != DType::F32) {
      p = combine(c, ScalarOp::Cast, DType::F32, {p}, p.range, "f32");
    }
    Value &seed = vals[2];
    if (seed.isLiteral()) {
      seed = typeLiteral(c, seed, DType::U64);
      if (seed.isError())
        return seed;
    } else if (!seed.type.isScalar() || seed.type.dtype != DType::U64) {
      diags().report(args[2]->range, DiagId::ExpectedInteger, name,
                     seed.type.str(c.program.mesh) + " (the seed must be u64)");
      return Value::error();
    }
    return combine(c, ScalarOp::Dropout, x.type.dtype, vals, call.range, name);
  }
  case Family::Reduction:
  case Family::MatMul:
  case Family::Transpose:
  case Family::Expand:
  case Family::LayerNorm:
  case Family::RmsNorm:
  case Family::Reshape:
  case Family::TopK:
  case Family::CumSum:
  case Family::Gather:
  case Family::Scatter:
  case Family::GroupedMatMul:
  case Family::AllToAllV:
  case Family::Collective:
  case Family::Update:
    break; // run() gives these to their own checkers
  }
  llvm_unreachable("not an elementwise builtin");
}

/// The checked tensor operand of a non-elementwise operation.
static bool isTensorOrReport(CallChecker &cc, const ast::Expr *e,
                             const TensorType &t, unsigned minRank) {
  if (t.rank() >= minRank)
    return true;
  if (t.isScalar())
    cc.diags().report(e->range, DiagId::ExpectedTensor, cc.name);
  else
    cc.diags().report(e->range, DiagId::RankTooLow, cc.name, minRank,
                      ir::shapeStr(t.shape));
  return false;
}

Value CallChecker::checkReduction() {
  ir::Stage *x = stageArg(args[0]);
  if (!x)
    return Value::error();
  const TensorType &t = x->type;
  ir::ReductionKind kind = llvm::StringSwitch<ir::ReductionKind>(name)
                               .Case("sum", ir::ReductionKind::Sum)
                               .Case("max", ir::ReductionKind::Max)
                               .Case("min", ir::ReductionKind::Min)
                               .Default(ir::ReductionKind::Norm);
  if (t.dtype == DType::Bool) {
    diags().report(args[0]->range, DiagId::BoolArithmetic, name);
    return Value::error();
  }
  if (kind == ir::ReductionKind::Norm && !requireFloat(args[0], t.dtype))
    return Value::error();
  // Per segment: one value per segment of the table, shape [T].
  if (const ast::Expr *by = args.size() > 2 ? args[2] : nullptr) {
    if (args[1]) {
      diags().report(call.range, DiagId::ByAndDim, name);
      return Value::error();
    }
    const ir::SegmentTableDecl *table = tableArg(by, "'by='");
    if (!table)
      return Value::error();
    if (t.segments != table->name) {
      diags().report(args[0]->range, DiagId::ByNotSegmented, name, table->name,
                     t.str(c.program.mesh));
      return Value::error();
    }
    TensorType out;
    out.dtype = t.dtype;
    out.shape = {table->count};
    out.layout = ir::reductionLayout(t.layout, t.rank(), -1);
    ir::Stage *s = newStage(StageKind::Reduction, std::move(out), {x});
    s->reduction = kind;
    s->dim = -1;
    s->segments = table->name;
    return stageValue(s);
  }
  int dim = -1;
  if (args[1]) {
    auto d = constantInt(args[1], "dimension");
    if (!d)
      return Value::error();
    int64_t rank = t.rank();
    int64_t resolved = *d < 0 ? *d + rank : *d;
    if (resolved < 0 || resolved >= rank) {
      diags().report(args[1]->range, DiagId::DimOutOfRange, *d,
                     ir::shapeStr(t.shape));
      return Value::error();
    }
    dim = static_cast<int>(resolved);
  }
  TensorType out;
  out.dtype = t.dtype;
  if (dim >= 0) {
    out.shape = t.shape;
    out.shape.erase(out.shape.begin() + dim);
  }
  out.layout = ir::reductionLayout(t.layout, t.rank(), dim);
  ir::Stage *s = newStage(StageKind::Reduction, std::move(out), {x});
  s->reduction = kind;
  s->dim = dim;
  return stageValue(s);
}

Value CallChecker::checkExpand() {
  const ir::SegmentTableDecl *table = tableArg(args[1], "'expand'");
  if (!table)
    return Value::error();
  ir::Stage *x = stageArg(args[0]);
  if (!x)
    return Value::error();
  const TensorType &t = x->type;
  if (t.rank() != 1 || t.shape[0] != table->count) {
    diags().report(args[0]->range, DiagId::ExpandShape, table->name,
                   table->count.str(), t.str(c.program.mesh));
    return Value::error();
  }
  if (t.layout.isSlicedAnywhere()) {
    diags().report(args[0]->range, DiagId::ExpandSliced, x->name,
                   t.layout.str(c.program.mesh));
    return Value::error();
  }
  return expandLeaf(c, x, *table, call.range);
}

Value CallChecker::checkMatMul() {
  ir::Stage *a = stageArg(args[0]);
  ir::Stage *b = a ? stageArg(args[1]) : nullptr;
  if (!a || !b)
    return Value::error();
  const TensorType &ta = a->type, &tb = b->type;
  if (!isTensorOrReport(*this, args[0], ta, 2) ||
      !isTensorOrReport(*this, args[1], tb, 2))
    return Value::error();
  if (ta.dtype != tb.dtype) {
    diags().report(call.range, DiagId::MixedTypes, name,
                   ir::dtypeName(ta.dtype), ir::dtypeName(tb.dtype),
                   ir::dtypeName(preferredType(ta.dtype, tb.dtype)));
    return Value::error();
  }
  if (!requireFloat(args[0], ta.dtype))
    return Value::error();
  unsigned ra = ta.rank(), rb = tb.rank();
  if (rb > 2 &&
      (rb != ra || !std::equal(ta.shape.begin(), ta.shape.begin() + ra - 2,
                               tb.shape.begin()))) {
    diags().report(call.range, DiagId::ShapeMismatch, name,
                   ir::shapeStr(ta.shape), ir::shapeStr(tb.shape));
    return Value::error();
  }
  if (ta.shape[ra - 1] != tb.shape[rb - 2]) {
    diags().report(call.range, DiagId::MatmulContraction,
                   ta.shape[ra - 1].str(), tb.shape[rb - 2].str());
    return Value::error();
  }
  std::string hint;
  auto layout = ir::matmulLayout(ta.layout, ra, tb.layout, rb, hint);
  if (!layout) {
    diags().report(call.range, DiagId::MatmulLayout,
                   ta.layout.str(c.program.mesh), tb.layout.str(c.program.mesh),
                   hint);
    return Value::error();
  }
  TensorType out;
  out.dtype = ta.dtype;
  out.shape = ta.shape;
  out.shape.back() = tb.shape[rb - 1];
  out.layout = *layout;
  return stageValue(newStage(StageKind::MatMul, std::move(out), {a, b}));
}

Value CallChecker::checkTranspose() {
  ir::Stage *x = stageArg(args[0]);
  if (!x || !isTensorOrReport(*this, args[0], x->type, 2))
    return Value::error();
  TensorType out = x->type;
  const int rank = out.rank();
  int dims[2] = {rank - 2, rank - 1};
  if (args[1] || args[2]) {
    if (!args[1] || !args[2]) {
      diags().report(call.range, DiagId::TransposeDims);
      return Value::error();
    }
    for (unsigned i = 0; i < 2; ++i) {
      auto d = constantInt(args[1 + i], "dimension");
      if (!d)
        return Value::error();
      int64_t resolved = *d < 0 ? *d + rank : *d;
      if (resolved < 0 || resolved >= rank) {
        diags().report(args[1 + i]->range, DiagId::DimOutOfRange, *d,
                       ir::shapeStr(out.shape));
        return Value::error();
      }
      dims[i] = static_cast<int>(resolved);
    }
    if (dims[0] == dims[1]) {
      diags().report(call.range, DiagId::TransposeDims);
      return Value::error();
    }
    if (dims[0] > dims[1])
      std::swap(dims[0], dims[1]);
  }
  std::swap(out.shape[dims[0]], out.shape[dims[1]]);
  out.layout = ir::transposeLayout(x->type.layout, dims[0], dims[1]);
  ir::Stage *s = newStage(StageKind::Transpose, std::move(out), {x});
  s->dim = dims[0];
  s->dim2 = dims[1];
  return stageValue(s);
}

Value CallChecker::checkNorm(bool layer) {
  ir::Stage *x = stageArg(args[0]);
  if (!x || !isTensorOrReport(*this, args[0], x->type, 1) ||
      !requireFloat(args[0], x->type.dtype))
    return Value::error();
  const TensorType &t = x->type;
  int last = static_cast<int>(t.rank()) - 1;
  if (t.layout.slicesDim(last)) {
    diags().report(args[0]->range, DiagId::SlicedRowOp, name,
                   "; allgather it first, or slice another dimension");
    return Value::error();
  }
  TensorType out = t;
  llvm::SmallVector<ir::Stage *, 4> operands{x};
  unsigned numParams = layer ? 2 : 1;
  const char *paramNames[] = {"gamma", "beta"};
  for (unsigned i = 0; i < numParams; ++i) {
    ir::Stage *p = stageArg(args[1 + i]);
    if (!p)
      return Value::error();
    if (p->type.rank() != 1 || p->type.shape[0] != t.shape[last] ||
        p->type.dtype != t.dtype) {
      diags().report(args[1 + i]->range, DiagId::NormParamShape, name,
                     paramNames[i], t.shape[last].str(),
                     p->type.str(c.program.mesh));
      return Value::error();
    }
    std::string hint;
    auto joined = ir::joinLayouts(
        out.layout, ir::alignLayout(p->type.layout, 1, t.rank()), hint);
    if (!joined) {
      diags().report(call.range, DiagId::LayoutMismatch, name,
                     out.layout.str(c.program.mesh),
                     p->type.layout.str(c.program.mesh), hint);
      return Value::error();
    }
    out.layout = *joined;
    operands.push_back(p);
  }
  ir::Stage *eps = scalarArg(args[1 + numParams], t.dtype, "epsilon");
  if (!eps)
    return Value::error();
  operands.push_back(eps);
  return stageValue(newStage(layer ? StageKind::LayerNorm : StageKind::RmsNorm,
                             std::move(out), operands));
}

Value CallChecker::checkCollective() {
  // A collective's builtin is its stage kind's printed name.
  StageKind kind = *ir::parseStageKind(name);
  Signature sig =
      lookupBuiltin(name, call.operands.size(), hasDimKeyword())->sig;
  // `alltoall(sum, x)`: an operator where the data goes (the axis check
  // below would call `x` an unknown axis).
  if (!llvm::is_contained(sig.params, "op"))
    if (const ast::Expr *first = arg("x", sig);
        first && first->kind == ast::Expr::Kind::Name &&
        ir::parseReduceOp(first->text) && !c.names.count(first->text)) {
      diags().report(first->range, DiagId::CollectiveTakesNoOp, name,
                     first->text);
      return Value::error();
    }
  ir::ReduceOp op = ir::ReduceOp::Sum;
  if (const ast::Expr *e = arg("op", sig)) {
    auto parsed = reduceOpArg(e);
    if (!parsed)
      return Value::error();
    op = *parsed;
  }
  bool needsAxis = kind == StageKind::ReduceScatter ||
                   kind == StageKind::AllGather ||
                   kind == StageKind::SendRecv || kind == StageKind::AllToAll;
  auto axis = axisArg(arg("axis", sig), needsAxis);
  if (!axis)
    return Value::error();
  int64_t root = 0, offset = 0;
  if (const ast::Expr *e = arg("root", sig)) {
    auto r = constantInt(e, "root");
    if (!r)
      return Value::error();
    if (*r < 0) {
      diags().report(e->range, DiagId::RootOutOfRange, *r);
      return Value::error();
    }
    root = *r;
  }
  if (const ast::Expr *e = arg("offset", sig)) {
    auto o = constantInt(e, "offset");
    if (!o)
      return Value::error();
    offset = *o;
  }
  const ast::Expr *xExpr = arg("x", sig);
  ir::Stage *x = stageArg(xExpr);
  if (!x)
    return Value::error();
  const TensorType &t = x->type;
  if (t.dtype == DType::Bool) {
    diags().report(xExpr->range, DiagId::BoolArithmetic, name);
    return Value::error();
  }
  if (op == ir::ReduceOp::Avg && !ir::isFloat(t.dtype)) {
    diags().report(arg("op", sig)->range, DiagId::ReduceOpType, "avg",
                   ir::dtypeName(t.dtype));
    return Value::error();
  }
  int dim = 0;
  if (kind == StageKind::ReduceScatter || kind == StageKind::AllGather ||
      kind == StageKind::AllToAll) {
    if (!isTensorOrReport(*this, xExpr, t, 1))
      return Value::error();
  }
  if (const ast::Expr *e = arg("dim", sig)) {
    auto d = constantInt(e, "dimension");
    if (!d)
      return Value::error();
    int64_t resolved = *d < 0 ? *d + t.rank() : *d;
    if (resolved < 0 || resolved >= t.rank()) {
      diags().report(e->range, DiagId::DimOutOfRange, *d,
                     ir::shapeStr(t.shape));
      return Value::error();
    }
    dim = static_cast<int>(resolved);
  }
  std::string need;
  unsigned badAxis = 0;
  auto layout =
      ir::communicationLayout(kind, t.layout, *axis, dim, need, badAxis);
  if (!layout) {
    std::string got = t.layout.str(c.program.mesh);
    std::string what = need;
    if (!c.program.mesh.isImplicit && llvm::StringRef(need).ends_with(" input"))
      what += " on axis '" + c.program.mesh.axes[badAxis].name + "'";
    auto diag = diags().report(xExpr->range, DiagId::CollectiveInput, name,
                               what, x->name, got);
    if (x->loc.isValid())
      diag.note(x->loc, DiagId::ValueDefinedHere, x->name);
    return Value::error();
  }
  // The sum of per-rank L2 norms is not the norm of the whole tensor.
  if ((kind == StageKind::AllReduce || kind == StageKind::Reduce) &&
      x->kind == StageKind::Reduction &&
      x->reduction == ir::ReductionKind::Norm &&
      x->operands[0]->type.layout.isSlicedAnywhere())
    diags().report(xExpr->range, DiagId::PartialValue, "norm", "sliced",
                   "combining per-rank norms does not give the global norm; "
                   "use sqrt(allreduce(sum, sum(x * x)))");
  TensorType out = t;
  out.layout = *layout;
  ir::Stage *s = newStage(kind, std::move(out), {x});
  s->reduceOp = op;
  s->axis = *axis;
  s->root = root;
  s->offset = offset;
  if (kind == StageKind::AllGather) {
    // The gathered dimension is the one sliced over the axis.
    s->dim = t.layout[*axis].dim;
  } else {
    s->dim = dim;
  }
  return stageValue(s);
}

Value CallChecker::run() {
  auto builtin = lookupBuiltin(name, call.operands.size(), hasDimKeyword());
  if (!builtin) {
    if (c.names.count(name)) {
      diags().report(call.calleeRange, DiagId::NotAnOperation, name);
      return Value::error();
    }
    if (c.programNames.contains(name)) {
      diags().report(call.calleeRange, DiagId::ProgramCall, name);
      return Value::error();
    }
    auto diag =
        diags().report(call.calleeRange, DiagId::UnknownOperation, name);
    std::optional<std::string> best;
    unsigned bestDist = 3;
    for (llvm::StringRef candidate : builtinNames()) {
      unsigned d = name.edit_distance(candidate, true, bestDist);
      if (d < bestDist) {
        bestDist = d;
        best = candidate.str();
      }
    }
    if (best)
      diag.note(call.calleeRange, DiagId::DidYouMean, *best);
    return Value::error();
  }
  if (!bind(builtin->sig))
    return Value::error();
  switch (builtin->family) {
  case Family::Cast:
  case Family::FloatMath:
  case Family::NumMath:
  case Family::Pow:
  case Family::MinMax:
  case Family::Select:
  case Family::Dropout:
    return checkElementwiseCall(*builtin);
  case Family::Reduction:
    return checkReduction();
  case Family::MatMul:
    return checkMatMul();
  case Family::Transpose:
    return checkTranspose();
  case Family::Expand:
    return checkExpand();
  case Family::LayerNorm:
    return checkNorm(true);
  case Family::RmsNorm:
    return checkNorm(false);
  case Family::Reshape:
    return checkReshape();
  case Family::TopK:
    return checkTopK();
  case Family::CumSum:
    return checkCumSum();
  case Family::Gather:
    return checkGather();
  case Family::Scatter:
    return checkScatter();
  case Family::GroupedMatMul:
    return checkGroupedMatMul();
  case Family::AllToAllV:
    return checkAllToAllV();
  case Family::Collective:
    return checkCollective();
  case Family::Update:
    diags().report(call.range, DiagId::UpdateNotStatement);
    return Value::error();
  }
  return Value::error();
}

Value ProgramChecker::checkCall(const ast::Expr &expr) {
  CallChecker checker{*this, expr, expr.text, {}};
  return checker.run();
}

} // namespace coconet::sema
