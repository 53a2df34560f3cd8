//===- numeric_impl.h - definitions of numeric.h ---------------*- C++ -*-===//
//
// The inline definitions behind numeric.h; include numeric.h, not this
// file. Everything is plain integer and floating-point arithmetic on
// scalars (no <bit>, no exceptions; <cmath> only on the host side of the
// basic float operations), so the same code runs on the host and in CUDA
// device code. Bit casts use memcpy.
//
// f16/bf16 conversions are branch-free, so that loops of them vectorise:
// every case is computed and one selected. Narrowing rounds to nearest
// even, once (from double: through a float rounded to odd, which rounds
// once too); a NaN keeps its sign and the top bits of its payload and gets
// the quiet bit, so it never rounds into an infinity.
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

inline constexpr int kDoubleFracBits = 52;
inline constexpr int kDoubleBias = 1023;
inline constexpr uint64_t kDoubleFracMask =
    (uint64_t(1) << kDoubleFracBits) - 1;
inline constexpr uint64_t kDoubleExpMask = uint64_t(0x7ff) << kDoubleFracBits;

inline constexpr int kFloatFracBits = 23;
inline constexpr uint32_t kFloatFracMask = (uint32_t(1) << kFloatFracBits) - 1;
inline constexpr uint32_t kFloatExpMask = 0x7f800000u;
inline constexpr uint32_t kFloatQuietBit = 0x00400000u;

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
// Branch-free: every case is computed and the right one selected, so a loop
// of conversions vectorises (blends, not branches) and costs the same for
// every value. Each is exact (round to nearest even, once) and agrees with
// the arithmetic definition of detail::roundDoubleBits, which the tests
// hold it to (test/unit/runtime/ConversionTest.cpp, exhaustively over the
// float inputs that matter).

namespace detail {

/// A float rounded to odd: truncated toward zero, with the last bit set
/// when that lost anything. Rounding a double to odd at float precision (24
/// bits) and then to nearest at no more than 22 bits rounds once: the odd
/// bit stands for everything below it, so no tie is created or broken
/// (Boldo and Melquiond, "When double rounding is odd", 2005). A NaN keeps
/// the top bits of its payload, as every conversion here does.
COCONET_HD uint32_t floatBitsRoundedToOdd(double value) {
  const float nearest = static_cast<float>(value);
  const double back = static_cast<double>(nearest);
  const uint32_t bits = floatBits(nearest);
  // One step toward zero when rounding to nearest went away from zero (the
  // magnitude's pattern minus one; float overflow gives FLT_MAX).
  // Bitwise, not short-circuit, logic: no branch, so loops of it vectorise.
  const uint32_t away = static_cast<uint32_t>((back > value) & (value >= 0)) |
                        static_cast<uint32_t>((back < value) & (value < 0));
  return (bits - away) | static_cast<uint32_t>(back != value);
}

} // namespace detail

COCONET_HD uint16_t floatToHalfBits(float value) {
  const uint32_t x = floatBits(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  // NaN: quiet, the top ten bits of its payload kept.
  const uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
  // Normal binary16 range: rebias the exponent and round the 13 dropped
  // bits to nearest even by adding 0xfff plus the last kept bit; a carry
  // out of the largest binade gives exactly the infinity pattern.
  const uint32_t normal = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  // Below 2^-14 (binary16 subnormals and zero): adding 0.5 shifts the
  // value's bits to the bottom of a float whose unit in the last place is
  // 2^-24, and the addition rounds them to nearest even, exactly.
  const uint32_t subnormal =
      floatBits(floatFromBits(a) + 0.5f) - floatBits(0.5f);
  uint32_t out = a < (113u << 23) ? subnormal : normal;
  out = a >= (143u << 23) ? 0x7c00u : out; // 2^16 and above: infinity
  out = a > 0x7f800000u ? nan : out;
  return uint16_t(sign | out);
}

COCONET_HD uint16_t doubleToHalfBits(double value) {
  return floatToHalfBits(floatFromBits(detail::floatBitsRoundedToOdd(value)));
}

COCONET_HD float halfBitsToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  const uint32_t em = bits & 0x7fffu;
  // Finite values: the bits placed at a float's exponent and fraction, then
  // scaled by 2^112, which is exact (a subnormal binary16 becomes a normal
  // float).
  const uint32_t finite = floatBits(floatFromBits(em << 13) * 0x1p112f);
  // Infinity, or NaN (made quiet).
  const uint32_t frac = em & 0x3ffu;
  const uint32_t special = detail::kFloatExpMask | (frac << 13) |
                           (frac != 0 ? detail::kFloatQuietBit : 0u);
  return floatFromBits(sign | (em >= 0x7c00u ? special : finite));
}

COCONET_HD uint16_t floatToBFloat16Bits(float value) {
  const uint32_t x = floatBits(value);
  // Round the 16 dropped bits to nearest even; a carry gives the next
  // binade or infinity. A NaN is kept quiet, its top payload bits kept.
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  return uint16_t((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

COCONET_HD uint16_t doubleToBFloat16Bits(double value) {
  return floatToBFloat16Bits(
      floatFromBits(detail::floatBitsRoundedToOdd(value)));
}

COCONET_HD float bfloat16BitsToFloat(uint16_t bits) {
  const uint32_t out = uint32_t(bits) << 16;
  const bool nan = (out & 0x7fffffffu) > detail::kFloatExpMask;
  return floatFromBits(out | (nan ? detail::kFloatQuietBit : 0u));
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

// --- Combining the members of a collective ---------------------------------

namespace detail {
COCONET_HD double firstNaN(double a, double b, double result) {
  const uint64_t quiet = uint64_t(1) << 51;
  return isNaN(a)   ? doubleFromBits(doubleBits(a) | quiet)
         : isNaN(b) ? doubleFromBits(doubleBits(b) | quiet)
                    : result;
}
} // namespace detail

COCONET_HD double combineAdd(double acc, double value) {
  return detail::firstNaN(acc, value, acc + value);
}
COCONET_HD double combineMul(double acc, double value) {
  return detail::firstNaN(acc, value, acc * value);
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
  // Unrolled, so that a loop of elements calling it vectorises.
  COCONET_UNROLL
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
