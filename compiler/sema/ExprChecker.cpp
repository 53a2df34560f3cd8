//===- ExprChecker.cpp - types, shapes and layouts of expressions ---------===//
//
// Checks one expression of a statement: element types (no implicit
// conversions; literals adapt), broadcasting shapes, and the layout rules of
// ir/LayoutRules.h. Elementwise operations build a body; every other
// operation becomes its own stage, named after the statement.
//
//===----------------------------------------------------------------------===//

#include "ir/LayoutRules.h"
#include "sema/Builtins.h"
#include "sema/ProgramChecker.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <limits>

namespace coconet::sema {

using ir::DType;
using ir::ScalarOp;
using ir::StageKind;
using ir::TensorType;

std::string ProgramChecker::nestedName() {
  return statementName + "." + std::to_string(++nestedCount);
}

//===----------------------------------------------------------------------===//
// Bodies
//===----------------------------------------------------------------------===//

static const BodyNode *newNode(ProgramChecker &c, BodyNode node) {
  c.nodes.push_back(std::make_unique<BodyNode>(std::move(node)));
  return c.nodes.back().get();
}

/// A body reading a value: stages become operand leaves.
static const BodyNode *asNode(ProgramChecker &c, const Value &v) {
  if (v.kind == Value::Kind::Body)
    return v.body;
  BodyNode leaf;
  leaf.op = ScalarOp::Operand;
  leaf.dtype = v.type.dtype;
  leaf.stage = v.stage;
  leaf.shape = v.type.shape;
  leaf.range = v.range;
  return newNode(c, std::move(leaf));
}

/// Does an integer fit in `dtype`?
static bool intFits(__int128 v, DType dtype) {
  switch (dtype) {
  case DType::I32:
    return v >= std::numeric_limits<int32_t>::min() &&
           v <= std::numeric_limits<int32_t>::max();
  case DType::I64:
    return v >= std::numeric_limits<int64_t>::min() &&
           v <= std::numeric_limits<int64_t>::max();
  case DType::U64:
    return v >= 0 &&
           v <= static_cast<__int128>(std::numeric_limits<uint64_t>::max());
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
    return true;
  case DType::Bool:
    return false;
  }
  return false;
}

static std::string literalText(const Value &v) {
  if (v.lit == Value::LitKind::Bool)
    return v.litBool ? "true" : "false";
  if (v.lit == Value::LitKind::Float) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", v.litFloat);
    return buf;
  }
  __int128 x = v.litInt;
  bool neg = x < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(x) : x;
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u);
  return neg ? "-" + s : s;
}

/// Gives a literal the element type `dtype`, as a scalar body constant.
Value typeLiteral(ProgramChecker &c, const Value &lit, DType dtype) {
  bool ok = true;
  switch (lit.lit) {
  case Value::LitKind::Bool:
    ok = dtype == DType::Bool;
    break;
  case Value::LitKind::Float:
    ok = ir::isFloat(dtype);
    break;
  case Value::LitKind::Int:
    ok = dtype != DType::Bool && intFits(lit.litInt, dtype);
    break;
  }
  if (!ok) {
    c.diags.report(lit.range, DiagId::LiteralDoesNotFit, literalText(lit),
                   ir::dtypeName(dtype));
    return Value::error();
  }
  BodyNode node;
  node.op = ScalarOp::Const;
  node.dtype = dtype;
  node.range = lit.range;
  switch (lit.lit) {
  case Value::LitKind::Bool:
    node.constInt = lit.litBool;
    node.constValue = lit.litBool;
    break;
  case Value::LitKind::Float:
    node.constValue = lit.litFloat;
    break;
  case Value::LitKind::Int:
    node.constInt = static_cast<int64_t>(lit.litInt);
    node.constValue = static_cast<double>(lit.litInt);
    break;
  }
  Value v;
  v.kind = Value::Kind::Body;
  v.body = newNode(c, std::move(node));
  v.type.dtype = dtype;
  v.type.layout = ir::Layout::replicated(c.program.mesh.size());
  v.range = lit.range;
  return v;
}

/// The default type of a literal standing alone.
static DType defaultLiteralType(const Value &lit) {
  switch (lit.lit) {
  case Value::LitKind::Bool:
    return DType::Bool;
  case Value::LitKind::Float:
    return DType::F32;
  case Value::LitKind::Int:
    return intFits(lit.litInt, DType::I32) ? DType::I32 : DType::I64;
  }
  return DType::F32;
}

