//===- DriverOptions.h - options shared by the subcommands ------*- C++ -*-===//
//
// Internal to driver/: the compile step every subcommand starts with.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_DRIVER_DRIVEROPTIONS_H
#define COCONET_DRIVER_DRIVEROPTIONS_H

#include "diag/Diagnostic.h"
#include "ir/Program.h"
#include "synth/Topology.h"
#include "tune/Machine.h"
#include "tune/PlanLaunches.h"

#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace coconet::driver {

/// A checked compilation: its sources, diagnostics and IR.
struct Compilation {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<ir::Module> module;
};

/// Loads and checks `path` with the shared options (-I, --stdlib-dir,
/// --color, --error-limit, -Werror). Returns null module after errors.
std::unique_ptr<Compilation> compile(const std::string &path);

/// The program named by --program, or the only/first program; reports and
/// returns null if there is no such program.
const ir::Program *selectProgram(const ir::Module &module,
                                 const std::string &name, bool requireUnique);

/// The schedule named by --schedule (null if none was asked for or after
/// reporting that it does not exist). Checks it is for `program` when that
/// is set; sets `program` to the schedule's program.
const ir::Schedule *selectSchedule(const ir::Module &module,
                                   const ir::Program *&program);
bool scheduleRequested();
/// What a command runs: the program --program names (or the only one),
/// and the schedule --schedule names (null when none), whose program it
/// must be (or, without --program, is). False after reporting why.
bool selectProgramAndSchedule(const ir::Module &module,
                              const std::string &programName,
                              const ir::Program *&program,
                              const ir::Schedule *&schedule);
/// A copy of `program` with `schedule` (null: none) and the cleanups
/// applied under the pass options of the command line; null after errors.
std::unique_ptr<ir::Program> applySchedule(Compilation &c,
                                           const ir::Program &program,
                                           const ir::Schedule *schedule);
/// Size names bound by --size / --ranks (for --emit=report); false after
/// reporting a malformed binding.
bool reportSizes(const ir::Program *program, ir::DimEnv &sizes);

/// The simulator subcommand's entry (SimCommand.cpp).
int runSim(const std::string &path, const std::string &programName);

/// -o: the output file (or directory), "-" for stdout.
const std::string &outputPath();

// TuneCommand.cpp.
/// The tuner subcommand's entry.
int runTune(const std::string &path, const std::string &programName);
/// Was --machine given?
bool machineGiven();
/// The machine file --machine names (a path or an installed name); none
/// after reporting why.
std::optional<tune::Machine> loadMachine(Compilation &c);
/// The tuner's fastest schedule of `program` (named "auto") for
/// --schedule=auto, at the sizes of --size/--ranks on --machine; none after
/// reporting why.
std::optional<ir::Schedule> autoSchedule(Compilation &c,
                                         const ir::Program &program);
/// The predicted time of each of `launches` (the step of `scheduled` as its
/// plan runs it) for --emit=report, and in `total` the step's (or why there
/// is none).
std::vector<std::string> predictedTimes(const ir::Program &scheduled,
                                        const tune::StepLaunches &launches,
                                        const tune::Machine &machine,
                                        const ir::DimEnv &sizes,
                                        std::string &total);

} // namespace coconet::driver

#endif // COCONET_DRIVER_DRIVEROPTIONS_H
