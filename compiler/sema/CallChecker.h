//===- CallChecker.h - checking one call (internal) --------------*- C++
//-*-===//
//
// Internal to sema/: the state of checking one call of a built-in
// operation. CallChecker.cpp checks most families; IndexChecker.cpp the
// operations that read or write by position (topk, cumsum, gather,
// scatter).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SEMA_CALLCHECKER_H
#define COCONET_SEMA_CALLCHECKER_H

#include "sema/Builtins.h"
#include "sema/ProgramChecker.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::sema {

using ir::DType;
using ir::ScalarOp;
using ir::StageKind;
using ir::TensorType;

/// Checking of one call: its bound arguments and the checker.
struct CallChecker {
  ProgramChecker &c;
  const ast::Expr &call;
  llvm::StringRef name;
  llvm::SmallVector<const ast::Expr *, 5> args; // by signature position

  DiagnosticEngine &diags() { return c.diags; }
  bool hasDimKeyword() const {
    for (const ast::Ident &key : call.argKeys)
      if (key.name == "dim" || key.name == "by")
        return true;
    return false;
  }
  unsigned numAxes() const { return c.program.mesh.size(); }

  /// Binds arguments to `sig`; reports and returns false on a mismatch.
  bool bind(const Signature &sig) {
    args.assign(sig.params.size(), nullptr);
    bool sawKeyword = false;
    size_t positional = 0;
    for (size_t i = 0; i < call.operands.size(); ++i) {
      const ast::Ident &key = call.argKeys[i];
      if (key.name.empty()) {
        if (sawKeyword) {
          diags().report(call.operands[i]->range,
                         DiagId::PositionalAfterKeyword);
          return false;
        }
        if (positional >= sig.params.size()) {
          diags().report(call.range, DiagId::WrongArgCount, name, argCount(sig),
                         call.operands.size());
          return false;
        }
        args[positional++] = call.operands[i].get();
        continue;
      }
      sawKeyword = true;
      auto it = llvm::find(sig.params, key.name);
      if (it == sig.params.end()) {
        diags().report(key.range, DiagId::UnknownKeyword, name, key.name);
        return false;
      }
      size_t index = it - sig.params.begin();
      if (args[index]) {
        diags().report(key.range, DiagId::DuplicateKeyword, key.name);
        return false;
      }
      args[index] = call.operands[i].get();
    }
    for (unsigned i = 0; i < sig.required; ++i) {
      if (!args[i]) {
        diags().report(call.range, DiagId::WrongArgCount, name, argCount(sig),
                       call.operands.size());
        return false;
      }
    }
    return true;
  }

  const ast::Expr *arg(llvm::StringRef param, const Signature &sig) const {
    auto it = llvm::find(sig.params, param);
    return it == sig.params.end() ? nullptr : args[it - sig.params.begin()];
  }

  /// An integer literal argument, possibly signed.
  std::optional<int64_t> constantInt(const ast::Expr *e, llvm::StringRef what) {
    const ast::Expr *inner = e;
    bool negate = false;
    while (inner->kind == ast::Expr::Kind::Unary) {
      negate ^= inner->unaryOp == ast::UnaryOp::Neg;
      inner = inner->operands[0].get();
    }
    if (inner->kind != ast::Expr::Kind::IntLit ||
        inner->intValue > static_cast<uint64_t>(INT64_MAX)) {
      diags().report(e->range, DiagId::ExpectedConstant, name, what);
      return std::nullopt;
    }
    int64_t v = static_cast<int64_t>(inner->intValue);
    return negate ? -v : v;
  }

  /// What the user wrote for `e` (a name, `3`, `a + b`): the diagnostics
  /// engine escapes and cuts it.
  static std::string sourceText(const ast::Expr *e) {
    if (e->kind == ast::Expr::Kind::Name)
      return e->text;
    const char *begin = e->range.Start.getPointer();
    const char *end = e->range.End.getPointer();
    if (!begin || !end || end <= begin)
      return "expression";
    return std::string(begin, end);
  }

  /// The mesh axis named by `e`, or -1 for "every axis" when `e` is null.
  std::optional<int> axisArg(const ast::Expr *e, bool required) {
    const ir::Mesh &mesh = c.program.mesh;
    if (!e) {
      if (mesh.size() == 1)
        return 0;
      if (required) {
        diags().report(call.range, DiagId::CollectiveNeedsAxis, name,
                       mesh.size());
        return std::nullopt;
      }
      return -1;
    }
    if (e->kind == ast::Expr::Kind::Name) {
      if (auto axis = mesh.findAxis(e->text))
        return static_cast<int>(*axis);
    }
    std::string axes;
    for (const auto &a : mesh.axes)
      axes += (axes.empty() ? "'" : ", '") + a.name + "'";
    std::string what = mesh.isImplicit
                           ? "the program has no mesh; its only axis is " + axes
                           : "the mesh has axes " + axes;
    diags().report(e->range, DiagId::UnknownMeshAxis, sourceText(e), what);
    return std::nullopt;
  }

