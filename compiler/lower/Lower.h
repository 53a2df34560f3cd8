//===- Lower.h - lowering a scheduled program to its plan -------*- C++ -*-===//
//
// The entry of the lowering (lower/Plan.h describes what it builds).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_LOWER_LOWER_H
#define COCONET_LOWER_LOWER_H

#include "diag/Diagnostic.h"
#include "lower/Plan.h"

#include <memory>

namespace coconet::ir {
class Program;
} // namespace coconet::ir

namespace coconet::lower {

struct LowerOptions {
  /// Fused collectives run as their sequential steps on every path, and
  /// overlaps as producer then consumer (for comparison: --sequential).
  bool sequential = false;
};

/// Lowers a scheduled program. Reports (as a located error) what the
/// lowering does not support yet and returns null then. The plan points
/// into the program's scalar bodies: it lives no longer than `program`.
std::unique_ptr<Plan> lowerProgram(const ir::Program &program,
                                   llvm::StringRef scheduleName,
                                   DiagnosticEngine &diags,
                                   const LowerOptions &options = {});

} // namespace coconet::lower

#endif // COCONET_LOWER_LOWER_H