/// Broadcasts two shapes (trailing alignment; equal or literal 1).
static std::optional<ir::Shape> broadcastShapes(const ir::Shape &a,
                                                const ir::Shape &b) {
  const ir::Shape &longer = a.size() >= b.size() ? a : b;
  const ir::Shape &shorter = a.size() >= b.size() ? b : a;
  ir::Shape out = longer;
  size_t shift = longer.size() - shorter.size();
  ir::Dim one = ir::Dim::constant(1);
  for (size_t i = 0; i < shorter.size(); ++i) {
    const ir::Dim &x = longer[i + shift], &y = shorter[i];
    if (x == y || y == one)
      continue;
    if (x == one) {
      out[i + shift] = y;
      continue;
    }
    return std::nullopt;
  }
  return out;
}

/// Combines typed (non-literal) operands of an elementwise operation into a
/// node. Checks shapes and layouts; the dtype rule is the caller's.
Value combine(ProgramChecker &c, ScalarOp op, DType dtype,
              llvm::ArrayRef<Value> args, llvm::SMRange range,
              llvm::StringRef opName) {
  TensorType type;
  type.dtype = dtype;
  type.layout = ir::Layout::replicated(c.program.mesh.size());
  bool first = true;
  const Value *firstTyped = nullptr;
  for (const Value &a : args) {
    if (a.isLiteral())
      continue;
    if (first) {
      type.shape = a.type.shape;
      type.layout = a.type.layout;
      type.segments = a.type.segments;
      first = false;
      firstTyped = &a;
      continue;
    }
    auto shape = broadcastShapes(type.shape, a.type.shape);
    if (!shape) {
      // One value per segment, read at each element of a segmented tensor.
      auto perSegment = [&](const TensorType &flat, const TensorType &other) {
        const ir::SegmentTableDecl *t = c.program.findTable(flat.segments);
        return t && other.rank() == 1 && other.shape[0] == t->count ? t
                                                                    : nullptr;
      };
      const ir::SegmentTableDecl *table = perSegment(type, a.type);
      if (!table)
        table = perSegment(a.type, type);
      if (table)
        c.diags.report(range, DiagId::PerSegmentFlatRead, opName,
                       "[" + table->count.str() + "]", table->name);
      else
        c.diags.report(range, DiagId::ShapeMismatch, opName,
                       ir::shapeStr(firstTyped->type.shape),
                       ir::shapeStr(a.type.shape));
      return Value::error();
    }
    if (a.type.isSegmented()) {
      if (type.isSegmented() && type.segments != a.type.segments) {
        c.diags.report(range, DiagId::SegmentsMismatch, opName, type.segments,
                       a.type.segments);
        return Value::error();
      }
      type.segments = a.type.segments;
    }
    std::string hint;
    auto lhs = ir::alignLayout(type.layout, type.shape.size(), shape->size());
    auto rhs =
        ir::alignLayout(a.type.layout, a.type.shape.size(), shape->size());
    auto layout = ir::joinLayouts(lhs, rhs, hint);
    if (!layout) {
      c.diags.report(range, DiagId::LayoutMismatch, opName,
                     firstTyped->type.layout.str(c.program.mesh),
                     a.type.layout.str(c.program.mesh), hint);
      return Value::error();
    }
    type.shape = *shape;
    type.layout = *layout;
  }
  // A segmented vector broadcast into a matrix is a plain operand there:
  // the result is not a list of segments.
  if (type.isSegmented() && type.rank() != 1)
    type.segments.clear();
  BodyNode node;
  node.op = op;
  node.dtype = dtype;
  node.shape = type.shape;
  node.range = range;
  for (const Value &a : args)
    node.args.push_back(asNode(c, a));
  Value v;
  v.kind = Value::Kind::Body;
  v.body = newNode(c, std::move(node));
  v.type = std::move(type);
  v.range = range;
  return v;
}

Value expandLeaf(ProgramChecker &c, ir::Stage *x,
                 const ir::SegmentTableDecl &table, llvm::SMRange range) {
  BodyNode leaf;
  leaf.op = ScalarOp::Operand;
  leaf.dtype = x->type.dtype;
  leaf.stage = x;
  leaf.shape = {table.length};
  leaf.range = range;
  Value v;
  v.kind = Value::Kind::Body;
  v.body = newNode(c, std::move(leaf));
  v.type.dtype = x->type.dtype;
  v.type.shape = {table.length};
  v.type.layout = x->type.layout;
  v.type.segments = table.name;
  v.range = range;
  return v;
}

