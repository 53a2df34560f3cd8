//===- LoneInputTest.cpp - the cost model's aliases against the plan's ----===//
//
// On one member a collective of a parameter is that parameter (the
// lowering's aliasLoneCollectives); the cost model prices it at nothing
// through analysis::loneInput, its own statement of the same rule. The two
// must agree on every schedule the tuner enumerates for every sample: a
// rule the report has and the lowering lacks predicts a copy away that the
// generated code makes, and the other way round.
//
//===----------------------------------------------------------------------===//

#include "../analysis/AnalysisTestUtil.h"

#include "analysis/Report.h"
#include "diag/Diagnostic.h"
#include "lower/Lower.h"
#include "lower/Plan.h"
#include "sema/Sema.h"
#include "tune/ScheduleSpace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace coconet;

namespace {

using Aliases = std::set<std::pair<std::string, std::string>>;

/// (collective, parameter) for each scratch buffer the plan makes its
/// parameter input on one member, but a fused collective's reduced value
/// (its kernel reads the input itself; the launch is priced as the kernel).
Aliases planAliases(const ir::Program &program, const lower::Plan &plan) {
  Aliases out;
  for (const lower::Buffer &b : plan.buffers) {
    const ir::Stage *c = program.findStage(b.value);
    REQUIRE(c);
    if (b.loneInput && !program.kernelOf(c))
      out.insert({b.value, plan.buffers[*b.loneInput].value});
  }
  return out;
}

Aliases reportAliases(const ir::Program &program) {
  Aliases out;
  for (const auto &s : program.getStages())
    if (const ir::Stage *in = analysis::loneInput(program, *s))
      out.insert({s->name, in->name});
  return out;
}

std::string text(const Aliases &a) {
  std::string s;
  for (const auto &[c, in] : a)
    s += c + " = " + in + "; ";
  return s;
}

} // namespace

TEST_CASE("the cost model's one-member aliases are the lowering's on every "
          "enumerated schedule of every sample",
          "[tune]") {
  // Every samples/*.coco, in name order.
  std::vector<std::string> samples;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(COCONET_SOURCE_DIR "/samples", ec),
       end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".coco"))
      samples.push_back(llvm::sys::path::filename(it->path()).str());
  REQUIRE_FALSE(ec);
  llvm::sort(samples);
  REQUIRE(samples.size() >= 6);
  size_t aliased = 0, schedules = 0;
  for (const std::string &sample : samples) {
    INFO(sample);
    llvm::SourceMgr sourceMgr;
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    DiagnosticEngine diags(sourceMgr, os);
    sema::SemaOptions options;
    options.stdlibDir = COCONET_SOURCE_DIR "/stdlib";
    auto module = sema::compileFile(
        sourceMgr, diags, COCONET_SOURCE_DIR "/samples/" + sample, options);
    INFO(diagnostics);
    REQUIRE(module);
    for (const auto &program : module->programs) {
      tune::SpaceOptions space;
      space.shardAll = true;
      tune::SpaceStats stats;
      for (const tune::Candidate &c :
           tune::enumerateSchedules(*module, *program, space, stats)) {
        INFO(program->name << ": " << c.summary);
        auto plan = lower::lowerProgram(*c.program, "candidate", diags);
        INFO(diagnostics);
        REQUIRE(plan);
        const Aliases fromPlan = planAliases(*c.program, *plan);
        CHECK(text(reportAliases(*c.program)) == text(fromPlan));
        aliased += fromPlan.size();
        ++schedules;
      }
    }
  }
  // The rule is exercised: the samples' gradients (sgd, adam, lamb) are
  // aliased in their unscheduled and split forms.
  CHECK(schedules > 200);
  CHECK(aliased > 20);
}

TEST_CASE("the cost model's one-member aliases are the lowering's where a "
          "rule refuses one",
          "[tune]") {
  // Each program has one collective of a parameter; the comment says which
  // rule decides (none of the samples exercises them).
  const char *const programs[] = {
      // The parameter is updated later in the step: no alias.
      R"(program p(w: f32[N] local) {
    s = allreduce(sum, w);
    w1 = update(w, w - s);
})",
      // The collective's value is returned: an output, no alias.
      R"(program p(g: f32[N] local) {
    s = allreduce(sum, g);
    return s;
})",
      // Its input is a value, not a parameter: no alias.
      R"(program p(g: f32[N] local, w: f32[N] replicated) {
    h = g * 0.5;
    s = allreduce(sum, h);
    w1 = update(w, w - s);
})",
      // A sendrecv of one member receives zeros: no alias.
      R"(program p(g: f32[N] local, w: f32[N] local) {
    s = sendrecv(g, 1);
    w1 = update(w, w - s);
})",
      // A broadcast of a parameter nothing updates: aliased.
      R"(program p(g: f32[N] local, w: f32[N] replicated) {
    s = broadcast(g, 0);
    w1 = update(w, w - s);
})",
  };
  size_t aliased = 0;
  for (const char *source : programs) {
    INFO(source);
    auto s = test::schedule(source);
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    DiagnosticEngine diags(s->sourceMgr, os);
    auto plan = lower::lowerProgram(*s->program, "", diags);
    INFO(diagnostics);
    REQUIRE(plan);
    const Aliases fromPlan = planAliases(*s->program, *plan);
    CHECK(text(reportAliases(*s->program)) == text(fromPlan));
    aliased += fromPlan.size();
  }
  CHECK(aliased == 1);
}
