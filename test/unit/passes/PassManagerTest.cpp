//===- PassManagerTest.cpp - pipelines, verification, printing, timing ----===//
//
// The pass manager: the verifier after each pass catches a pass that
// breaks the IR, --print-after(-all) and --time-passes output (written to a
// string through PassOptions::log), a refused pass stops the pipeline,
// schedules expand `apply` in order with a note per apply on a refusal,
// pass names and descriptions, and the differential check itself noticing
// a pass that changes values.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

#include "llvm/Support/Regex.h"

#include <set>

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

namespace {

const char *const kSource = R"(program p(g: f32[N] local, w: f32[N] replicated,
          lr: f32) {
    gs = allreduce(sum, g);
    d = lr * gs;
    w1 = update(w, w - d);
}
schedule base for p {
    (rs, ag) = split(gs);
    reorder(ag, d, w1);
}
schedule mid for p {
    apply base;
    fuse(d, w1);
}
schedule top for p {
    apply mid;
    fuse(rs, d, w1, ag);
}
schedule twice for p {
    apply base;
    apply base;
}
schedule stops for p {
    split(gs);
    reorder(gs, w1);
    fuse(w1);
}
)";

/// A pass that corrupts the IR: stage `name` gets a layout for two axes.
class BreakingPass : public passes::Pass {
public:
  explicit BreakingPass(std::string name) : name(std::move(name)) {}
  llvm::StringRef getName() const override { return "break"; }
  std::string describe() const override { return "break(" + name + ")"; }
  LogicalResult run(ir::Program &program, DiagnosticEngine &) override {
    ir::Stage *s = program.findStage(name);
    REQUIRE(s);
    s->type.layout = ir::Layout::replicated(2);
    return success();
  }

private:
  std::string name;
};

/// A pass that records that it ran and changes nothing.
class RecordingPass : public passes::Pass {
public:
  explicit RecordingPass(int &runs) : runs(runs) {}
  llvm::StringRef getName() const override { return "record"; }
  LogicalResult run(ir::Program &, DiagnosticEngine &) override {
    ++runs;
    return success();
  }

private:
  int &runs;
};

/// A pass that changes a value: every constant 2.0 becomes 3.0.
class WrongPass : public passes::Pass {
public:
  llvm::StringRef getName() const override { return "wrong"; }
  LogicalResult run(ir::Program &program, DiagnosticEngine &) override {
    for (const auto &s : program.getStages())
      if (s->kind == StageKind::Elementwise) {
        ir::ScalarExpr e = *s->body;
        for (const ir::ScalarExpr *&a : e.args)
          if (a->op == ir::ScalarOp::Const && a->constValue == 2.0) {
            ir::ScalarExpr k = *a;
            k.constValue = 3.0;
            a = program.addExpr(k);
          }
        s->body = program.addExpr(e);
      }
    return success();
  }
};

/// The lines of `text` that start with `prefix`.
std::vector<std::string> linesStartingWith(llvm::StringRef text,
                                           llvm::StringRef prefix) {
  std::vector<std::string> out;
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (llvm::StringRef l : lines)
    if (l.starts_with(prefix))
      out.push_back(l.str());
  return out;
}

std::vector<std::string> describePasses(const passes::PassManager &pm) {
  std::vector<std::string> out;
  for (const auto &p : pm.getPasses())
    out.push_back(p->describe());
  return out;
}

} // namespace

TEST_CASE("verify-each catches a pass that breaks the IR",
          "[passes][manager]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    y = x * 2.0;
    return y;
}
)");
  for (bool verify : {true, false}) {
    INFO("verify-each " << verify);
    std::unique_ptr<ir::Program> p = c.program().clone();
    passes::PassOptions options;
    options.verifyEach = verify;
    passes::PassManager pm(options);
    int runs = 0;
    pm.addPass(std::make_unique<BreakingPass>("y"));
    pm.addPass(std::make_unique<RecordingPass>(runs));
    std::string text;
    llvm::raw_string_ostream os(text);
    DiagnosticEngine diags(*c.sourceMgr, os);
    LogicalResult r = pm.run(*p, diags);
    os.flush();
    if (verify) {
      CHECK(failed(r));
      CHECK(diags.errorCount() == 1);
      CHECK(llvm::StringRef(text).starts_with(
          "test.coco:1:1: error: internal compiler error: the IR is invalid "
          "after break(y): stage %1 'y': layout has 2 axes but the mesh has "
          "1 [internal-verifier-error]\n"));
      // The pipeline stopped at the broken pass.
      CHECK(runs == 0);
    } else {
      CHECK(succeeded(r));
      CHECK(text.empty());
      CHECK(runs == 1);
      CHECK(ir::verifyProgram(*p) ==
            "stage %1 'y': layout has 2 axes but the mesh has 1");
    }
  }
}

