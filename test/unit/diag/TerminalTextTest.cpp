//===- TerminalTextTest.cpp - escaping and cutting what diagnostics print -===//
//
// escapeForTerminal, safeMessage and showSourceLine on their own: which
// characters are escaped and how, the caret's and the underline's columns
// once escapes and tabs widen the line, and the window cut out of a long
// line. The engine's use of them (file:line:col, colours) is in
// DiagnosticTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "diag/TerminalText.h"

#include <catch2/catch.hpp>

#include <string>

using namespace coconet;

namespace {

/// The column of `what` in `shown`, counting one per byte: the lines these
/// tests show are ASCII once escaped.
size_t columnOf(const std::string &shown, const std::string &what) {
  size_t at = shown.find(what);
  REQUIRE(at != std::string::npos);
  return at;
}

} // namespace

TEST_CASE("non-printable characters are escaped as clang escapes them",
          "[diag][terminal]") {
  CHECK(escapeForTerminal("plain text") == "plain text");
  CHECK(escapeForTerminal("a\x1b]0;title\x07z") ==
        "a<U+001B>]0;title<U+0007>z");
  CHECK(escapeForTerminal(std::string("nul\0!", 5)) == "nul<U+0000>!");
  CHECK(escapeForTerminal("del\x7f") == "del<U+007F>");
  CHECK(escapeForTerminal("cr\rlf\n") == "cr<U+000D>lf<U+000A>");
  CHECK(escapeForTerminal("tab\t") == "tab<U+0009>");
  // C1 controls (U+0085, U+009B: the one-byte CSI), format characters
  // (U+202E reverses the text after it), non-characters.
  CHECK(escapeForTerminal("\xc2\x85\xc2\x9b") == "<U+0085><U+009B>");
  CHECK(escapeForTerminal("\xe2\x80\xae") == "<U+202E>");
  CHECK(escapeForTerminal("\xef\xbf\xbf") == "<U+FFFF>");
  // A combining mark alone would pile onto what is printed before it.
  CHECK(escapeForTerminal("e\xcc\x81") == "e<U+0301>");
  // Bytes that are not UTF-8: stray continuation, overlong form,
  // surrogate, truncated sequence. Each byte on its own.
  CHECK(escapeForTerminal("\xff\x80") == "<FF><80>");
  CHECK(escapeForTerminal("\xc0\xaf") == "<C0><AF>");
  CHECK(escapeForTerminal("\xed\xa0\x80") == "<ED><A0><80>");
  CHECK(escapeForTerminal("x\xe4\xb8") == "x<E4><B8>");
  // Printable text outside ASCII is kept.
  CHECK(escapeForTerminal("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80") ==
        "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
}

TEST_CASE("messages are escaped, long words and long messages cut",
          "[diag][terminal]") {
  CHECK(safeMessage("use of undeclared name 'x'") ==
        "use of undeclared name 'x'");
  CHECK(safeMessage("cannot open 'a\x1b[2J.coco'") ==
        "cannot open 'a<U+001B>[2J.coco'");
  std::string name64(kMaxWordColumns, 'n');
  CHECK(safeMessage("'" + name64 + "'") == "'" + name64 + "'");
  std::string long1 = std::string(kMaxWordColumns + 1, 'a');
  CHECK(safeMessage("name '" + long1 + "' here") ==
        "name '" + std::string(kMaxWordColumns - 3, 'a') + "...' here");
  // A 1 MB name: the message stays short.
  std::string huge(1 << 20, 'z');
  std::string cut = safeMessage("'" + huge + "' and '" + huge + "'");
  CHECK(cut == "'" + std::string(kMaxWordColumns - 3, 'z') + "...' and '" +
                   std::string(kMaxWordColumns - 3, 'z') + "...'");
  // Many short words: the whole is cut at kMaxMessageColumns.
  std::string many;
  for (int i = 0; i < 1000; ++i)
    many += "ab ";
  std::string shown = safeMessage(many);
  CHECK(shown.size() <= kMaxMessageColumns);
  CHECK(shown.size() + 3 > kMaxMessageColumns);
  CHECK(llvm::StringRef(shown).ends_with("..."));
  // The cut never splits an escape.
  std::string escapes;
  for (int i = 0; i < 200; ++i)
    escapes += "\x1b";
  shown = safeMessage(escapes);
  CHECK(llvm::StringRef(shown).ends_with(">..."));
}

TEST_CASE("the caret stays under its character when escapes widen the line",
          "[diag][terminal]") {
  // "x = \x1b@;": the '@' is byte 5; the escape before it takes 8 columns.
  ShownSourceLine a = showSourceLine("x = \x1b@;", 5, 5, 6);
  CHECK(a.text == "x = <U+001B>@;");
  CHECK(a.markers == std::string(columnOf(a.text, "@"), ' ') + "^");
  // A caret on the escaped character itself, its underline over all of it.
  ShownSourceLine b = showSourceLine("x = \x1b@;", 4, 4, 5);
  CHECK(b.markers == "    ^" + std::string(7, '~'));
  // Invalid bytes, C1 and format characters widen the line too.
  ShownSourceLine c = showSourceLine("\xff\xc2\x85\xe2\x80\xae@ab", 6, 6, 9);
  CHECK(c.text == "<FF><U+0085><U+202E>@ab");
  CHECK(c.markers == std::string(columnOf(c.text, "@"), ' ') + "^~~");
  // A wide character takes two columns; a caret inside a multi-byte
  // character is at its start.
  ShownSourceLine d = showSourceLine("\xe4\xb8\xad = @", 6, 6, 6);
  CHECK(d.markers == "     ^");
  ShownSourceLine e = showSourceLine("\xe4\xb8\xad = @", 1, 0, 3);
  CHECK(e.markers == "^~");
  // Just past the end of the line (a missing ';').
  ShownSourceLine f = showSourceLine("x = \x1b", 5, 5, 5);
  CHECK(f.markers == std::string(12, ' ') + "^");
  // An empty line.
  ShownSourceLine g = showSourceLine("", 0, 0, 0);
  CHECK(g.text.empty());
  CHECK(g.markers == "^");
}

TEST_CASE("tabs expand to the next multiple of 8 columns", "[diag][terminal]") {
  ShownSourceLine a = showSourceLine("\tx = @;", 5, 5, 6);
  CHECK(a.text == "        x = @;");
  CHECK(a.markers == "            ^");
  // A tab after 3 columns takes 5; after an escape (8 columns), 8.
  ShownSourceLine b = showSourceLine("abc\t@", 4, 4, 5);
  CHECK(b.text == "abc     @");
  CHECK(b.markers == "        ^");
  ShownSourceLine c = showSourceLine("\x1b\t@", 2, 2, 3);
  CHECK(c.text == "<U+001B>        @");
  CHECK(c.markers == std::string(16, ' ') + "^");
  // Underlining a tab underlines the spaces it became.
  ShownSourceLine d = showSourceLine("a\tb", 0, 0, 3);
  CHECK(d.markers == "^" + std::string(8, '~'));
}

TEST_CASE("a long line is cut to a window around the caret",
          "[diag][terminal]") {
  // The caret in the middle of a 1 MB line.
  std::string line = std::string(500000, 'c') + "@" + std::string(500000, 'd');
  ShownSourceLine a = showSourceLine(line, 500000, 500000, 500001);
  CHECK(llvm::StringRef(a.text).starts_with("...c"));
  CHECK(llvm::StringRef(a.text).ends_with("d..."));
  CHECK(a.text.size() <= kMaxSourceColumns + 6);
  CHECK(a.text.size() + 1 >= kMaxSourceColumns + 6);
  CHECK(a.markers == std::string(columnOf(a.text, "@"), ' ') + "^");
  // Near the start: nothing cut on the left.
  ShownSourceLine b = showSourceLine(line, 3, 3, 4);
  CHECK(llvm::StringRef(b.text).starts_with("ccc"));
  CHECK(llvm::StringRef(b.text).ends_with("c..."));
  CHECK(b.markers == "   ^");
  // At the very end (a missing ';' after a long line).
  ShownSourceLine c =
      showSourceLine(line, line.size(), line.size(), line.size());
  CHECK(llvm::StringRef(c.text).starts_with("...d"));
  CHECK(llvm::StringRef(c.text).ends_with("d"));
  CHECK(c.markers == std::string(c.text.size(), ' ') + "^");
  // A range wider than the window: its start, after a little context,
  // underlined up to the window's end.
  std::string id = "  x = " + std::string(1000000, 'a') + ";";
  ShownSourceLine d = showSourceLine(id, 6, 6, id.size() - 1);
  CHECK(llvm::StringRef(d.text).starts_with("  x = aaa"));
  CHECK(llvm::StringRef(d.text).ends_with("a..."));
  CHECK(d.markers == "      ^" + std::string(kMaxSourceColumns - 7, '~'));
  // Escapes are never split at the window's edges, and the caret is still
  // under its character.
  std::string esc;
  for (int i = 0; i < 1000; ++i)
    esc += "\x1b";
  ShownSourceLine e = showSourceLine(esc + "@" + esc, 1000, 1000, 1001);
  CHECK(llvm::StringRef(e.text).starts_with("...<U+001B>"));
  CHECK(llvm::StringRef(e.text).ends_with("<U+001B>..."));
  CHECK(e.markers == std::string(columnOf(e.text, "@"), ' ') + "^");
  // Exactly as wide as the window: not cut.
  std::string full(kMaxSourceColumns, 'f');
  CHECK(showSourceLine(full, 0, 0, 1).text == full);
  CHECK(showSourceLine(full + "g", 0, 0, 1).text ==
        full.substr(0, kMaxSourceColumns) + "...");
}
