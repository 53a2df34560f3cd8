//===- Philox.h - Philox4x32-10 and the dropout mask ------------*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11) is a counter-based generator: its output is a pure function of
// a 128-bit counter and a 64-bit key, so a GPU thread can compute the bits
// of element i without any state. The simulator and the generated kernels
// use the same functions, so dropout masks agree bit for bit.
//
// Dropout of the element with global (row-major) index i under seed s:
//   counter = {lo32(i), hi32(i), 0, 0}, key = {lo32(s), hi32(s)}
//   bits    = philox4x32_10(counter, key)[0]
//   u       = (bits >> 8) * 2^-24          (uniform in [0, 1), 24 bits)
//   keep    = u >= p
// A kept element becomes x / (1 - p) (computed in f32), a dropped one 0.
//
// These wrap the runtime's definitions (runtime/include/coconet/numeric.h),
// which generated kernels use too.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SUPPORT_PHILOX_H
#define COCONET_SUPPORT_PHILOX_H

#include <array>
#include <cstdint>

namespace coconet::support {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Ten rounds of Philox4x32.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

/// The 32 random bits of element `index` under `seed`.
uint32_t dropoutBits(uint64_t seed, uint64_t index);
/// The uniform number in [0, 1) of element `index` under `seed`.
float dropoutUniform(uint64_t seed, uint64_t index);
/// Whether element `index` is kept with drop probability `p`.
bool dropoutKeep(uint64_t seed, uint64_t index, float p);

/// Deterministic inputs of the simulator: a number in [-1, 1) that depends
/// only on (seed, stream, index). counter = {lo(index), hi(index), lo(stream),
/// hi(stream)}, key = {lo(seed), hi(seed) ^ 0x436f436f}; u from word 0 as in
/// dropoutUniform, result 2u - 1.
double uniformInput(uint64_t seed, uint64_t stream, uint64_t index);
/// 64 random bits under the same counter/key scheme (words 1 and 2).
uint64_t uniformInputBits(uint64_t seed, uint64_t stream, uint64_t index);

} // namespace coconet::support

#endif // COCONET_SUPPORT_PHILOX_H
