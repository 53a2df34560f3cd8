//===- DriverOptions.h - options shared by the subcommands ------*- C++ -*-===//
//
// Internal to driver/: the compile step every subcommand starts with.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_DRIVER_DRIVEROPTIONS_H
#define COCONET_DRIVER_DRIVEROPTIONS_H

#include "diag/Diagnostic.h"
#include "ir/Program.h"

#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>

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

} // namespace coconet::driver

#endif // COCONET_DRIVER_DRIVEROPTIONS_H
