//===- DiagnosticPrintTest.cpp - what the engine prints, made safe --------===//
//
// The engine's output for user text that a terminal would act on: source
// lines, file names and messages escaped; the caret under its character;
// a diagnostic without a place said as clang's driver says it; colours
// only as SGR sequences and only when asked for.
//
//===----------------------------------------------------------------------===//

#include "diag/Diagnostic.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

using namespace coconet;

namespace {

/// Reports `id` (one argument) over bytes [begin, end) of `text`, in a
/// buffer named `name`; returns what the engine printed.
std::string render(llvm::StringRef text, size_t begin, size_t end,
                   llvm::StringRef name = "t.coco", bool colors = false,
                   DiagId id = DiagId::UnknownName, llvm::StringRef arg = "y") {
  llvm::SourceMgr sm;
  unsigned buf = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  const char *start = sm.getMemoryBuffer(buf)->getBufferStart();
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  diags.setShowColors(colors);
  diags.report(llvm::SMRange(llvm::SMLoc::getFromPointer(start + begin),
                             llvm::SMLoc::getFromPointer(start + end)),
               id, arg);
  os.flush();
  return out;
}

} // namespace

TEST_CASE("a source line with control bytes is printed escaped",
          "[diag][terminal]") {
  // "y" is byte 15 (column 12 of line 2), after an OSC sequence, a tab
  // (from column 20 to 24) and an invalid byte: 31 columns once shown.
  std::string text = "p {\n\x1b]0;t\x07\t\xff = y;\n}\n";
  CHECK(render(text, 15, 16) ==
        "t.coco:2:12: error: use of undeclared name 'y' [unknown-name]\n"
        "<U+001B>]0;t<U+0007>    <FF> = y;\n" +
            std::string(31, ' ') + "^\n");
}

TEST_CASE("columns count bytes from the line's start, a lone CR included",
          "[diag][terminal]") {
  // SourceMgr would count from the CR and say column 3.
  CHECK(render("ab\rc y\n", 5, 6) ==
        "t.coco:1:6: error: use of undeclared name 'y' [unknown-name]\n"
        "ab<U+000D>c y\n" +
            std::string(12, ' ') + "^\n");
  // A CR before the line break ends the line; it is not shown.
  CHECK(render("x y\r\n", 2, 3) ==
        "t.coco:1:3: error: use of undeclared name 'y' [unknown-name]\n"
        "x y\n"
        "  ^\n");
}

TEST_CASE("file names and message arguments are escaped and cut",
          "[diag][terminal]") {
  std::string out = render("x y\n", 2, 3, "a\x1b[2J.coco");
  CHECK(out.rfind("a<U+001B>[2J.coco:1:3: error:", 0) == 0);
  out = render("x y\n", 2, 3, "t.coco", false, DiagId::UnknownName,
               "\x1b]0;pwned\x07");
  CHECK(out.find("name '<U+001B>]0;pwned<U+0007>'") != std::string::npos);
  out = render("x y\n", 2, 3, "t.coco", false, DiagId::UnknownName,
               std::string(100000, 'n'));
  CHECK(out.find("name '" + std::string(61, 'n') + "...' [unknown-name]\n") !=
        std::string::npos);
  CHECK(out.size() < 300);
}

TEST_CASE("a diagnostic without a place is the driver's form",
          "[diag][terminal]") {
  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  diags.report(llvm::SMRange(), DiagId::NoSuchFile, "x\x1b.coco");
  os.flush();
  CHECK(out == "coconetc: error: no such file or directory: 'x<U+001B>.coco' "
               "[no-such-file]\n");
}

TEST_CASE("colours are SGR sequences, printed only when asked for",
          "[diag][terminal]") {
  std::string plain = render("x y\n", 2, 3);
  CHECK(plain.find('\x1b') == std::string::npos);
  // LLVM's layout: bold place, red bold label, bold message, green caret.
  std::string colored = render("x \x1b y\n", 4, 5, "t.coco", true);
  CHECK(colored == "\x1b[1mt.coco:1:5: \x1b[0m"
                   "\x1b[0;1;31merror: \x1b[0m"
                   "\x1b[1muse of undeclared name 'y' [unknown-name]\n\x1b[0m"
                   "x <U+001B> y\n"
                   "\x1b[0;1;32m" +
                       std::string(11, ' ') + "^\n\x1b[0m");
}

TEST_CASE("line numbers and line starts come from a table, in every buffer",
          "[diag][terminal]") {
  llvm::SourceMgr sm;
  unsigned a = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("x\r\n\nab y\n", "a.coco"),
      llvm::SMLoc());
  unsigned b = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("q\nlast z", "b.coco"),
      llvm::SMLoc());
  auto at = [&](unsigned id, size_t offset) {
    llvm::SMLoc loc = llvm::SMLoc::getFromPointer(
        sm.getMemoryBuffer(id)->getBufferStart() + offset);
    return llvm::SMRange(loc, loc);
  };
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  diags.report(at(b, 7), DiagId::UnknownName, "z");
  diags.report(at(a, 7), DiagId::UnknownName, "y");
  diags.report(at(a, 0), DiagId::UnknownName, "x");
  diags.report(at(b, 8), DiagId::UnknownName, "end");
  os.flush();
  CHECK(out == "b.coco:2:6: error: use of undeclared name 'z' [unknown-name]\n"
               "last z\n"
               "     ^\n"
               "a.coco:3:4: error: use of undeclared name 'y' [unknown-name]\n"
               "ab y\n"
               "   ^\n"
               "a.coco:1:1: error: use of undeclared name 'x' [unknown-name]\n"
               "x\n"
               "^\n"
               "b.coco:2:7: error: use of undeclared name 'end' "
               "[unknown-name]\n"
               "last z\n"
               "      ^\n");
}

