//===- Describe.h - what a stage is, in words -------------------*- C++ -*-===//
//
// The one place that knows which attributes each kind of stage has and how
// they are written: the IR printer, the Graphviz drawing, the cost report
// and diagnostics lay out what describeStage gives them; none of them looks
// at a kind's attributes itself.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_IR_DESCRIBE_H
#define COCONET_IR_DESCRIBE_H

#include "ir/Program.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace coconet::ir {

/// A stage's operation and attributes. The IR prints a stage as
/// `operation(leading..., %operands..., keywords...) over AXIS`; a view
/// without operands as operationText() gives.
struct StageDescription {
  /// "allreduce", "reduction sum", "param 0", "elementwise".
  std::string operation;
  /// Written before the operands: the reduce operator ("sum").
  llvm::SmallVector<std::string, 1> leading;
  /// Written after them: "dim=0", "root=1", "offset=-1".
  llvm::SmallVector<std::string, 2> keywords;
  /// The mesh axis of a communication ("world", "tp", "all" for every
  /// axis); empty for a computation.
  std::string axis;
  /// Parameters: "sharded" when a schedule sharded it.
  bool sharded = false;
  /// The attributes in one list: leading, then keywords ("sum, dim=0").
  std::string attributes() const;
};

StageDescription describeStage(const Program &program, const Stage &stage);

/// "allgather over world", "reducescatter(sum, dim=0) over tp",
/// "reduction norm", "matmul": the operation with its attributes, no
/// operands.
std::string operationText(const StageDescription &d);

/// "a reducescatter", "an elementwise stage", "a reduction (norm)", for
/// messages.
std::string describeKind(const Stage &stage);

} // namespace coconet::ir

#endif // COCONET_IR_DESCRIBE_H
