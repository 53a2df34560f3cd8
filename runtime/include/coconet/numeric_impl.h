//===- numeric_impl.h - definitions of numeric.h ---------------*- C++ -*-===//
//
// The inline definitions behind numeric.h; include numeric.h, not this
// file. Everything is plain integer and floating-point arithmetic on
// scalars (no <bit>, no exceptions; <cmath> only on the host side of the
// basic float operations), so the same code runs on the host and in CUDA
// device code. Bit casts use memcpy.
//
// f16/bf16 narrowing goes through one routine, roundDoubleBits, that
// rounds a finite non-zero double to a narrow binary format, directly and
// once; a float widened to double is exact, so rounding a float through it
// also rounds once. NaN is handled before any widening: it keeps its sign
// and the top bits of its payload and gets the quiet bit, so it never
// rounds into an infinity and never depends on how a platform widens NaNs.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_NUMERIC_IMPL_H
#define COCONET_RUNTIME_NUMERIC_IMPL_H

#include "coconet/numeric.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace coconet::rt {

// --- Bit casts -------------------------------------------------------------

COCONET_HD uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

COCONET_HD float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

COCONET_HD uint64_t doubleBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

COCONET_HD double doubleFromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

namespace detail {

/// A binary floating-point format no wider than 16 bits: 1 sign bit,
/// `expBits` exponent bits and `fracBits` fraction bits.
struct NarrowFormat {
  int expBits;
  int fracBits;
};

COCONET_HD int narrowBias(NarrowFormat fmt) {
  return (1 << (fmt.expBits - 1)) - 1;
}
COCONET_HD uint16_t narrowSignBit(NarrowFormat fmt) {
  return uint16_t(1u << (fmt.expBits + fmt.fracBits));
}
COCONET_HD uint16_t narrowInfBits(NarrowFormat fmt) {
  return uint16_t(((1u << fmt.expBits) - 1) << fmt.fracBits);
}
COCONET_HD uint16_t narrowQuietBit(NarrowFormat fmt) {
  return uint16_t(1u << (fmt.fracBits - 1));
}

// Functions rather than constexpr objects: CUDA device code may only use
// constexpr variables of scalar type.
COCONET_HD NarrowFormat halfFormat() { return NarrowFormat{5, 10}; }
COCONET_HD NarrowFormat bfloat16Format() { return NarrowFormat{8, 7}; }

inline constexpr int kDoubleFracBits = 52;
inline constexpr int kDoubleBias = 1023;
inline constexpr uint64_t kDoubleFracMask =
    (uint64_t(1) << kDoubleFracBits) - 1;
inline constexpr uint64_t kDoubleExpMask = uint64_t(0x7ff) << kDoubleFracBits;

inline constexpr int kFloatFracBits = 23;
inline constexpr uint32_t kFloatFracMask = (uint32_t(1) << kFloatFracBits) - 1;
inline constexpr uint32_t kFloatExpMask = 0x7f800000u;
inline constexpr uint32_t kFloatQuietBit = 0x00400000u;

/// The narrow NaN with the given sign and the top bits of `payload`, which
/// holds `payloadBits` fraction bits of the wider NaN. Always quiet.
COCONET_HD uint16_t narrowNaN(NarrowFormat fmt, bool negative, uint64_t payload,
                              int payloadBits) {
  const uint16_t frac = uint16_t(payload >> (payloadBits - fmt.fracBits));
  return uint16_t((negative ? narrowSignBit(fmt) : 0) | narrowInfBits(fmt) |
                  narrowQuietBit(fmt) | frac);
}

/// Rounds a double to the narrow format, to nearest, ties to even, once.
COCONET_HD uint16_t roundDoubleBits(double value, NarrowFormat fmt) {
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
COCONET_HD uint16_t roundFloatBits(float value, NarrowFormat fmt) {
  const uint32_t bits = floatBits(value);
  if ((bits & kFloatExpMask) == kFloatExpMask && (bits & kFloatFracMask) != 0)
    return narrowNaN(fmt, (bits >> 31) != 0, bits & kFloatFracMask,
                     kFloatFracBits);
  return roundDoubleBits(static_cast<double>(value), fmt);
}

COCONET_HD bool isNaN(float value) {
  const uint32_t bits = floatBits(value);
  return (bits & kFloatExpMask) == kFloatExpMask && (bits & kFloatFracMask);
}
COCONET_HD bool isNaN(double value) {
  const uint64_t bits = doubleBits(value);
  return (bits & kDoubleExpMask) == kDoubleExpMask &&
         (bits & kDoubleFracMask) != 0;
}
COCONET_HD bool signBit(float value) { return (floatBits(value) >> 31) != 0; }
COCONET_HD bool signBit(double value) { return (doubleBits(value) >> 63) != 0; }

template <typename F> COCONET_HD F maxNumberImpl(F a, F b) {
  if (isNaN(a))
    return b;
  if (isNaN(b))
    return a;
  if (a == b) // equal values, or +0 and -0: +0 wins
    return signBit(a) ? b : a;
  return a > b ? a : b;
}

template <typename F> COCONET_HD F minNumberImpl(F a, F b) {
  if (isNaN(a))
    return b;
  if (isNaN(b))
    return a;
  if (a == b) // equal values, or +0 and -0: -0 wins
    return signBit(a) ? a : b;
  return a < b ? a : b;
}

/// The unsigned type arithmetic on T is done in.
template <typename T> using WrapType = std::make_unsigned_t<T>;

template <typename T> COCONET_HD T fromWrap(WrapType<T> v) {
  return static_cast<T>(v);
}

} // namespace detail

// --- f16 and bf16 ------------------------------------------------------------

COCONET_HD uint16_t floatToHalfBits(float value) {
  return detail::roundFloatBits(value, detail::halfFormat());
}

COCONET_HD uint16_t doubleToHalfBits(double value) {
  return detail::roundDoubleBits(value, detail::halfFormat());
}

COCONET_HD float halfBitsToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t frac = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {
    // Infinity, or NaN (made quiet).
    out = sign | detail::kFloatExpMask | (frac << 13) |
          (frac ? detail::kFloatQuietBit : 0u);
  } else if (exp != 0) {
    out = sign | ((exp - 15 + 127) << detail::kFloatFracBits) | (frac << 13);
  } else if (frac == 0) {
    out = sign; // signed zero
  } else {
    // Subnormal: frac * 2^-24. Shift the leading one up to the implicit bit
    // (bit 10); each shift lowers the exponent by one.
    int e = -14;
    while ((frac & 0x400u) == 0) {
      frac <<= 1;
      --e;
    }
    out = sign | (uint32_t(e + 127) << detail::kFloatFracBits) |
          ((frac & 0x3ffu) << 13);
  }
  return floatFromBits(out);
}

