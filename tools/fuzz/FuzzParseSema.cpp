//===- FuzzParseSema.cpp - libFuzzer target for the front end -------------===//
//
// Feeds arbitrary bytes through the parser and sema, and renders every
// diagnostic (source line, caret, notes) as coconetc prints it. Any crash,
// sanitizer report or hang is a bug: bad input must only ever produce
// diagnostics. Built with clang (tools/build.sh does it when clang++-19 is
// present); tools/fuzz/long-run.sh parse RUNS runs it for long:
//   build-fuzz/tools/coconet-fuzz-parse -dict=tools/fuzz/coco.dict
//       test/fuzz/corpus/parse
//
//===----------------------------------------------------------------------===//

#include "parse/Parser.h"
#include "sema/Sema.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.coco");
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::string rendered;
  llvm::raw_string_ostream sink(rendered);
  coconet::DiagnosticEngine diags(sourceMgr, sink);
  auto module = coconet::parse::parseBuffer(sourceMgr, id, diags);
  if (module)
    (void)coconet::sema::checkModule(*module, diags);
  return 0;
}
