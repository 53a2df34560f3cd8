//===- ScalarEval.h - evaluating elementwise bodies -------------*- C++ -*-===//
//
// Evaluation of one element of an elementwise stage (ir/ScalarExpr.h).
// A node of type f16, bf16 or f32 computes in f32 and rounds its result to
// its type; f64 nodes compute in f64. Integer arithmetic wraps at the
// type's width; integer division by zero gives 0, and casts from floats to
// integers truncate toward zero, saturate at the type's range and turn NaN
// into 0. max/min of floats ignore a NaN operand (like fmaxf/fminf).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_IR_SCALAREVAL_H
#define COCONET_IR_SCALAREVAL_H

#include "ir/ScalarExpr.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace coconet::ir {

/// One element of any type: `f` for floats (a double holding a value of
/// the element type exactly), `i` for integers and bools (a 64-bit two's
/// complement pattern).
struct Scalar {
  double f = 0;
  uint64_t i = 0;
};

/// Wraps an integer to the width of an integer `dtype`; 0 or 1 for bool.
uint64_t wrapTo(DType dtype, uint64_t value);

/// The value of `expr` for one element: `operands[i]` is the element of
/// operand i, `globalIndex` the element's row-major index in the global
/// result (it feeds dropout's Philox counter).
Scalar evalScalar(const ScalarExpr &expr, llvm::ArrayRef<Scalar> operands,
                  uint64_t globalIndex);

} // namespace coconet::ir

#endif // COCONET_IR_SCALAREVAL_H
