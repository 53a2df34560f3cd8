//===- SemaTestUtil.h - compiling source text in unit tests -----*- C++ -*-===//
//
// Helpers for tests that check programs given as strings.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_SEMA_SEMATESTUTIL_H
#define COCONET_TEST_UNIT_SEMA_SEMATESTUTIL_H

#include "parse/Parser.h"
#include "sema/Sema.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace coconet::test {

/// The outcome of checking one source string.
struct Checked {
  std::unique_ptr<ir::Module> module;
  std::string diagnostics;
  unsigned errors = 0;

  /// The printed IR of the first program ("" if none).
  std::string ir() const {
    std::string out;
    llvm::raw_string_ostream os(out);
    if (module && !module->programs.empty())
      ir::printProgram(*module->programs.front(), os);
    return out;
  }
  /// The type of stage `name` of the first program, printed.
  std::string typeOf(llvm::StringRef name) const {
    if (!module || module->programs.empty())
      return "<no program>";
    const ir::Program &p = *module->programs.front();
    const ir::Stage *s = p.findStage(name);
    return s ? s->type.str(p.mesh) : "<no stage " + name.str() + ">";
  }
};

inline Checked check(llvm::StringRef source) {
  Checked result;
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, "test.coco"), llvm::SMLoc());
  llvm::raw_string_ostream os(result.diagnostics);
  DiagnosticEngine diags(sourceMgr, os);
  auto ast = parse::parseBuffer(sourceMgr, id, diags);
  if (ast)
    result.module = sema::checkModule(*ast, diags);
  result.errors = diags.errorCount();
  os.flush();
  return result;
}

} // namespace coconet::test

#endif // COCONET_TEST_UNIT_SEMA_SEMATESTUTIL_H
