//===- ScheduleSpaceTest.cpp - the enumerated schedules ------------------===//
//
// The schedule space of small programs: what it must contain (the
// schedules a person writes), that every candidate is valid IR, distinct,
// reads back from its own schedule text, and equals the unscheduled
// program on the simulator; and that sizes which do not divide drop a
// candidate.
//
//===----------------------------------------------------------------------===//

#include "../analysis/AnalysisTestUtil.h"

#include "tune/ScheduleSpace.h"
#include "verify/Differential.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>

using namespace coconet;
using namespace coconet::tune;
using test::schedule;

namespace {

const char *const kAdam = R"(
program adam(g: f32[N] local, w: f32[N] replicated, m: f32[N] replicated,
             lr: f32, beta1: f32) {
    gs  = allreduce(sum, g);
    m1  = update(m, beta1 * m + (1 - beta1) * gs);
    w1  = update(w, w - lr * m1);
}
)";

std::string printed(const ir::Program &p) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ir::printProgram(p, os);
  return text;
}

std::vector<std::string> summaries(const std::vector<Candidate> &cs) {
  std::vector<std::string> out;
  for (const Candidate &c : cs)
    out.push_back(c.summary);
  return out;
}

} // namespace

TEST_CASE("the space holds the schedules a person writes", "[tune]") {
  auto s = schedule(kAdam);
  SpaceOptions options;
  options.shardable = {"m"};
  SpaceStats stats;
  std::vector<Candidate> cs = enumerateSchedules(
      *s->module, *s->module->programs.front(), options, stats);
  std::vector<std::string> names = summaries(cs);
  INFO(llvm::join(names, "\n"));
  CHECK(names.front() == "(unscheduled)");
  // ar_c, rs_c_ag and fused_rs_c_ag of the sample, in this program.
  CHECK(llvm::is_contained(names, "fuse(m1, w1)"));
  CHECK(llvm::is_contained(names, "split(gs) reorder(ag, m1, w1) shard(m) "
                                  "fuse(m1, w1)"));
  CHECK(llvm::is_contained(names, "split(gs) reorder(ag, m1, w1) shard(m) "
                                  "fuse(rs, m1 .. ag)"));
  // w is not in --shard: never sharded.
  for (const std::string &n : names)
    CHECK_FALSE(llvm::StringRef(n).contains("shard(w"));
  CHECK(stats.tried > cs.size());
  CHECK_FALSE(stats.truncated);

  // Distinct programs, valid IR, each equal to the unscheduled program.
  llvm::StringSet<> seen;
  const ir::Program &original = *s->module->programs.front();
  for (const Candidate &c : cs) {
    INFO(c.summary);
    CHECK(ir::verifyProgram(*c.program).empty());
    CHECK(seen.insert(printed(*c.program)).second);
    sim::SimOptions sim;
    sim.sizes = {{"N", 12}, {"P", 2}};
    sim.inputKind = sim::InputKind::Wide;
    auto cmp = verify::comparePrograms(original, *c.program, sim);
    if (!cmp)
      FAIL(llvm::toString(cmp.takeError()));
    CHECK(cmp->ok());
  }
}

TEST_CASE("a candidate's schedule text compiles to the same program",
          "[tune]") {
  auto s = schedule(kAdam);
  SpaceOptions options;
  options.shardAll = true;
  SpaceStats stats;
  std::vector<Candidate> cs = enumerateSchedules(
      *s->module, *s->module->programs.front(), options, stats);
  REQUIRE(cs.size() > 3);
  for (size_t i = 1; i < cs.size(); ++i) {
    std::string text =
        kAdam + scheduleText("t", *cs[i].program, nullptr, cs[i].directives);
    INFO(text);
    auto again = schedule(text, "t");
    CHECK(printed(*again->program) == printed(*cs[i].program));
  }
}