TEST_CASE("print-after prints the IR after the named passes",
          "[passes][manager]") {
  Compiled c = compile(kSource);
  passes::PassOptions options = testOptions(/*cleanup=*/true);
  options.printAfter = {"reorder", "dse"};
  std::string log;
  llvm::raw_string_ostream os(log);
  options.log = &os;
  Scheduled s = applySchedule(c, "base", options);
  os.flush();
  REQUIRE(s.program);
  Scheduled noCleanup = schedule(c, "base");
  CHECK(log == "// ----- IR after reorder(ag, d, w1) ----- //\n" +
                   noCleanup.ir() + "// ----- IR after dse ----- //\n" +
                   s.ir());
  // Diagnostics and the log are separate streams.
  CHECK(s.diagnostics.empty());
}

TEST_CASE("print-after-all prints the IR after every pass",
          "[passes][manager]") {
  Compiled c = compile(kSource);
  passes::PassOptions options = testOptions(/*cleanup=*/true);
  options.printAfterAll = true;
  std::string log;
  llvm::raw_string_ostream os(log);
  options.log = &os;
  Scheduled s = applySchedule(c, "top", options);
  os.flush();
  REQUIRE(s.program);
  CHECK(
      linesStartingWith(log, "// -----") ==
      std::vector<std::string>{"// ----- IR after split(gs) ----- //",
                               "// ----- IR after reorder(ag, d, w1) ----- //",
                               "// ----- IR after fuse(d, w1) ----- //",
                               "// ----- IR after fuse(rs, d, w1, ag) ----- //",
                               "// ----- IR after constfold ----- //",
                               "// ----- IR after cse ----- //",
                               "// ----- IR after dse ----- //"});
  CHECK(linesStartingWith(log, "program p").size() == 7);
  // The last printed IR is the result.
  CHECK(llvm::StringRef(log).ends_with("// ----- IR after dse ----- //\n" +
                                       s.ir()));
}

TEST_CASE("time-passes prints a table of every pass", "[passes][manager]") {
  Compiled c = compile(kSource);
  passes::PassOptions options = testOptions(/*cleanup=*/true);
  options.timePasses = true;
  std::string log;
  llvm::raw_string_ostream os(log);
  options.log = &os;
  Scheduled s = applySchedule(c, "mid", options);
  os.flush();
  REQUIRE(s.program);
  llvm::SmallVector<llvm::StringRef, 16> lines;
  llvm::StringRef(log).rtrim('\n').split(lines, '\n');
  REQUIRE(lines.size() == 9);
  CHECK(lines[0] == "===--- pass execution timing report (p) ---===");
  CHECK(lines[1] == "   wall (ms)   share  pass");
  const char *const names[] = {"split\\(gs\\)",
                               "reorder\\(ag, d, w1\\)",
                               "fuse\\(d, w1\\)",
                               "constfold",
                               "cse",
                               "dse"};
  for (size_t i = 0; i < 6; ++i) {
    INFO(lines[i + 2].str());
    CHECK(llvm::Regex(std::string("^ +[0-9]+\\.[0-9]{3} +[0-9]+\\.[0-9]% +") +
                      names[i] + "$")
              .match(lines[i + 2]));
  }
  INFO(lines[8].str());
  CHECK(llvm::Regex("^ +[0-9]+\\.[0-9]{3}  100\\.0%  total$").match(lines[8]));
}

