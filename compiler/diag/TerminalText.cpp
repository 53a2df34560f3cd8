//===- TerminalText.cpp - what a diagnostic may print ---------------------===//
//
// A line is shown character by character ("pieces"): each piece is the bytes
// of one code point (or one invalid byte), the text printed for it and the
// columns that text takes. Showing a source line walks its pieces twice: once
// to find the columns of the caret and the range and the line's width, once
// to print the pieces inside the chosen window. Both walk only the bytes near
// the caret that can be in the window, so a 1 MB line costs what a short one
// does and prints about kMaxSourceColumns columns.
//
//===----------------------------------------------------------------------===//

#include "diag/TerminalText.h"

#include "llvm/Support/Unicode.h"

#include <algorithm>
#include <cstdio>

namespace coconet {

unsigned decodeUtf8(llvm::StringRef text, size_t pos, char32_t &codePoint) {
  if (pos >= text.size())
    return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(pos);
  if (lead < 0x80) {
    codePoint = lead;
    return 1;
  }
  unsigned length;
  char32_t value;
  // The allowed range of the second byte, which rules out overlong forms,
  // surrogates and code points past U+10FFFF.
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0F;
    if (lead == 0xE0)
      low = 0xA0;
    else if (lead == 0xED)
      high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07;
    if (lead == 0xF0)
      low = 0x90;
    else if (lead == 0xF4)
      high = 0x8F;
  } else {
    return 0;
  }
  if (pos + length > text.size())
    return 0;
  for (unsigned i = 1; i < length; ++i) {
    unsigned char next = byte(pos + i);
    unsigned char lo = i == 1 ? low : 0x80;
    unsigned char hi = i == 1 ? high : 0xBF;
    if (next < lo || next > hi)
      return 0;
    value = (value << 6) | (next & 0x3F);
  }
  codePoint = value;
  return length;
}

namespace {

/// One character of a line as it is shown.
struct Piece {
  size_t end;     ///< The byte just past it.
  unsigned width; ///< The columns its shown text takes.
};

/// The columns code point `cp` (whose bytes are `bytes`) takes when printed
/// as it is, or 0 when it must be escaped: not printable, or of no width (a
/// combining mark, which would pile onto its neighbour).
unsigned shownWidth(char32_t cp, llvm::StringRef bytes) {
  if (cp >= 0x20 && cp < 0x7F)
    return 1;
  if (cp < 0x80)
    return 0; // C0 controls and DEL.
  int width = llvm::sys::unicode::columnWidthUTF8(bytes);
  return width > 0 ? static_cast<unsigned>(width) : 0;
}

/// Measures the character of `text` at `pos`, shown at column `column`, and
/// appends its shown text to `out` when given. A tab becomes spaces to the
/// next tab stop when `expandTabs`, else it is escaped like other controls.
Piece nextPiece(llvm::StringRef text, size_t pos, size_t column,
                bool expandTabs, std::string *out) {
  unsigned char byte = static_cast<unsigned char>(text[pos]);
  if (byte == '\t' && expandTabs) {
    unsigned width = kTabStop - static_cast<unsigned>(column % kTabStop);
    if (out)
      out->append(width, ' ');
    return {pos + 1, width};
  }
  char buf[16];
  char32_t cp = 0;
  unsigned length = decodeUtf8(text, pos, cp);
  if (length == 0) {
    int n = std::snprintf(buf, sizeof(buf), "<%02X>", unsigned(byte));
    if (out)
      out->append(buf, n);
    return {pos + 1, static_cast<unsigned>(n)};
  }
  llvm::StringRef bytes = text.substr(pos, length);
  if (unsigned width = shownWidth(cp, bytes)) {
    if (out)
      out->append(bytes.data(), bytes.size());
    return {pos + length, width};
  }
  int n = std::snprintf(buf, sizeof(buf), "<U+%04X>", unsigned(cp));
  if (out)
    out->append(buf, n);
  return {pos + length, static_cast<unsigned>(n)};
}

bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

} // namespace

std::string escapeForTerminal(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();)
    pos = nextPiece(text, pos, 0, /*expandTabs=*/false, &out).end;
  return out;
}

std::string safeWord(llvm::StringRef text, unsigned maxColumns) {
  std::string out;
  size_t column = 0, keep = 0;
  for (size_t pos = 0; pos < text.size();) {
    std::string shown;
    Piece piece = nextPiece(text, pos, column, /*expandTabs=*/false, &shown);
    if (column + piece.width > maxColumns) {
      out.resize(keep);
      return out + "...";
    }
    out += shown;
    column += piece.width;
    if (column + 3 <= maxColumns)
      keep = out.size();
    pos = piece.end;
  }
  return out;
}

