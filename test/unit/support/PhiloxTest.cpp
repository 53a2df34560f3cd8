//===- PhiloxTest.cpp - Philox4x32-10, dropout and simulator inputs -------===//
//
// Known-answer vectors of Random123, the counter/key layouts documented in
// Philox.h, and the statistics of the derived uniforms.
//
//===----------------------------------------------------------------------===//

#include "support/Philox.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

using namespace coconet::support;

TEST_CASE("philox4x32-10 matches the Random123 known-answer vectors",
          "[support][philox]") {
  // The three "philox4x32 10" lines of Random123's kat_vectors file
  // (D. E. Shaw Research, github.com/DEShawResearch/random123: tests/
  // kat_vectors, examples/kat_vectors in older releases). Columns: counter
  // (4 words), key (2 words), expected output (4 words):
  //
  // clang-format off
  // philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000   6627e8d5 e169c58d bc57ac4c 9b00dbd8
  // philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   408f276d 41c83b0e a20bc7c6 6d5451fd
  // philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   d16cfe09 94fdcceb 5001e420 24126ea1
  // clang-format on
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                      {0xffffffff, 0xffffffff}) ==
        PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                      {0xa4093822, 0x299f31d0}) ==
        PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("philox4x32-10 is a function of counter and key",
          "[support][philox]") {
  const PhiloxCounter base = philox4x32_10({1, 2, 3, 4}, {5, 6});
  CHECK(philox4x32_10({1, 2, 3, 4}, {5, 6}) == base);
  // Every input word matters.
  CHECK(philox4x32_10({0, 2, 3, 4}, {5, 6}) != base);
  CHECK(philox4x32_10({1, 0, 3, 4}, {5, 6}) != base);
  CHECK(philox4x32_10({1, 2, 0, 4}, {5, 6}) != base);
  CHECK(philox4x32_10({1, 2, 3, 0}, {5, 6}) != base);
  CHECK(philox4x32_10({1, 2, 3, 4}, {0, 6}) != base);
  CHECK(philox4x32_10({1, 2, 3, 4}, {5, 0}) != base);
}

TEST_CASE("dropout uses counter (lo i, hi i, 0, 0) and key (lo s, hi s)",
          "[support][philox]") {
  for (uint64_t seed :
       {uint64_t(0), uint64_t(12345), uint64_t(0x123456789abcdef0)})
    for (uint64_t index :
         {uint64_t(0), uint64_t(7), uint64_t(0xfedcba9876543210)}) {
      const PhiloxCounter words =
          philox4x32_10({uint32_t(index), uint32_t(index >> 32), 0, 0},
                        {uint32_t(seed), uint32_t(seed >> 32)});
      CHECK(dropoutBits(seed, index) == words[0]);
      CHECK(dropoutUniform(seed, index) ==
            static_cast<float>(words[0] >> 8) * 0x1p-24f);
    }
  // The seed's and the index's high words are used.
  CHECK(dropoutBits(1, 5) != dropoutBits(1 + (uint64_t(1) << 32), 5));
  CHECK(dropoutBits(1, 5) != dropoutBits(1, 5 + (uint64_t(1) << 32)));
}

TEST_CASE("dropoutUniform lies in 0 to 1 with mean 1/2", "[support][philox]") {
  const int n = 100000;
  double sum = 0;
  float lo = 1, hi = 0;
  for (int i = 0; i < n; ++i) {
    const float u = dropoutUniform(42, i);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
  }
  CHECK(lo >= 0.0f);
  CHECK(hi < 1.0f);
  CHECK(lo < 0.001f); // the whole range is reached
  CHECK(hi > 0.999f);
  CHECK(std::fabs(sum / n - 0.5) < 0.01);
}

TEST_CASE("dropoutKeep keeps a fraction 1 - p", "[support][philox]") {
  const int n = 100000;
  for (float p : {0.1f, 0.25f, 0.5f, 0.9f}) {
    for (uint64_t seed : {uint64_t(1), uint64_t(0xdeadbeefcafe)}) {
      int kept = 0;
      for (int i = 0; i < n; ++i)
        kept += dropoutKeep(seed, i, p) ? 1 : 0;
      INFO("p = " << p << ", seed = " << seed);
      CHECK(std::fabs(double(kept) / n - (1.0 - p)) < 0.01);
    }
  }
}

