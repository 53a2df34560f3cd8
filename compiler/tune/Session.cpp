//===- Session.cpp - one `coconetc tune` run, its options read ------------===//

#include "tune/Session.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace coconet::tune {

llvm::Expected<std::unique_ptr<Session>>
runSession(const ir::Module &module, const ir::Program &program,
           const Machine &machine, const ir::DimEnv &sizes,
           const SessionOptions &options, PrepareRow prepare,
           llvm::raw_ostream &os, llvm::raw_ostream &progress) {
  progress << "coconetc tune: enumerating the schedules of '" << program.name
           << "'...\n";
  auto result = tuneProgram(module, program, options.space, machine);
  if (!result)
    return result.takeError();
  progress << "coconetc tune: " << result->ranked.size()
           << " schedules priced\n";
  if (result->ranked.empty())
    return llvm::createStringError(noSchedule(program, *result));

  auto s = std::make_unique<Session>();
  s->result = std::move(*result);
  s->known = knownSchedules(module, program);
  TableView &view = s->view;
  view.program = &program;
  view.base = options.base;
  view.machine = &machine;
  view.sizes = &sizes;
  view.rows = options.top == 0
                  ? s->result.ranked.size()
                  : std::min<size_t>(options.top, s->result.ranked.size());
  view.known = &s->known;
  printHeader(os, s->result, view);

  // --measure: every shown row written first, then timed in rounds
  // (Measure.h: their order and what is kept).
  if (options.measure) {
    std::vector<RowRunner> runners;
    for (size_t i = 0; i < view.rows; ++i) {
      auto runner = prepare(i, *s->result.ranked[i].candidate.program,
                            "r" + std::to_string(i + 1));
      if (!runner)
        return runner.takeError();
      runners.push_back(std::move(*runner));
    }
    auto times = measureRows(
        view.rows, options.policy,
        [&](size_t i, int64_t steps) { return runners[i](steps); },
        [&](size_t i) { return s->result.ranked[i].candidate.summary; },
        progress);
    if (!times)
      return times.takeError();
    s->measured = std::move(*times);
    view.measured = s->measured.seconds;
  }
  printRows(os, s->result, view);
  if (options.measure)
    printMeasured(os, s->result, view, s->measured.steps, options.policy.rounds,
                  options.policy.runTimeMs, options.measureDir);

  s->schedule =
      tunedSchedules(s->result, view, options.tunedName, options.writeTable);
  const std::string what =
      "schedules of " + program.name + " on machine " + machine.shownName();
  if (options.writeTable) {
    s->fileComment = "// coconetc tune: the " + std::to_string(view.rows) +
                     " fastest of " + std::to_string(s->result.ranked.size()) +
                     " " + what + " at " + sizesText(sizes) + ".\n";
    s->what = "the table";
    s->names = "(schedules " + options.tunedName + "_1 to " +
               options.tunedName + "_" + std::to_string(view.rows) + ")";
  } else {
    s->fileComment = "// coconetc tune: the fastest of " +
                     std::to_string(s->result.ranked.size()) + " " + what +
                     ", predicted " +
                     formatSeconds(s->result.ranked.front().time.seconds) +
                     " per step at " + sizesText(sizes) + ".\n";
    s->what = "the fastest";
    s->names = "(schedule " + options.tunedName + ")";
  }
  return s;
}

} // namespace coconet::tune
