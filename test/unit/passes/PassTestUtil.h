//===- PassTestUtil.h - applying schedules in unit tests --------*- C++ -*-===//
//
// Helpers for the pass tests: compile a source string holding programs and
// schedules (keeping the source manager alive, since diagnostics of passes
// point into the source), apply a schedule through passes::scheduleProgram
// with the verifier after every pass, apply a refused schedule one pass at
// a time on a clone to check that the refusal changed nothing, locate text
// in the source as `test.coco:LINE:COL`, and compare a scheduled program
// with the unscheduled one on the simulator for several rank counts.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_PASSES_PASSTESTUTIL_H
#define COCONET_TEST_UNIT_PASSES_PASSTESTUTIL_H

#include "parse/Parser.h"
#include "passes/PassManager.h"
#include "passes/Passes.h"
#include "sema/Sema.h"
#include "verify/Differential.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace coconet::test {

/// The IR of `program` as --emit=ir prints it.
inline std::string printIR(const ir::Program &program) {
  std::string out;
  llvm::raw_string_ostream os(out);
  ir::printProgram(program, os);
  return out;
}

/// The printed line of stage `name` of `program`, without the indentation
/// ("%4 y : f32[N] sliced(0) = elementwise ..."), or "<no stage NAME>".
inline std::string stageLine(const ir::Program &program, llvm::StringRef name) {
  const ir::Stage *s = program.findStage(name);
  if (!s)
    return "<no stage " + name.str() + ">";
  std::string text = printIR(program);
  std::string prefix = "  %" + std::to_string(s->id) + " " + s->name + " : ";
  size_t at = text.find(prefix);
  if (at == std::string::npos)
    return "<stage " + name.str() + " not printed>";
  size_t end = text.find('\n', at);
  return text.substr(at + 2, end - at - 2);
}

/// A source string checked by the front end. The source manager, the
/// syntax tree and the IR live as long as this object.
struct Compiled {
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<ast::Module> ast;
  std::unique_ptr<ir::Module> module;
  std::string source;
  std::string diagnostics;
  unsigned errors = 0;

  /// The program called `name`, or the first one.
  const ir::Program &program(llvm::StringRef name = "") const {
    REQUIRE(module);
    REQUIRE(!module->programs.empty());
    if (name.empty())
      return *module->programs.front();
    const ir::Program *p = module->findProgram(name);
    REQUIRE(p);
    return *p;
  }
  const ir::Schedule &schedule(llvm::StringRef name) const {
    REQUIRE(module);
    const ir::Schedule *s = module->findSchedule(name);
    INFO("schedule " << name.str());
    REQUIRE(s);
    return *s;
  }
  /// `test.coco:LINE:COL` of a place in the source: `context` is found (its
  /// last occurrence, so schedules after the programs win) with an optional
  /// `^` marking the place inside it; without `^`, its first character.
  std::string at(llvm::StringRef context) const {
    std::string text = context.str();
    size_t marker = text.find('^');
    if (marker != std::string::npos)
      text.erase(marker, 1);
    else
      marker = 0;
    size_t pos = source.rfind(text);
    INFO("looking for '" << text << "' in the source");
    REQUIRE(pos != std::string::npos);
    pos += marker;
    unsigned line = 1, col = 1;
    for (size_t i = 0; i < pos; ++i) {
      if (source[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return "test.coco:" + std::to_string(line) + ":" + std::to_string(col);
  }
};

/// Parses and checks `source`; requires it to be free of errors.
inline Compiled compile(llvm::StringRef source) {
  Compiled c;
  c.source = source.str();
  c.sourceMgr = std::make_unique<llvm::SourceMgr>();
  unsigned id = c.sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, "test.coco"), llvm::SMLoc());
  llvm::raw_string_ostream os(c.diagnostics);
  DiagnosticEngine diags(*c.sourceMgr, os);
  c.ast = parse::parseBuffer(*c.sourceMgr, id, diags);
  if (c.ast)
    c.module = sema::checkModule(*c.ast, diags);
  c.errors = diags.errorCount();
  os.flush();
  INFO(c.diagnostics);
  REQUIRE(c.module);
  REQUIRE(c.errors == 0);
  return c;
}

/// The outcome of applying a schedule.
struct Scheduled {
  /// The scheduled copy, or null after a refusal.
  std::unique_ptr<ir::Program> program;
  std::string diagnostics;
  unsigned errors = 0;

