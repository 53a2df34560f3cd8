//===- PassManager.h - running passes, schedules and cleanups ---*- C++ -*-===//
//
// The pass manager runs an ordered list of passes over one program, with
// the IR verifier after each (--verify-each), IR printing after chosen
// passes (--print-after=NAME, --print-after-all) and per-pass timing
// (--time-passes). Pipelines are built from a schedule: its directives in
// order, `apply` expanded in place, then the cleanup passes.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_PASSES_PASSMANAGER_H
#define COCONET_PASSES_PASSMANAGER_H

#include "passes/Pass.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace coconet::passes {

struct PassOptions {
  /// Run the IR verifier after every pass (a failure is a compiler bug).
  bool verifyEach = false;
  /// Print the IR after every pass, or after the passes named here.
  bool printAfterAll = false;
  std::vector<std::string> printAfter;
  /// Print a table of the time each pass took.
  bool timePasses = false;
  /// Run the cleanup passes (constant folding, CSE, dead stages) after the
  /// schedule.
  bool cleanup = true;
  /// Where --print-after and --time-passes write (stderr by default).
  llvm::raw_ostream *log = nullptr;
};

class PassManager {
public:
  explicit PassManager(PassOptions options) : options(std::move(options)) {}

  void addPass(std::unique_ptr<Pass> pass) {
    passes.push_back(std::move(pass));
  }
  llvm::ArrayRef<std::unique_ptr<Pass>> getPasses() const { return passes; }

  /// Runs every pass in order; stops at the first that fails.
  LogicalResult run(ir::Program &program, DiagnosticEngine &diags);

private:
  PassOptions options;
  std::vector<std::unique_ptr<Pass>> passes;
};

/// A pass of the registry (passes/Passes.def).
struct PassInfo {
  llvm::StringRef name;
  llvm::StringRef description;
  /// Run after every schedule (else: the transformation of a directive).
  bool cleanup = false;
};
/// Every pass: the directives' transformations, then the cleanups in the
/// order they run.
llvm::ArrayRef<PassInfo> passRegistry();
/// The pass named `name`, or null.
const PassInfo *findPass(llvm::StringRef name);
/// "split, reorder, ..., cse and dse".
std::string passNameList();

/// Adds the passes of `schedule` (apply expanded) to `pm`.
void addSchedulePasses(PassManager &pm, const ir::Module &module,
                       const ir::Schedule &schedule);
/// Adds the cleanup passes: constant folding, CSE, dead stage elimination.
void addCleanupPasses(PassManager &pm);

/// A copy of `program` with `schedule` (null: none) and, if enabled, the
/// cleanup passes applied; null after reporting why not.
std::unique_ptr<ir::Program> scheduleProgram(const ir::Module &module,
                                             const ir::Program &program,
                                             const ir::Schedule *schedule,
                                             DiagnosticEngine &diags,
                                             const PassOptions &options);

} // namespace coconet::passes

#endif // COCONET_PASSES_PASSMANAGER_H
