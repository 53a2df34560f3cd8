//===- text.cpp - numbers and shapes as text ------------------------------===//
//
// Integers are read as LLVM's getAsSignedInteger/getAsUnsignedInteger read
// them with radix 0, so that `--set seed=0x10` means the same to a
// generated driver as to `coconetc sim`; floating-point numbers with
// strtod (correctly rounded, like LLVM's APFloat) on the whole text.
//
//===----------------------------------------------------------------------===//

#include "driver_impl.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace coconet::rt::driver::detail {

std::string_view trim(std::string_view text) {
  const char *blanks = " \t\n\r\f\v";
  const size_t first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos)
    return {};
  const size_t last = text.find_last_not_of(blanks);
  return text.substr(first, last - first + 1);
}

namespace {

bool startsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size())
    return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i])
      return false;
  }
  return true;
}

/// LLVM's GetAutoSenseRadix: consumes a radix prefix and returns the radix.
unsigned autoRadix(std::string_view *text) {
  if (startsWithNoCase(*text, "0x")) {
    text->remove_prefix(2);
    return 16;
  }
  if (startsWithNoCase(*text, "0b")) {
    text->remove_prefix(2);
    return 2;
  }
  if (text->substr(0, 2) == "0o") {
    text->remove_prefix(2);
    return 8;
  }
  if (text->size() > 1 && (*text)[0] == '0' && (*text)[1] >= '0' &&
      (*text)[1] <= '9') {
    text->remove_prefix(1);
    return 8;
  }
  return 10;
}

} // namespace

bool parseUnsigned(std::string_view text, uint64_t *out, unsigned radix) {
  if (radix == 0)
    radix = autoRadix(&text);
  if (text.empty())
    return false;
  uint64_t value = 0;
  for (char c : text) {
    unsigned digit;
    if (c >= '0' && c <= '9')
      digit = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'z')
      digit = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'Z')
      digit = static_cast<unsigned>(c - 'A' + 10);
    else
      return false;
    if (digit >= radix)
      return false;
    if (__builtin_mul_overflow(value, uint64_t(radix), &value) ||
        __builtin_add_overflow(value, uint64_t(digit), &value))
      return false;
  }
  *out = value;
  return true;
}

bool parseSigned(std::string_view text, int64_t *out, unsigned radix) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative)
    text.remove_prefix(1);
  uint64_t magnitude = 0;
  if (!parseUnsigned(text, &magnitude, radix))
    return false;
  if (negative) {
    if (magnitude > (uint64_t(1) << 63))
      return false;
    *out = static_cast<int64_t>(uint64_t(0) - magnitude);
    return true;
  }
  if (magnitude > uint64_t(INT64_MAX))
    return false;
  *out = static_cast<int64_t>(magnitude);
  return true;
}

bool parseDouble(std::string_view text, double *out) {
  // strtod skips leading blanks; the whole text must be the number.
  if (text.empty() || text != trim(text))
    return false;
  const std::string copy(text);
  char *end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size())
    return false;
  *out = value; // ERANGE: an infinity or a (rounded) tiny value, accepted
  return true;
}

std::string shapeTuple(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace {

/// The length of the UTF-8 sequence at `pos` and its code point, or 0 for
/// a byte that does not start a valid one (overlong forms, surrogates and
/// code points past U+10FFFF are invalid).
size_t decodeUtf8(std::string_view text, size_t pos, uint32_t *codePoint) {
  const auto byte = [&](size_t i) {
    return static_cast<unsigned char>(text[pos + i]);
  };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    *codePoint = b0;
    return 1;
  }
  size_t n;
  uint32_t cp, min;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (pos + n > text.size())
    return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  *codePoint = cp;
  return n;
}

/// Printed as it is: not a C0 or C1 control, DEL, or a zero-width or
/// bidirectional format character.
bool shownAsIs(uint32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
    return false;
  if ((cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
      (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF || cp == 0x061C ||
      cp == 0x00AD)
    return false;
  return true;
}

} // namespace

std::string safeText(std::string_view text) {
  std::string out;
  char buf[16];
  size_t pos = 0;
  while (pos < text.size() && out.size() <= kMaxMessageBytes) {
    uint32_t cp = 0;
    const size_t n = decodeUtf8(text, pos, &cp);
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "<%02X>",
                    static_cast<unsigned char>(text[pos]));
      out += buf;
      ++pos;
    } else if (!shownAsIs(cp)) {
      std::snprintf(buf, sizeof buf, "<U+%04X>", static_cast<unsigned>(cp));
      out += buf;
      pos += n;
    } else {
      out.append(text.substr(pos, n));
      pos += n;
    }
  }
  if (pos >= text.size() && out.size() <= kMaxMessageBytes)
    return out;
  // Cut at a character boundary at most kMaxMessageBytes - 3 bytes in.
  size_t cut = kMaxMessageBytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
    --cut;
  return out.substr(0, cut) + "...";
}

} // namespace coconet::rt::driver::detail
