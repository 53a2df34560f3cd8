//===- PlanLaunches.h - the launches of a step as the plan runs them -*- C++
//-*-===//
//
// The tuner prices what the generated code runs: the lowered plan
// (lower/Plan.h), not the scheduled IR alone. The cost of each launch is
// still the report's (analysis/Report.h: bytes, FLOPs and network as
// formulas in the size names), but the lowering decides
//
// - which fused collectives run as one kernel and which in sequence (a
//   refusal: their collectives and kernel are priced one by one);
// - which overlaps run in parts (a refused one is priced whole);
// - the steps it adds: result copies, and the packs and unpacks around a
//   collective along a dimension > 0 (priced as kernels that read and write
//   their block), but those a fused kernel or an overlap's parts make
//   themselves;
// - which collectives move nothing (on one member, a collective of a
//   parameter is that parameter: Buffer::loneInput);
// - and whether the program can be generated at all: a schedule the
//   lowering refuses has no price.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_PLANLAUNCHES_H
#define COCONET_TUNE_PLANLAUNCHES_H

#include "analysis/Report.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace coconet::ir {
class Program;
struct Stage;
} // namespace coconet::ir

namespace coconet::tune {

/// The launches of one step of a program as its plan runs them.
struct StepLaunches {
  /// In the order the plan runs them.
  std::vector<analysis::LaunchCost> launches;
  /// Per overlap of the program (in `program.overlaps`' order): it runs in
  /// parts (the plan did not refuse it).
  std::vector<bool> overlapInParts;
  /// Per launch: for a collective whose output is a parameter's buffer
  /// when its group has one member, that parameter and the collective's
  /// axis (-1: every axis); else null.
  struct Lone {
    const ir::Stage *input = nullptr;
    int axis = 0;
  };
  std::vector<Lone> lone;
  /// The launches the lowering added (copies, packs), not stages.
  unsigned added = 0;
};

/// Lowers `program` (in its sequential form with `sequential`, as
/// `coconetc --sequential` does) and returns its step's launches; an error
/// says why the lowering refuses it.
llvm::Expected<StepLaunches> planLaunches(const ir::Program &program,
                                          bool sequential = false);

} // namespace coconet::tune

#endif // COCONET_TUNE_PLANLAUNCHES_H
