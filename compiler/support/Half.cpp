//===- Half.cpp - IEEE binary16 and bfloat16 with round-to-nearest-even ---===//
//
// All narrowing conversions go through one routine, roundDoubleBits, that
// rounds a finite, non-zero double to a narrow binary format described by
// its exponent and fraction widths, directly and once. A float is first
// widened to double, which is exact, so rounding a float through it is also
// rounding once. NaN is handled before that: it keeps its sign and the top
// bits of its payload and gets the quiet bit, so it can never round into an
// infinity (a plain "add 0x7fff and truncate" bfloat16 conversion turns
// 0x7f800001 into inf).
//
// The widening conversions are exact bit manipulations; binary16 subnormals
// are normalised, since they are normal numbers in float.
//
//===----------------------------------------------------------------------===//

#include "support/Half.h"

#include <bit>
#include <cassert>
#include <cstdint>

namespace coconet::support {

namespace {

/// A binary floating-point format no wider than 16 bits: 1 sign bit,
/// `expBits` exponent bits and `fracBits` fraction bits.
struct NarrowFormat {
  int expBits;
  int fracBits;

  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint16_t signBit() const { return uint16_t(1u << (expBits + fracBits)); }
  uint16_t infBits() const {
    return uint16_t(((1u << expBits) - 1) << fracBits);
  }
  uint16_t quietBit() const { return uint16_t(1u << (fracBits - 1)); }
};

constexpr NarrowFormat kHalf{5, 10};
constexpr NarrowFormat kBFloat16{8, 7};

constexpr int kDoubleFracBits = 52;
constexpr int kDoubleBias = 1023;
constexpr uint64_t kDoubleFracMask = (uint64_t(1) << kDoubleFracBits) - 1;

constexpr int kFloatFracBits = 23;
constexpr uint32_t kFloatFracMask = (uint32_t(1) << kFloatFracBits) - 1;
constexpr uint32_t kFloatExpMask = 0x7f800000u;
constexpr uint32_t kFloatQuietBit = 0x00400000u;

/// The narrow NaN with the given sign and the top bits of `payload`, which
/// holds `payloadBits` fraction bits of the wider NaN. Always quiet.
uint16_t narrowNaN(NarrowFormat fmt, bool negative, uint64_t payload,
                   int payloadBits) {
  uint16_t frac = uint16_t(payload >> (payloadBits - fmt.fracBits));
  return uint16_t((negative ? fmt.signBit() : 0) | fmt.infBits() |
                  fmt.quietBit() | frac);
}

/// Rounds a double to the narrow format, to nearest, ties to even, once.
uint16_t roundDoubleBits(double value, NarrowFormat fmt) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const bool negative = (bits >> 63) != 0;
  const uint16_t sign = negative ? fmt.signBit() : 0;
  const int biasedExp = int((bits >> kDoubleFracBits) & 0x7ff);
  const uint64_t frac = bits & kDoubleFracMask;

  if (biasedExp == 0x7ff) {
    if (frac != 0)
      return narrowNaN(fmt, negative, frac, kDoubleFracBits);
    return uint16_t(sign | fmt.infBits());
  }
  // Zero, and double subnormals: these are below 2^-1022, far less than
  // half the smallest subnormal of either narrow format, so they round to a
  // zero of the same sign.
  if (biasedExp == 0)
    return sign;

  // value = m * 2^(e - 52) with the implicit bit in m: 2^52 <= m < 2^53.
  const int e = biasedExp - kDoubleBias;
  const uint64_t m = frac | (uint64_t(1) << kDoubleFracBits);
  const int bias = fmt.bias();
  if (e > bias) // at least 2^(emax + 1): beyond the largest finite value
    return uint16_t(sign | fmt.infBits());

  // The result is N * 2^q with q the exponent of the narrow format's unit in
  // the last place at this magnitude; below the normal range (e < emin) it
  // is the fixed subnormal quantum.
  const int emin = 1 - bias;
  const int effExp = e < emin ? emin : e;
  const int q = effExp - fmt.fracBits;
  // N = round(m * 2^(e - 52 - q)) = round(m / 2^shift), shift >= 52 - fracBits.
  const int shift = kDoubleFracBits + q - e;
  uint64_t n;
  if (shift > kDoubleFracBits + 1) {
    // m / 2^shift < 2^53 / 2^54 = 1/2: rounds to zero.
    n = 0;
  } else {
    n = m >> shift;
    const uint64_t rem = m & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (n & 1) != 0))
      ++n;
  }
  // Normal: exponent field effExp + bias and fraction n - 2^fracBits, which
  // is ((effExp + bias - 1) << fracBits) + n; a carry out of the fraction
  // (n == 2^(fracBits+1)) moves into the exponent as it should, and out of
  // the largest binade (effExp == bias) it gives exactly the infinity
  // pattern. Subnormal (effExp == emin, n <= 2^fracBits): the same formula
  // gives n, and n == 2^fracBits encodes the smallest normal number.
  const uint64_t magnitude = (uint64_t(effExp + bias - 1) << fmt.fracBits) + n;
  assert(magnitude <= fmt.infBits());
  return uint16_t(sign | magnitude);
}

/// Rounds a float (widened to double exactly; NaN kept apart so that its
/// payload does not depend on how the host widens NaNs).
uint16_t roundFloatBits(float value, NarrowFormat fmt) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & kFloatExpMask) == kFloatExpMask && (bits & kFloatFracMask) != 0)
    return narrowNaN(fmt, (bits >> 31) != 0, bits & kFloatFracMask,
                     kFloatFracBits);
  return roundDoubleBits(static_cast<double>(value), fmt);
}

} // namespace

uint16_t floatToHalfBits(float value) { return roundFloatBits(value, kHalf); }

uint16_t doubleToHalfBits(double value) {
  return roundDoubleBits(value, kHalf);
}

float halfBitsToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t frac = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {
    // Infinity, or NaN (made quiet).
    out = sign | kFloatExpMask | (frac << 13) | (frac ? kFloatQuietBit : 0);
  } else if (exp != 0) {
    out = sign | ((exp - 15 + 127) << kFloatFracBits) | (frac << 13);
  } else if (frac == 0) {
    out = sign; // signed zero
  } else {
    // Subnormal: frac * 2^-24. Shift the leading one up to the implicit bit
    // position (bit 10); each shift lowers the exponent by one.
    int e = -14;
    while ((frac & 0x400u) == 0) {
      frac <<= 1;
      --e;
    }
    out =
        sign | (uint32_t(e + 127) << kFloatFracBits) | ((frac & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t floatToBFloat16Bits(float value) {
  return roundFloatBits(value, kBFloat16);
}

uint16_t doubleToBFloat16Bits(double value) {
  return roundDoubleBits(value, kBFloat16);
}

float bfloat16BitsToFloat(uint16_t bits) {
  uint32_t out = uint32_t(bits) << 16;
  if ((out & kFloatExpMask) == kFloatExpMask && (out & kFloatFracMask) != 0)
    out |= kFloatQuietBit; // NaN: keep it quiet
  return std::bit_cast<float>(out);
}

float roundToHalf(float value) {
  return halfBitsToFloat(floatToHalfBits(value));
}

double roundToHalf(double value) {
  return halfBitsToFloat(doubleToHalfBits(value));
}

float roundToBFloat16(float value) {
  return bfloat16BitsToFloat(floatToBFloat16Bits(value));
}

double roundToBFloat16(double value) {
  return bfloat16BitsToFloat(doubleToBFloat16Bits(value));
}

double roundToFloat(double value) { return static_cast<float>(value); }

} // namespace coconet::support
