//===- ScalarExpr.h - per-element bodies of elementwise stages --*- C++ -*-===//
//
// An elementwise stage computes every element of its result with a small
// immutable expression tree (Halide-style). Leaves read one element of a
// stage operand (broadcast over leading dimensions; size-1 dimensions
// repeat) or are constants. Every node has an element type; a node of type
// f16/bf16 computes in f32 and rounds its result to its type, so results do
// not depend on how stages are later fused.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_IR_SCALAREXPR_H
#define COCONET_IR_SCALAREXPR_H

#include "ir/Types.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace coconet::ir {

/// Operations of scalar bodies (ir/ScalarOps.def). Unary math ops take one
/// argument; Pow, Max, Min and the arithmetic and comparison ops take two;
/// Select takes (condition, then, else); Dropout takes (x, p, seed) and
/// keeps x / (1 - p) where dropoutKeep(seed, global element index, p)
/// (coconet/numeric.h), else 0. Operand reads element `operandIndex` of the
/// stage's operand; Const is `constValue` (exact for every dtype but
/// u64/i64 beyond 2^53); Cast converts args[0] to the node's dtype; the
/// comparisons give bools.
enum class ScalarOp {
#define SCALAR_OP(Name, Printed, Arity, Class) Name,
#include "ir/ScalarOps.def"
};

/// How sema types an operation and which family of evaluation and printing
/// it belongs to (see ir/ScalarOps.def).
enum class ScalarOpClass {
  Leaf,
  Cast,
  Neg,
  Arith,
  Compare,
  Select,
  FloatMath,
  NumMath,
  Pow,
  MinMax,
  Dropout,
};

/// The printed name ("add", "sqrt", ...).
llvm::StringRef scalarOpName(ScalarOp op);
/// The number of arguments.
unsigned scalarOpArity(ScalarOp op);
ScalarOpClass scalarOpClass(ScalarOp op);
/// Is it a FORMULA_OP, defined once as coconet::rt::ops::NAME in
/// coconet/numeric.h?
bool isFormula(ScalarOp op);
/// The operation a call `name(...)` makes: a FloatMath, NumMath, Pow,
/// MinMax, Select or Dropout operation named `name`.
std::optional<ScalarOp> lookupCallableScalarOp(llvm::StringRef name);

struct ScalarExpr {
  ScalarOp op = ScalarOp::Const;
  DType dtype = DType::F32;
  llvm::SmallVector<const ScalarExpr *, 3> args;
  unsigned operandIndex = 0;
  double constValue = 0;
  int64_t constInt = 0; ///< Exact value of integer constants.
};

/// The nodes of the body `root`, each once, operands before the nodes that
/// use them (without recursion: bodies can be deep). A node for which
/// `known` holds (e.g. already handled while walking another body) is left
/// out, with the operands only it reaches.
llvm::SmallVector<const ScalarExpr *, 16> postOrder(
    const ScalarExpr *root, llvm::function_ref<bool(const ScalarExpr *)> known =
                                [](const ScalarExpr *) { return false; });

} // namespace coconet::ir

#endif // COCONET_IR_SCALAREXPR_H
