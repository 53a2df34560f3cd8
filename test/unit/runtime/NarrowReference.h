//===- NarrowReference.h - narrowing by arithmetic, for tests ---*- C++ -*-===//
//
// The reference the runtime's branch-free f16/bf16 conversions are held to:
// a double rounded to a narrow binary format by integer arithmetic on its
// significand and exponent, directly and once (round to nearest, ties to
// even; NaN quiet with its top payload bits). It is how coconet/numeric.h
// rounded before its conversions were made to vectorise.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_RUNTIME_NARROWREFERENCE_H
#define COCONET_TEST_UNIT_RUNTIME_NARROWREFERENCE_H

#include "coconet/numeric.h"

#include <cstdint>

namespace coconet::rt::reference {

using detail::kDoubleBias;
using detail::kDoubleFracBits;
using detail::kDoubleFracMask;
using detail::kFloatExpMask;
using detail::kFloatFracBits;
using detail::kFloatFracMask;

/// A binary floating-point format no wider than 16 bits: 1 sign bit,
/// `expBits` exponent bits and `fracBits` fraction bits.
struct NarrowFormat {
  int expBits;
  int fracBits;
};

inline int narrowBias(NarrowFormat fmt) { return (1 << (fmt.expBits - 1)) - 1; }
inline uint16_t narrowSignBit(NarrowFormat fmt) {
  return uint16_t(1u << (fmt.expBits + fmt.fracBits));
}
inline uint16_t narrowInfBits(NarrowFormat fmt) {
  return uint16_t(((1u << fmt.expBits) - 1) << fmt.fracBits);
}
inline uint16_t narrowQuietBit(NarrowFormat fmt) {
  return uint16_t(1u << (fmt.fracBits - 1));
}

inline NarrowFormat halfFormat() { return NarrowFormat{5, 10}; }
inline NarrowFormat bfloat16Format() { return NarrowFormat{8, 7}; }

/// The narrow NaN with the given sign and the top bits of `payload`, which
/// holds `payloadBits` fraction bits of the wider NaN. Always quiet.
inline uint16_t narrowNaN(NarrowFormat fmt, bool negative, uint64_t payload,
                          int payloadBits) {
  const uint16_t frac = uint16_t(payload >> (payloadBits - fmt.fracBits));
  return uint16_t((negative ? narrowSignBit(fmt) : 0) | narrowInfBits(fmt) |
                  narrowQuietBit(fmt) | frac);
}

/// Rounds a double to the narrow format, to nearest, ties to even, once.
inline uint16_t roundDoubleBits(double value, NarrowFormat fmt) {
  const uint64_t bits = doubleBits(value);
  const bool negative = (bits >> 63) != 0;
  const uint16_t sign = negative ? narrowSignBit(fmt) : uint16_t(0);
  const int biasedExp = int((bits >> kDoubleFracBits) & 0x7ff);
  const uint64_t frac = bits & kDoubleFracMask;

  if (biasedExp == 0x7ff) {
    if (frac != 0)
      return narrowNaN(fmt, negative, frac, kDoubleFracBits);
    return uint16_t(sign | narrowInfBits(fmt));
  }
  // Zero, and double subnormals: below 2^-1022, far less than half the
  // smallest subnormal of either narrow format, so a zero of the same sign.
  if (biasedExp == 0)
    return sign;

  // value = m * 2^(e - 52) with the implicit bit in m: 2^52 <= m < 2^53.
  const int e = biasedExp - kDoubleBias;
  const uint64_t m = frac | (uint64_t(1) << kDoubleFracBits);
  const int bias = narrowBias(fmt);
  if (e > bias) // at least 2^(emax + 1): beyond the largest finite value
    return uint16_t(sign | narrowInfBits(fmt));

  // The result is N * 2^q with q the exponent of the narrow format's unit
  // in the last place at this magnitude; below the normal range (e < emin)
  // it is the fixed subnormal quantum.
  const int emin = 1 - bias;
  const int effExp = e < emin ? emin : e;
  const int q = effExp - fmt.fracBits;
  // N = round(m / 2^shift), shift >= 52 - fracBits.
  const int shift = kDoubleFracBits + q - e;
  uint64_t n;
  if (shift > kDoubleFracBits + 1) {
    n = 0; // m / 2^shift < 2^53 / 2^54 = 1/2: rounds to zero
  } else {
    n = m >> shift;
    const uint64_t rem = m & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (n & 1) != 0))
      ++n;
  }
  // Normal: exponent field effExp + bias and fraction n - 2^fracBits, that
  // is ((effExp + bias - 1) << fracBits) + n; a carry out of the fraction
  // moves into the exponent, and out of the largest binade it gives exactly
  // the infinity pattern. Subnormal (effExp == emin, n <= 2^fracBits): the
  // same formula gives n, and n == 2^fracBits is the smallest normal.
  const uint64_t magnitude = (uint64_t(effExp + bias - 1) << fmt.fracBits) + n;
  return uint16_t(sign | magnitude);
}

/// Rounds a float: NaN directly (its payload kept), the rest through an
/// exact widening to double.
inline uint16_t roundFloatBits(float value, NarrowFormat fmt) {
  const uint32_t bits = floatBits(value);
  if ((bits & kFloatExpMask) == kFloatExpMask && (bits & kFloatFracMask) != 0)
    return narrowNaN(fmt, (bits >> 31) != 0, bits & kFloatFracMask,
                     kFloatFracBits);
  return roundDoubleBits(static_cast<double>(value), fmt);
}

inline uint16_t floatToHalfBits(float v) {
  return roundFloatBits(v, halfFormat());
}
inline uint16_t doubleToHalfBits(double v) {
  return roundDoubleBits(v, halfFormat());
}
inline uint16_t floatToBFloat16Bits(float v) {
  return roundFloatBits(v, bfloat16Format());
}
inline uint16_t doubleToBFloat16Bits(double v) {
  return roundDoubleBits(v, bfloat16Format());
}

} // namespace coconet::rt::reference

#endif // COCONET_TEST_UNIT_RUNTIME_NARROWREFERENCE_H
