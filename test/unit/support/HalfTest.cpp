//===- HalfTest.cpp - f16 and bf16 conversions ----------------------------===//
//
// Exhaustive round trips over all 2^16 bit patterns of both formats, the
// corner cases of rounding (ties to even, subnormals, overflow, signed zero,
// infinities, NaN), the difference between rounding once from double and
// rounding through float, and sweeps over float bit patterns against
// independent reference roundings (and the compiler's _Float16 where it has
// one).
//
//===----------------------------------------------------------------------===//

#include "support/Half.h"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace coconet::support;

namespace {

float floatFromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t bitsOf(float value) { return std::bit_cast<uint32_t>(value); }

bool isHalfNaN(uint16_t h) {
  return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}
bool isBFloat16NaN(uint16_t b) {
  return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0;
}

/// The value of binary16 bits computed arithmetically, as a check on the
/// bit-manipulating halfBitsToFloat (finite patterns only).
double halfValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int frac = h & 0x3ff;
  const double magnitude =
      exp == 0 ? std::ldexp(frac, -24) : std::ldexp(1024 + frac, exp - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

/// Reference f16 rounding by search: the nearest of the two neighbouring
/// binary16 values, ties to the even pattern. `x` must be exact relative to
/// the binary16 grid within double precision (true for every float).
uint16_t referenceHalf(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (a >= 65520.0) // the midpoint between 65504 and 2^16 goes up (to inf)
    return sign | 0x7c00;
  // Positive finite patterns 0x0000..0x7bff are increasing in value.
  uint16_t lo = 0, hi = 0x7bff;
  while (lo < hi) { // largest pattern with value <= a
    const uint16_t mid = uint16_t((lo + hi + 1) / 2);
    if (halfValue(mid) <= a)
      lo = mid;
    else
      hi = uint16_t(mid - 1);
  }
  const double below = halfValue(lo);
  const double above = lo == 0x7bff ? 65536.0 : halfValue(uint16_t(lo + 1));
  const double dBelow = a - below, dAbove = above - a;
  uint16_t pick = lo;
  if (dAbove < dBelow || (dAbove == dBelow && (lo & 1) != 0))
    pick = uint16_t(lo + 1);
  return sign | pick;
}

/// The well-known float -> bf16 rounding formula, valid for non-NaN input.
uint16_t referenceBFloat16(float value) {
  const uint32_t bits = bitsOf(value);
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

} // namespace

//===----------------------------------------------------------------------===//
// binary16
//===----------------------------------------------------------------------===//

TEST_CASE("f16: every bit pattern round-trips through float and double",
          "[support][half]") {
  int nans = 0;
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const float f = halfBitsToFloat(h);
    if (isHalfNaN(h)) {
      ++nans;
      REQUIRE(std::isnan(f));
      REQUIRE(std::signbit(f) == ((h & 0x8000) != 0));
      const uint16_t back = floatToHalfBits(f);
      REQUIRE(isHalfNaN(back));
      REQUIRE((back & 0x200) != 0); // quiet
      REQUIRE((back & 0x8000) == (h & 0x8000));
      REQUIRE(isHalfNaN(doubleToHalfBits(f)));
      continue;
    }
    if ((h & 0x7fff) == 0x7c00)
      REQUIRE(std::isinf(f));
    else
      REQUIRE(static_cast<double>(f) == halfValue(h)); // exact widening
    REQUIRE(std::signbit(f) == ((h & 0x8000) != 0));
    REQUIRE(floatToHalfBits(f) == h);
    REQUIRE(doubleToHalfBits(f) == h);
    if (!std::isinf(f)) {
      REQUIRE(roundToHalf(f) == f);
      REQUIRE(roundToHalf(static_cast<double>(f)) == static_cast<double>(f));
    }
  }
  CHECK(nans == 2 * 1023);
}

TEST_CASE("f16: quiet NaN keeps its payload", "[support][half]") {
  for (uint16_t h :
       {uint16_t(0x7e00), uint16_t(0x7e01), uint16_t(0xfe55), uint16_t(0x7fff)})
    CHECK(floatToHalfBits(halfBitsToFloat(h)) == h);
  // A signalling NaN comes back quiet, with the rest of its payload.
  CHECK(floatToHalfBits(halfBitsToFloat(0x7c01)) == 0x7e01);
  // Widening keeps sign and payload and makes the NaN quiet.
  CHECK(bitsOf(halfBitsToFloat(0x7c01)) == 0x7fc02000u);
  CHECK(bitsOf(halfBitsToFloat(0xfe00)) == 0xffc00000u);
}

TEST_CASE("f16 rounding: ties go to even", "[support][half]") {
  // Between 1 and 1 + 2^-10 the quantum is 2^-10.
  const float one = 1.0f;
  CHECK(floatToHalfBits(one + 0x1p-11f) == 0x3c00);     // tie -> even 1
  CHECK(floatToHalfBits(one + 3 * 0x1p-11f) == 0x3c02); // tie -> 1 + 2^-9
  CHECK(floatToHalfBits(one + 5 * 0x1p-11f) == 0x3c02); // tie -> 1 + 2^-9
  CHECK(floatToHalfBits(one + 7 * 0x1p-11f) == 0x3c04); // tie -> 1 + 2^-8
  CHECK(floatToHalfBits(one + 0x1p-11f + 0x1p-23f) == 0x3c01); // above
  CHECK(floatToHalfBits(one + 0x1p-11f - 0x1p-23f) == 0x3c00); // below
  CHECK(floatToHalfBits(-(one + 0x1p-11f)) == 0xbc00);
  CHECK(floatToHalfBits(-(one + 3 * 0x1p-11f)) == 0xbc02);
  // Integers: the quantum is 2 in [2048, 4096).
  CHECK(floatToHalfBits(2049.0f) == floatToHalfBits(2048.0f));
  CHECK(halfBitsToFloat(floatToHalfBits(2051.0f)) == 2052.0f);
  CHECK(halfBitsToFloat(floatToHalfBits(2053.0f)) == 2052.0f);
  // The same through the double path.
  CHECK(doubleToHalfBits(1.0 + 0x1p-11) == 0x3c00);
  CHECK(doubleToHalfBits(1.0 + 3 * 0x1p-11) == 0x3c02);
  CHECK(doubleToHalfBits(1.0 + 0x1p-11 + 0x1p-52) == 0x3c01);
  CHECK(doubleToHalfBits(1.0 + 0x1p-11 - 0x1p-53) == 0x3c00);
  CHECK(roundToHalf(1.0f + 0x1p-11f) == 1.0f);
  CHECK(roundToHalf(1.0 + 3 * 0x1p-11) == 1.0 + 0x1p-9);
}

TEST_CASE("f16 rounding: subnormals", "[support][half]") {
  // Smallest subnormal 2^-24, largest 1023 * 2^-24, smallest normal 2^-14.
  CHECK(halfBitsToFloat(0x0001) == 0x1p-24f);
  CHECK(halfBitsToFloat(0x03ff) == 1023 * 0x1p-24f);
  CHECK(halfBitsToFloat(0x0400) == 0x1p-14f);
  CHECK(halfBitsToFloat(0x8001) == -0x1p-24f);

  CHECK(floatToHalfBits(0x1p-24f) == 0x0001);
  CHECK(floatToHalfBits(0x1p-25f) == 0x0000); // halfway below it: tie -> 0
  CHECK(floatToHalfBits(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
  CHECK(floatToHalfBits(std::nextafter(0x1p-25f, 0.0f)) == 0x0000);
  CHECK(floatToHalfBits(3 * 0x1p-25f) == 0x0002); // tie between 1 and 2
  CHECK(floatToHalfBits(5 * 0x1p-25f) == 0x0002); // tie between 2 and 3
  CHECK(floatToHalfBits(0x1p-26f) == 0x0000);
  CHECK(floatToHalfBits(-0x1p-26f) == 0x8000); // underflow keeps the sign
  CHECK(floatToHalfBits(-0x1p-25f) == 0x8000);
  CHECK(floatToHalfBits(-0x1p-24f) == 0x8001);
  CHECK(floatToHalfBits(std::numeric_limits<float>::denorm_min()) == 0x0000);

  CHECK(floatToHalfBits(1023 * 0x1p-24f) == 0x03ff);
  CHECK(floatToHalfBits(1022.5f * 0x1p-24f) == 0x03fe); // tie -> even
  CHECK(floatToHalfBits(1023.5f * 0x1p-24f) == 0x0400); // tie -> normal
  CHECK(floatToHalfBits(0x1p-14f) == 0x0400);
  CHECK(floatToHalfBits(0x1p-14f + 0x1p-25f) == 0x0400); // tie -> even
  CHECK(floatToHalfBits(0x1p-14f + 3 * 0x1p-25f) == 0x0402);

  CHECK(doubleToHalfBits(0x1p-24) == 0x0001);
  CHECK(doubleToHalfBits(0x1p-25) == 0x0000);
  CHECK(doubleToHalfBits(0x1p-25 + 0x1p-77) == 0x0001);
  CHECK(doubleToHalfBits(1023.5 * 0x1p-24) == 0x0400);
  CHECK(doubleToHalfBits(std::numeric_limits<double>::denorm_min()) == 0x0000);
  CHECK(doubleToHalfBits(-std::numeric_limits<double>::denorm_min()) == 0x8000);
  CHECK(doubleToHalfBits(std::numeric_limits<double>::min()) == 0x0000);
}

TEST_CASE("f16 rounding: overflow, infinities, zeros and NaN",
          "[support][half]") {
  CHECK(floatToHalfBits(65504.0f) == 0x7bff);
  CHECK(halfBitsToFloat(0x7bff) == 65504.0f);
  CHECK(floatToHalfBits(65519.99f) == 0x7bff);
  CHECK(floatToHalfBits(65520.0f) == 0x7c00); // the midpoint rounds to inf
  CHECK(floatToHalfBits(-65520.0f) == 0xfc00);
  CHECK(floatToHalfBits(65536.0f) == 0x7c00);
  CHECK(floatToHalfBits(1e10f) == 0x7c00);
  CHECK(floatToHalfBits(std::numeric_limits<float>::max()) == 0x7c00);
  CHECK(floatToHalfBits(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(floatToHalfBits(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(floatToHalfBits(0.0f) == 0x0000);
  CHECK(floatToHalfBits(-0.0f) == 0x8000);
  CHECK(std::signbit(halfBitsToFloat(0x8000)));
  CHECK(halfBitsToFloat(0x7c00) == std::numeric_limits<float>::infinity());

  CHECK(doubleToHalfBits(65519.999999) == 0x7bff);
  CHECK(doubleToHalfBits(65520.0) == 0x7c00);
  CHECK(doubleToHalfBits(1e300) == 0x7c00);
  CHECK(doubleToHalfBits(-1e300) == 0xfc00);
  CHECK(doubleToHalfBits(-0.0) == 0x8000);
  CHECK(doubleToHalfBits(std::numeric_limits<double>::infinity()) == 0x7c00);

  for (float nan :
       {std::numeric_limits<float>::quiet_NaN(),
        std::numeric_limits<float>::signaling_NaN(), floatFromBits(0x7f800001),
        floatFromBits(0xffc00000), floatFromBits(0x7fffffff)}) {
    const uint16_t h = floatToHalfBits(nan);
    CHECK(isHalfNaN(h));
    CHECK((h & 0x200) != 0);
    CHECK(((h & 0x8000) != 0) == std::signbit(nan));
    CHECK(std::isnan(roundToHalf(nan)));
  }
  for (double nan : {std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::signaling_NaN(),
                     -std::numeric_limits<double>::quiet_NaN()}) {
    const uint16_t h = doubleToHalfBits(nan);
    CHECK(isHalfNaN(h));
    CHECK((h & 0x200) != 0);
    CHECK(std::isnan(roundToHalf(nan)));
  }
}

TEST_CASE("f16 rounding from double rounds once, not through float",
          "[support][half]") {
  // Just above the midpoint 1 + 2^-11 between 1 and 1 + 2^-10: rounding
  // once goes up. Rounding to float first lands exactly on the midpoint
  // (2^-40 is below half a float ulp at 1), which then ties to even: 1.
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  REQUIRE(static_cast<float>(x) == 1.0f + 0x1p-11f);
  CHECK(doubleToHalfBits(x) == 0x3c01);
  CHECK(floatToHalfBits(static_cast<float>(x)) == 0x3c00);
  CHECK(roundToHalf(x) == 1.0 + 0x1p-10);
  CHECK(roundToHalf(static_cast<float>(x)) == 1.0f);
  CHECK(roundToHalf(roundToFloat(x)) == 1.0);

  // The same below the smallest subnormal.
  const double tiny = 0x1p-25 + 0x1p-60;
  REQUIRE(static_cast<float>(tiny) == 0x1p-25f);
  CHECK(doubleToHalfBits(tiny) == 0x0001);
  CHECK(floatToHalfBits(static_cast<float>(tiny)) == 0x0000);

  // And just below a midpoint whose float rounding goes up onto it and
  // then up again by ties to even: 1 + 3 * 2^-11 - 2^-40.
  const double y = 1.0 + 3 * 0x1p-11 - 0x1p-40;
  CHECK(doubleToHalfBits(y) == 0x3c01);
  CHECK(floatToHalfBits(static_cast<float>(y)) == 0x3c02);
}

TEST_CASE("f16: float sweep against a reference rounding", "[support][half]") {
  // Every 3001st float bit pattern (1.4 million values, all exponents), then
  // every float in windows around the interesting points. Mismatches are
  // counted rather than asserted one by one, to keep the loop fast.
  std::vector<uint32_t> patterns;
  for (uint64_t i = 0; i <= 0xffffffffu; i += 3001)
    patterns.push_back(static_cast<uint32_t>(i));
  for (uint32_t center : {bitsOf(1.0f + 0x1p-11f), bitsOf(65520.0f),
                          bitsOf(0x1p-25f), bitsOf(0x1p-14f)})
    for (uint32_t b = center - 4096; b <= center + 4096; ++b)
      patterns.push_back(b);
  int mismatches = 0, pathMismatches = 0;
  uint32_t firstMismatch = 0;
  for (uint32_t bits : patterns) {
    const float f = floatFromBits(bits);
    if (std::isnan(f))
      continue;
    const uint16_t h = floatToHalfBits(f);
    if (h != referenceHalf(f) && mismatches++ == 0)
      firstMismatch = bits;
    pathMismatches += doubleToHalfBits(f) != h;
  }
  INFO("first mismatch at float bits 0x" << std::hex << firstMismatch);
  CHECK(mismatches == 0);
  CHECK(pathMismatches == 0);
}

#ifdef __FLT16_MAX__
TEST_CASE("f16: agrees with the compiler's _Float16", "[support][half]") {
  int mismatches = 0;
  uint32_t firstMismatch = 0;
  for (uint64_t i = 0; i <= 0xffffffffu; i += 1009) {
    const float f = floatFromBits(static_cast<uint32_t>(i));
    if (std::isnan(f))
      continue;
    const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    if (floatToHalfBits(f) != expected && mismatches++ == 0)
      firstMismatch = static_cast<uint32_t>(i);
  }
  INFO("first mismatch at float bits 0x" << std::hex << firstMismatch);
  CHECK(mismatches == 0);
  // Doubles near f16 midpoints, where rounding once matters.
  for (int k = 0; k < 1024; ++k) {
    const double mid = 1.0 + (2 * k + 1) * 0x1p-11;
    for (double d : {mid, mid + 0x1p-40, mid - 0x1p-40, mid * 0x1p-20}) {
      const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(d));
      if (doubleToHalfBits(d) != expected)
        FAIL("double " << d << ": " << doubleToHalfBits(d)
                       << " != " << expected);
    }
  }
  for (uint16_t h = 0; h < 0x7c00; ++h)
    if (halfBitsToFloat(h) != static_cast<float>(std::bit_cast<_Float16>(h)))
      FAIL("f16 bits " << h);
}
#endif

//===----------------------------------------------------------------------===//
// bfloat16
//===----------------------------------------------------------------------===//

TEST_CASE("bf16: every bit pattern round-trips through float and double",
          "[support][half]") {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float f = bfloat16BitsToFloat(b);
    if (isBFloat16NaN(b)) {
      REQUIRE(std::isnan(f));
      const uint16_t back = floatToBFloat16Bits(f);
      REQUIRE(isBFloat16NaN(back));
      REQUIRE((back & 0x40) != 0); // quiet
      REQUIRE((back & 0x8000) == (b & 0x8000));
      REQUIRE(isBFloat16NaN(doubleToBFloat16Bits(f)));
      continue;
    }
    REQUIRE(bitsOf(f) == uint32_t(b) << 16); // exact widening
    REQUIRE(floatToBFloat16Bits(f) == b);
    REQUIRE(doubleToBFloat16Bits(f) == b);
    if (!std::isinf(f)) {
      REQUIRE(roundToBFloat16(f) == f);
      REQUIRE(roundToBFloat16(static_cast<double>(f)) ==
              static_cast<double>(f));
    }
  }
}

TEST_CASE("bf16 rounding: ties go to even on bit 16", "[support][half]") {
  CHECK(floatToBFloat16Bits(floatFromBits(0x3f808000)) == 0x3f80);
  CHECK(floatToBFloat16Bits(floatFromBits(0x3f818000)) == 0x3f82);
  CHECK(floatToBFloat16Bits(floatFromBits(0x3f808001)) == 0x3f81);
  CHECK(floatToBFloat16Bits(floatFromBits(0x3f807fff)) == 0x3f80);
  CHECK(floatToBFloat16Bits(floatFromBits(0x3f817fff)) == 0x3f81);
  CHECK(floatToBFloat16Bits(floatFromBits(0x3f80ffff)) == 0x3f81);
  CHECK(floatToBFloat16Bits(floatFromBits(0xbf808000)) == 0xbf80);
  CHECK(floatToBFloat16Bits(floatFromBits(0xbf818000)) == 0xbf82);
  // Carry from the fraction into the exponent: 2 - 2^-9 rounds up to 2.
  CHECK(floatToBFloat16Bits(floatFromBits(0x3fff8000)) == 0x4000);
  CHECK(doubleToBFloat16Bits(1.0 + 0x1p-8) == 0x3f80);
  CHECK(doubleToBFloat16Bits(1.0 + 3 * 0x1p-8) == 0x3f82);
  CHECK(roundToBFloat16(1.0f + 0x1p-8f) == 1.0f);
  CHECK(roundToBFloat16(1.0 + 3 * 0x1p-8) == 1.0 + 0x1p-6);
}

TEST_CASE("bf16 rounding: subnormals, overflow, infinities and zeros",
          "[support][half]") {
  // bf16 shares float's exponent range, so float subnormals round too.
  CHECK(floatToBFloat16Bits(floatFromBits(0x00008000)) == 0x0000); // tie
  CHECK(floatToBFloat16Bits(floatFromBits(0x00018000)) == 0x0002); // tie
  CHECK(floatToBFloat16Bits(floatFromBits(0x00008001)) == 0x0001);
  CHECK(floatToBFloat16Bits(floatFromBits(0x007fffff)) == 0x0080); // -> normal
  CHECK(floatToBFloat16Bits(floatFromBits(0x80008000)) == 0x8000);
  CHECK(bfloat16BitsToFloat(0x0001) == 0x1p-133f);
  CHECK(doubleToBFloat16Bits(0x1p-133) == 0x0001);
  CHECK(doubleToBFloat16Bits(0x1p-134) == 0x0000); // tie -> 0
  CHECK(doubleToBFloat16Bits(0x1p-134 + 0x1p-180) == 0x0001);

  CHECK(floatToBFloat16Bits(floatFromBits(0x7f7f7fff)) == 0x7f7f);
  CHECK(floatToBFloat16Bits(floatFromBits(0x7f7f8000)) == 0x7f80); // tie -> inf
  CHECK(floatToBFloat16Bits(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(floatToBFloat16Bits(-std::numeric_limits<float>::max()) == 0xff80);
  CHECK(doubleToBFloat16Bits(1e300) == 0x7f80);
  CHECK(doubleToBFloat16Bits(0x1.fep127) == 0x7f7f); // largest bf16
  CHECK(doubleToBFloat16Bits(0x1.ffp127) == 0x7f80); // its midpoint with 2^128
  CHECK(floatToBFloat16Bits(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(floatToBFloat16Bits(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(floatToBFloat16Bits(0.0f) == 0x0000);
  CHECK(floatToBFloat16Bits(-0.0f) == 0x8000);
  CHECK(doubleToBFloat16Bits(-0.0) == 0x8000);
  CHECK(doubleToBFloat16Bits(-std::numeric_limits<double>::denorm_min()) ==
        0x8000);
}

TEST_CASE("bf16 rounding: NaN stays NaN and never rounds to inf",
          "[support][half]") {
  // 0x7fffffff would carry into the sign by "add 0x7fff"; 0x7f800001 would
  // truncate to inf.
  CHECK(floatToBFloat16Bits(floatFromBits(0x7fffffff)) == 0x7fff);
  CHECK(floatToBFloat16Bits(floatFromBits(0x7f800001)) == 0x7fc0);
  CHECK(floatToBFloat16Bits(floatFromBits(0xff800001)) == 0xffc0);
  CHECK(floatToBFloat16Bits(floatFromBits(0x7fc00000)) == 0x7fc0);
  CHECK(floatToBFloat16Bits(floatFromBits(0xffffffff)) == 0xffff);
  CHECK(isBFloat16NaN(
      doubleToBFloat16Bits(std::numeric_limits<double>::quiet_NaN())));
  CHECK(isBFloat16NaN(
      doubleToBFloat16Bits(std::numeric_limits<double>::signaling_NaN())));
  CHECK(std::isnan(roundToBFloat16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(roundToBFloat16(std::numeric_limits<double>::quiet_NaN())));
  CHECK(bitsOf(bfloat16BitsToFloat(0x7f81)) == 0x7fc10000u); // made quiet
  CHECK(bitsOf(bfloat16BitsToFloat(0xffc1)) == 0xffc10000u);
}

TEST_CASE("bf16 rounding from double rounds once, not through float",
          "[support][half]") {
  // 1 + 2^-8 is the midpoint between 1 and 1 + 2^-7.
  const double x = 1.0 + 0x1p-8 + 0x1p-40;
  REQUIRE(static_cast<float>(x) == 1.0f + 0x1p-8f);
  CHECK(doubleToBFloat16Bits(x) == 0x3f81);
  CHECK(floatToBFloat16Bits(static_cast<float>(x)) == 0x3f80);
  CHECK(roundToBFloat16(x) == 1.0 + 0x1p-7);
  CHECK(roundToBFloat16(static_cast<float>(x)) == 1.0f);
}

TEST_CASE("bf16: float sweep against the reference formula",
          "[support][half]") {
  int mismatches = 0, pathMismatches = 0;
  uint32_t firstMismatch = 0;
  for (uint64_t i = 0; i <= 0xffffffffu; i += 991) {
    const float f = floatFromBits(static_cast<uint32_t>(i));
    if (std::isnan(f))
      continue;
    const uint16_t b = floatToBFloat16Bits(f);
    if (b != referenceBFloat16(f) && mismatches++ == 0)
      firstMismatch = static_cast<uint32_t>(i);
    pathMismatches += doubleToBFloat16Bits(f) != b;
  }
  INFO("first mismatch at float bits 0x" << std::hex << firstMismatch);
  CHECK(mismatches == 0);
  CHECK(pathMismatches == 0);
}

TEST_CASE("roundToFloat is the C++ cast", "[support][half]") {
  CHECK(roundToFloat(0.1) == static_cast<double>(0.1f));
  CHECK(roundToFloat(1.0 + 0x1p-24) == 1.0);               // tie -> even
  CHECK(roundToFloat(1.0 + 3 * 0x1p-24) == 1.0 + 0x1p-22); // tie -> even
  CHECK(roundToFloat(1e300) == std::numeric_limits<double>::infinity());
  CHECK(std::signbit(roundToFloat(-0.0)));
  CHECK(std::isnan(roundToFloat(std::numeric_limits<double>::quiet_NaN())));
}