COCONET_HD uint16_t floatToBFloat16Bits(float value) {
  return detail::roundFloatBits(value, detail::bfloat16Format());
}

COCONET_HD uint16_t doubleToBFloat16Bits(double value) {
  return detail::roundDoubleBits(value, detail::bfloat16Format());
}

COCONET_HD float bfloat16BitsToFloat(uint16_t bits) {
  uint32_t out = uint32_t(bits) << 16;
  if ((out & detail::kFloatExpMask) == detail::kFloatExpMask &&
      (out & detail::kFloatFracMask) != 0)
    out |= detail::kFloatQuietBit; // NaN: keep it quiet
  return floatFromBits(out);
}

COCONET_HD float roundToHalf(float value) {
  return halfBitsToFloat(floatToHalfBits(value));
}
COCONET_HD double roundToHalf(double value) {
  return halfBitsToFloat(doubleToHalfBits(value));
}
COCONET_HD float roundToBFloat16(float value) {
  return bfloat16BitsToFloat(floatToBFloat16Bits(value));
}
COCONET_HD double roundToBFloat16(double value) {
  return bfloat16BitsToFloat(doubleToBFloat16Bits(value));
}

// --- max and min -------------------------------------------------------------

COCONET_HD float maxNumber(float a, float b) {
  return detail::maxNumberImpl(a, b);
}
COCONET_HD double maxNumber(double a, double b) {
  return detail::maxNumberImpl(a, b);
}
COCONET_HD float minNumber(float a, float b) {
  return detail::minNumberImpl(a, b);
}
COCONET_HD double minNumber(double a, double b) {
  return detail::minNumberImpl(a, b);
}

// --- Integers ----------------------------------------------------------------

template <typename T> COCONET_HD T wrapAdd(T a, T b) {
  using U = detail::WrapType<T>;
  return detail::fromWrap<T>(U(U(a) + U(b)));
}

