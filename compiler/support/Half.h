//===- Half.h - binary16 and bfloat16, round to nearest even -*- C++ -*-===//
//
// The simulator stores f16 and bf16 values as their bit patterns and
// computes in f32 (or f64 for accumulations), rounding to nearest, ties to
// even, whenever a value of the narrow type is produced - as a GPU does.
// Conversions handle subnormals, infinities and NaN (NaN stays NaN, quiet).
//
// Rounding directly from double (roundToHalf(double)) rounds once; it is
// not the same as rounding to float first and then to half (double
// rounding), which is what a GPU computing in f32 does. The simulator uses
// the f32 path for elementwise arithmetic and the f64 path for values
// accumulated in f64.
//
// These wrap the runtime's definitions (runtime/include/coconet/numeric.h),
// which generated code uses too.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SUPPORT_HALF_H
#define COCONET_SUPPORT_HALF_H

#include <cstdint>

namespace coconet::support {

/// float -> binary16 bits, round to nearest even.
uint16_t floatToHalfBits(float value);
/// double -> binary16 bits, rounding once.
uint16_t doubleToHalfBits(double value);
/// binary16 bits -> float (exact).
float halfBitsToFloat(uint16_t bits);

/// float -> bfloat16 bits, round to nearest even.
uint16_t floatToBFloat16Bits(float value);
/// double -> bfloat16 bits, rounding once.
uint16_t doubleToBFloat16Bits(double value);
/// bfloat16 bits -> float (exact).
float bfloat16BitsToFloat(uint16_t bits);

/// Rounds to the nearest representable value and returns it widened.
float roundToHalf(float value);
double roundToHalf(double value);
float roundToBFloat16(float value);
double roundToBFloat16(double value);
/// double -> float, round to nearest even (what a C++ cast does).
double roundToFloat(double value);

} // namespace coconet::support

#endif // COCONET_SUPPORT_HALF_H
