//===- Tuner.h - rank a program's schedules by predicted time ---*- C++ -*-===//
//
// The schedule space (ScheduleSpace.h) priced by the cost model
// (CostModel.h): what `coconetc tune` prints and `--schedule=auto` picks.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_TUNER_H
#define COCONET_TUNE_TUNER_H

#include "analysis/Report.h"
#include "tune/CostModel.h"
#include "tune/Machine.h"
#include "tune/ScheduleSpace.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace coconet::tune {

struct Ranked {
  Candidate candidate;
  std::vector<analysis::LaunchCost> launches;
  StepTime time;
  double memoryBytes = 0; ///< read + write (+ staging copies) per rank
  double networkBytes = 0;
  /// "rs direct, ag direct" / "gs library": each collective's algorithm.
  std::string algorithms;
};

struct TuneResult {
  /// Fastest first; ties keep the enumeration order (fewer directives,
  /// earlier choices first).
  std::vector<Ranked> ranked;
  SpaceStats stats;
  /// Legal schedules the machine cannot price (a fused collective across
  /// nodes, where it states no `direct` algorithm), and the first reason.
  size_t unpriced = 0;
  std::string unpricedReason;
  double enumerateSeconds = 0;
  double predictSeconds = 0;
};

/// The step of `program` as its lowered plan runs it (planLaunches), priced
/// on `machine` at `sizes`; its launches into `launches` where given. An
/// error says why the lowering refuses it or what the price lacks.
llvm::Expected<StepTime>
priceStep(const ir::Program &program, const Machine &machine,
          const ir::DimEnv &sizes, bool staging = false,
          std::vector<analysis::LaunchCost> *launches = nullptr);

/// Enumerates and prices the schedules of `program`; an error names what
/// the machine or the sizes lack.
llvm::Expected<TuneResult> tuneProgram(const ir::Module &module,
                                       const ir::Program &program,
                                       const SpaceOptions &options,
                                       const Machine &machine);

/// How much faster than what runs another algorithm must be priced before
/// the tuner names it: 2% of the collective's time. A recalibration moves
/// the lines by a few percent, so a nearer choice is the noise of the fits;
/// naming it would make the schedule text (and a committed proof's rows)
/// change with every calibration while the predicted step barely moves.
inline constexpr double kAlgorithmMargin = 0.02;

/// Adds to `c` an `algorithm(...)` directive for each collective that an
/// algorithm the machine's target runs would move at least
/// `kAlgorithmMargin` faster than the one `time` priced (and whose stage a
/// schedule can name); true if it did.
bool chooseAlgorithms(Candidate &c, const StepTime &time,
                      const Machine &machine);

/// Adds to `c` an `algorithm(s, "FILE")` directive for each collective
/// (whose algorithm no directive chose, and that a schedule can name) that
/// one of `options.algorithmFiles` of its kind and ranks makes the step at
/// least `kAlgorithmMargin` of the collective's time faster, the fastest
/// file first; true if it did. `time` is `c`'s step as priced now.
bool chooseAlgorithmFiles(Candidate &c, const StepTime &time,
                          const Machine &machine, const SpaceOptions &options);

/// A schedule named `name` for `program` with `directives` (after `apply
/// base` when a base is given), for the pass manager.
ir::Schedule makeSchedule(llvm::StringRef name, const ir::Program &program,
                          const ir::Schedule *base,
                          llvm::ArrayRef<ir::Schedule::Directive> directives);

} // namespace coconet::tune

#endif // COCONET_TUNE_TUNER_H
