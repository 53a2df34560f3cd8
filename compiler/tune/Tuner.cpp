//===- Tuner.cpp - rank a program's schedules by predicted time -----------===//

#include "tune/Tuner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <chrono>

namespace coconet::tune {

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
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
    r.launches = analysis::analyzeLaunches(*c.program);
    auto time = predictStep(*c.program, r.launches, machine, options.sizes,
                            options.staging);
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
                             algorithmName(ct.algorithm).str());
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