std::string safeMessage(llvm::StringRef message) {
  std::string out;
  size_t column = 0, keep = 0;
  // Appends shown text of `width` columns; false once the message is full.
  auto append = [&](llvm::StringRef text, unsigned width) {
    if (column + width > kMaxMessageColumns) {
      out.resize(keep);
      out += "...";
      return false;
    }
    out += text;
    column += width;
    if (column + 3 <= kMaxMessageColumns)
      keep = out.size();
    return true;
  };
  for (size_t pos = 0; pos < message.size();) {
    if (isWordChar(message[pos])) {
      size_t end = pos;
      while (end < message.size() && isWordChar(message[end]))
        ++end;
      llvm::StringRef word = message.slice(pos, end);
      std::string shown =
          word.size() > kMaxWordColumns
              ? word.take_front(kMaxWordColumns - 3).str() + "..."
              : word.str();
      for (char c : shown)
        if (!append(llvm::StringRef(&c, 1), 1))
          return out;
      pos = end;
      continue;
    }
    std::string text;
    Piece piece = nextPiece(message, pos, column, /*expandTabs=*/false, &text);
    if (!append(text, piece.width))
      return out;
    pos = piece.end;
  }
  return out;
}

ShownSourceLine showSourceLine(llvm::StringRef line, size_t caret,
                               size_t rangeBegin, size_t rangeEnd,
                               unsigned maxColumns) {
  caret = std::min(caret, line.size());
  // Only the bytes that can reach the window are looked at: every piece
  // takes at least one column and at most 4 bytes, so a window is never
  // more than 4 * maxColumns bytes from the caret. The cut is moved to the
  // start of a UTF-8 sequence. A long line costs the same as a short one.
  size_t reach = 4 * size_t(maxColumns) + 8;
  auto isContinuation = [&](size_t i) {
    return i < line.size() &&
           (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
  };
  size_t from = caret > reach ? caret - reach : 0;
  while (from > 0 && isContinuation(from))
    ++from;
  size_t to = std::min(line.size(), caret + reach);
  while (isContinuation(to))
    ++to;
  bool cutLeft = from > 0, cutRight = to < line.size();
  line = line.slice(from, to);
  caret -= from;
  rangeBegin = rangeBegin > from ? rangeBegin - from : 0;
  rangeEnd = rangeEnd > from ? std::min(rangeEnd - from, line.size()) : 0;
  bool hasRange = rangeBegin < rangeEnd;

  // First pass: the columns of the caret, of the range and of the line. A
  // byte inside a piece counts as the piece.
  size_t caretCol = 0, caretEnd = 0, rangeCol = 0, rangeEndCol = 0;
  size_t column = 0;
  for (size_t pos = 0; pos < line.size();) {
    Piece piece = nextPiece(line, pos, column, true, nullptr);
    if (caret >= pos && caret < piece.end) {
      caretCol = column;
      caretEnd = column + piece.width;
    }
    if (rangeBegin >= pos && rangeBegin < piece.end)
      rangeCol = column;
    if (rangeEnd > pos && rangeEnd <= piece.end)
      rangeEndCol = column + piece.width;
    column += piece.width;
    pos = piece.end;
  }
  size_t width = column;
  if (caret == line.size()) {
    caretCol = width;
    caretEnd = width + 1;
  }

  // The window: the caret and as much of the range as fits, then context
  // shared out on both sides.
  size_t start = 0, end = width;
  if (width > maxColumns || cutLeft || cutRight) {
    size_t lo = caretCol, hi = caretEnd;
    if (hasRange) {
      lo = std::min(lo, rangeCol);
      hi = std::max(hi, rangeEndCol);
    }
    bool cut = hi - lo > maxColumns;
    if (cut) { // Show where the range starts, after a little context.
      lo = caretCol;
      size_t context = std::min<size_t>(caretCol, maxColumns / 4);
      hi = std::max<size_t>(caretEnd, caretCol + maxColumns - context);
    }
    size_t spare = maxColumns > hi - lo ? maxColumns - (hi - lo) : 0;
    size_t before = std::min(lo, cut ? spare : spare / 2);
    size_t after = spare - before;
    if (hi + after > width) {
      size_t over = hi + after - width;
      before = std::min(lo, before + over);
      after = width > hi ? width - hi : 0;
    }
    start = lo - before;
    end = hi + after;
  }

  // Second pass: the pieces wholly inside the window.
  ShownSourceLine shown;
  size_t shownStart = width, shownEnd = 0;
  column = 0;
  for (size_t pos = 0; pos < line.size();) {
    Piece piece = nextPiece(line, pos, column, true, nullptr);
    if (column >= start && column + piece.width <= end) {
      if (shownStart > column)
        shownStart = column;
      shownEnd = column + piece.width;
      nextPiece(line, pos, column, true, &shown.text);
    }
    column += piece.width;
    pos = piece.end;
    if (column >= end)
      break;
  }
  if (shownStart > shownEnd) // Nothing shown: an empty line.
    shownStart = shownEnd = std::min(caretCol, width);
  std::string prefix = shownStart > 0 || cutLeft ? "..." : "";
  shown.text.insert(0, prefix);
  if (shownEnd < width || cutRight)
    shown.text += "...";

  // The markers, in the window's columns.
  size_t shift = prefix.size();
  size_t markerEnd = std::max(shownEnd, caretEnd);
  std::string markers(markerEnd - shownStart + shift, ' ');
  if (hasRange)
    for (size_t c = std::max(rangeCol, shownStart);
         c < std::min(rangeEndCol, shownEnd); ++c)
      markers[c - shownStart + shift] = '~';
  markers[std::max(caretCol, shownStart) - shownStart + shift] = '^';
  while (!markers.empty() && markers.back() == ' ')
    markers.pop_back();
  shown.markers = std::move(markers);
  return shown;
}

} // namespace coconet
