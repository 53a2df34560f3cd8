//===- Half.cpp - IEEE binary16 and bfloat16 with round-to-nearest-even ---===//
//
// The compiler's names for the runtime's conversions (coconet/numeric.h),
// so that the simulator and generated code round with the same code.
//
//===----------------------------------------------------------------------===//

#include "support/Half.h"

#include "coconet/numeric.h"

namespace coconet::support {

uint16_t floatToHalfBits(float value) { return rt::floatToHalfBits(value); }

uint16_t doubleToHalfBits(double value) { return rt::doubleToHalfBits(value); }

float halfBitsToFloat(uint16_t bits) { return rt::halfBitsToFloat(bits); }

uint16_t floatToBFloat16Bits(float value) {
  return rt::floatToBFloat16Bits(value);
}

uint16_t doubleToBFloat16Bits(double value) {
  return rt::doubleToBFloat16Bits(value);
}

float bfloat16BitsToFloat(uint16_t bits) {
  return rt::bfloat16BitsToFloat(bits);
}

float roundToHalf(float value) { return rt::roundToHalf(value); }

double roundToHalf(double value) { return rt::roundToHalf(value); }

float roundToBFloat16(float value) { return rt::roundToBFloat16(value); }

double roundToBFloat16(double value) { return rt::roundToBFloat16(value); }

double roundToFloat(double value) { return static_cast<float>(value); }

} // namespace coconet::support