TEST_CASE("dropoutKeep: p = 0 keeps all, p = 1 keeps none, u >= p decides",
          "[support][philox]") {
  int wrong = 0;
  for (int i = 0; i < 10000; ++i) {
    wrong += !dropoutKeep(7, i, 0.0f);
    wrong += dropoutKeep(7, i, 1.0f);
    // The boundary: exactly u is kept, the next float above u is not.
    const float u = dropoutUniform(7, i);
    wrong += !dropoutKeep(7, i, u);
    wrong += dropoutKeep(7, i, std::nextafter(u, 2.0f));
  }
  CHECK(wrong == 0);
}

TEST_CASE("dropout masks are deterministic and depend on the seed",
          "[support][philox]") {
  int differ = 0;
  int unstable = 0;
  for (int i = 0; i < 1000; ++i) {
    unstable += dropoutBits(99, i) != dropoutBits(99, i);
    unstable += dropoutKeep(99, i, 0.5f) != dropoutKeep(99, i, 0.5f);
    differ += dropoutKeep(99, i, 0.5f) != dropoutKeep(100, i, 0.5f);
  }
  CHECK(unstable == 0);
  // Independent masks differ in about half the places.
  CHECK(differ > 400);
  CHECK(differ < 600);
}

TEST_CASE("uniformInput uses the documented counter and key",
          "[support][philox]") {
  const uint64_t seed = 0x0123456789abcdefull;
  const uint64_t stream = (uint64_t(3) << 32) | 5;
  const uint64_t index = 0x100000002ull;
  const PhiloxCounter words =
      philox4x32_10({uint32_t(index), uint32_t(index >> 32), uint32_t(stream),
                     uint32_t(stream >> 32)},
                    {uint32_t(seed), uint32_t(seed >> 32) ^ 0x436f436fu});
  const double u = static_cast<double>(words[0] >> 8) * 0x1p-24;
  CHECK(uniformInput(seed, stream, index) == 2 * u - 1);
  CHECK(uniformInputBits(seed, stream, index) ==
        ((uint64_t(words[2]) << 32) | words[1]));
}

TEST_CASE("uniformInput lies in -1 to 1 and streams differ",
          "[support][philox]") {
  const int n = 100000;
  double sum = 0;
  double lo = 1, hi = -1;
  int offGrid = 0;
  for (int i = 0; i < n; ++i) {
    const double v = uniformInput(11, 0, i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    // 24 random bits: 2u - 1 is a multiple of 2^-23.
    offGrid += std::ldexp(v, 23) != std::floor(std::ldexp(v, 23));
    sum += v;
  }
  CHECK(lo >= -1.0);
  CHECK(hi < 1.0);
  CHECK(lo < -0.999);
  CHECK(hi > 0.999);
  CHECK(offGrid == 0);
  CHECK(std::fabs(sum / n) < 0.01);

  // Distinct streams (low and high words), seeds and indices give
  // different values.
  std::set<double> values;
  for (uint64_t stream : {uint64_t(0), uint64_t(1), uint64_t(2),
                          uint64_t(1) << 32, (uint64_t(2) << 32) | 2})
    for (uint64_t seed : {uint64_t(7), uint64_t(7) | (uint64_t(1) << 40)})
      values.insert(uniformInput(seed, stream, 3));
  CHECK(values.size() == 10);
  CHECK(uniformInput(7, 0, 3) != uniformInput(7, 0, 4));
  CHECK(uniformInput(7, 0, 3) == uniformInput(7, 0, 3));

  // The key tweak separates inputs from dropout under the same seed.
  int same = 0;
  for (int i = 0; i < 1000; ++i)
    same += uniformInput(5, 0, i) == 2.0 * dropoutUniform(5, i) - 1.0;
  CHECK(same < 5);
}

TEST_CASE("uniformInputBits covers 64 bits", "[support][philox]") {
  std::set<uint64_t> seen;
  bool highSet = false, lowHalfSet = false;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t bits = uniformInputBits(3, 9, i);
    seen.insert(bits);
    highSet |= (bits >> 63) != 0;
    lowHalfSet |= (bits & 0xffffffffu) != 0;
  }
  CHECK(seen.size() == 1000);
  CHECK(highSet);
  CHECK(lowHalfSet);
  CHECK(uniformInputBits(3, 9, 0) != uniformInputBits(3, 10, 0));
}
