//===- ScalarCode.cpp - types, literals and elementwise bodies ------------===//
//
// Each node of a member's body becomes one `const` temporary, computed as
// the simulator computes it (ir/ScalarEval.cpp): f16/bf16/f32 nodes in
// float and rounded to their type, f64 nodes in double, integers wrapping
// at their width through the runtime's helpers. The CPU target spells the
// operations as C++ (compiled without contraction, so `a * b + c` stays two
// roundings); the CUDA target uses the _rn intrinsics, which nvcc never
// contracts into FMAs. Transcendental functions are the platform's: bitwise
// on the CPU (the simulator calls the same libm), within a few ulps on a
// GPU.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/ErrorHandling.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace coconet::codegen {

using ir::DType;
using ir::ScalarExpr;
using ir::ScalarOp;

std::string plainType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float";
  case DType::F64:
    return "double";
  case DType::I32:
    return "int32_t";
  case DType::I64:
    return "int64_t";
  case DType::U64:
    return "uint64_t";
  case DType::Bool:
    return "bool";
  case DType::F16:
  case DType::BF16:
    break;
  }
  llvm_unreachable("f16 and bf16 are stored as the target's types");
}

std::string computeType(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return "float";
  case DType::F32:
  case DType::F64:
  case DType::I32:
  case DType::I64:
  case DType::U64:
  case DType::Bool:
    break;
  }
  return plainType(dtype);
}

std::string runtimeDType(DType dtype) {
  switch (dtype) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  case DType::Name:                                                            \
    return "coconet::rt::DType::" #Name;
#include "coconet/dtypes.def"
  }
  return "?";
}

std::string teamAlgorithmEnumerator(ir::CollectiveAlgorithm algorithm) {
  switch (algorithm) {
#define TEAM_ALGORITHM(Name, Printed)                                          \
  case ir::CollectiveAlgorithm::Name:                                          \
    return #Name;
#include "coconet/team_algorithms.def"
  case ir::CollectiveAlgorithm::Auto:
  case ir::CollectiveAlgorithm::Library:
  case ir::CollectiveAlgorithm::Synthesized:
    break;
  }
  return "?";
}

std::string runtimeReduceOp(ir::ReduceOp op) {
  switch (op) {
#define REDUCE_OP(Name, Printed)                                               \
  case ir::ReduceOp::Name:                                                     \
    return "coconet::rt::ReduceOp::" #Name;
#include "coconet/reduce_ops.def"
  }
  return "?";
}

std::string storeFromDouble(const Target &t, DType dtype,
                            llvm::StringRef expr) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return t.narrow(Narrowing::StoreFromDouble, dtype, expr);
  case DType::F32:
    return "static_cast<float>(" + expr.str() + ")";
  case DType::F64:
  case DType::I32:
  case DType::I64:
  case DType::U64:
  case DType::Bool:
    break;
  }
  return expr.str();
}

namespace {

/// The shortest decimal that reads back as `v` in the type (float when
/// `asFloat`).
std::string shortestDecimal(double v, bool asFloat) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    double back = std::strtod(buf, nullptr);
    if (asFloat ? static_cast<float>(back) == static_cast<float>(v) : back == v)
      break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

} // namespace

std::string floatLiteral(double value, DType dtype) {
  const bool asFloat = computeType(dtype) == "float";
  if (std::isnan(value))
    return asFloat ? "NAN" : "static_cast<double>(NAN)";
  if (std::isinf(value)) {
    std::string inf = asFloat ? "INFINITY" : "static_cast<double>(INFINITY)";
    return value < 0 ? "(-" + inf + ")" : inf;
  }
  std::string s = shortestDecimal(value, asFloat) + (asFloat ? "f" : "");
  return value < 0 || (value == 0 && std::signbit(value)) ? "(" + s + ")" : s;
}

std::string intLiteral(int64_t value, DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return value ? "true" : "false";
  case DType::U64:
    return "UINT64_C(" + std::to_string(static_cast<uint64_t>(value)) + ")";
  case DType::I32:
    // -2147483648 is the negation of a long: it would not be an int32_t.
    if (static_cast<int32_t>(value) == INT32_MIN)
      return "(-INT32_C(2147483647) - 1)";
    return "INT32_C(" + std::to_string(static_cast<int32_t>(value)) + ")";
  case DType::I64:
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
    break;
  }
  if (value == INT64_MIN)
    return "(-INT64_C(9223372036854775807) - 1)";
  return "INT64_C(" + std::to_string(value) + ")";
}

