//===- ScalarEval.cpp - evaluating elementwise bodies ---------------------===//
//
// The simulator, constant folding and every other evaluation of a body use
// this one evaluator; the numeric definitions it shares with generated code
// (f16/bf16 rounding, max/min, Philox) are the runtime's (coconet/numeric.h).
//
//===----------------------------------------------------------------------===//

#include "ir/ScalarEval.h"

#include "coconet/numeric.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <limits>

namespace coconet::ir {

uint64_t wrapTo(DType dtype, uint64_t value) {
  switch (dtype) {
  case DType::I32:
    return static_cast<uint64_t>(static_cast<int64_t>(
        static_cast<int32_t>(static_cast<uint32_t>(value))));
  case DType::Bool:
    return value != 0;
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
  case DType::I64:
  case DType::U64:
    break;
  }
  return value;
}

namespace {

bool computesInFloat(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32;
}

int64_t asSigned(uint64_t v) { return static_cast<int64_t>(v); }

/// A float-to-integer cast: truncate, saturate, NaN -> 0 (the runtime's).
uint64_t floatToInt(double v, DType to) {
  switch (to) {
  case DType::I32:
    return static_cast<uint64_t>(
        static_cast<int64_t>(rt::floatToInt<int32_t>(v)));
  case DType::I64:
    return static_cast<uint64_t>(rt::floatToInt<int64_t>(v));
  case DType::U64:
    return rt::floatToInt<uint64_t>(v);
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
  case DType::Bool:
    break;
  }
  llvm_unreachable("not an integer type");
}

double intToDouble(uint64_t v, DType from) {
  return from == DType::U64 ? static_cast<double>(v)
                            : static_cast<double>(asSigned(v));
}

/// A FloatMath or NumMath operation of a float, computed in T: the
/// platform's math function, or the formula of coconet/numeric.h that
/// generated code calls too.
template <typename T> T floatUnary(ScalarOp op, T x) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define MATH_OP(Name, Printed, Fn)                                             \
  case ScalarOp::Name:                                                         \
    return std::Fn(x);
#define FORMULA_OP(Name, Printed, Fn)                                          \
  case ScalarOp::Name:                                                         \
    return rt::ops::Fn(x);
#define NUM_OP(Name, Printed, FloatFn, IntFn)                                  \
  case ScalarOp::Name:                                                         \
    return rt::ops::FloatFn(x);
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not a float function");
}

/// An Arith, Pow or MinMax operation of floats, computed in T.
template <typename T> T floatBinary(ScalarOp op, T a, T b) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define ARITH_OP(Name, Printed, Operator, IntFn)                               \
  case ScalarOp::Name:                                                         \
    return a Operator b;
#define MINMAX_OP(Name, Printed, FloatFn, Operator)                            \
  case ScalarOp::Name:                                                         \
    return rt::FloatFn(a, b);
#include "ir/ScalarOps.def"
  }
  if (op == ScalarOp::Pow)
    return std::pow(a, b);
  llvm_unreachable("not a binary float operation");
}

/// An Arith, Pow or MinMax operation of integers of type d (as 64-bit
/// patterns; the result is wrapped to d's width by the caller).
uint64_t intBinary(ScalarOp op, uint64_t a, uint64_t b, DType d) {
  const bool u = d == DType::U64;
  if (op == ScalarOp::Div) {
    if (b == 0)
      return 0;
    if (u)
      return a / b;
    if (asSigned(b) == -1)
      return 0 - a; // wraps for the most negative value
    return static_cast<uint64_t>(asSigned(a) / asSigned(b));
  }
  if (op == ScalarOp::Pow) {
    // Integer power by squaring; negative exponents give 0 (1 for base 1).
    if (!u && asSigned(b) < 0)
      return a == 1 ? 1 : 0;
    uint64_t result = 1, base = a, e = b;
    while (e) {
      if (e & 1)
        result *= base;
      base *= base;
      e >>= 1;
    }
    return result;
  }
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
    // + - * wrap in 64 bits; the caller wraps to d's width.
#define ARITH_OP(Name, Printed, Operator, IntFn)                               \
  case ScalarOp::Name:                                                         \
    return a Operator b;
#define MINMAX_OP(Name, Printed, FloatFn, Operator)                            \
  case ScalarOp::Name:                                                         \
    if (u)                                                                     \
      return a Operator b ? a : b;                                             \
    return asSigned(a) Operator asSigned(b) ? a : b;
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not a binary integer operation");
}

/// A comparison of values of type d.
template <typename T> bool compareAs(ScalarOp op, T x, T y) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define COMPARE_OP(Name, Printed, Operator)                                    \
  case ScalarOp::Name:                                                         \
    return x Operator y;
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not a comparison");
}

