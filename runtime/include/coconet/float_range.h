//===- float_range.h - whether a number fits a float type -------*- C++ -*-===//
//
// One rule for the values a user gives a float parameter, applied by
// `coconetc sim --set` and the drivers (coconet/values.h) and by the Python
// module's scalars (runtime/python/core_types.cpp, which links no runtime
// library: this header is all inline): a finite value that rounds past the
// type's largest (1e300 for an f32) or a non-zero one that rounds to 0
// (1e-50 for an f32) does not fit; infinities and NaN given as such do.
// Host-only; C++17.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_FLOAT_RANGE_H
#define COCONET_RUNTIME_FLOAT_RANGE_H

#include "coconet/numeric.h"
#include "coconet/types.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace coconet::rt {

/// `value` rounded to nearest in float type `dtype` (once, as stored).
inline double roundToType(DType dtype, double value) {
  switch (dtype) {
  case DType::F16:
    return roundToHalf(value);
  case DType::BF16:
    return roundToBFloat16(value);
  case DType::F32:
    return static_cast<double>(static_cast<float>(value));
  default:
    return value;
  }
}

/// The largest finite value of a float type, for messages.
inline const char *largestFinite(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "65504";
  case DType::BF16:
    return "3.3895314e38";
  case DType::F32:
    return "3.4028235e38";
  default:
    return "1.7976931348623157e308";
  }
}

/// A double as the shortest text that reads back the same.
inline std::string numberText(double v) {
  char buffer[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v || std::isnan(v))
      break;
  }
  return buffer;
}

/// A value of float type `dtype` as the shortest text that reads back to
/// it in that type ("0.9" for the f32 nearest 0.9), as a requirement's
/// refusal prints a parameter.
inline std::string numberText(DType dtype, double v) {
  char buffer[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (roundToType(dtype, std::strtod(buffer, nullptr)) == v || std::isnan(v))
      break;
  }
  return buffer;
}

/// Why finite `value` does not fit float type `dtype` (printed `name`), as
/// the messages say it: "is out of the range of f32 (largest finite value
/// 3.4028235e38)", "rounds to 0 in f32"; empty when it fits, and for an
/// infinity or a NaN.
inline std::string floatRangeProblem(DType dtype, const char *name,
                                     double value) {
  if (!std::isfinite(value))
    return "";
  const double stored = roundToType(dtype, value);
  if (std::isinf(stored))
    return std::string("is out of the range of ") + name +
           " (largest finite value " + largestFinite(dtype) + ")";
  if (stored == 0 && value != 0)
    return std::string("rounds to 0 in ") + name;
  return "";
}

} // namespace coconet::rt

#endif // COCONET_RUNTIME_FLOAT_RANGE_H
