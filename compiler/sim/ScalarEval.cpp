//===- ScalarEval.cpp - evaluating elementwise bodies ----------------------===//

#include "sim/ScalarEval.h"

#include "support/FloatOrder.h"
#include "support/Philox.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <limits>

namespace coconet::sim {

using ir::DType;
using ir::ScalarExpr;
using ir::ScalarOp;

namespace {

bool computesInFloat(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32;
}

int64_t asSigned(uint64_t v) { return static_cast<int64_t>(v); }

/// A float-to-integer cast: truncate, saturate, NaN -> 0.
uint64_t floatToInt(double v, DType to) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (to == DType::U64) {
    if (v <= 0)
      return 0;
    if (v >= 18446744073709551616.0)
      return std::numeric_limits<uint64_t>::max();
    return static_cast<uint64_t>(v);
  }
  double lo = to == DType::I32 ? -2147483648.0 : -9223372036854775808.0;
  double hi = to == DType::I32 ? 2147483647.0 : 9223372036854775807.0;
  if (v <= lo)
    return static_cast<uint64_t>(static_cast<int64_t>(lo));
  if (v >= hi)
    return to == DType::I32 ? 2147483647u
                            : static_cast<uint64_t>(
                                  std::numeric_limits<int64_t>::max());
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

double intToDouble(uint64_t v, DType from) {
  return from == DType::U64 ? static_cast<double>(v)
                            : static_cast<double>(asSigned(v));
}

template <typename T> T unaryMath(ScalarOp op, T x) {
  switch (op) {
  case ScalarOp::Neg:
    return -x;
  case ScalarOp::Sqrt:
    return std::sqrt(x);
  case ScalarOp::Rsqrt:
    return T(1) / std::sqrt(x);
  case ScalarOp::Exp:
    return std::exp(x);
  case ScalarOp::Log:
    return std::log(x);
  case ScalarOp::Abs:
    return std::fabs(x);
  case ScalarOp::Tanh:
    return std::tanh(x);
  case ScalarOp::Erf:
    return std::erf(x);
  case ScalarOp::Relu:
    return x > T(0) ? x : (std::isnan(x) ? x : T(0));
  case ScalarOp::Gelu: // the exact (erf) form
    return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
  case ScalarOp::Silu:
    return x / (T(1) + std::exp(-x));
  default:
    llvm_unreachable("not a unary math op");
  }
}

template <typename T> T binaryMath(ScalarOp op, T a, T b) {
  switch (op) {
  case ScalarOp::Add:
    return a + b;
  case ScalarOp::Sub:
    return a - b;
  case ScalarOp::Mul:
    return a * b;
  case ScalarOp::Div:
    return a / b;
  case ScalarOp::Pow:
    return std::pow(a, b);
  case ScalarOp::Max:
    return support::maxNumber(a, b);
  case ScalarOp::Min:
    return support::minNumber(a, b);
  default:
    llvm_unreachable("not a binary math op");
  }
}

uint64_t intBinary(ScalarOp op, uint64_t a, uint64_t b, DType d) {
  bool u = d == DType::U64;
  switch (op) {
  case ScalarOp::Add:
    return a + b;
  case ScalarOp::Sub:
    return a - b;
  case ScalarOp::Mul:
    return a * b;
  case ScalarOp::Div:
    if (b == 0)
      return 0;
    if (u)
      return a / b;
    if (asSigned(b) == -1)
      return 0 - a; // wraps for the most negative value
    return static_cast<uint64_t>(asSigned(a) / asSigned(b));
  case ScalarOp::Max:
    return u ? std::max(a, b)
             : static_cast<uint64_t>(std::max(asSigned(a), asSigned(b)));
  case ScalarOp::Min:
    return u ? std::min(a, b)
             : static_cast<uint64_t>(std::min(asSigned(a), asSigned(b)));
  case ScalarOp::Pow: {
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
  default:
    llvm_unreachable("not an integer binary op");
  }
}

template <typename T> bool compareAs(ScalarOp op, T x, T y) {
  switch (op) {
  case ScalarOp::Lt: return x < y;
  case ScalarOp::Le: return x <= y;
  case ScalarOp::Gt: return x > y;
  case ScalarOp::Ge: return x >= y;
  case ScalarOp::Eq: return x == y;
  default: return x != y;
  }
}

bool compare(ScalarOp op, Scalar a, Scalar b, DType d) {
  if (ir::isFloat(d))
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

} // namespace

Scalar evalScalar(const ScalarExpr &e, llvm::ArrayRef<Scalar> operands,
                  uint64_t globalIndex) {
  const DType d = e.dtype;
  auto arg = [&](unsigned i) {
    return evalScalar(*e.args[i], operands, globalIndex);
  };
  switch (e.op) {
  case ScalarOp::Operand:
    return operands[e.operandIndex];
  case ScalarOp::Const:
    if (ir::isFloat(d))
      return floatResult(d, e.constValue);
    return intResult(d, static_cast<uint64_t>(e.constInt));
  case ScalarOp::Cast: {
    Scalar x = arg(0);
    DType from = e.args[0]->dtype;
    if (ir::isFloat(d))
      return floatResult(d, ir::isFloat(from) ? x.f : intToDouble(x.i, from));
    if (d == DType::Bool)
      return intResult(d, ir::isFloat(from) ? x.f != 0 : x.i != 0);
    if (ir::isFloat(from))
      return intResult(d, floatToInt(x.f, d));
    return intResult(d, x.i);
  }
  case ScalarOp::Neg:
    if (ir::isFloat(d)) {
      Scalar s;
      s.f = -arg(0).f; // exact in every float type
      return s;
    }
    return intResult(d, 0 - arg(0).i);
  case ScalarOp::Add:
  case ScalarOp::Sub:
  case ScalarOp::Mul:
  case ScalarOp::Div:
  case ScalarOp::Pow:
  case ScalarOp::Max:
  case ScalarOp::Min: {
    Scalar a = arg(0), b = arg(1);
    if (!ir::isFloat(d))
      return intResult(d, intBinary(e.op, a.i, b.i, d));
    if (computesInFloat(d))
      return floatResult(d, binaryMath<float>(e.op, static_cast<float>(a.f),
                                              static_cast<float>(b.f)));
    return floatResult(d, binaryMath<double>(e.op, a.f, b.f));
  }
  case ScalarOp::Lt:
  case ScalarOp::Le:
  case ScalarOp::Gt:
  case ScalarOp::Ge:
  case ScalarOp::Eq:
  case ScalarOp::Ne:
    return intResult(DType::Bool,
                     compare(e.op, arg(0), arg(1), e.args[0]->dtype));
  case ScalarOp::Select:
    return arg(0).i ? arg(1) : arg(2);
  case ScalarOp::Sqrt:
  case ScalarOp::Rsqrt:
  case ScalarOp::Exp:
  case ScalarOp::Log:
  case ScalarOp::Abs:
  case ScalarOp::Tanh:
  case ScalarOp::Erf:
  case ScalarOp::Relu:
  case ScalarOp::Gelu:
  case ScalarOp::Silu: {
    Scalar x = arg(0);
    if (!ir::isFloat(d)) {
      // abs and relu are the integer ops sema admits; unsigned values are
      // their own absolute value, and negation wraps (abs of the most
      // negative value is itself, as in two's complement hardware).
      if (d == DType::U64 || asSigned(x.i) >= 0)
        return intResult(d, x.i);
      return intResult(d, e.op == ScalarOp::Abs ? 0 - x.i : 0);
    }
    if (computesInFloat(d))
      return floatResult(d, unaryMath<float>(e.op, static_cast<float>(x.f)));
    return floatResult(d, unaryMath<double>(e.op, x.f));
  }
  case ScalarOp::Dropout: {
    Scalar x = arg(0), p = arg(1), seed = arg(2);
    float pf = static_cast<float>(p.f);
    if (!support::dropoutKeep(seed.i, globalIndex, pf))
      return floatResult(d, 0.0);
    if (computesInFloat(d))
      return floatResult(d, static_cast<float>(x.f) / (1.0f - pf));
    return floatResult(d, x.f / (1.0 - static_cast<double>(pf)));
  }
  }
  llvm_unreachable("unknown scalar op");
}

} // namespace coconet::sim
