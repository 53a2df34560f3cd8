//===- DiagnosticTest.cpp - the diagnostic engine and its coverage --------===//
//
// Rendering (location, caret, notes, names), counting, limits, and Carbon's
// coverage rule: every diagnostic kind is exercised by some lit test.
//
//===----------------------------------------------------------------------===//

#include "diag/Diagnostic.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace coconet;

TEST_CASE("diagnostics print location, caret, kind and notes", "[diag]") {
  llvm::SourceMgr sm;
  const char *text = "program p() {\n  x = y;\n}\n";
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "t.coco"), llvm::SMLoc());
  const char *start = sm.getMemoryBuffer(id)->getBufferStart();
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  llvm::SMRange y(llvm::SMLoc::getFromPointer(start + 20),
                  llvm::SMLoc::getFromPointer(start + 21));
  llvm::SMRange x(llvm::SMLoc::getFromPointer(start + 16),
                  llvm::SMLoc::getFromPointer(start + 17));
  diags.report(y, DiagId::UnknownName, "y").note(x, DiagId::DidYouMean, "x");
  os.flush();
  CHECK(out == "t.coco:2:7: error: use of undeclared name 'y' [unknown-name]\n"
               "  x = y;\n"
               "      ^\n"
               "t.coco:2:3: note: did you mean 'x'?\n"
               "  x = y;\n"
               "  ^\n");
  CHECK(diags.errorCount() == 1);
}

TEST_CASE("kind names are kebab-case", "[diag]") {
  CHECK(diagName(DiagId::UnknownName) == "unknown-name");
}

TEST_CASE("formatting substitutes numbered arguments", "[diag]") {
  CHECK(formatDiag("'{0}' takes {1}, but {2} given", {"f", "2", "3"}) ==
        "'f' takes 2, but 3 given");
  CHECK(formatDiag("{1}{0}", {"a", "b"}) == "ba");
}

TEST_CASE("the error limit stops printing but keeps counting", "[diag]") {
  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  diags.setErrorLimit(2);
  for (int i = 0; i < 5; ++i)
    diags.report(llvm::SMRange(), DiagId::UnknownName, "n");
  os.flush();
  CHECK(diags.errorCount() == 5);
  CHECK(out.find("too many errors") != std::string::npos);
}

TEST_CASE("warnings become errors with -Werror", "[diag]") {
  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  diags.report(llvm::SMRange(), DiagId::PartialValue, "norm", "sliced", "x");
  CHECK(diags.errorCount() == 0);
  CHECK(diags.warningCount() == 1);
  diags.setWarningsAsErrors(true);
  diags.report(llvm::SMRange(), DiagId::PartialValue, "norm", "sliced", "x");
  CHECK(diags.errorCount() == 1);
}

/// Reads every lit test into one string.
static std::string allLitTests() {
  std::string all;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(COCONET_LIT_DIR, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (!path.ends_with(".coco") && !path.ends_with(".test"))
      continue;
    std::ifstream in(it->path());
    std::stringstream ss;
    ss << in.rdbuf();
    all += ss.str();
  }
  return all;
}

TEST_CASE("every diagnostic kind is exercised by a lit test",
          "[diag][coverage]") {
  std::string all = allLitTests();
  REQUIRE_FALSE(all.empty());
  std::vector<std::string> missing;
  for (unsigned i = 0; i < static_cast<unsigned>(DiagId::NumDiagIds); ++i) {
    auto id = static_cast<DiagId>(i);
    // Notes carry no [kind]; they are covered through their error.
    if (diagSeverity(id) == Severity::Note)
      continue;
    // A compiler bug by definition: no input can trigger it. The pass
    // manager's unit tests break the IR on purpose to exercise it.
    if (id == DiagId::InternalVerifierError || id == DiagId::InternalLowerError)
      continue;
    if (all.find("[" + diagName(id) + "]") == std::string::npos)
      missing.push_back(diagName(id));
  }
  INFO("kinds without a lit test: " << [&] {
    std::string s;
    for (auto &m : missing)
      s += m + " ";
    return s;
  }());
  CHECK(missing.empty());
}
