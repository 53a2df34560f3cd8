//===- NumericTest.cpp - the runtime's numeric semantics ------------------===//
//
// Hand-written expectations for the integer rules (wrapping, division by
// zero, the most negative value, powers, casts from float), max/min on
// zeros and NaN, f16/bf16 corner cases, and Philox against Random123's
// known-answer vector. compiler/support wraps these functions, so its
// exhaustive tests (test/unit/support) cover them too.
//
//===----------------------------------------------------------------------===//

#include "coconet/numeric.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace coconet::rt;

namespace {
template <typename T> constexpr T lowest() {
  return std::numeric_limits<T>::min();
}
template <typename T> constexpr T highest() {
  return std::numeric_limits<T>::max();
}
} // namespace

TEST_CASE("integer arithmetic wraps at the type's width",
          "[runtime][numeric]") {
  CHECK(wrapAdd<int32_t>(highest<int32_t>(), 1) == lowest<int32_t>());
  CHECK(wrapSub<int32_t>(lowest<int32_t>(), 1) == highest<int32_t>());
  CHECK(wrapMul<int32_t>(65536, 65536) == 0);
  CHECK(wrapMul<int32_t>(65537, 65537) == 131073);
  CHECK(wrapNeg<int32_t>(lowest<int32_t>()) == lowest<int32_t>());
  CHECK(wrapAdd<int64_t>(highest<int64_t>(), 1) == lowest<int64_t>());
  CHECK(wrapMul<int64_t>(int64_t(1) << 32, int64_t(1) << 32) == 0);
  CHECK(wrapNeg<int64_t>(5) == -5);
  CHECK(wrapAdd<uint64_t>(highest<uint64_t>(), 2) == 1);
  CHECK(wrapSub<uint64_t>(0, 1) == highest<uint64_t>());
  CHECK(wrapNeg<uint64_t>(1) == highest<uint64_t>());
  CHECK(wrapMul<uint64_t>(uint64_t(1) << 63, 2) == 0);
}

TEST_CASE("integer division truncates and divides by zero to 0",
          "[runtime][numeric]") {
  CHECK(intDiv<int32_t>(7, 2) == 3);
  CHECK(intDiv<int32_t>(-7, 2) == -3);
  CHECK(intDiv<int32_t>(7, -2) == -3);
  CHECK(intDiv<int32_t>(7, 0) == 0);
  CHECK(intDiv<int32_t>(lowest<int32_t>(), -1) == lowest<int32_t>());
  CHECK(intDiv<int32_t>(lowest<int32_t>(), 1) == lowest<int32_t>());
  CHECK(intDiv<int64_t>(lowest<int64_t>(), -1) == lowest<int64_t>());
  CHECK(intDiv<int64_t>(-9, 0) == 0);
  CHECK(intDiv<int64_t>(-9, -1) == 9);
  CHECK(intDiv<uint64_t>(highest<uint64_t>(), 2) == highest<uint64_t>() / 2);
  CHECK(intDiv<uint64_t>(5, 0) == 0);
}

TEST_CASE("integer powers by squaring wrap, negative exponents give 0",
          "[runtime][numeric]") {
  CHECK(intPow<int32_t>(3, 4) == 81);
  CHECK(intPow<int32_t>(-2, 3) == -8);
  CHECK(intPow<int32_t>(5, 0) == 1);
  CHECK(intPow<int32_t>(0, 0) == 1);
  CHECK(intPow<int32_t>(2, 31) == lowest<int32_t>());
  CHECK(intPow<int32_t>(2, 32) == 0);
  CHECK(intPow<int32_t>(3, 21) == static_cast<int32_t>(10460353203ull));
  CHECK(intPow<int32_t>(2, -1) == 0);
  CHECK(intPow<int32_t>(1, -5) == 1);
  CHECK(intPow<int32_t>(-1, -2) == 0); // only a base of 1 gives 1
  CHECK(intPow<int32_t>(-1, highest<int32_t>()) == -1);
  // 3^40 = 12157665459056928801 is above 2^63: it wraps negative.
  CHECK(intPow<int64_t>(3, 40) ==
        static_cast<int64_t>(12157665459056928801ull));
  CHECK(intPow<int64_t>(2, 63) == lowest<int64_t>());
  CHECK(intPow<int64_t>(7, lowest<int64_t>()) == 0);
  CHECK(intPow<uint64_t>(2, 64) == 0);
  CHECK(intPow<uint64_t>(3, 40) == 12157665459056928801ull);
  CHECK(intPow<uint64_t>(10, 19) == 10000000000000000000ull);
}

