//===- Report.h - what a scheduled program launches and moves ---*- C++ -*-===//
//
// --report: for one (scheduled) program, the kernels and collectives one
// step launches, in order, and for each the bytes one rank reads from and
// writes to memory and sends over the network, computed analytically from
// the shapes as formulas in the size names (and as numbers when sizes are
// bound). This is the cost model the tuner will use; docs/schedules.md
// states its assumptions.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_ANALYSIS_REPORT_H
#define COCONET_ANALYSIS_REPORT_H

#include "ir/Program.h"

#include "llvm/ADT/StringRef.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::analysis {

/// Prints the report of `program` under `scheduleName` ("unscheduled" when
/// none). `sizes` may bind some or all size names (mesh sizes included);
/// totals are then also printed as numbers.
void printReport(const ir::Program &program, llvm::StringRef scheduleName,
                 const ir::DimEnv &sizes, llvm::raw_ostream &os);

} // namespace coconet::analysis

#endif // COCONET_ANALYSIS_REPORT_H