template <typename T> COCONET_HD T wrapSub(T a, T b) {
  using U = detail::WrapType<T>;
  return detail::fromWrap<T>(U(U(a) - U(b)));
}

template <typename T> COCONET_HD T wrapMul(T a, T b) {
  using U = detail::WrapType<T>;
  return detail::fromWrap<T>(U(U(a) * U(b)));
}

template <typename T> COCONET_HD T wrapNeg(T a) {
  using U = detail::WrapType<T>;
  return detail::fromWrap<T>(U(U(0) - U(a)));
}

template <typename T> COCONET_HD T intDiv(T a, T b) {
  if (b == 0)
    return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1))
      return wrapNeg(a); // the most negative value / -1 wraps to itself
  }
  return a / b;
}

template <typename T> COCONET_HD T intPow(T a, T b) {
  using U = detail::WrapType<T>;
  if constexpr (std::is_signed_v<T>) {
    if (b < 0)
      return a == 1 ? T(1) : T(0);
  }
  // By squaring, wrapping at T's width.
  U result = 1, base = U(a), e = U(b);
  while (e) {
    if (e & 1)
      result = U(result * base);
    base = U(base * base);
    e = U(e >> 1);
  }
  return detail::fromWrap<T>(result);
}

template <typename T> COCONET_HD T intAbs(T a) {
  if constexpr (std::is_signed_v<T>)
    return a < 0 ? wrapNeg(a) : a;
  else
    return a;
}

template <typename T> COCONET_HD T intRelu(T a) {
  if constexpr (std::is_signed_v<T>)
    return a < 0 ? T(0) : a;
  else
    return a;
}

template <typename T> COCONET_HD T floatToInt(double value) {
  static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                    std::is_same_v<T, uint64_t>,
                "floatToInt is defined for int32_t, int64_t and uint64_t");
  // Comparing before truncating gives the same result as truncating first:
  // the bounds are integers.
  if (detail::isNaN(value))
    return 0;
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (value <= 0)
      return 0;
    if (value >= 18446744073709551616.0) // 2^64
      return ~uint64_t(0);
    return static_cast<uint64_t>(value);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    if (value <= -2147483648.0)
      return INT32_MIN;
    if (value >= 2147483647.0)
      return INT32_MAX;
    return static_cast<int32_t>(value);
  } else {
    if (value <= -9223372036854775808.0) // -2^63
      return INT64_MIN;
    if (value >= 9223372036854775808.0) // 2^63
      return INT64_MAX;
    return static_cast<int64_t>(value);
  }
}

// --- Basic float operations --------------------------------------------------
// On a GPU the correctly rounded intrinsics (which nvcc never contracts) and
// CUDA's math library; on the host the operators (compiled without
// contraction) and the C library, as the simulator uses them.

#if defined(__CUDA_ARCH__)
COCONET_HD float addRn(float a, float b) { return __fadd_rn(a, b); }
COCONET_HD double addRn(double a, double b) { return __dadd_rn(a, b); }
COCONET_HD float subRn(float a, float b) { return __fsub_rn(a, b); }
COCONET_HD double subRn(double a, double b) { return __dsub_rn(a, b); }
COCONET_HD float mulRn(float a, float b) { return __fmul_rn(a, b); }
COCONET_HD double mulRn(double a, double b) { return __dmul_rn(a, b); }
COCONET_HD float divRn(float a, float b) { return __fdiv_rn(a, b); }
COCONET_HD double divRn(double a, double b) { return __ddiv_rn(a, b); }
COCONET_HD float sqrtRn(float x) { return __fsqrt_rn(x); }
COCONET_HD double sqrtRn(double x) { return __dsqrt_rn(x); }
COCONET_HD float mathExp(float x) { return ::expf(x); }
COCONET_HD double mathExp(double x) { return ::exp(x); }
COCONET_HD float mathErf(float x) { return ::erff(x); }
COCONET_HD double mathErf(double x) { return ::erf(x); }
COCONET_HD float mathAbs(float x) { return ::fabsf(x); }
COCONET_HD double mathAbs(double x) { return ::fabs(x); }
#else
COCONET_HD float addRn(float a, float b) { return a + b; }
COCONET_HD double addRn(double a, double b) { return a + b; }
COCONET_HD float subRn(float a, float b) { return a - b; }
COCONET_HD double subRn(double a, double b) { return a - b; }
COCONET_HD float mulRn(float a, float b) { return a * b; }
COCONET_HD double mulRn(double a, double b) { return a * b; }
COCONET_HD float divRn(float a, float b) { return a / b; }
COCONET_HD double divRn(double a, double b) { return a / b; }
COCONET_HD float sqrtRn(float x) { return std::sqrt(x); }
COCONET_HD double sqrtRn(double x) { return std::sqrt(x); }
COCONET_HD float mathExp(float x) { return std::exp(x); }
COCONET_HD double mathExp(double x) { return std::exp(x); }
COCONET_HD float mathErf(float x) { return std::erf(x); }
COCONET_HD double mathErf(double x) { return std::erf(x); }
COCONET_HD float mathAbs(float x) { return std::fabs(x); }
COCONET_HD double mathAbs(double x) { return std::fabs(x); }
#endif