TEST_CASE("intAbs and intRelu of integers", "[runtime][numeric]") {
  CHECK(intAbs<int32_t>(-5) == 5);
  CHECK(intAbs<int32_t>(5) == 5);
  CHECK(intAbs<int32_t>(lowest<int32_t>()) == lowest<int32_t>());
  CHECK(intAbs<int64_t>(lowest<int64_t>()) == lowest<int64_t>());
  CHECK(intAbs<uint64_t>(highest<uint64_t>()) == highest<uint64_t>());
  CHECK(intRelu<int32_t>(-5) == 0);
  CHECK(intRelu<int32_t>(lowest<int32_t>()) == 0);
  CHECK(intRelu<int64_t>(9) == 9);
  CHECK(intRelu<uint64_t>(highest<uint64_t>()) == highest<uint64_t>());
}

TEST_CASE("float to integer casts truncate, saturate, map NaN to 0",
          "[runtime][numeric]") {
  const double nan = std::nan("");
  CHECK(floatToInt<int32_t>(2.9) == 2);
  CHECK(floatToInt<int32_t>(-2.9) == -2);
  CHECK(floatToInt<int32_t>(-0.5) == 0);
  CHECK(floatToInt<int32_t>(2147483646.9) == 2147483646);
  CHECK(floatToInt<int32_t>(2147483647.5) == highest<int32_t>());
  CHECK(floatToInt<int32_t>(1e300) == highest<int32_t>());
  CHECK(floatToInt<int32_t>(-2147483648.9) == lowest<int32_t>());
  CHECK(floatToInt<int32_t>(-INFINITY) == lowest<int32_t>());
  CHECK(floatToInt<int32_t>(nan) == 0);
  CHECK(floatToInt<int64_t>(0x1p62) == int64_t(1) << 62);
  CHECK(floatToInt<int64_t>(0x1p63) == highest<int64_t>());
  CHECK(floatToInt<int64_t>(-0x1p63) == lowest<int64_t>());
  CHECK(floatToInt<int64_t>(-0x1p64) == lowest<int64_t>());
  CHECK(floatToInt<int64_t>(nan) == 0);
  CHECK(floatToInt<uint64_t>(-1.5) == 0);
  CHECK(floatToInt<uint64_t>(0.99) == 0);
  CHECK(floatToInt<uint64_t>(0x1p63) == uint64_t(1) << 63);
  CHECK(floatToInt<uint64_t>(0x1p64) == highest<uint64_t>());
  CHECK(floatToInt<uint64_t>(INFINITY) == highest<uint64_t>());
  CHECK(floatToInt<uint64_t>(nan) == 0);
}

