//===- PassManager.cpp - running passes, schedules and cleanups -----------===//

#include "passes/PassManager.h"
#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <chrono>

namespace coconet::passes {

ir::Stage *DirectivePass::lookup(ir::Program &program, DiagnosticEngine &diags,
                                 unsigned i) const {
  if (ir::Stage *s = program.findStage(directive.args[i]))
    return s;
  refuse(diags, static_cast<int>(i), DiagId::ScheduleStageGone,
         directive.args[i], program.name);
  return nullptr;
}

LogicalResult PassManager::run(ir::Program &program, DiagnosticEngine &diags) {
  llvm::raw_ostream &log = options.log ? *options.log : llvm::errs();
  struct Timing {
    std::string pass;
    double ms;
  };
  std::vector<Timing> timings;
  LogicalResult result = success();
  for (const auto &pass : passes) {
    auto start = std::chrono::steady_clock::now();
    LogicalResult r = pass->run(program, diags);
    auto end = std::chrono::steady_clock::now();
    timings.push_back(
        {pass->describe(),
         std::chrono::duration<double, std::milli>(end - start).count()});
    if (options.verifyEach) {
      std::string problem = ir::verifyProgram(program);
      if (!problem.empty()) {
        diags.report(program.loc, DiagId::InternalVerifierError,
                     pass->describe(), problem);
        result = failure();
        break;
      }
    }
    if (failed(r)) {
      result = failure();
      break;
    }
    if (options.printAfterAll ||
        llvm::is_contained(options.printAfter, pass->getName())) {
      log << "// ----- IR after " << pass->describe() << " ----- //\n";
      ir::printProgram(program, log);
    }
  }
  if (options.timePasses) {
    double total = 0;
    for (const Timing &t : timings)
      total += t.ms;
    log << "===--- pass execution timing report (" << program.name
        << ") ---===\n"
        << "   wall (ms)   share  pass\n";
    for (const Timing &t : timings)
      log << llvm::format("  %10.3f  %5.1f%%  ", t.ms,
                          total > 0 ? 100 * t.ms / total : 0.0)
          << t.pass << '\n';
    log << llvm::format("  %10.3f  100.0%%  total\n", total);
  }
  return result;
}

static void addDirectives(PassManager &pm, const ir::Module &module,
                          const ir::Schedule &schedule, AppliedStack stack) {
  for (const Directive &d : schedule.directives) {
    AppliedStack here = stack;
    switch (d.kind) {
    case Directive::Kind::Apply:
      // The checker resolved the name and ruled out cycles.
      if (const ir::Schedule *other = module.findSchedule(d.args[0])) {
        here.push_back({other->name, d.loc});
        addDirectives(pm, module, *other, std::move(here));
      }
      break;
#define DIRECTIVE_PASS(Which, Name, Description, Create)                       \
  case Directive::Kind::Which:                                                 \
    pm.addPass(Create(d, std::move(here)));                                    \
    break;
#include "passes/Passes.def"
    }
  }
}

void addSchedulePasses(PassManager &pm, const ir::Module &module,
                       const ir::Schedule &schedule) {
  addDirectives(pm, module, schedule, {});
}

void addCleanupPasses(PassManager &pm) {
#define CLEANUP_PASS(Name, Description, Create) pm.addPass(Create());
#include "passes/Passes.def"
}

llvm::ArrayRef<PassInfo> passRegistry() {
  static const PassInfo kPasses[] = {
#define DIRECTIVE_PASS(Kind, Name, Description, Create)                        \
  {Name, Description, false},
#define CLEANUP_PASS(Name, Description, Create) {Name, Description, true},
#include "passes/Passes.def"
  };
  return kPasses;
}

const PassInfo *findPass(llvm::StringRef name) {
  for (const PassInfo &p : passRegistry())
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string passNameList() {
  llvm::ArrayRef<PassInfo> all = passRegistry();
  std::string out;
  for (size_t i = 0; i < all.size(); ++i)
    out += (i == 0                ? ""
            : i + 1 == all.size() ? " and "
                                  : ", ") +
           all[i].name.str();
  return out;
}

std::unique_ptr<ir::Program> scheduleProgram(const ir::Module &module,
                                             const ir::Program &program,
                                             const ir::Schedule *schedule,
                                             DiagnosticEngine &diags,
                                             const PassOptions &options) {
  std::unique_ptr<ir::Program> copy = program.clone();
  PassManager pm(options);
  if (schedule)
    addSchedulePasses(pm, module, *schedule);
  if (options.cleanup)
    addCleanupPasses(pm);
  if (failed(pm.run(*copy, diags)))
    return nullptr;
  return copy;
}

} // namespace coconet::passes