TEST_CASE("sizes that do not divide drop the candidates that need them",
          "[tune]") {
  auto s = schedule(kAdam);
  const ir::Program &program = *s->module->programs.front();
  SpaceOptions options;
  SpaceStats all, odd;
  size_t every = enumerateSchedules(*s->module, program, options, all).size();
  // N = 9 on 2 ranks: no reducescatter can slice it.
  options.sizes = {{"N", 9}, {"P", 2}};
  std::vector<Candidate> fit =
      enumerateSchedules(*s->module, program, options, odd);
  CHECK(odd.misfit > 0);
  CHECK(fit.size() + odd.misfit >= every - odd.duplicates);
  for (const Candidate &c : fit) {
    INFO(c.summary);
    CHECK_FALSE(llvm::StringRef(c.summary).contains("split"));
    CHECK(sizeMisfit(*c.program, options.sizes).empty());
  }
  auto split = schedule(std::string(kAdam) +
                            "schedule x for adam { (rs, ag) = split(gs); }",
                        "x");
  CHECK(sizeMisfit(*split->program, {{"N", 9}, {"P", 2}}) ==
        "dimension 0 of 'rs' (N) does not divide among the ranks that slice "
        "it");
}

TEST_CASE("an overlap is tried in each part count that divides", "[tune]") {
  auto s = schedule(R"(
program mlp(x: f32[B, H] sliced(1), w: f32[H, H] sliced(0)) {
    y  = matmul(x, w);
    ys = allreduce(sum, y);
    return ys;
}
)");
  SpaceOptions options;
  options.chunks = {2, 4, 8};
  options.sizes = {{"B", 12}, {"H", 8}, {"P", 2}};
  SpaceStats stats;
  std::vector<Candidate> cs = enumerateSchedules(
      *s->module, *s->module->programs.front(), options, stats);
  std::vector<std::string> names = summaries(cs);
  INFO(llvm::join(names, "\n"));
  // The simulator runs every candidate at these sizes.
  for (const Candidate &c : cs) {
    sim::SimOptions sim;
    sim.sizes = options.sizes;
    auto r = sim::simulate(*c.program, sim);
    if (!r)
      FAIL(c.summary << ": " << llvm::toString(r.takeError()));
  }
  CHECK(llvm::is_contained(names, "overlap(y, ys) chunks 2"));
  CHECK(llvm::is_contained(names, "overlap(y, ys) chunks 4"));
  // 12 rows are not 8 parts.
  CHECK_FALSE(llvm::is_contained(names, "overlap(y, ys) chunks 8"));
  CHECK(llvm::is_contained(names, "split(ys) overlap(y, rs) chunks 2"));
  // The reducescatter hands out 2 blocks of 6 rows: 4 parts each is 8.
  CHECK_FALSE(llvm::is_contained(names, "split(ys) overlap(y, rs) chunks 4"));
}

TEST_CASE("an allreduce over both axes of a two-axis mesh goes hierarchical",
          "[tune]") {
  const char *const kTwoAxes = R"(
program p(mesh [node: M, gpu: G], g: f16[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - f32(gs));
}
)";
  auto s = schedule(kTwoAxes);
  SpaceOptions options;
  SpaceStats stats;
  std::vector<Candidate> cs = enumerateSchedules(
      *s->module, *s->module->programs.front(), options, stats);
  std::vector<std::string> names = summaries(cs);
  INFO(llvm::join(names, "\n"));
  CHECK(llvm::is_contained(names, "(rs, ar, ag) = hierarchical(gs)"));
  CHECK(llvm::is_contained(names,
                           "(rs, ar, ag) = hierarchical(gs) reorder(ag, w1)"));
  // Each is valid, reads back from its text, and equals the unscheduled
  // program within the reassociation's bound (wide inputs: the f16 partial
  // sums round).
  const ir::Program &original = *s->module->programs.front();
  for (size_t i = 0; i < cs.size(); ++i) {
    const Candidate &c = cs[i];
    INFO(c.summary);
    CHECK(ir::verifyProgram(*c.program).empty());
    if (i > 0) {
      std::string text =
          kTwoAxes + scheduleText("t", *c.program, nullptr, c.directives);
      CHECK(printed(*schedule(text, "t")->program) == printed(*c.program));
    }
    sim::SimOptions sim;
    sim.sizes = {{"N", 12}, {"M", 2}, {"G", 3}};
    sim.inputKind = sim::InputKind::Wide;
    auto cmp = verify::comparePrograms(original, *c.program, sim);
    if (!cmp)
      FAIL(llvm::toString(cmp.takeError()));
    CHECK(cmp->ok());
  }
}