namespace {

/// Prints the nodes of one body; see the file comment.
class BodyPrinter {
public:
  BodyPrinter(CodeWriter &w, llvm::ArrayRef<std::string> operands,
              llvm::StringRef globalIndex, const Target &target, unsigned &temp,
              const UniformValues *uniform = nullptr)
      : w(w), operands(operands), globalIndex(globalIndex), target(target),
        temp(temp) {
    if (uniform)
      values = uniform->values;
  }

  /// Prints the nodes of `root`; the root's value goes into the variable
  /// `out` (declared here). Nodes already in `values` (hoisted) are not
  /// printed again. With `storeRounds` the root is not rounded to its
  /// f16/bf16 type from float (emitBody).
  void print(const ScalarExpr *root, llvm::StringRef out, bool storeRounds);
  /// Prints, as `const T cc_u<N> = ...;`, every node of `root` that depends
  /// on no element: an operation all of whose leaves are constants or
  /// operands with `uniformOperand` set (dropout depends on the element's
  /// index). Records their names in `out`; returns the root's name when
  /// the root itself is uniform and not a leaf, else "".
  std::string hoist(const ScalarExpr *root, llvm::ArrayRef<bool> uniformOperand,
                    UniformValues &out);

private:
  /// `x` converted to the compute type of `dtype` when it is not already.
  std::string as(const ScalarExpr *arg, DType dtype) {
    std::string v = values.lookup(arg);
    if (computeType(arg->dtype) == computeType(dtype))
      return v;
    return "static_cast<" + computeType(dtype) + ">(" + v + ")";
  }
  /// Rounds a float-computed value to an f16/bf16 node's type.
  std::string round(DType dtype, const std::string &v) {
    if ((dtype == DType::F16 || dtype == DType::BF16) && !unrounded)
      return target.narrow(Narrowing::RoundFloat, dtype, v);
    return v;
  }
  std::string binaryFloat(ScalarOp op, bool isDouble, const std::string &a,
                          const std::string &b);
  std::string unaryFloat(ScalarOp op, bool isDouble, const std::string &x);
  std::string node(const ScalarExpr *e);

  CodeWriter &w;
  llvm::ArrayRef<std::string> operands;
  llvm::StringRef globalIndex;
  const Target &target;
  unsigned &temp;
  llvm::DenseMap<const ScalarExpr *, std::string> values;
  /// Set while print() prints a root whose store rounds it.
  bool unrounded = false;
};

std::string BodyPrinter::binaryFloat(ScalarOp op, bool isDouble,
                                     const std::string &a,
                                     const std::string &b) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define ARITH_OP(Name, Printed, Operator, IntFn)                               \
  case ScalarOp::Name:                                                         \
    return target.arith(Printed, #Operator, isDouble, a, b);
#define MINMAX_OP(Name, Printed, FloatFn, Operator)                            \
  case ScalarOp::Name:                                                         \
    return "coconet::rt::" #FloatFn "(" + a + ", " + b + ")";
#include "ir/ScalarOps.def"
  }
  if (op == ScalarOp::Pow)
    return target.mathCall("pow", isDouble, a + ", " + b);
  llvm_unreachable("not a binary float op");
}

std::string BodyPrinter::unaryFloat(ScalarOp op, bool isDouble,
                                    const std::string &x) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
    // The language's sqrt is correctly rounded on every target.
#define MATH_OP(Name, Printed, Fn)                                             \
  case ScalarOp::Name:                                                         \
    if (ScalarOp::Name == ScalarOp::Sqrt)                                      \
      return target.sqrtRounded(isDouble, x);                                  \
    return target.mathCall(#Fn, isDouble, x);
    // Formulas are coconet/numeric.h's, for both targets.
#define FORMULA_OP(Name, Printed, Fn)                                          \
  case ScalarOp::Name:                                                         \
    return "coconet::rt::ops::" #Fn "(" + x + ")";
#define NUM_OP(Name, Printed, FloatFn, IntFn)                                  \
  case ScalarOp::Name:                                                         \
    return "coconet::rt::ops::" #FloatFn "(" + x + ")";
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not a unary float op");
}

/// An integer NumMath operation: coconet/numeric.h's function.
static std::string intUnary(ScalarOp op, const std::string &x) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define NUM_OP(Name, Printed, FloatFn, IntFn)                                  \
  case ScalarOp::Name:                                                         \
    return "coconet::rt::" #IntFn "(" + x + ")";
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not an integer function");
}

