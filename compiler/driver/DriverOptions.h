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

/// The simulator subcommand's entry (SimCommand.cpp).
int runSim(const std::string &path, const std::string &programName);

} // namespace coconet::driver

#endif // COCONET_DRIVER_DRIVEROPTIONS_H
