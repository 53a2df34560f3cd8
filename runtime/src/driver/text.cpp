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

} // namespace coconet::rt::driver::detail