/// The type a conversion hint suggests: a float over an integer, the wider
/// of two of the same kind.
ir::DType preferredType(DType a, DType b) {
  if (ir::isFloat(a) != ir::isFloat(b))
    return ir::isFloat(a) ? a : b;
  return ir::dtypeSize(b) > ir::dtypeSize(a) ? b : a;
}

/// Unifies the element types of operands: typed operands must agree and
/// literals take their type. Returns the common type (nullopt if all are
/// literals) or reports an error.
std::optional<std::optional<DType>>
unifyDTypes(ProgramChecker &c, llvm::MutableArrayRef<Value> args,
            llvm::SMRange range, llvm::StringRef opName) {
  std::optional<DType> common;
  for (const Value &a : args) {
    if (a.isLiteral())
      continue;
    if (!common) {
      common = a.type.dtype;
      continue;
    }
    if (*common != a.type.dtype) {
      c.diags.report(range, DiagId::MixedTypes, opName, ir::dtypeName(*common),
                     ir::dtypeName(a.type.dtype),
                     ir::dtypeName(preferredType(*common, a.type.dtype)));
      return std::nullopt;
    }
  }
  if (!common)
    return std::optional<DType>();
  for (Value &a : args) {
    if (!a.isLiteral())
      continue;
    a = typeLiteral(c, a, *common);
    if (a.isError())
      return std::nullopt;
  }
  return common;
}

ir::Stage *ProgramChecker::materialize(const Value &value, llvm::StringRef name,
                                       bool copyExisting) {
  Value v = value;
  if (v.isLiteral())
    v = typeLiteral(*this, v, defaultLiteralType(v));
  if (v.isError())
    return nullptr;
  if (v.kind == Value::Kind::Stage) {
    if (!copyExisting)
      return v.stage;
    v.body = asNode(*this, v);
    v.kind = Value::Kind::Body;
  }

  // Dropout's mask is indexed by the element of the stage's result, so its
  // input must have the result's shape.
  llvm::SmallVector<const BodyNode *, 16> work{v.body};
  while (!work.empty()) {
    const BodyNode *n = work.pop_back_val();
    if (n->op == ScalarOp::Dropout && n->shape != v.type.shape) {
      diags.report(n->range, DiagId::ShapeMismatch, "dropout",
                   ir::shapeStr(n->shape), ir::shapeStr(v.type.shape));
      return nullptr;
    }
    work.append(n->args.begin(), n->args.end());
  }

  // Convert to ScalarExpr, numbering operand stages by first use.
  llvm::SmallVector<ir::Stage *, 4> operands;
  const ir::ScalarExpr *body = lowerBody(v.body, operands);
  ir::Stage *stage =
      program.addStage(StageKind::Elementwise, name, v.type, operands, v.range);
  stage->body = body;
  return stage;
}

const ir::ScalarExpr *
ProgramChecker::lowerBody(const BodyNode *root,
                          llvm::SmallVectorImpl<ir::Stage *> &operands) {
  llvm::DenseMap<const BodyNode *, const ir::ScalarExpr *> done;
  struct Frame {
    const BodyNode *node;
    bool expanded;
  };
  llvm::SmallVector<Frame, 16> stack{{root, false}};
  while (!stack.empty()) {
    Frame f = stack.pop_back_val();
    if (done.count(f.node))
      continue;
    if (!f.expanded && !f.node->args.empty()) {
      stack.push_back({f.node, true});
      for (const BodyNode *a : llvm::reverse(f.node->args))
        stack.push_back({a, false});
      continue;
    }
    ir::ScalarExpr e;
    e.op = f.node->op;
    e.dtype = f.node->dtype;
    e.constValue = f.node->constValue;
    e.constInt = f.node->constInt;
    if (f.node->op == ScalarOp::Operand) {
      auto it = llvm::find(operands, f.node->stage);
      e.operandIndex = it - operands.begin();
      if (it == operands.end())
        operands.push_back(f.node->stage);
    }
    for (const BodyNode *a : f.node->args)
      e.args.push_back(done.lookup(a));
    done[f.node] = program.addExpr(std::move(e));
  }
  return done.lookup(root);
}

