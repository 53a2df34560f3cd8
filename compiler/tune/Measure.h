//===- Measure.h - timing a table's schedules on this machine ---*- C++ -*-===//
//
// `coconetc tune --measure` (docs/tuner.md, "Measured"): how the rows of the
// table are timed, apart from how one run is made. The driver builds each
// schedule's generated driver and runs it (a callback); this file decides
// how many steps a run takes, in which order the rows run, how many rounds,
// and what is kept of them, and reads the driver's timing line.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_MEASURE_H
#define COCONET_TUNE_MEASURE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace coconet::tune {

/// One run's seconds per step: the mean over its steps and its fastest step
/// (the driver's --step-times).
struct RunTime {
  double mean = 0;
  double fastest = 0;
};

/// A run on its progress line: "mean 1.85 ms, fastest 1.60 ms a step".
std::string stepText(const RunTime &t);

/// The times in a generated driver's timing line, "NAME: K steps on R
/// ranks, X ms per step, fastest Y ms" (with --step-times), in seconds.
llvm::Expected<RunTime> parseTimingLine(llvm::StringRef out);

/// --iterations, --run-time (milliseconds; 0: none) and --rounds.
struct MeasurePolicy {
  int64_t iterations = 5;
  int64_t runTimeMs = 0;
  int64_t rounds = 1;
};

struct Measured {
  /// Each row's fastest step over its rounds, in seconds.
  std::vector<double> seconds;
  /// The steps each row's runs took.
  std::vector<int64_t> steps;
};

/// Times `rows` schedules. `run(i, steps)` runs row i's driver once for
/// `steps` steps (its first run builds it); `label(i)` names row i on the
/// progress lines written to `progress`.
///
/// With a run time, a first run of each row (--iterations steps) sizes its
/// runs: enough steps for the run time (at least --iterations, at most a
/// million); a first run already that long counts as its first round.
/// Then --rounds rounds each time every row once: odd rounds in rank
/// order, even rounds in reverse, so that a machine that slows (or speeds
/// up) across a round does not by itself make the measured order agree
/// (or disagree) with the predicted one; a steady drift cancels. The
/// fastest step of a row's rounds is kept: the development VM's noise only
/// adds time, and whole runs sit in a slow phase (the minimum as the
/// estimator under such noise: Chen and Revels, "Robust benchmarking in
/// noisy environments", 2016).
llvm::Expected<Measured>
measureRows(size_t rows, const MeasurePolicy &policy,
            llvm::function_ref<llvm::Expected<RunTime>(size_t, int64_t)> run,
            llvm::function_ref<std::string(size_t)> label,
            llvm::raw_ostream &progress);

/// "5 steps each", or "5 to 400 steps (at least 50 ms a run)".
std::string stepsText(llvm::ArrayRef<int64_t> steps, int64_t runTimeMs);

/// Spearman's rank correlation of two equally long series (ties get their
/// mean rank).
double spearman(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b);

} // namespace coconet::tune

#endif // COCONET_TUNE_MEASURE_H
