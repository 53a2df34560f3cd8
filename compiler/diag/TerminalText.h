//===- TerminalText.h - what a diagnostic may print -------------*- C++ -*-===//
//
// Diagnostics echo text that comes from the user: source lines, names,
// file names. A terminal acts on some bytes (ESC starts a control sequence
// that can clear the screen or set the window title, CR moves the cursor)
// and cannot show others, and a 1 MB line or name would be printed whole.
// These functions make such text safe and short, the way clang does:
//
//   - a code point that is not printable (C0 and C1 controls, DEL, format
//     characters such as U+202E, unassigned ones) is shown as <U+001B>; a
//     byte that does not start a valid UTF-8 sequence as <FF>; a tab becomes
//     spaces up to the next multiple of 8 columns;
//   - a source line wider than kMaxSourceColumns is cut to a window around
//     the caret, with "..." on each side that was cut; the caret and the
//     underline stay under the text they point at;
//   - in a message, a word (letters, digits, '_') longer than
//     kMaxWordColumns keeps its first part and ends in "...", and a message
//     longer than kMaxMessageColumns is cut the same way.
//
// All of it is deterministic: no locale and no terminal width is consulted.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_DIAG_TERMINALTEXT_H
#define COCONET_DIAG_TERMINALTEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace coconet {

/// Tabs in a shown source line expand to the next multiple of this.
constexpr unsigned kTabStop = 8;
/// The most columns of source text a diagnostic shows (plus "..." marks).
constexpr unsigned kMaxSourceColumns = 100;
/// The most columns a word (a name, a number) takes in a message.
constexpr unsigned kMaxWordColumns = 64;
/// The most columns a message takes, before its [kind].
constexpr unsigned kMaxMessageColumns = 512;

/// Decodes one UTF-8 sequence of `text` at byte `pos`. Returns its length in
/// bytes and sets `codePoint`, or returns 0 for a byte that does not start a
/// valid sequence (overlong forms and surrogates are invalid too).
unsigned decodeUtf8(llvm::StringRef text, size_t pos, char32_t &codePoint);

/// `text` with every code point that is not printable and every byte that is
/// not UTF-8 escaped (<U+001B>, <FF>); tabs escaped too (<U+0009>), since a
/// message has no columns to expand them to.
std::string escapeForTerminal(llvm::StringRef text);

/// One value from a file or the command line (a name, a path) as a line
/// may print it: escaped as escapeForTerminal escapes, and when it takes
/// more than `maxColumns` columns, cut to its first part and "..." within
/// them.
std::string safeWord(llvm::StringRef text,
                     unsigned maxColumns = kMaxWordColumns);

/// A message as a diagnostic prints it: escaped, long words and the whole
/// cut with "...".
std::string safeMessage(llvm::StringRef message);

/// A source line as a diagnostic shows it, and the line of markers under it.
struct ShownSourceLine {
  /// The line, escaped, tabs expanded, cut to a window with "...".
  std::string text;
  /// '^' under the caret, '~' under the rest of the range; no trailing
  /// blanks.
  std::string markers;
};

/// Shows `line` (one line, without its line break) with the caret at byte
/// `caret` (line.size(): just past the end) and [rangeBegin, rangeEnd)
/// underlined (clipped to the line; an empty range underlines nothing).
/// The window is at most `maxColumns` wide, give or take the width of one
/// escaped character at each end.
ShownSourceLine showSourceLine(llvm::StringRef line, size_t caret,
                               size_t rangeBegin, size_t rangeEnd,
                               unsigned maxColumns = kMaxSourceColumns);

} // namespace coconet

#endif // COCONET_DIAG_TERMINALTEXT_H