TEST_CASE("maxNumber and minNumber order -0 below +0 and skip NaN",
          "[runtime][numeric]") {
  const double nan = std::nan("");
  for (int swap = 0; swap < 2; ++swap) {
    auto mx = [&](double a, double b) {
      return swap ? maxNumber(b, a) : maxNumber(a, b);
    };
    auto mn = [&](double a, double b) {
      return swap ? minNumber(b, a) : minNumber(a, b);
    };
    CHECK_FALSE(std::signbit(mx(-0.0, 0.0)));
    CHECK(std::signbit(mn(-0.0, 0.0)));
    CHECK(mx(nan, 3.0) == 3.0);
    CHECK(mn(nan, -3.0) == -3.0);
    CHECK(mx(1.0, 2.0) == 2.0);
    CHECK(mn(1.0, 2.0) == 1.0);
    CHECK(mx(-INFINITY, -1e308) == -1e308);
  }
  CHECK(std::isnan(maxNumber(nan, nan)));
  CHECK(std::isnan(minNumber(nan, nan)));
  CHECK_FALSE(std::signbit(maxNumber(-0.0f, 0.0f)));
  CHECK(std::signbit(minNumber(0.0f, -0.0f)));
  CHECK(maxNumber(std::nanf(""), 1.5f) == 1.5f);
  CHECK(minNumber(2.5f, std::nanf("")) == 2.5f);
}

TEST_CASE("f16 and bf16 conversions at the edges", "[runtime][numeric]") {
  CHECK(floatToHalfBits(0x1p-24f) == 0x0001);   // smallest subnormal
  CHECK(floatToHalfBits(0x1p-25f) == 0x0000);   // tie to even: 0
  CHECK(floatToHalfBits(0x1.8p-25f) == 0x0001); // above the tie
  CHECK(floatToHalfBits(-0.0f) == 0x8000);
  CHECK(halfBitsToFloat(0x0001) == 0x1p-24f);
  CHECK(halfBitsToFloat(0x03ff) == 0x1.ff8p-15f); // largest subnormal
  CHECK(doubleToHalfBits(65519.99) == 0x7bff);
  CHECK(doubleToHalfBits(65520.0) == 0x7c00);
  CHECK(doubleToHalfBits(-INFINITY) == 0xfc00);
  // NaN stays NaN, quiet, with its sign and top payload bits.
  CHECK(floatToHalfBits(floatFromBits(0x7f800001u)) == 0x7e00);
  CHECK(floatToHalfBits(floatFromBits(0xffa00000u)) == 0xff00);
  CHECK(floatToBFloat16Bits(floatFromBits(0x7f800001u)) == 0x7fc0);
  CHECK(doubleToBFloat16Bits(doubleFromBits(0x7ff0000000000001ull)) == 0x7fc0);
  CHECK(floatBits(halfBitsToFloat(0x7c01)) == 0x7fc02000u);
  CHECK(floatBits(bfloat16BitsToFloat(0x7f81)) == 0x7fc10000u);
  CHECK(floatToBFloat16Bits(3.3895314e38f) == 0x7f7f);  // largest finite
  CHECK(floatToBFloat16Bits(3.40282347e38f) == 0x7f80); // rounds to inf
  CHECK(roundToHalf(0.1f) == 0.0999755859375f);
  CHECK(roundToBFloat16(0.1) == 0.10009765625);
  CHECK(doubleBits(1.0) == 0x3ff0000000000000ull);
  CHECK(doubleFromBits(0x4000000000000000ull) == 2.0);
}