TEST_CASE("a refused pass stops the pipeline", "[passes][manager]") {
  Compiled c = compile(kSource);
  passes::PassOptions options = testOptions(/*cleanup=*/true);
  options.printAfterAll = true;
  options.timePasses = true;
  std::string log;
  llvm::raw_string_ostream os(log);
  options.log = &os;
  Scheduled s = applySchedule(c, "stops", options);
  os.flush();
  CHECK_FALSE(s.program);
  CHECK(s.errors == 1);
  CHECK(llvm::StringRef(s.diagnostics)
            .starts_with(c.at("reorder(^gs, w1)") +
                         ": error: 'gs' is no longer a stage of 'p' at this "
                         "point of the schedule: an earlier transformation "
                         "replaced it [schedule-stage-gone]\n"));
  // Only the split printed; the table has the split and the refused
  // reorder, not the fuse or the cleanups.
  CHECK(linesStartingWith(log, "// -----") ==
        std::vector<std::string>{"// ----- IR after split(gs) ----- //"});
  CHECK(log.find("reorder(gs, w1)\n") != std::string::npos);
  CHECK(log.find("fuse(") == std::string::npos);
  CHECK(log.find("constfold") == std::string::npos);
  CHECK(log.find("dse") == std::string::npos);
  // The original program is untouched: scheduleProgram works on a copy.
  CHECK(c.program().findStage("gs") != nullptr);
}

TEST_CASE("schedules expand apply in order", "[passes][manager]") {
  Compiled c = compile(kSource);
  passes::PassManager pm(testOptions(false));
  passes::addSchedulePasses(pm, *c.module, c.schedule("top"));
  CHECK(describePasses(pm) ==
        std::vector<std::string>{"split(gs)", "reorder(ag, d, w1)",
                                 "fuse(d, w1)", "fuse(rs, d, w1, ag)"});
  passes::addCleanupPasses(pm);
  CHECK(describePasses(pm).size() == 7);
  CHECK(describePasses(pm).back() == "dse");

  Scheduled s = schedule(c, "top");
  REQUIRE(s.program->kernels.size() == 1);
  CHECK(s.program->kernels[0].stages.size() == 4);
  CHECK(s.program->kernels[0].isFusedCollective());
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 12}}));
}

TEST_CASE("a refusal in an applied schedule has a note per apply",
          "[passes][manager]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    wn = norm(w);
    w1 = update(w, w - wn * gs);
}
schedule base for p {
    (rs, ag) = split(gs);
    reorder(ag, wn, w1);
}
schedule mid for p {
    apply base;
}
schedule top for p {
    apply mid;
}
)");
  std::string d = expectRefusal(
      c, "top",
      c.at("reorder(ag, ^wn, w1)") +
          ": error: cannot reorder 'ag' past 'wn': 'wn' does not depend on "
          "'ag'; only stages computed from the gathered value can run on its "
          "slices [reorder-independent]");
  // The stage's note, then one note per apply, innermost first.
  std::vector<std::string> notes = linesStartingWith(d, "test.coco:");
  CHECK(
      notes ==
      std::vector<std::string>{
          c.at("reorder(ag, ^wn, w1)") +
              ": error: cannot reorder 'ag' past 'wn': 'wn' does "
              "not depend on 'ag'; only stages computed from the "
              "gathered value can run on its slices "
              "[reorder-independent]",
          c.at("^wn = norm(w);") + ": note: 'wn' is defined here",
          c.at("^apply base;") + ": note: while applying schedule 'base' here",
          c.at("^apply mid;") + ": note: while applying schedule 'mid' here"});
  // Applied directly, the refusal has one apply note fewer.
  std::string direct = expectRefusal(c, "mid",
                                     c.at("reorder(ag, ^wn, w1)") +
                                         ": error: cannot reorder 'ag' past "
                                         "'wn': 'wn' does not depend on 'ag'; "
                                         "only stages computed from the "
                                         "gathered value can run on its "
                                         "slices [reorder-independent]");
  CHECK(linesStartingWith(direct, "test.coco:").size() == 3);
  CHECK(direct.find("'mid'") == std::string::npos);
}

TEST_CASE("a schedule applied twice refuses its second split",
          "[passes][manager]") {
  Compiled c = compile(kSource);
  Refused r = refuse(c, "twice");
  REQUIRE(r.refused);
  CHECK(r.directive == 2);
  std::string d = expectRefusal(
      c, "twice",
      c.at("    (rs, ag) = split(^gs)") +
          ": error: 'gs' is no longer a stage of 'p' at this point of the "
          "schedule: an earlier transformation replaced it "
          "[schedule-stage-gone]");
  CHECK(hasLine(d, c.at("apply base;\n    ^apply base;") +
                       ": note: while applying schedule 'base' here"));
}

