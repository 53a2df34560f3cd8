//===- values.cpp - the values a user gives a parameter -------------------===//
//
// The rule of coconet/values.h, for `coconetc sim` and generated drivers
// alike (so that both accept and refuse the same values, with the same
// messages).
//
//===----------------------------------------------------------------------===//

#include "coconet/values.h"

#include "coconet/float_range.h"
#include "coconet/numeric.h"

#include "driver/driver_impl.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace coconet::rt {

namespace {

/// Whether `text` names an infinity or a NaN ("inf", "-Infinity", "nan").
bool namesSpecial(std::string_view text) {
  if (!text.empty() && (text[0] == '+' || text[0] == '-'))
    text.remove_prefix(1);
  std::string lower;
  for (char c : text.substr(0, 3))
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "inf" || lower == "nan";
}

/// Whether a number's text is a zero ("0", "-0.0e5", "0x0p3"): its digits
/// before the exponent are all 0. A text that is not, read as the double
/// 0, was a value too small for a double ("2.4703282292062327e-324").
bool textIsZero(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-'))
    ++i;
  bool hex = false;
  if (text.size() > i + 1 && text[i] == '0' &&
      (text[i + 1] == 'x' || text[i + 1] == 'X')) {
    hex = true;
    i += 2;
  }
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if ((!hex && (c == 'e' || c == 'E')) || (hex && (c == 'p' || c == 'P')))
      break;
    if (c != '0' && c != '.')
      return false;
  }
  return true;
}

/// Why a float `value` is not exact in `dtype` (empty: it is).
std::string inexactFloat(DType dtype, double value) {
  if (std::isnan(value))
    return "";
  const double stored = roundToType(dtype, value);
  if (stored == value)
    return "";
  if (std::isinf(stored))
    return "is out of the range of " + std::string(dtypeName(dtype)) +
           " (largest finite value " + largestFinite(dtype) + ")";
  return "is not exact in " + std::string(dtypeName(dtype)) + " (nearest " +
         numberText(stored) + ")";
}

/// Whether integer `v` (read from a file of `from`) fits `dtype`.
bool fitsInteger(NpyType from, int64_t v, DType dtype) {
  const bool unsignedFile = from == NpyType::U64;
  switch (dtype) {
  case DType::I32:
    return !(unsignedFile && v < 0) && v >= INT32_MIN && v <= INT32_MAX;
  case DType::I64:
    return !(unsignedFile && v < 0); // u64 values of 2^63 and above
  case DType::U64:
    return unsignedFile || v >= 0;
  default:
    return true;
  }
}

} // namespace

Status parseSetValue(const std::string &name, DType dtype,
                     std::string_view text, ElementValue *out) {
  const std::string head = "--set " + name + "=" + std::string(text) + ": ";
  auto bad = [&](const std::string &expected) {
    return Status::error(StatusCode::InvalidArgument,
                         head + "expected " + expected +
                             " for a parameter of type " + dtypeName(dtype));
  };
  ElementValue v;
  if (dtype == DType::Bool) {
    if (text == "true" || text == "1")
      v.i = 1;
    else if (text == "false" || text == "0")
      v.i = 0;
    else
      return bad("true or false");
  } else if (isFloat(dtype)) {
    if (!driver::detail::parseDouble(text, &v.f))
      return bad("a number");
    if (!std::isfinite(v.f) && !namesSpecial(text))
      return Status::error(StatusCode::InvalidArgument,
                           head + "out of the range of a double");
    const double stored = roundToType(dtype, v.f);
    if (std::isinf(stored) && std::isfinite(v.f))
      return Status::error(StatusCode::InvalidArgument,
                           head + "out of the range of " + dtypeName(dtype) +
                               " (largest finite value " +
                               largestFinite(dtype) + ")");
    if (stored == 0 && (v.f != 0 || !textIsZero(text)))
      return Status::error(StatusCode::InvalidArgument,
                           head + "rounds to 0 in " + dtypeName(dtype));
    v.f = stored;
  } else if (dtype == DType::U64) {
    if (!driver::detail::parseUnsigned(text, &v.i))
      return bad("an unsigned integer from 0 to 2^64-1");
  } else {
    int64_t s = 0;
    const bool i32 = dtype == DType::I32;
    if (!driver::detail::parseSigned(text, &s) ||
        (i32 && (s < INT32_MIN || s > INT32_MAX)))
      return bad(i32 ? "an integer from -2^31 to 2^31-1"
                     : "an integer from -2^63 to 2^63-1");
    v.i = static_cast<uint64_t>(s);
  }
  *out = v;
  return Status::success();
}

bool npyKindMatches(NpyType type, DType dtype) {
  const bool fileFloat =
      type == NpyType::F16 || type == NpyType::F32 || type == NpyType::F64;
  const bool fileBool = type == NpyType::Bool;
  return isFloat(dtype) == fileFloat && (dtype == DType::Bool) == fileBool;
}

Status npyElementValue(const NpyArray &array, int64_t index, DType dtype,
                       ElementValue *out) {
  return npyElementValue(array.type,
                         array.data.data() + static_cast<size_t>(index) *
                                                 npyElementSize(array.type),
                         index, dtype, out);
}

Status npyElementValue(NpyType type, const uint8_t *element, int64_t index,
                       DType dtype, ElementValue *out) {
  ElementValue v;
  std::string why;
  if (isFloat(dtype)) {
    v.f = npyElementAsDouble(type, element);
    why = inexactFloat(dtype, v.f);
    if (why.empty())
      v.f = roundToType(dtype, v.f); // NaN stays NaN
  } else {
    const int64_t raw = npyElementAsInt(type, element);
    v.i = static_cast<uint64_t>(raw);
    if (!fitsInteger(type, raw, dtype))
      why = "does not fit in " + std::string(dtypeName(dtype));
  }
  if (!why.empty()) {
    const std::string value = isFloat(dtype) ? numberText(v.f)
                              : type == NpyType::U64
                                  ? std::to_string(v.i)
                                  : std::to_string(static_cast<int64_t>(v.i));
    return Status::error(StatusCode::InvalidArgument,
                         "element " + std::to_string(index) + " (" + value +
                             ") " + why +
                             "; the file's values are converted only when "
                             "exact");
  }
  *out = v;
  return Status::success();
}

double wideInputValue(DType dtype, double u, uint64_t bits) {
  if (dtype == DType::F16)
    return u;
  const double sign = bits & 4 ? -1 : 1;
  if ((bits & 3) == 0)
    return sign * 0x1p54;
  if (dtype == DType::F64)
    return sign * (1 + static_cast<double>(bits >> 12) * 0x1p-52); // exact
  return u;
}

} // namespace coconet::rt