  std::string ir() const { return program ? printIR(*program) : "<refused>"; }
  const ir::Stage &stage(llvm::StringRef name) const {
    REQUIRE(program);
    const ir::Stage *s = program->findStage(name);
    INFO("stage " << name.str() << " in\n" << ir());
    REQUIRE(s);
    return *s;
  }
  bool has(llvm::StringRef name) const {
    return program && program->findStage(name);
  }
  /// The type of stage `name`, printed.
  std::string type(llvm::StringRef name) const {
    return stage(name).type.str(program->mesh);
  }
  /// The printed line of stage `name`.
  std::string line(llvm::StringRef name) const {
    REQUIRE(program);
    return stageLine(*program, name);
  }
  /// The names of the operands of stage `name`.
  std::vector<std::string> operands(llvm::StringRef name) const {
    std::vector<std::string> out;
    for (const ir::Stage *o : stage(name).operands)
      out.push_back(o->name);
    return out;
  }
};

inline passes::PassOptions testOptions(bool cleanup) {
  passes::PassOptions o;
  o.verifyEach = true;
  o.cleanup = cleanup;
  return o;
}

/// Applies schedule `name` (empty: none) to its program with
/// passes::scheduleProgram, the verifier running after every pass.
inline Scheduled applySchedule(const Compiled &c, llvm::StringRef name,
                               passes::PassOptions options) {
  Scheduled r;
  const ir::Schedule *schedule = name.empty() ? nullptr : &c.schedule(name);
  const ir::Program &program =
      schedule ? c.program(schedule->program) : c.program();
  llvm::raw_string_ostream os(r.diagnostics);
  DiagnosticEngine diags(*c.sourceMgr, os);
  r.program =
      passes::scheduleProgram(*c.module, program, schedule, diags, options);
  r.errors = diags.errorCount();
  os.flush();
  return r;
}

inline Scheduled applySchedule(const Compiled &c, llvm::StringRef name,
                               bool cleanup = false) {
  return applySchedule(c, name, testOptions(cleanup));
}

/// Applies schedule `name` and requires it to succeed with a valid program.
inline Scheduled schedule(const Compiled &c, llvm::StringRef name,
                          bool cleanup = false) {
  Scheduled r = applySchedule(c, name, cleanup);
  INFO(r.diagnostics);
  REQUIRE(r.program);
  REQUIRE(r.errors == 0);
  REQUIRE(r.diagnostics.empty());
  INFO(r.ir());
  REQUIRE(ir::verifyProgram(*r.program) == "");
  return r;
}

/// One directive of a schedule with `apply` expanded, and the applies that
/// led to it (as passes::addSchedulePasses expands them).
struct FlatDirective {
  ir::Schedule::Directive directive;
  passes::AppliedStack from;
};

inline void flatten(const ir::Module &module, const ir::Schedule &schedule,
                    const passes::AppliedStack &stack,
                    std::vector<FlatDirective> &out) {
  for (const ir::Schedule::Directive &d : schedule.directives) {
    if (d.kind != ir::Schedule::Directive::Kind::Apply) {
      out.push_back({d, stack});
      continue;
    }
    const ir::Schedule *other = module.findSchedule(d.args[0]);
    REQUIRE(other);
    passes::AppliedStack here = stack;
    here.push_back({other->name, d.loc});
    flatten(module, *other, here, out);
  }
}

inline std::unique_ptr<passes::Pass> createPass(const FlatDirective &f) {
  using Kind = ir::Schedule::Directive::Kind;
  switch (f.directive.kind) {
  case Kind::Split:
    return passes::createSplitPass(f.directive, f.from);
  case Kind::Hierarchical:
    return passes::createHierarchicalPass(f.directive, f.from);
  case Kind::Reorder:
    return passes::createReorderPass(f.directive, f.from);
  case Kind::Shard:
    return passes::createShardPass(f.directive, f.from);
  case Kind::Fuse:
    return passes::createFusePass(f.directive, f.from);
  case Kind::Overlap:
    return passes::createOverlapPass(f.directive, f.from);
  case Kind::Algorithm:
    return passes::createAlgorithmPass(f.directive, f.from);
  case Kind::Apply:
    break;
  }
  return nullptr;
}

/// What a refused schedule did.
struct Refused {
  /// Did some pass refuse?
  bool refused = false;
  /// The index (apply expanded) of the directive that refused.
  size_t directive = 0;
  /// Its diagnostics, when applied alone to a clone with a PassManager.
  std::string diagnostics;
  unsigned errors = 0;
  /// The printed IR of the clone before and after the refused pass.
  std::string before, after;
  /// The verifier on the clone after the refusal.
  std::string verifier;
  /// passes::scheduleProgram on the whole schedule: null result and its
  /// diagnostics.
  bool pipelineNull = false;
  std::string pipelineDiagnostics;
};

/// Applies schedule `name` one directive at a time, each in its own
/// PassManager (verifier after each), to one clone of the program, until
/// a directive fails; then also runs the whole schedule through
/// passes::scheduleProgram.
inline Refused refuse(const Compiled &c, llvm::StringRef name) {
  Refused r;
  const ir::Schedule &schedule = c.schedule(name);
  const ir::Program &program = c.program(schedule.program);
  std::vector<FlatDirective> flat;
  flatten(*c.module, schedule, {}, flat);
  std::unique_ptr<ir::Program> clone = program.clone();
  for (size_t i = 0; i < flat.size() && !r.refused; ++i) {
    passes::PassManager pm(testOptions(false));
    pm.addPass(createPass(flat[i]));
    std::string diagText;
    llvm::raw_string_ostream os(diagText);
    DiagnosticEngine diags(*c.sourceMgr, os);
    std::string before = printIR(*clone);
    if (succeeded(pm.run(*clone, diags))) {
      INFO(diagText);
      REQUIRE(diags.errorCount() == 0);
      continue;
    }
    os.flush();
    r.refused = true;
    r.directive = i;
    r.diagnostics = diagText;
    r.errors = diags.errorCount();
    r.before = before;
    r.after = printIR(*clone);
    r.verifier = ir::verifyProgram(*clone);
  }
  Scheduled whole = applySchedule(c, name, false);
  r.pipelineNull = !whole.program;
  r.pipelineDiagnostics = whole.diagnostics;
  return r;
}

/// Checks that schedule `name` is refused with exactly one error whose
/// first line is `firstLine` (`test.coco:L:C: error: MESSAGE [KIND]`), that
/// the refusal left the program unchanged and valid, and that the whole
/// pipeline stops with the same diagnostics. Returns the diagnostics.
inline std::string expectRefusal(const Compiled &c, llvm::StringRef name,
                                 const std::string &firstLine) {
  Refused r = refuse(c, name);
  INFO("schedule " << name.str() << "\n" << r.diagnostics);
  REQUIRE(r.refused);
  CHECK(r.errors == 1);
  CHECK(llvm::StringRef(r.diagnostics).starts_with(firstLine + "\n"));
  CHECK(r.before == r.after);
  CHECK(r.verifier == "");
  CHECK(r.pipelineNull);
  CHECK(r.pipelineDiagnostics == r.diagnostics);
  return r.diagnostics;
}

/// Does `text` contain `line` as a whole line?
inline bool hasLine(llvm::StringRef text, llvm::StringRef line) {
  llvm::SmallVector<llvm::StringRef, 32> lines;
  text.split(lines, '\n');
  for (llvm::StringRef l : lines)
    if (l == line)
      return true;
  return false;
}

/// How a scheduled program must agree with the unscheduled one.
enum class Agreement { Bitwise, Reassociated };

/// Size bindings for a program without a mesh on 1, 2, 3 and 4 ranks.
inline std::vector<ir::DimEnv> worldRanks(const ir::DimEnv &sizes) {
  std::vector<ir::DimEnv> out;
  for (int64_t p = 1; p <= 4; ++p) {
    ir::DimEnv e = sizes;
    e["P"] = p;
    out.push_back(e);
  }
  return out;
}

/// Size bindings for a two-axis mesh whose axis sizes are named `a` and
/// `b`, one per pair of axis sizes.
inline std::vector<ir::DimEnv>
meshRanks(llvm::StringRef a, llvm::StringRef b,
          const std::vector<std::pair<int64_t, int64_t>> &shapes,
          const ir::DimEnv &sizes) {
  std::vector<ir::DimEnv> out;
  for (auto [x, y] : shapes) {
    ir::DimEnv e = sizes;
    e[a.str()] = x;
    e[b.str()] = y;
    out.push_back(e);
  }
  return out;
}

inline std::string describeEnv(const ir::DimEnv &env) {
  std::string text;
  for (const auto &[name, value] : env)
    text += name + "=" + std::to_string(value) + " ";
  return text;
}

/// Runs both programs on the simulator for every size binding (two seeds,
/// uniform and wide inputs) and checks that every result agrees as
/// `agreement` says.
inline void
expectSameResults(const ir::Program &reference, const ir::Program &candidate,
                  const std::vector<ir::DimEnv> &configs,
                  Agreement agreement = Agreement::Bitwise,
                  const std::map<std::string, std::string> &values = {}) {
  for (const ir::DimEnv &env : configs) {
    for (auto [seed, kind] : {std::pair{1, sim::InputKind::Uniform},
                              std::pair{7, sim::InputKind::Uniform},
                              std::pair{1, sim::InputKind::Wide},
                              std::pair{7, sim::InputKind::Wide}}) {
      sim::SimOptions options;
      options.sizes = env;
      options.seed = static_cast<uint64_t>(seed);
      options.inputKind = kind;
      options.scalarValues = values;
      auto cmp = verify::comparePrograms(reference, candidate, options);
      INFO("sizes " << describeEnv(env) << "seed " << seed
                    << (kind == sim::InputKind::Wide ? ", wide inputs" : ""));
      if (!cmp)
        FAIL(llvm::toString(cmp.takeError()));
      std::string text;
      llvm::raw_string_ostream os(text);
      cmp->print(os);
      INFO(text);
      CHECK(cmp->ok());
      CHECK(cmp->structural == "");
      CHECK(cmp->results.size() == reference.getResults().size());
      if (agreement == Agreement::Bitwise) {
        CHECK(cmp->bitwise);
        for (const verify::ResultDiff &d : cmp->results)
          CHECK(d.differing == 0);
      } else {
        CHECK_FALSE(cmp->bitwise);
        CHECK_FALSE(cmp->reasons.empty());
      }
    }
  }
}

} // namespace coconet::test

#endif // COCONET_TEST_UNIT_PASSES_PASSTESTUTIL_H