TEST_CASE("passes have names and descriptions", "[passes][manager]") {
  Compiled c = compile(R"(program p(x: f32[B, H] sliced(1), w: f32[H,
          H] sliced(0),
          g: f32[N] local, m: f32[N] replicated) {
    y = matmul(x, w);
    ys = allreduce(sum, y);
    gs = allreduce(sum, g);
    m1 = update(m, m + gs);
    return ys;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, m1);
    shard(m);
    fuse(m1);
    overlap(y, ys) chunks 4;
}
)");
  passes::PassManager pm(testOptions(false));
  passes::addSchedulePasses(pm, *c.module, c.schedule("s"));
  passes::addCleanupPasses(pm);
  std::vector<std::string> names;
  for (const auto &p : pm.getPasses())
    names.push_back(p->getName().str());
  CHECK(names == std::vector<std::string>{"split", "reorder", "shard", "fuse",
                                          "overlap", "constfold", "cse",
                                          "dse"});
  CHECK(describePasses(pm) ==
        std::vector<std::string>{"split(gs)", "reorder(ag, m1)", "shard(m)",
                                 "fuse(m1)", "overlap(y, ys) chunks 4",
                                 "constfold", "cse", "dse"});
  Scheduled s = schedule(c, "s", /*cleanup=*/true);
  CHECK(s.stage("m").sharded);
  expectSameResults(c.program(), *s.program,
                    worldRanks({{"B", 8}, {"H", 12}, {"N", 12}}));
}

TEST_CASE("scheduleProgram leaves the original program alone",
          "[passes][manager]") {
  Compiled c = compile(kSource);
  std::string before = printIR(c.program());
  Scheduled s = schedule(c, "top", /*cleanup=*/true);
  CHECK(printIR(c.program()) == before);
  CHECK(s.ir() != before);
}

TEST_CASE("the differential check notices a pass that changes values",
          "[passes][manager]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    y = x * 2.0;
    return y;
}
)");
  std::unique_ptr<ir::Program> p = c.program().clone();
  passes::PassManager pm(testOptions(false));
  pm.addPass(std::make_unique<WrongPass>());
  std::string text;
  llvm::raw_string_ostream os(text);
  DiagnosticEngine diags(*c.sourceMgr, os);
  REQUIRE(succeeded(pm.run(*p, diags)));
  CHECK(stageLine(*p, "y") == "%1 y : f32[N] replicated = elementwise "
                              "mul(%0, 3.0)");
  sim::SimOptions options;
  options.sizes = {{"P", 2}, {"N", 8}};
  auto cmp = verify::comparePrograms(c.program(), *p, options);
  REQUIRE(static_cast<bool>(cmp));
  CHECK_FALSE(cmp->ok());
  REQUIRE(cmp->results.size() == 1);
  CHECK(cmp->results[0].failing == 8);
}

TEST_CASE("the pass registry names every pass the pipelines build",
          "[passes][registry]") {
  // Every name is unique and is the name the pass itself reports (what
  // --print-after matches), in the order: directives, then cleanups as
  // they run.
  std::vector<std::string> made;
  ir::Schedule::Directive d;
  d.args = {"x"};
#define DIRECTIVE_PASS(Which, Name, Description, Create)                       \
  made.push_back(passes::Create(d, {})->getName().str());
#define CLEANUP_PASS(Name, Description, Create)                                \
  made.push_back(passes::Create()->getName().str());
#include "passes/Passes.def"
  std::vector<std::string> registered;
  for (const passes::PassInfo &p : passes::passRegistry()) {
    registered.push_back(p.name.str());
    CHECK(passes::findPass(p.name) == &p);
    CHECK_FALSE(p.description.empty());
  }
  CHECK(made == registered);
  CHECK(std::set<std::string>(made.begin(), made.end()).size() == made.size());
  CHECK(passes::passNameList() ==
        "split, hierarchical, reorder, shard, fuse, overlap, "
        "algorithm, constfold, cse and dse");
  CHECK_FALSE(passes::findPass("unknown"));
  // The cleanups are the registry's, in its order.
  passes::PassManager pm({});
  passes::addCleanupPasses(pm);
  std::vector<std::string> cleanups;
  for (const auto &p : pm.getPasses())
    cleanups.push_back(p->getName().str());
  CHECK(cleanups == std::vector<std::string>{"constfold", "cse", "dse"});
}
