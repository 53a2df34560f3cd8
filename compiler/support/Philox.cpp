//===- Philox.cpp - Philox4x32-10 and the dropout mask --------------------===//
//
// Philox4x32-10 as in Random123's philox.h: ten rounds of
//
//   (hi0, lo0) = mulhilo(0xD2511F53, c0)
//   (hi1, lo1) = mulhilo(0xCD9E8D57, c2)
//   c = {hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0}
//
// with the key bumped by the Weyl constants {0x9E3779B9, 0xBB67AE85}
// between rounds. The derived functions follow the layouts in Philox.h.
//
//===----------------------------------------------------------------------===//

#include "support/Philox.h"

namespace coconet::support {

namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53u;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u; // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u; // sqrt(3) - 1
/// Mixed into the high key word of uniformInput ("CoCo") so that inputs and
/// dropout masks drawn under the same seed use different keys.
constexpr uint32_t kInputKeyTweak = 0x436f436fu;

constexpr uint32_t lo32(uint64_t x) { return static_cast<uint32_t>(x); }
constexpr uint32_t hi32(uint64_t x) { return static_cast<uint32_t>(x >> 32); }

/// 24 random bits as a float in [0, 1): (bits >> 8) * 2^-24, exact.
float unitFromBits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * 0x1p-24f;
}

PhiloxCounter inputBlock(uint64_t seed, uint64_t stream, uint64_t index) {
  return philox4x32_10({lo32(index), hi32(index), lo32(stream), hi32(stream)},
                       {lo32(seed), hi32(seed) ^ kInputKeyTweak});
}

} // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  PhiloxCounter c = counter;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    const uint64_t p0 = uint64_t(kMultiplier0) * c[0];
    const uint64_t p1 = uint64_t(kMultiplier1) * c[2];
    c = {hi32(p1) ^ c[1] ^ key[0], lo32(p1), hi32(p0) ^ c[3] ^ key[1],
         lo32(p0)};
  }
  return c;
}

uint32_t dropoutBits(uint64_t seed, uint64_t index) {
  return philox4x32_10({lo32(index), hi32(index), 0, 0},
                       {lo32(seed), hi32(seed)})[0];
}

float dropoutUniform(uint64_t seed, uint64_t index) {
  return unitFromBits(dropoutBits(seed, index));
}

bool dropoutKeep(uint64_t seed, uint64_t index, float p) {
  return dropoutUniform(seed, index) >= p;
}

double uniformInput(uint64_t seed, uint64_t stream, uint64_t index) {
  const double u = unitFromBits(inputBlock(seed, stream, index)[0]);
  return 2 * u - 1; // exact: u has 24 bits
}

uint64_t uniformInputBits(uint64_t seed, uint64_t stream, uint64_t index) {
  const PhiloxCounter c = inputBlock(seed, stream, index);
  return (uint64_t(c[2]) << 32) | c[1];
}

} // namespace coconet::support