/// An integer Arith, Pow or MinMax operation.
static std::string intBinary(ScalarOp op, const std::string &a,
                             const std::string &b) {
  if (op == ScalarOp::Pow)
    return "coconet::rt::intPow(" + a + ", " + b + ")";
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define ARITH_OP(Name, Printed, Operator, IntFn)                               \
  case ScalarOp::Name:                                                         \
    return "coconet::rt::" #IntFn "(" + a + ", " + b + ")";
    // max(x, x) is x; written out, compilers warn of a self-comparison.
#define MINMAX_OP(Name, Printed, FloatFn, Operator)                            \
  case ScalarOp::Name:                                                         \
    if (a == b)                                                                \
      return a;                                                                \
    return "(" + a + " " #Operator " " + b + " ? " + a + " : " + b + ")";
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not a binary integer op");
}

/// The C++ operator of a comparison.
static llvm::StringRef compareOperator(ScalarOp op) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define COMPARE_OP(Name, Printed, Operator)                                    \
  case ScalarOp::Name:                                                         \
    return #Operator;
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not a comparison");
}

std::string BodyPrinter::node(const ScalarExpr *e) {
  const DType d = e->dtype;
  const bool isF = ir::isFloat(d);
  const bool isDouble = d == DType::F64;
  auto arg = [&](unsigned i) { return values.lookup(e->args[i]); };
  switch (ir::scalarOpClass(e->op)) {
  case ir::ScalarOpClass::Leaf:
    if (e->op == ScalarOp::Operand)
      return operands[e->operandIndex];
    if (isF)
      return floatLiteral(ir::roundTo(d, e->constValue), d);
    return intLiteral(e->constInt, d);
  case ir::ScalarOpClass::Cast: {
    const DType from = e->args[0]->dtype;
    const std::string x = arg(0);
    if (d == DType::Bool)
      return "(" + x + " != 0)";
    if (!isF) {
      if (ir::isFloat(from))
        return "coconet::rt::floatToInt<" + computeType(d) +
               ">(static_cast<double>(" + x + "))";
      return "static_cast<" + computeType(d) + ">(" + x + ")";
    }
    // To a float type: from the exact source value, rounding once.
    std::string src = x;
    if (!ir::isFloat(from))
      src = from == DType::U64 || from == DType::Bool
                ? "static_cast<double>(" + x + ")"
                : "static_cast<double>(static_cast<int64_t>(" + x + "))";
    const bool srcDouble = !ir::isFloat(from) || from == DType::F64;
    if (d == DType::F64)
      return "static_cast<double>(" + src + ")";
    if (d == DType::F32)
      return "static_cast<float>(" + src + ")";
    // f16 / bf16.
    if (!srcDouble)
      return round(d, src);
    return target.narrow(Narrowing::FromDouble, d, src);
  }
  case ir::ScalarOpClass::Neg:
    return isF ? "(-" + arg(0) + ")" : "coconet::rt::wrapNeg(" + arg(0) + ")";
  case ir::ScalarOpClass::Arith:
  case ir::ScalarOpClass::Pow:
  case ir::ScalarOpClass::MinMax:
    if (isF)
      return round(d, binaryFloat(e->op, isDouble, as(e->args[0], d),
                                  as(e->args[1], d)));
    return intBinary(e->op, arg(0), arg(1));
  case ir::ScalarOpClass::Compare: {
    const std::string op = " " + compareOperator(e->op).str() + " ";
    // Compilers warn that an integer or bool compared with itself is a
    // constant; a unary + (an exact promotion) on the right is not the
    // same expression.
    if (arg(0) == arg(1) && !ir::isFloat(e->args[0]->dtype))
      return "(" + arg(0) + op + "+" + arg(1) + ")";
    return "(" + arg(0) + op + arg(1) + ")";
  }
  case ir::ScalarOpClass::Select:
    return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
  case ir::ScalarOpClass::FloatMath:
  case ir::ScalarOpClass::NumMath:
    if (!isF)
      return intUnary(e->op, arg(0));
    return round(d, unaryFloat(e->op, isDouble, as(e->args[0], d)));
  case ir::ScalarOpClass::Dropout: {
    // keep = uniform(seed, index) >= p; kept: x / (1 - p), computed in
    // float (f64 for f64), then rounded to the type.
    std::string p = "static_cast<float>(" + arg(1) + ")";
    std::string keep = "coconet::rt::dropoutKeep(static_cast<uint64_t>(" +
                       arg(2) + "), static_cast<uint64_t>(" +
                       globalIndex.str() + "), " + p + ")";
    std::string kept =
        isDouble ? binaryFloat(ScalarOp::Div, true, arg(0),
                               binaryFloat(ScalarOp::Sub, true, "1.0",
                                           "static_cast<double>(" + p + ")"))
                 : binaryFloat(ScalarOp::Div, false, as(e->args[0], d),
                               binaryFloat(ScalarOp::Sub, false, "1.0f", p));
    return "(" + keep + " ? " + round(d, kept) + " : " + floatLiteral(0.0, d) +
           ")";
  }
  }
  llvm_unreachable("unknown scalar op class");
}

