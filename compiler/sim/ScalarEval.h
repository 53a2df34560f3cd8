//===- ScalarEval.h - evaluating elementwise bodies ---------------*- C++ -*-===//
//
// Evaluation of one element of an elementwise stage (ir/ScalarExpr.h).
// A node of type f16, bf16 or f32 computes in f32 and rounds its result to
// its type; f64 nodes compute in f64. Integer arithmetic wraps at the
// type's width; integer division by zero gives 0, and casts from floats to
// integers truncate toward zero, saturate at the type's range and turn NaN
// into 0. max/min of floats ignore a NaN operand (like fmaxf/fminf).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SIM_SCALAREVAL_H
#define COCONET_SIM_SCALAREVAL_H

#include "ir/ScalarExpr.h"
#include "sim/Tensor.h"

namespace coconet::sim {

/// The value of `expr` for one element: `operands[i]` is the element of
/// operand i, `globalIndex` the element's row-major index in the global
/// result (it feeds dropout's Philox counter).
Scalar evalScalar(const ir::ScalarExpr &expr, llvm::ArrayRef<Scalar> operands,
                  uint64_t globalIndex);

} // namespace coconet::sim

#endif // COCONET_SIM_SCALAREVAL_H
