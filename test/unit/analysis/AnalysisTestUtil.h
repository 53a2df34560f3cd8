//===- AnalysisTestUtil.h - scheduled programs from source text -*- C++ -*-===//
//
// Helpers for the tests of the views of a scheduled program (the cost
// report and the Graphviz drawing).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_ANALYSIS_ANALYSISTESTUTIL_H
#define COCONET_TEST_UNIT_ANALYSIS_ANALYSISTESTUTIL_H

#include "parse/Parser.h"
#include "passes/PassManager.h"
#include "sema/Sema.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace coconet::test {

/// A program given as text with one of its schedules applied. The source
/// manager outlives the program, whose locations point into it. (Not
/// `Scheduled`: PassTestUtil.h's is another struct of this namespace, and
/// two definitions of one name broke the tests built at -O0.)
struct ScheduledText {
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<ir::Program> program;
};

/// Checks `source` and applies schedule `name` ("" for none) to its first
/// program.
inline std::unique_ptr<ScheduledText> schedule(llvm::StringRef source,
                                               llvm::StringRef name = "") {
  auto s = std::make_unique<ScheduledText>();
  unsigned id = s->sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, "test.coco"), llvm::SMLoc());
  llvm::raw_string_ostream os(s->diagnostics);
  DiagnosticEngine diags(s->sourceMgr, os);
  auto ast = parse::parseBuffer(s->sourceMgr, id, diags);
  if (ast)
    s->module = sema::checkModule(*ast, diags);
  INFO(s->diagnostics);
  REQUIRE(s->module);
  REQUIRE(diags.errorCount() == 0);
  const ir::Schedule *sched =
      name.empty() ? nullptr : s->module->findSchedule(name);
  REQUIRE((name.empty() || sched));
  s->program = passes::scheduleProgram(*s->module, *s->module->programs.front(),
                                       sched, diags, passes::PassOptions());
  INFO(s->diagnostics);
  REQUIRE(s->program);
  return s;
}

} // namespace coconet::test

#endif // COCONET_TEST_UNIT_ANALYSIS_ANALYSISTESTUTIL_H