void BodyPrinter::print(const ScalarExpr *root, llvm::StringRef out,
                        bool storeRounds) {
  // A body computed entirely before the loop.
  if (auto it = values.find(root); it != values.end() &&
                                   root->op != ScalarOp::Operand &&
                                   root->op != ScalarOp::Const) {
    w.line("const " + computeType(root->dtype) + " " + out + " = " +
           it->second + ";");
    return;
  }
  for (const ScalarExpr *e : ir::postOrder(
           root, [&](const ScalarExpr *e) { return values.count(e); })) {
    // A root rounded from float (not from double: that rounding is not the
    // store's) is left unrounded where the store rounds it.
    unrounded = storeRounds && e == root;
    std::string value = node(e);
    unrounded = false;
    const bool leaf = e->op == ScalarOp::Operand || e->op == ScalarOp::Const;
    if (leaf && e != root) {
      values[e] = value;
      continue;
    }
    std::string name = e == root ? out.str() : "cc_e" + std::to_string(temp++);
    w.line("const " + computeType(e->dtype) + " " + name + " = " + value + ";");
    values[e] = name;
  }
}

std::string BodyPrinter::hoist(const ScalarExpr *root,
                               llvm::ArrayRef<bool> uniformOperand,
                               UniformValues &out) {
  // Which nodes are uniform, children before parents.
  llvm::DenseMap<const ScalarExpr *, bool> uniform;
  const auto order = ir::postOrder(root);
  for (const ScalarExpr *e : order) {
    bool u = false;
    if (e->op == ScalarOp::Operand)
      u = uniformOperand[e->operandIndex];
    else if (e->op == ScalarOp::Const)
      u = true;
    else if (e->op != ScalarOp::Dropout)
      u = llvm::all_of(e->args,
                       [&](const ScalarExpr *a) { return uniform.lookup(a); });
    uniform[e] = u;
  }
  for (const ScalarExpr *e : order) {
    if (!uniform.lookup(e) || values.count(e))
      continue;
    std::string value = node(e);
    if (e->op == ScalarOp::Operand || e->op == ScalarOp::Const) {
      values[e] = value;
      continue;
    }
    // The same computation from another member (Adam's fused update casts
    // `step` for both bias corrections) is computed once: uniform values
    // are pure, so equal text is an equal value.
    const std::string type = computeType(e->dtype);
    std::string &name = out.byText[type + " " + value];
    if (name.empty()) {
      name = "cc_u" + std::to_string(temp++);
      w.line("const " + type + " " + name + " = " + value + ";");
    }
    values[e] = name;
    out.values[e] = name;
  }
  const bool leaf =
      root->op == ScalarOp::Operand || root->op == ScalarOp::Const;
  return uniform.lookup(root) && !leaf ? values.lookup(root) : "";
}

} // namespace

void emitBody(CodeWriter &w, const ir::ScalarExpr *body,
              llvm::ArrayRef<std::string> operands, llvm::StringRef globalIndex,
              llvm::StringRef out, const Target &target, unsigned &temp,
              const UniformValues *uniform, bool storeRounds) {
  BodyPrinter printer(w, operands, globalIndex, target, temp, uniform);
  printer.print(body, out, storeRounds);
}

std::string emitUniformBody(CodeWriter &w, const ir::ScalarExpr *body,
                            llvm::ArrayRef<std::string> operands,
                            llvm::ArrayRef<bool> uniformOperand,
                            const Target &target, UniformValues &uniform) {
  BodyPrinter printer(w, operands, "", target, uniform.temp, &uniform);
  return printer.hoist(body, uniformOperand, uniform);
}

} // namespace coconet::codegen
