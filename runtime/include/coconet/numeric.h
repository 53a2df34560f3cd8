//===- numeric.h - the numeric semantics shared by every target -*- C++ -*-===//
//
// One definition, used by the simulator (compiler/support wraps these), the
// CPU target and the CUDA target (host and device), of everything whose
// bits must agree between them:
//   - f16 and bf16: round to nearest even, from float or (once) from double;
//     NaN stays NaN (quiet, sign and top payload bits kept);
//   - float max/min: IEEE 754-2019 maximumNumber/minimumNumber (-0 < +0, a
//     NaN operand ignored unless both are NaN);
//   - integer arithmetic: wraps at the type's width; x / 0 == 0;
//     MIN / -1 == MIN; pow by squaring, negative exponents give 0 (1 for a
//     base of 1); float -> integer casts truncate, saturate and map NaN to 0;
//   - Philox4x32-10 and what is derived from it: dropout masks and the
//     simulator's generated inputs (docs/language.md states the layouts).
// Header-only, C++17, no dependencies; every function is usable in CUDA
// device code (COCONET_HD).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_NUMERIC_H
#define COCONET_RUNTIME_NUMERIC_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define COCONET_HD __host__ __device__ __forceinline__
#else
#define COCONET_HD inline
#endif

namespace coconet::rt {

// --- Bit casts -------------------------------------------------------------

COCONET_HD uint32_t floatBits(float value);
COCONET_HD float floatFromBits(uint32_t bits);
COCONET_HD uint64_t doubleBits(double value);
COCONET_HD double doubleFromBits(uint64_t bits);

// --- f16 and bf16 ------------------------------------------------------------

/// float -> binary16 bits, round to nearest even.
COCONET_HD uint16_t floatToHalfBits(float value);
/// double -> binary16 bits, rounding once.
COCONET_HD uint16_t doubleToHalfBits(double value);
/// binary16 bits -> float (exact).
COCONET_HD float halfBitsToFloat(uint16_t bits);
/// float -> bfloat16 bits, round to nearest even.
COCONET_HD uint16_t floatToBFloat16Bits(float value);
/// double -> bfloat16 bits, rounding once.
COCONET_HD uint16_t doubleToBFloat16Bits(double value);
/// bfloat16 bits -> float (exact).
COCONET_HD float bfloat16BitsToFloat(uint16_t bits);
/// Rounds to the nearest f16 / bf16 value and widens it back.
COCONET_HD float roundToHalf(float value);
COCONET_HD double roundToHalf(double value);
COCONET_HD float roundToBFloat16(float value);
COCONET_HD double roundToBFloat16(double value);

// --- max and min ---------------------------------------------------------------

COCONET_HD float maxNumber(float a, float b);
COCONET_HD double maxNumber(double a, double b);
COCONET_HD float minNumber(float a, float b);
COCONET_HD double minNumber(double a, double b);

// --- Integers --------------------------------------------------------------------
// T is int32_t, int64_t or uint64_t. Arithmetic is done on the unsigned
// type of T's width, so it wraps and is never undefined.

template <typename T> COCONET_HD T wrapAdd(T a, T b);
template <typename T> COCONET_HD T wrapSub(T a, T b);
template <typename T> COCONET_HD T wrapMul(T a, T b);
template <typename T> COCONET_HD T wrapNeg(T a);
/// a / b truncated; 0 when b == 0; the most negative value / -1 wraps.
template <typename T> COCONET_HD T intDiv(T a, T b);
/// a to the power b by squaring, wrapping; b < 0 gives 0 (1 when a == 1).
template <typename T> COCONET_HD T intPow(T a, T b);
/// |a|, wrapping (the most negative value is its own absolute value).
template <typename T> COCONET_HD T intAbs(T a);
/// max(a, 0).
template <typename T> COCONET_HD T intRelu(T a);
/// Truncates toward zero, saturates at T's range, NaN -> 0.
template <typename T> COCONET_HD T floatToInt(double value);

// --- Philox4x32-10 ------------------------------------------------------------------

struct PhiloxCounter {
  uint32_t v[4];
};
struct PhiloxKey {
  uint32_t v[2];
};
/// Ten rounds of Philox4x32 (Random123's constants).
COCONET_HD PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

/// Dropout of the element with global row-major index `index` under `seed`:
/// counter {lo(index), hi(index), 0, 0}, key {lo(seed), hi(seed)}, word 0.
COCONET_HD uint32_t dropoutBits(uint64_t seed, uint64_t index);
/// (bits >> 8) * 2^-24: uniform in [0, 1), exact in float.
COCONET_HD float dropoutUniform(uint64_t seed, uint64_t index);
/// The element is kept (and scaled by 1 / (1 - p)) when uniform >= p.
COCONET_HD bool dropoutKeep(uint64_t seed, uint64_t index, float p);

/// The simulator's generated inputs: a number in [-1, 1) that depends only
/// on (seed, stream, index): counter {lo(index), hi(index), lo(stream),
/// hi(stream)}, key {lo(seed), hi(seed) ^ 0x436f436f}; u from word 0 as in
/// dropoutUniform, result 2u - 1 (exact).
COCONET_HD double uniformInput(uint64_t seed, uint64_t stream, uint64_t index);
/// 64 random bits under the same counter and key: (word 2 << 32) | word 1.
COCONET_HD uint64_t uniformInputBits(uint64_t seed, uint64_t stream,
                                     uint64_t index);

} // namespace coconet::rt

// The definitions follow in one place, so the declarations above read as
// the contract.
#include "coconet/numeric_impl.h"

#endif // COCONET_RUNTIME_NUMERIC_H
