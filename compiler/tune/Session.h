//===- Session.h - one `coconetc tune` run, its options read ----*- C++ -*-===//
//
// What `coconetc tune` does once the driver has read its options, compiled
// the file and loaded the machine: rank the schedules (Tuner.h), print the
// table (Table.h), time its rows under --measure (Measure.h; the caller
// builds each row, as it owns code generation), and make the schedule
// text. The driver parses options, opens files and says where
// each output goes.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_SESSION_H
#define COCONET_TUNE_SESSION_H

#include "tune/Measure.h"
#include "tune/Table.h"
#include "tune/Tuner.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::tune {

struct SessionOptions {
  /// A schedule every candidate applies first, or null.
  const ir::Schedule *base = nullptr;
  SpaceOptions space;
  /// Rows shown (0: every ranked schedule).
  size_t top = 0;
  /// --measure: each shown row built and timed by the caller.
  bool measure = false;
  MeasurePolicy policy;
  /// Where the builds are (printed with the measured summary).
  std::string measureDir;
  /// The schedule's name, and whether every shown row is written (--table).
  std::string tunedName = "tuned";
  bool writeTable = false;
};

/// Row `row`'s program (its candidate's), written and ready to run under
/// `name`: a function that runs it once for a number of steps (its first
/// call builds it), or why it cannot be.
using RowRunner = std::function<llvm::Expected<RunTime>(int64_t steps)>;
using PrepareRow = llvm::function_ref<llvm::Expected<RowRunner>(
    size_t row, const ir::Program &program, llvm::StringRef name)>;

/// A finished run: what was ranked and shown, and the schedule text.
/// `view` points into the session: it is made once and never moved.
struct Session {
  TuneResult result;
  /// The file's own schedules, by the program each makes.
  std::map<std::string, std::string> known;
  Measured measured;
  TableView view;
  /// The schedule text (the fastest, or every shown row with writeTable),
  /// and the comment line a written file starts with.
  std::string schedule;
  std::string fileComment;
  /// What the last line says was written ("the fastest", "the table") and
  /// under which names ("(schedule tuned)", "(schedules tuned_1 to
  /// tuned_3)").
  std::string what;
  std::string names;
};

/// Ranks the schedules of `program` (of `module`, at `sizes`) on `machine`
/// and prints the table to `os` (the header before any timing, the rows
/// and the measured summary after), the progress of --measure to
/// `progress`. An error says why nothing was ranked, or what failed to
/// build or run. The CSV (writeCsv) is the caller's, from the session.
llvm::Expected<std::unique_ptr<Session>>
runSession(const ir::Module &module, const ir::Program &program,
           const Machine &machine, const ir::DimEnv &sizes,
           const SessionOptions &options, PrepareRow prepare,
           llvm::raw_ostream &os, llvm::raw_ostream &progress);

} // namespace coconet::tune

#endif // COCONET_TUNE_SESSION_H