bool compare(ScalarOp op, Scalar a, Scalar b, DType d) {
  if (isFloat(d))
    return compareAs(op, a.f, b.f);
  if (d == DType::U64)
    return compareAs(op, a.i, b.i);
  return compareAs(op, asSigned(a.i), asSigned(b.i));
}

/// Rounds a float result of a node of type d.
Scalar floatResult(DType d, double v) {
  Scalar s;
  s.f = roundTo(d, v);
  return s;
}

Scalar intResult(DType d, uint64_t v) {
  Scalar s;
  s.i = wrapTo(d, v);
  return s;
}

/// A NumMath operation of an integer of type d (as a 64-bit pattern):
/// coconet/numeric.h's IntFn at d's width.
uint64_t intUnary(ScalarOp op, uint64_t x, DType d) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    break;
#define NUM_OP(Name, Printed, FloatFn, IntFn)                                  \
  case ScalarOp::Name:                                                         \
    switch (d) {                                                               \
    case DType::I32:                                                           \
      return static_cast<uint64_t>(static_cast<int64_t>(                       \
          rt::IntFn(static_cast<int32_t>(static_cast<uint32_t>(x)))));         \
    case DType::I64:                                                           \
      return static_cast<uint64_t>(rt::IntFn(asSigned(x)));                    \
    case DType::U64:                                                           \
      return rt::IntFn(x);                                                     \
    case DType::F16:                                                           \
    case DType::BF16:                                                          \
    case DType::F32:                                                           \
    case DType::F64:                                                           \
    case DType::Bool:                                                          \
      break;                                                                   \
    }                                                                          \
    break;
#include "ir/ScalarOps.def"
  }
  llvm_unreachable("not an integer function");
}

} // namespace

Scalar evalScalar(const ScalarExpr &e, llvm::ArrayRef<Scalar> operands,
                  uint64_t globalIndex) {
  const DType d = e.dtype;
  auto arg = [&](unsigned i) {
    return evalScalar(*e.args[i], operands, globalIndex);
  };
  switch (scalarOpClass(e.op)) {
  case ScalarOpClass::Leaf:
    if (e.op == ScalarOp::Operand)
      return operands[e.operandIndex];
    if (isFloat(d))
      return floatResult(d, e.constValue);
    return intResult(d, static_cast<uint64_t>(e.constInt));
  case ScalarOpClass::Cast: {
    Scalar x = arg(0);
    DType from = e.args[0]->dtype;
    if (isFloat(d))
      return floatResult(d, isFloat(from) ? x.f : intToDouble(x.i, from));
    if (d == DType::Bool)
      return intResult(d, isFloat(from) ? x.f != 0 : x.i != 0);
    if (isFloat(from))
      return intResult(d, floatToInt(x.f, d));
    return intResult(d, x.i);
  }
  case ScalarOpClass::Neg:
    if (isFloat(d)) {
      Scalar s;
      s.f = -arg(0).f; // exact in every float type
      return s;
    }
    return intResult(d, 0 - arg(0).i);
  case ScalarOpClass::Arith:
  case ScalarOpClass::Pow:
  case ScalarOpClass::MinMax: {
    Scalar a = arg(0), b = arg(1);
    if (!isFloat(d))
      return intResult(d, intBinary(e.op, a.i, b.i, d));
    if (computesInFloat(d))
      return floatResult(d, floatBinary<float>(e.op, static_cast<float>(a.f),
                                               static_cast<float>(b.f)));
    return floatResult(d, floatBinary<double>(e.op, a.f, b.f));
  }
  case ScalarOpClass::Compare:
    return intResult(DType::Bool,
                     compare(e.op, arg(0), arg(1), e.args[0]->dtype));
  case ScalarOpClass::Select:
    return arg(0).i ? arg(1) : arg(2);
  case ScalarOpClass::FloatMath:
  case ScalarOpClass::NumMath: {
    Scalar x = arg(0);
    if (!isFloat(d))
      return intResult(d, intUnary(e.op, x.i, d));
    if (computesInFloat(d))
      return floatResult(d, floatUnary<float>(e.op, static_cast<float>(x.f)));
    return floatResult(d, floatUnary<double>(e.op, x.f));
  }
  case ScalarOpClass::Dropout: {
    Scalar x = arg(0), p = arg(1), seed = arg(2);
    float pf = static_cast<float>(p.f);
    if (!rt::dropoutKeep(seed.i, globalIndex, pf))
      return floatResult(d, 0.0);
    if (computesInFloat(d))
      return floatResult(d, static_cast<float>(x.f) / (1.0f - pf));
    return floatResult(d, x.f / (1.0 - static_cast<double>(pf)));
  }
  }
  llvm_unreachable("unknown scalar op class");
}

} // namespace coconet::ir