//===----------------------------------------------------------------------===//
// Leaves and operators
//===----------------------------------------------------------------------===//

Value ProgramChecker::checkExpr(const ast::Expr &expr) {
  switch (expr.kind) {
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
  case ast::Expr::Kind::BoolLit:
    return checkLiteral(expr);
  case ast::Expr::Kind::Name:
    return checkName(expr);
  case ast::Expr::Kind::Unary:
    return checkUnary(expr);
  case ast::Expr::Kind::Binary:
    return checkBinary(expr);
  case ast::Expr::Kind::Call:
    return checkCall(expr);
  }
  return Value::error();
}

Value ProgramChecker::checkLiteral(const ast::Expr &expr) {
  Value v;
  v.kind = Value::Kind::Literal;
  v.range = expr.range;
  switch (expr.kind) {
  case ast::Expr::Kind::IntLit:
    v.lit = Value::LitKind::Int;
    v.litInt = expr.intValue;
    break;
  case ast::Expr::Kind::FloatLit:
    v.lit = Value::LitKind::Float;
    v.litFloat = expr.floatValue;
    break;
  case ast::Expr::Kind::BoolLit:
    v.lit = Value::LitKind::Bool;
    v.litBool = expr.boolValue;
    break;
  case ast::Expr::Kind::Name:
  case ast::Expr::Kind::Call:
  case ast::Expr::Kind::Unary:
  case ast::Expr::Kind::Binary:
    llvm_unreachable("checkLiteral of an expression that is not a literal");
  }
  return v;
}

/// Edit distance for "did you mean" notes.
static std::optional<std::string> closestName(llvm::StringRef name,
                                              llvm::ArrayRef<std::string> all) {
  std::optional<std::string> best;
  unsigned bestDist = 3;
  for (const std::string &candidate : all) {
    unsigned d = name.edit_distance(candidate, true, bestDist);
    if (d < bestDist && d < std::max<size_t>(2, name.size() / 3 + 1)) {
      bestDist = d;
      best = candidate;
    }
  }
  return best;
}

Value ProgramChecker::checkName(const ast::Expr &expr) {
  auto it = names.find(expr.text);
  if (it == names.end()) {
    if (poisoned.contains(expr.text))
      return Value::error();
    if (program.findTable(expr.text)) {
      diags.report(expr.range, DiagId::TableAsValue, expr.text);
      return Value::error();
    }
    if (isBuiltinName(expr.text)) {
      diags.report(expr.range, DiagId::NotAValue, expr.text);
      return Value::error();
    }
    std::vector<std::string> known;
    for (const auto &entry : names)
      known.push_back(entry.getKey().str());
    std::sort(known.begin(), known.end());
    auto diag = diags.report(expr.range, DiagId::UnknownName, expr.text);
    if (auto best = closestName(expr.text, known))
      diag.note(nameRanges.lookup(*best), DiagId::DidYouMean, *best);
    return Value::error();
  }
  Value v;
  v.kind = Value::Kind::Stage;
  v.stage = it->second;
  v.type = it->second->type;
  v.range = expr.range;
  return v;
}

Value ProgramChecker::checkUnary(const ast::Expr &expr) {
  Value operand = checkExpr(*expr.operands[0]);
  if (operand.isError())
    return operand;
  if (expr.unaryOp == ast::UnaryOp::Plus) {
    operand.range = expr.range;
    return operand;
  }
  if (operand.isLiteral()) {
    if (operand.lit == Value::LitKind::Bool) {
      diags.report(expr.range, DiagId::BoolArithmetic, "-");
      return Value::error();
    }
    operand.litInt = -operand.litInt;
    operand.litFloat = -operand.litFloat;
    operand.range = expr.range;
    return operand;
  }
  if (operand.type.dtype == DType::Bool) {
    diags.report(expr.range, DiagId::BoolArithmetic, "-");
    return Value::error();
  }
  return combine(*this, ScalarOp::Neg, operand.type.dtype, {operand},
                 expr.range, "-");
}