TEST_CASE("many diagnostics on one long line each cost a window, not the line",
          "[diag][terminal]") {
  // 2,000 names at the end of a line, after `filler` bytes, each reported.
  auto seconds = [](size_t filler) {
    std::string text(filler, ' ');
    for (int i = 0; i < 2000; ++i)
      text += "x = name" + std::to_string(100000 + i) + "; ";
    text += "\n";
    llvm::SourceMgr sm;
    unsigned id = sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "t.coco"), llvm::SMLoc());
    const char *start = sm.getMemoryBuffer(id)->getBufferStart();
    std::string out;
    llvm::raw_string_ostream os(out);
    DiagnosticEngine diags(sm, os);
    auto begin = std::chrono::steady_clock::now();
    for (size_t pos = text.find("name"); pos != std::string::npos;
         pos = text.find("name", pos + 1))
      diags.report(llvm::SMRange(llvm::SMLoc::getFromPointer(start + pos),
                                 llvm::SMLoc::getFromPointer(start + pos + 10)),
                   DiagId::UnknownName, "n");
    os.flush();
    CHECK(diags.errorCount() == 2000);
    CHECK(out.size() < 2000 * 300);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         begin)
        .count();
  };
  // 4 MB more line to walk for each diagnostic would be 8 GB of steps
  // (seconds); a window each costs the same on both lines (milliseconds).
  double shortLine = seconds(0);
  double longLine = seconds(4 << 20);
  INFO("short line " << shortLine << " s, long line " << longLine << " s");
  CHECK(longLine < 4 * shortLine + 0.25);
}

TEST_CASE("the layout: every located diagnostic and note is three lines",
          "[diag][terminal][layout]") {
  // Place and message; the source line; the caret line ('^' under the
  // location, '~' under the rest of the range). For an error, its note, a
  // warning, a location at the end of a line, a range, a tab before it, a
  // CRLF line, the last line without a line break and a line cut to a
  // window: the whole output, so that a caret line dropped or moved in any
  // of them (the note's, the cut line's) fails here, not only in one
  // golden test.
  std::string text = "program p(x: f32[N]) {\r\n"    // line 1
                     "\ty = allreduce(sum, gard);\n" // line 2, a tab
                     "    return y;\n"               // line 3
                     "}";                            // line 4: no break
  text += "\n" + std::string(300, 'a') + " bad " + std::string(300, 'b');
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "t.coco"), llvm::SMLoc());
  const char *start = sm.getMemoryBuffer(id)->getBufferStart();
  auto range = [&](size_t begin, size_t end) {
    return llvm::SMRange(llvm::SMLoc::getFromPointer(start + begin),
                         llvm::SMLoc::getFromPointer(start + end));
  };
  const size_t gard = text.find("gard"), ret = text.find("return");
  const size_t brace = text.find("{\r"), bad = text.find(" bad ") + 1;
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  diags.report(range(gard, gard + 4), DiagId::UnknownName, "gard")
      .note(range(ret, ret + 6), DiagId::StageDefinedHere, "y");
  diags.report(range(brace, brace), DiagId::PartialValue, "norm", "sliced",
               "why");
  diags.report(range(bad, bad + 3), DiagId::UnknownName, "bad");
  os.flush();
  const std::string expected =
      // The error: byte 21, after a tab shown as 8 columns: caret column 28.
      "t.coco:2:21: error: use of undeclared name 'gard' [unknown-name]\n"
      "        y = allreduce(sum, gard);\n" +
      std::string(27, ' ') +
      "^~~~\n"
      // Its note, with its own caret line.
      "t.coco:3:5: note: 'y' is defined here\n"
      "    return y;\n"
      "    ^~~~~~\n"
      // A warning at the end of a CRLF line (the CR is not shown).
      "t.coco:1:22: warning: 'norm' of a sliced tensor is a per-rank partial "
      "value; why [partial-value]\n"
      "program p(x: f32[N]) {\n" +
      std::string(21, ' ') +
      "^\n"
      // A line of 607 columns, shown as a window around the caret.
      "t.coco:5:302: error: use of undeclared name 'bad' [unknown-name]\n";
  INFO(out);
  REQUIRE(out.rfind(expected, 0) == 0);
  // The window's two lines: '...' on both sides, the caret under 'bad'.
  llvm::SmallVector<llvm::StringRef, 4> tail;
  llvm::StringRef(out).substr(expected.size()).split(tail, '\n');
  REQUIRE(tail.size() == 3); // source, caret line, and "" after the last
  CHECK(tail[2].empty());
  CHECK(tail[0].starts_with("..."));
  CHECK(tail[0].ends_with("..."));
  const size_t caret = tail[1].find('^');
  REQUIRE(caret != llvm::StringRef::npos);
  CHECK(tail[0].substr(caret, 3) == "bad");
  CHECK(tail[1].substr(caret) == "^~~");
  CHECK(tail[1].find_first_not_of(' ') == caret);
  CHECK(tail[0].size() <= 110);
  // Every located diagnostic (3 here) and note (1): three lines each.
  CHECK(llvm::StringRef(out).count('\n') == 4 * 3);
}
