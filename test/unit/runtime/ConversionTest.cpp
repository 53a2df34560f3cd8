//===- ConversionTest.cpp - branch-free f16/bf16 against the arithmetic ---===//
//
// coconet/numeric.h's conversions are branch-free so that loops of them
// vectorise; these tests hold them to the arithmetic reference
// (NarrowReference.h: integer rounding of the significand, once):
//   - from float: every sign, exponent and top-ten-fraction-bit pattern
//     with the low bits at and around every rounding position (exact,
//     just below, at and just above each tie, all ones), and 2^22 random
//     floats;
//   - from double: the cases where rounding through float would round
//     twice — a double just above or below a binary16 / bfloat16 tie that
//     the float nearest to it lands exactly on — which round-to-odd must
//     get right, and 2^21 random doubles over every magnitude;
//   - to float: all 2^16 patterns of each format, against the value
//     computed arithmetically.
//
//===----------------------------------------------------------------------===//

#include "NarrowReference.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>

using namespace coconet::rt;

namespace {

uint32_t bitsOf(float v) { return floatBits(v); }

/// The low-bit patterns around every rounding position (bit r is the last
/// bit dropped... of a float): zero, one, all ones, and the tie at each
/// position with its neighbours.
std::vector<uint32_t> lowPatterns() {
  std::vector<uint32_t> out{0u, 1u, 0x1fffu, 0x7fffu, 0xffffu, 0x7fffffu};
  for (int r = 0; r < 23; ++r) {
    const uint32_t tie = 1u << r;
    out.push_back(tie);
    out.push_back(tie - 1);
    out.push_back(tie + 1);
    out.push_back((tie << 1) - 1);
  }
  return out;
}

} // namespace

TEST_CASE("float to f16 and bf16: branch-free equals the arithmetic",
          "[runtime][conversion]") {
  const std::vector<uint32_t> lows = lowPatterns();
  uint64_t checked = 0, halfMismatch = 0, bfMismatch = 0;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exp = 0; exp < 256; ++exp)
      for (uint32_t top = 0; top < 1024; ++top)
        for (uint32_t low : lows) {
          // The top ten fraction bits, and any low pattern below them.
          const uint32_t frac = (top << 13) | (low & 0x1fffu);
          const uint32_t bits = sign | (exp << 23) | frac;
          const uint32_t mixed = sign | (exp << 23) | ((top << 13) ^ low);
          for (uint32_t b : {bits, mixed}) {
            const float f = floatFromBits(b);
            ++checked;
            halfMismatch += floatToHalfBits(f) != reference::floatToHalfBits(f);
            bfMismatch +=
                floatToBFloat16Bits(f) != reference::floatToBFloat16Bits(f);
          }
        }
  std::mt19937 rng(20261123);
  for (int i = 0; i < (1 << 22); ++i) {
    const float f = floatFromBits(static_cast<uint32_t>(rng()));
    ++checked;
    halfMismatch += floatToHalfBits(f) != reference::floatToHalfBits(f);
    bfMismatch += floatToBFloat16Bits(f) != reference::floatToBFloat16Bits(f);
  }
  INFO(checked << " floats");
  CHECK(halfMismatch == 0);
  CHECK(bfMismatch == 0);
}

