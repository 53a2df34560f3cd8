//===- ConvertTest.cpp - the CPU runtime's array conversions --------------===//
//
// cpu::widen and cpu::narrow give numeric.h's bits on both paths: every
// f16 and bf16 pattern widened; every float whose narrowing matters (all
// exponents and top fraction bits, with the low bits at and around every
// rounding position, NaNs among them) and a million random ones narrowed;
// at lengths that leave a tail after the 8-wide F16C blocks; and narrowing
// a value already rounded to the type gives the bits of narrowing the
// value (rounding twice is rounding once). Where the CPU
// has no F16C the F16C half is skipped, and says so.
//
//===----------------------------------------------------------------------===//

#if defined(COCONET_HAVE_RT_CPU)

#include "coconet/cpu/convert.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using namespace coconet::rt;
using namespace coconet::rt::cpu;

namespace {

/// The floats to narrow (see the file comment).
std::vector<float> narrowingInputs() {
  std::vector<float> out;
  std::vector<uint32_t> lows{0u,      1u,      0x1fffu, 0xfffu,  0x1000u,
                             0x1001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu};
  for (int r = 13; r < 24; ++r)
    for (uint32_t d : {0u, 1u})
      lows.push_back((1u << r) - d), lows.push_back((1u << r) + d);
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exp = 0; exp < 256; ++exp)
      for (uint32_t top = 0; top < 1024; top += 3)
        for (uint32_t low : lows)
          out.push_back(floatFromBits(sign | (exp << 23) |
                                      (((top << 13) | low) & 0x7fffffu)));
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 20); ++i)
    out.push_back(floatFromBits(static_cast<uint32_t>(rng())));
  out.push_back(1.0f); // an odd length: a tail after the 8-wide blocks
  return out;
}

void checkPath(ConversionPath path) {
  REQUIRE(setConversionPath(path));
  // Widening: every pattern, odd length.
  std::vector<Half> halves(0x10001);
  std::vector<BFloat16> bfloats(0x10001);
  for (uint32_t i = 0; i < halves.size(); ++i) {
    halves[i].bits = uint16_t(i);
    bfloats[i].bits = uint16_t(i);
  }
  std::vector<float> wide(halves.size());
  widen(halves.data(), wide.data(), int64_t(halves.size()));
  int64_t bad = 0;
  for (size_t i = 0; i < halves.size(); ++i)
    bad += floatBits(wide[i]) != floatBits(halfBitsToFloat(halves[i].bits));
  CHECK(bad == 0);
  widen(bfloats.data(), wide.data(), int64_t(bfloats.size()));
  bad = 0;
  for (size_t i = 0; i < bfloats.size(); ++i)
    bad +=
        floatBits(wide[i]) != floatBits(bfloat16BitsToFloat(bfloats[i].bits));
  CHECK(bad == 0);
  // Narrowing.
  const std::vector<float> in = narrowingInputs();
  std::vector<Half> h(in.size());
  std::vector<BFloat16> b(in.size());
  narrow(in.data(), h.data(), int64_t(in.size()));
  narrow(in.data(), b.data(), int64_t(in.size()));
  int64_t badHalf = 0, badBf = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    badHalf += h[i].bits != floatToHalfBits(in[i]);
    badBf += b[i].bits != floatToBFloat16Bits(in[i]);
  }
  INFO(in.size() << " floats");
  CHECK(badHalf == 0);
  CHECK(badBf == 0);
  // Narrowing a value already rounded to the type gives the same bits as
  // narrowing the value: the CPU kernels leave a member whose one use is
  // its store unrounded and let the narrowing round it
  // (KernelCommon.cpp, storeRounds).
  std::vector<float> roundedHalf(in.size()), roundedBf(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    roundedHalf[i] = roundToHalf(in[i]);
    roundedBf[i] = roundToBFloat16(in[i]);
  }
  std::vector<Half> h2(in.size());
  std::vector<BFloat16> b2(in.size());
  narrow(roundedHalf.data(), h2.data(), int64_t(in.size()));
  narrow(roundedBf.data(), b2.data(), int64_t(in.size()));
  int64_t twiceHalf = 0, twiceBf = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    twiceHalf += h2[i].bits != h[i].bits;
    twiceBf += b2[i].bits != b[i].bits;
  }
  CHECK(twiceHalf == 0);
  CHECK(twiceBf == 0);
}

} // namespace

TEST_CASE("array conversions: the portable path is numeric.h's",
          "[runtime][convert]") {
  const ConversionPath before = conversionPath();
  checkPath(ConversionPath::Portable);
  setConversionPath(before);
}

TEST_CASE("array conversions: the F16C path is numeric.h's",
          "[runtime][convert]") {
  const ConversionPath before = conversionPath();
  if (!setConversionPath(ConversionPath::F16C)) {
    WARN("skipped: this CPU has no F16C");
    return;
  }
  checkPath(ConversionPath::F16C);
  setConversionPath(before);
}

#endif // COCONET_HAVE_RT_CPU
