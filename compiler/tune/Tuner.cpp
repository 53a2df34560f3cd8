//===- Tuner.cpp - rank a program's schedules by predicted time -----------===//

#include "tune/Tuner.h"

#include "diag/Diagnostic.h"
#include "ir/AlgorithmTable.h"
#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

#include <chrono>

namespace coconet::tune {

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

llvm::Expected<StepTime>
priceStep(const ir::Program &program, const Machine &machine,
          const ir::DimEnv &sizes, bool staging,
          std::vector<analysis::LaunchCost> *launches) {
  auto planned = planLaunches(program);
  if (!planned)
    return planned.takeError();
  auto time = predictStep(program, *planned, machine, sizes, staging);
  if (launches)
    *launches = std::move(planned->launches);
  return time;
}

/// Does the runtime of `target` run `a` for unfused collectives?
static bool targetRuns(llvm::StringRef target, Algorithm a) {
  // Both runtimes run one- and two-shot collectives on a team
  // (cpu/team_collectives.h, cuda/team_collectives.h).
  return (target == "cpu" || target == "cuda") && isTeamAlgorithm(a);
}

/// Gives `c` the program `next` that directive `d` (an algorithm) made
/// of it, and says so in its directives and summary.
static void addAlgorithmDirective(Candidate &c,
                                  std::unique_ptr<ir::Program> next,
                                  ir::Schedule::Directive d) {
  c.program = std::move(next);
  c.summary += (c.summary.front() == '(' ? "" : " ") +
               ("algorithm(" + llvm::join(d.args, ", ") + ")");
  if (c.summary.front() == '(')
    c.summary = c.summary.substr(c.summary.find(')') + 1);
  c.directives.push_back(std::move(d));
}

bool chooseAlgorithms(Candidate &c, const StepTime &time,
                      const Machine &machine) {
  std::map<Algorithm, llvm::SmallVector<std::string, 2>> chosen;
  for (const LaunchTime &t : time.launches)
    for (const CollectiveTime &ct : t.collectives) {
      const ir::Stage &s = *ct.stage;
      bool nameable = llvm::all_of(
          s.name, [](char ch) { return llvm::isAlnum(ch) || ch == '_'; });
      if (ct.cheapest == ct.algorithm ||
          ct.cheapestSeconds > (1 - kAlgorithmMargin) * ct.seconds ||
          !targetRuns(machine.target, ct.cheapest) || !nameable ||
          s.algorithm != ir::CollectiveAlgorithm::Auto ||
          llvm::is_contained(chosen[ct.cheapest], s.name))
        continue;
      chosen[ct.cheapest].push_back(s.name);
    }
  bool changed = false;
  llvm::SourceMgr sm;
  llvm::raw_null_ostream silent;
  DiagnosticEngine quiet(sm, silent);
  for (auto &[a, names] : chosen) {
    if (names.empty())
      continue;
    ir::Schedule::Directive d;
    d.kind = ir::Schedule::Directive::Kind::Algorithm;
    d.args.assign(names.begin(), names.end());
    d.args.push_back(algorithmName(a).str());
    d.argLocs.resize(d.args.size());
    std::unique_ptr<ir::Program> next = c.program->clone();
    if (failed(passes::createAlgorithmPass(d, {})->run(*next, quiet)))
      continue;
    addAlgorithmDirective(c, std::move(next), std::move(d));
    changed = true;
  }
  return changed;
}

bool chooseAlgorithmFiles(Candidate &c, const StepTime &time,
                          const Machine &machine, const SpaceOptions &options) {
  if (options.algorithmFiles.empty())
    return false;
  llvm::SourceMgr sm;
  llvm::raw_null_ostream silent;
  DiagnosticEngine quiet(sm, silent);
  double step = time.seconds;
  bool changed = false;
  std::vector<std::unique_ptr<ir::Program>> replaced;
  for (const LaunchTime &t : time.launches)
    for (const CollectiveTime &ct : t.collectives) {
      const ir::Stage &s = *ct.stage;
      const bool nameable = llvm::all_of(
          s.name, [](char ch) { return llvm::isAlnum(ch) || ch == '_'; });
      if (!nameable || s.algorithm != ir::CollectiveAlgorithm::Auto)
        continue;
      // The fastest step among the files that fit, if it beats the margin.
      std::unique_ptr<ir::Program> best;
      ir::Schedule::Directive bestDirective;
      double bestSeconds = step - kAlgorithmMargin * ct.seconds;
      for (const auto &table : options.algorithmFiles) {
        if (ir::stageKindOf(table->collective) != s.kind ||
            static_cast<int64_t>(table->ranks) != ct.members)
          continue;
        ir::Schedule::Directive d;
        d.kind = ir::Schedule::Directive::Kind::Algorithm;
        d.args = {s.name, "\"" + table->file + "\""};
        d.argLocs.resize(d.args.size());
        d.table = table;
        std::unique_ptr<ir::Program> next = c.program->clone();
        if (failed(passes::createAlgorithmPass(d, {})->run(*next, quiet)))
          continue;
        auto priced = priceStep(*next, machine, options.sizes, options.staging);
        if (!priced) {
          llvm::consumeError(priced.takeError());
          continue;
        }
        if (priced->seconds < bestSeconds) {
          bestSeconds = priced->seconds;
          best = std::move(next);
          bestDirective = std::move(d);
        }
      }
      if (!best)
        continue;
      // Later collectives are priced against this step. `time`'s stages
      // are the program's being replaced: it lives until the loop ends.
      step = bestSeconds;
      replaced.push_back(std::move(c.program));
      addAlgorithmDirective(c, std::move(best), std::move(bestDirective));
      changed = true;
    }
  return changed;
}

llvm::Expected<TuneResult> tuneProgram(const ir::Module &module,
                                       const ir::Program &program,
                                       const SpaceOptions &options,
                                       const Machine &machine) {
  TuneResult result;
  auto start = std::chrono::steady_clock::now();
  std::vector<Candidate> candidates =
      enumerateSchedules(module, program, options, result.stats);
  result.enumerateSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  for (Candidate &c : candidates) {
    Ranked r;
    auto time = priceStep(*c.program, machine, options.sizes, options.staging,
                          &r.launches);
    // Collectives another algorithm would move faster, where the target
    // runs it and a schedule can name the stage: say so in the schedule.
    if (time && chooseAlgorithms(c, *time, machine)) {
      time = priceStep(*c.program, machine, options.sizes, options.staging,
                       &r.launches);
    }
    // Algorithm files the caller offers, where one makes the step faster.
    if (time && chooseAlgorithmFiles(c, *time, machine, options)) {
      time = priceStep(*c.program, machine, options.sizes, options.staging,
                       &r.launches);
    }
    if (!time) {
      std::string why = llvm::toString(time.takeError());
      // An unbound size fails every candidate alike.
      if (llvm::StringRef(why).contains("not bound"))
        return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
      if (result.unpriced++ == 0)
        result.unpricedReason = why;
      continue;
    }
    r.time = std::move(*time);
    for (const analysis::LaunchCost &l : r.launches) {
      r.memoryBytes += l.read.evaluate(options.sizes).value_or(0) +
                       l.write.evaluate(options.sizes).value_or(0);
      if (options.staging &&
          l.kind == analysis::LaunchCost::Kind::FusedCollective)
        r.memoryBytes += l.staging.evaluate(options.sizes).value_or(0);
      r.networkBytes += l.sent.evaluate(options.sizes).value_or(0);
    }
    llvm::SmallVector<std::string, 4> algorithms;
    for (const LaunchTime &t : r.time.launches)
      for (const CollectiveTime &ct : t.collectives)
        algorithms.push_back(ct.stage->name + " " +
                             (ct.file.empty()
                                  ? algorithmName(ct.algorithm).str()
                                  : "'" + ct.file + "'"));
    r.algorithms = llvm::join(algorithms, ", ");
    r.candidate = std::move(c);
    result.ranked.push_back(std::move(r));
  }
  llvm::stable_sort(result.ranked, [](const Ranked &a, const Ranked &b) {
    return a.time.seconds < b.time.seconds;
  });
  result.predictSeconds = secondsSince(start);
  return result;
}

ir::Schedule makeSchedule(llvm::StringRef name, const ir::Program &program,
                          const ir::Schedule *base,
                          llvm::ArrayRef<ir::Schedule::Directive> directives) {
  ir::Schedule s;
  s.name = name.str();
  s.program = program.name;
  if (base) {
    ir::Schedule::Directive apply;
    apply.kind = ir::Schedule::Directive::Kind::Apply;
    apply.args.push_back(base->name);
    apply.argLocs.resize(1);
    s.directives.push_back(std::move(apply));
  }
  s.directives.insert(s.directives.end(), directives.begin(), directives.end());
  return s;
}

} // namespace coconet::tune