TEST_CASE("double to f16 and bf16 rounds once, through a float rounded to "
          "odd",
          "[runtime][conversion]") {
  // Every tie between two neighbouring finite f16 values (and bf16 values),
  // and the doubles just beside it: the float nearest to tie + tiny is the
  // tie itself, so rounding through float to nearest would round twice.
  uint64_t checked = 0, mismatches = 0;
  auto check = [&](double d) {
    ++checked;
    mismatches += doubleToHalfBits(d) != reference::doubleToHalfBits(d);
    mismatches += doubleToBFloat16Bits(d) != reference::doubleToBFloat16Bits(d);
    mismatches += doubleToHalfBits(-d) != reference::doubleToHalfBits(-d);
  };
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = halfBitsToFloat(uint16_t(h));
    const double hi = h == 0x7bff ? 65536.0 : halfBitsToFloat(uint16_t(h + 1));
    const double tie = (lo + hi) / 2; // exact in double
    for (double d : {tie, std::nextafter(tie, 0.0), std::nextafter(tie, 1e300),
                     std::nextafter(std::nextafter(tie, 1e300), 1e300), lo})
      check(d);
  }
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    const double lo = bfloat16BitsToFloat(uint16_t(b));
    const double hi = bfloat16BitsToFloat(uint16_t(b + 1));
    const double tie = (lo + hi) / 2;
    for (double d : {tie, std::nextafter(tie, 0.0), std::nextafter(tie, 1e300)})
      check(d);
  }
  // The trap itself, spelled out: 1 + 2^-11 is the tie between f16 1 and
  // 1 + 2^-10; a double a hair above it rounds to nearest float onto the
  // tie, then to even (1.0) - but the value is above the tie: 1 + 2^-10.
  const double above = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(static_cast<float>(above) == 1.0f + std::ldexp(1.0f, -11));
  CHECK(doubleToHalfBits(above) == 0x3c01);
  // Random doubles of every magnitude, the specials and float overflow.
  std::mt19937_64 rng(1123);
  for (int i = 0; i < (1 << 21); ++i) {
    const double d = doubleFromBits(rng());
    ++checked;
    mismatches += doubleToHalfBits(d) != reference::doubleToHalfBits(d);
    mismatches += doubleToBFloat16Bits(d) != reference::doubleToBFloat16Bits(d);
  }
  for (double d : {0.0, -0.0, 1e-320, -1e-320, 1e-46, 3.4e38, 3.5e38, 1e300,
                   -1e300, HUGE_VAL, -HUGE_VAL, double(NAN), -double(NAN),
                   65504.0, 65519.99, 65520.0})
    check(d);
  INFO(checked << " doubles");
  CHECK(mismatches == 0);
}

TEST_CASE("f16 and bf16 to float: every pattern, by value",
          "[runtime][conversion]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t bits = uint16_t(h);
    const float f = halfBitsToFloat(bits);
    const uint32_t exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    if (exp == 0x1f) {
      CHECK((frac == 0 ? std::isinf(f) : std::isnan(f)));
      if (frac != 0) // quiet, payload on top
        CHECK((bitsOf(f) & 0x7fffffu) == (0x400000u | (frac << 13)));
    } else {
      const double mag = exp == 0 ? std::ldexp(double(frac), -24)
                                  : std::ldexp(1024.0 + frac, int(exp) - 25);
      const double want = (h & 0x8000) ? -mag : mag;
      if (static_cast<double>(f) != want || std::signbit(f) != bool(h & 0x8000))
        FAIL("f16 " << h << " -> " << f);
    }
    const float b = bfloat16BitsToFloat(bits);
    const uint32_t wide = uint32_t(h) << 16;
    if ((wide & 0x7fffffffu) > 0x7f800000u)
      CHECK(bitsOf(b) == (wide | 0x400000u));
    else if (bitsOf(b) != wide)
      FAIL("bf16 " << h);
  }
}

TEST_CASE("a float rounded to odd", "[runtime][conversion]") {
  using detail::floatBitsRoundedToOdd;
  // Exact values stay; inexact ones truncate toward zero and set the last
  // bit, on both sides of zero and at the ends of the range.
  CHECK(floatBitsRoundedToOdd(1.0) == bitsOf(1.0f));
  CHECK(floatBitsRoundedToOdd(1.0 + std::ldexp(1.0, -30)) ==
        (bitsOf(1.0f) | 1u));
  CHECK(floatBitsRoundedToOdd(1.0 - std::ldexp(1.0, -30)) ==
        bitsOf(std::nextafter(1.0f, 0.0f)));
  CHECK(floatBitsRoundedToOdd(-1.0 - std::ldexp(1.0, -30)) ==
        (bitsOf(-1.0f) | 1u));
  CHECK(floatBitsRoundedToOdd(1e300) == 0x7f7fffffu);
  CHECK(floatBitsRoundedToOdd(-1e300) == 0xff7fffffu);
  CHECK(floatBitsRoundedToOdd(1e-300) == 1u);
  CHECK(floatBitsRoundedToOdd(HUGE_VAL) == 0x7f800000u);
  CHECK(floatBitsRoundedToOdd(-0.0) == 0x80000000u);
}