  std::optional<ir::ReduceOp> reduceOpArg(const ast::Expr *e) {
    if (e->kind == ast::Expr::Kind::Name)
      if (auto op = ir::parseReduceOp(e->text))
        return op;
    diags().report(e->range, DiagId::NotAReduceOp, sourceText(e));
    return std::nullopt;
  }

  /// A checked operand that must be a (non-literal) stage.
  ir::Stage *stageArg(const ast::Expr *e, Value *out = nullptr) {
    Value v = c.checkExpr(*e);
    if (v.isError())
      return nullptr;
    if (out)
      *out = v;
    if (v.kind == Value::Kind::Stage)
      return v.stage;
    return c.materialize(v, c.nestedName(), /*copyExisting=*/false);
  }

  Value stageValue(ir::Stage *stage) {
    Value v;
    v.kind = Value::Kind::Stage;
    v.stage = stage;
    v.fresh = true;
    v.type = stage->type;
    v.range = call.range;
    return v;
  }

  ir::Stage *newStage(StageKind kind, TensorType type,
                      llvm::ArrayRef<ir::Stage *> operands) {
    return c.program.addStage(kind, c.nestedName(), std::move(type), operands,
                              call.range);
  }

  bool requireFloat(const ast::Expr *e, DType dtype) {
    if (ir::isFloat(dtype))
      return true;
    diags().report(e->range, DiagId::ExpectedFloat, name, ir::dtypeName(dtype));
    return false;
  }

  /// A scalar operand `what` of element type `dtype` (literals adapt).
  ir::Stage *scalarArg(const ast::Expr *e, DType dtype, llvm::StringRef what) {
    Value v = c.checkExpr(*e);
    if (v.isError())
      return nullptr;
    if (v.isLiteral()) {
      Value typed = typeLiteral(c, v, dtype);
      if (typed.isError())
        return nullptr;
      return c.materialize(typed, c.nestedName(), false);
    }
    if (!v.type.isScalar()) {
      diags().report(e->range, DiagId::ExpectedScalar, name, what,
                     ir::shapeStr(v.type.shape));
      return nullptr;
    }
    if (v.type.dtype != dtype) {
      diags().report(e->range, DiagId::MixedTypes, name,
                     ir::dtypeName(v.type.dtype), ir::dtypeName(dtype),
                     ir::dtypeName(dtype));
      return nullptr;
    }
    // A per-row parameter must be the same on every rank.
    if (!v.type.layout.isReplicated()) {
      diags().report(e->range, DiagId::ScalarNotReplicated, name, what,
                     v.type.layout.str(c.program.mesh));
      return nullptr;
    }
    if (v.kind == Value::Kind::Stage)
      return v.stage;
    return c.materialize(v, c.nestedName(), false);
  }

  /// The segment table an argument (`by=layers`) names.
  const ir::SegmentTableDecl *tableArg(const ast::Expr *e,
                                       llvm::StringRef what) {
    if (e->kind == ast::Expr::Kind::Name)
      if (const ir::SegmentTableDecl *t = c.program.findTable(e->text))
        return t;
    diags().report(e->range, DiagId::SegmentedNotTable, sourceText(e), what);
    return nullptr;
  }

  Value checkElementwiseCall(const Builtin &b);
  Value checkExpand();
  Value checkReduction();
  Value checkMatMul();
  Value checkTranspose();
  Value checkNorm(bool layer);
  Value checkCollective();
  // IndexChecker.cpp.
  /// A stage's layout as the source writes it, for a message.
  std::string layoutOf(const ir::Stage *s) const {
    return s->type.layout.str(c.program.mesh);
  }
  Value checkReshape();
  Value checkTopK();
  Value checkCumSum();
  Value checkGather();
  Value checkScatter();
  // DispatchChecker.cpp.
  Value checkAllToAllV();
  Value checkGroupedMatMul();
  Value run();
};

/// A tensor operand of an index or dispatch operation: not a scalar, not
/// segmented (IndexChecker.cpp).
ir::Stage *tensorArg(CallChecker &cc, const ast::Expr *e);
/// A size written as a dimension is (`C`, `4`, `2 * N`), or nullopt.
std::optional<ir::Dim> sizeArg(CallChecker &cc, const ast::Expr *e);

} // namespace coconet::sema

#endif // COCONET_SEMA_CALLCHECKER_H