COCONET_HD bool isNaN(float x) { return detail::isNaN(x); }
COCONET_HD bool isNaN(double x) { return detail::isNaN(x); }

// --- Philox4x32-10 -----------------------------------------------------------

namespace detail {

inline constexpr uint32_t kPhiloxMultiplier0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxMultiplier1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9u; // golden ratio
inline constexpr uint32_t kPhiloxWeyl1 = 0xBB67AE85u; // sqrt(3) - 1
/// Mixed into the high key word of uniformInput ("CoCo") so that inputs
/// and dropout masks drawn under the same seed use different keys.
inline constexpr uint32_t kInputKeyTweak = 0x436f436fu;

COCONET_HD uint32_t lo32(uint64_t x) { return static_cast<uint32_t>(x); }
COCONET_HD uint32_t hi32(uint64_t x) { return static_cast<uint32_t>(x >> 32); }

/// 24 random bits as a float in [0, 1): (bits >> 8) * 2^-24, exact.
COCONET_HD float unitFromBits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * 0x1p-24f;
}

COCONET_HD PhiloxCounter inputBlock(uint64_t seed, uint64_t stream,
                                    uint64_t index) {
  const PhiloxCounter counter{
      {lo32(index), hi32(index), lo32(stream), hi32(stream)}};
  const PhiloxKey key{{lo32(seed), hi32(seed) ^ kInputKeyTweak}};
  return philox4x32_10(counter, key);
}

} // namespace detail

COCONET_HD PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  // Random123's philox4x32 round: two 32x32 -> 64-bit products, the key
  // bumped by the Weyl constants between rounds.
  PhiloxCounter c = counter;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key.v[0] += detail::kPhiloxWeyl0;
      key.v[1] += detail::kPhiloxWeyl1;
    }
    const uint64_t p0 = uint64_t(detail::kPhiloxMultiplier0) * c.v[0];
    const uint64_t p1 = uint64_t(detail::kPhiloxMultiplier1) * c.v[2];
    const PhiloxCounter next{
        {detail::hi32(p1) ^ c.v[1] ^ key.v[0], detail::lo32(p1),
         detail::hi32(p0) ^ c.v[3] ^ key.v[1], detail::lo32(p0)}};
    c = next;
  }
  return c;
}

COCONET_HD uint32_t dropoutBits(uint64_t seed, uint64_t index) {
  const PhiloxCounter counter{{detail::lo32(index), detail::hi32(index), 0, 0}};
  const PhiloxKey key{{detail::lo32(seed), detail::hi32(seed)}};
  return philox4x32_10(counter, key).v[0];
}

COCONET_HD float dropoutUniform(uint64_t seed, uint64_t index) {
  return detail::unitFromBits(dropoutBits(seed, index));
}

COCONET_HD bool dropoutKeep(uint64_t seed, uint64_t index, float p) {
  return dropoutUniform(seed, index) >= p;
}

COCONET_HD double uniformInput(uint64_t seed, uint64_t stream, uint64_t index) {
  const double u =
      detail::unitFromBits(detail::inputBlock(seed, stream, index).v[0]);
  return 2 * u - 1; // exact: u has 24 bits
}

COCONET_HD uint64_t uniformInputBits(uint64_t seed, uint64_t stream,
                                     uint64_t index) {
  const PhiloxCounter c = detail::inputBlock(seed, stream, index);
  return (uint64_t(c.v[2]) << 32) | c.v[1];
}

} // namespace coconet::rt

#endif // COCONET_RUNTIME_NUMERIC_IMPL_H