TEST_CASE("Philox and the derived uniforms", "[runtime][numeric]") {
  // Random123's kat_vectors: philox4x32 10, counter and key all ones.
  const PhiloxCounter out = philox4x32_10(
      PhiloxCounter{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
      PhiloxKey{{0xffffffff, 0xffffffff}});
  CHECK(out.v[0] == 0x408f276d);
  CHECK(out.v[1] == 0x41c83b0e);
  CHECK(out.v[2] == 0xa20bc7c6);
  CHECK(out.v[3] == 0x6d5451fd);
  const PhiloxCounter zero =
      philox4x32_10(PhiloxCounter{{0, 0, 0, 0}}, PhiloxKey{{0, 0}});
  CHECK(zero.v[0] == 0x6627e8d5);
  CHECK(dropoutBits(0, 0) == 0x6627e8d5);
  CHECK(dropoutUniform(0, 0) ==
        static_cast<float>(0x6627e8d5u >> 8) * 0x1p-24f);
  CHECK(dropoutKeep(0, 0, 0.0f));
  CHECK_FALSE(dropoutKeep(0, 0, 1.0f));
  // uniformInput: counter {index, stream}, key {seed, hi(seed) ^ "CoCo"}.
  const PhiloxCounter c =
      philox4x32_10(PhiloxCounter{{5, 0, 7, 1}}, PhiloxKey{{3, 0x436f436f}});
  CHECK(uniformInput(3, (uint64_t(1) << 32) | 7, 5) ==
        2.0 * (static_cast<float>(c.v[0] >> 8) * 0x1p-24f) - 1.0);
  CHECK(uniformInputBits(3, (uint64_t(1) << 32) | 7, 5) ==
        ((uint64_t(c.v[2]) << 32) | c.v[1]));
}

namespace {
/// Equal bits (NaN equals NaN; +0 and -0 differ).
template <typename F> bool sameBits(F a, F b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}
} // namespace

TEST_CASE("elementwise formulas are the documented formulas, rounded step "
          "by step",
          "[runtime][numeric]") {
  // docs/language.md states each formula; these transcriptions round after
  // every operation, as the formulas must (compiled without contraction).
  // Inputs where a change of formula (e.g. erf(x/sqrt(2)) instead of
  // erf(x*c), or one rounding fewer) shows in the last bit are among them.
  const float cf = 0.70710678118654752440f;
  const double cd = 0.70710678118654752440;
  for (float x : {-3.5f, -1.0f, -0.0f, 0.0f, 1e-8f, 0.3f, 0.7071f, 1.0f, 2.5f,
                  9.0f, 88.0f, -88.0f, 1e30f, INFINITY, -INFINITY, NAN}) {
    INFO("x = " << x);
    CHECK(sameBits(ops::gelu(x), (0.5f * x) * (1.0f + std::erf(x * cf))));
    CHECK(sameBits(ops::silu(x), x / (1.0f + std::exp(-x))));
    CHECK(sameBits(ops::sigmoid(x), 1.0f / (1.0f + std::exp(-x))));
    CHECK(sameBits(ops::rsqrt(x), 1.0f / std::sqrt(x)));
    CHECK(sameBits(ops::relu(x), std::isnan(x) ? x : x > 0 ? x : 0.0f));
    CHECK(sameBits(ops::abs(x), std::fabs(x)));
    const double d = static_cast<double>(x) * 1.0000001;
    CHECK(sameBits(ops::gelu(d), (0.5 * d) * (1.0 + std::erf(d * cd))));
    CHECK(sameBits(ops::silu(d), d / (1.0 + std::exp(-d))));
    CHECK(sameBits(ops::sigmoid(d), 1.0 / (1.0 + std::exp(-d))));
    CHECK(sameBits(ops::rsqrt(d), 1.0 / std::sqrt(d)));
    CHECK(sameBits(ops::relu(d), std::isnan(d) ? d : d > 0 ? d : 0.0));
  }
  // relu keeps a NaN's sign and payload and gives +0 for -0.
  CHECK(sameBits(ops::relu(-0.0f), 0.0f));
  CHECK(std::isnan(ops::relu(-NAN)));
}

TEST_CASE("a collective's sum and product carry the first NaN, quiet",
          "[runtime][numeric]") {
  const double a = doubleFromBits(0x7ff0000000000123u); // signalling
  const double b = doubleFromBits(0xfff8000000000456u);
  const uint64_t quiet = uint64_t(1) << 51;
  for (auto f : {combineAdd, combineMul}) {
    CHECK(doubleBits(f(a, b)) == (doubleBits(a) | quiet));
    CHECK(doubleBits(f(b, a)) == doubleBits(b));
    CHECK(doubleBits(f(1.0, b)) == doubleBits(b));
    CHECK(doubleBits(f(b, 1.0)) == doubleBits(b));
  }
  CHECK(combineAdd(1.5, 2.25) == 3.75);
  CHECK(combineMul(1.5, 2.0) == 3.0);
  CHECK(std::isnan(combineMul(HUGE_VAL, 0.0)));
}