/// Folds an operator applied to two literals.
static Value foldLiterals(ProgramChecker &c, ast::BinaryOp op, Value a,
                          const Value &b, llvm::SMRange range) {
  bool isCompare = op >= ast::BinaryOp::Lt;
  if (a.lit == Value::LitKind::Bool || b.lit == Value::LitKind::Bool) {
    bool eqOp = op == ast::BinaryOp::Eq || op == ast::BinaryOp::Ne;
    if (!(eqOp && a.lit == b.lit)) {
      c.diags.report(range, DiagId::BoolArithmetic, ast::spelling(op));
      return Value::error();
    }
    bool eq = a.litBool == b.litBool;
    a.litBool = op == ast::BinaryOp::Eq ? eq : !eq;
    a.range = range;
    return a;
  }
  bool ints = a.lit == Value::LitKind::Int && b.lit == Value::LitKind::Int &&
              op != ast::BinaryOp::Div;
  double x =
      a.lit == Value::LitKind::Int ? static_cast<double>(a.litInt) : a.litFloat;
  double y =
      b.lit == Value::LitKind::Int ? static_cast<double>(b.litInt) : b.litFloat;
  Value r;
  r.kind = Value::Kind::Literal;
  r.range = range;
  if (isCompare) {
    r.lit = Value::LitKind::Bool;
    switch (op) {
    case ast::BinaryOp::Lt:
      r.litBool = x < y;
      break;
    case ast::BinaryOp::Le:
      r.litBool = x <= y;
      break;
    case ast::BinaryOp::Gt:
      r.litBool = x > y;
      break;
    case ast::BinaryOp::Ge:
      r.litBool = x >= y;
      break;
    case ast::BinaryOp::Eq:
      r.litBool = x == y;
      break;
    case ast::BinaryOp::Ne:
      r.litBool = x != y;
      break;
    case ast::BinaryOp::Add:
    case ast::BinaryOp::Sub:
    case ast::BinaryOp::Mul:
    case ast::BinaryOp::Div:
      llvm_unreachable("not a comparison");
    }
    return r;
  }
  if (ints) {
    r.lit = Value::LitKind::Int;
    __int128 p = a.litInt, q = b.litInt;
    r.litInt = op == ast::BinaryOp::Add   ? p + q
               : op == ast::BinaryOp::Sub ? p - q
                                          : p * q;
    return r;
  }
  r.lit = Value::LitKind::Float;
  r.litFloat = op == ast::BinaryOp::Add   ? x + y
               : op == ast::BinaryOp::Sub ? x - y
               : op == ast::BinaryOp::Mul ? x * y
                                          : x / y;
  return r;
}

static ScalarOp binaryScalarOp(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Add:
    return ScalarOp::Add;
  case ast::BinaryOp::Sub:
    return ScalarOp::Sub;
  case ast::BinaryOp::Mul:
    return ScalarOp::Mul;
  case ast::BinaryOp::Div:
    return ScalarOp::Div;
  case ast::BinaryOp::Lt:
    return ScalarOp::Lt;
  case ast::BinaryOp::Le:
    return ScalarOp::Le;
  case ast::BinaryOp::Gt:
    return ScalarOp::Gt;
  case ast::BinaryOp::Ge:
    return ScalarOp::Ge;
  case ast::BinaryOp::Eq:
    return ScalarOp::Eq;
  case ast::BinaryOp::Ne:
    return ScalarOp::Ne;
  }
  return ScalarOp::Add;
}

Value ProgramChecker::checkBinary(const ast::Expr &expr) {
  Value args[2] = {checkExpr(*expr.operands[0]), checkExpr(*expr.operands[1])};
  if (args[0].isError() || args[1].isError())
    return Value::error();
  llvm::StringRef opName = ast::spelling(expr.binaryOp);
  if (args[0].isLiteral() && args[1].isLiteral())
    return foldLiterals(*this, expr.binaryOp, args[0], args[1], expr.range);
  auto dtype = unifyDTypes(*this, args, expr.range, opName);
  if (!dtype)
    return Value::error();
  bool isCompare = expr.binaryOp >= ast::BinaryOp::Lt;
  bool eqOp =
      expr.binaryOp == ast::BinaryOp::Eq || expr.binaryOp == ast::BinaryOp::Ne;
  if (**dtype == DType::Bool && !eqOp) {
    diags.report(expr.range, DiagId::BoolArithmetic, opName);
    return Value::error();
  }
  return combine(*this, binaryScalarOp(expr.binaryOp),
                 isCompare ? DType::Bool : **dtype, args, expr.range, opName);
}

} // namespace coconet::sema
