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
//     simulator's generated inputs (docs/language.md states the layouts);
//   - the elementwise operations that are formulas (gelu, silu, rsqrt, the
//     float relu and abs), each written once at the end of this file over
//     basic operations rounded as the targets round them.
// Header-only, C++17, no dependencies; every function is usable in CUDA
// device code (COCONET_HD).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_NUMERIC_H
#define COCONET_RUNTIME_NUMERIC_H

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define COCONET_HD __host__ __device__ __forceinline__
#else
#define COCONET_HD inline
#endif

// A loop with a constant trip count unrolled completely: inside a loop over
// elements, GCC vectorises only an innermost loop, so a short fixed loop
// (Philox's rounds) must become straight-line code (GCC, clang, nvcc's
// device pass; nothing in nvcc's host pass).
#if defined(__CUDA_ARCH__) || (defined(__clang__) && !defined(__CUDACC__))
#define COCONET_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__CUDACC__)
#define COCONET_UNROLL _Pragma("GCC unroll 16")
#else // nvcc's host pass: its front end knows neither spelling
#define COCONET_UNROLL
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

// --- max and min -------------------------------------------------------------

COCONET_HD float maxNumber(float a, float b);
COCONET_HD double maxNumber(double a, double b);
COCONET_HD float minNumber(float a, float b);
COCONET_HD double minNumber(double a, double b);

// --- Combining the members of a collective ---------------------------------
// The sum and the product of two members' values (accumulated in f64) with
// a defined NaN: when an operand is NaN the result is the first NaN operand,
// made quiet. (Which payload an IEEE operation on two NaNs returns is left
// to the hardware, and a vector instruction may take its operands in either
// order; a reduction's bits must not depend on how it was compiled.)

COCONET_HD double combineAdd(double acc, double value);
COCONET_HD double combineMul(double acc, double value);

// --- Integers ----------------------------------------------------------------
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

// --- Philox4x32-10 -----------------------------------------------------------

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

// --- Basic float operations --------------------------------------------------
// What the formulas below are written with. Arithmetic and sqrt round once,
// to nearest even, and are never contracted into a fused multiply-add: on a
// GPU they are the _rn intrinsics; host code that includes this header is
// compiled with -ffp-contract=off (the simulator and generated code both
// are). exp, log, tanh and erf are the platform's: the C library's on the
// host (so the simulator and the CPU target agree bit for bit), CUDA's on a
// GPU (within a few ulp).

COCONET_HD float addRn(float a, float b);
COCONET_HD double addRn(double a, double b);
COCONET_HD float subRn(float a, float b);
COCONET_HD double subRn(double a, double b);
COCONET_HD float mulRn(float a, float b);
COCONET_HD double mulRn(double a, double b);
COCONET_HD float divRn(float a, float b);
COCONET_HD double divRn(double a, double b);
COCONET_HD float sqrtRn(float x);
COCONET_HD double sqrtRn(double x);
COCONET_HD float mathExp(float x);
COCONET_HD double mathExp(double x);
COCONET_HD float mathErf(float x);
COCONET_HD double mathErf(double x);
COCONET_HD float mathAbs(float x);
COCONET_HD double mathAbs(double x);
COCONET_HD bool isNaN(float x);
COCONET_HD bool isNaN(double x);

} // namespace coconet::rt

// The definitions follow in one place, so the declarations above read as
// the contract.
#include "coconet/numeric_impl.h"

namespace coconet::rt {

// --- Elementwise formulas ----------------------------------------------------
// The operations of the language that are formulas over basic operations,
// each defined once, here, for float (f16, bf16 and f32 values compute in
// float) and double: ir/ScalarOps.def names them (FORMULA_OP, and the float
// side of NUM_OP), the simulator calls them and generated code on both
// targets prints a call of them (coconet::rt::ops::gelu(x)). They live in
// their own namespace because some of their names are also C or CUDA math
// functions. docs/adding-an-op.md adds one.

namespace ops {

/// rsqrt(x) = 1 / sqrt(x).
COCONET_HD float rsqrt(float x) { return divRn(1.0f, sqrtRn(x)); }
COCONET_HD double rsqrt(double x) { return divRn(1.0, sqrtRn(x)); }

/// gelu(x) = 0.5·x·(1 + erf(x/√2)), the exact (erf) form, evaluated as
/// (0.5·x)·(1 + erf(x·c)) with c = 1/√2 rounded to the type.
COCONET_HD float gelu(float x) {
  return mulRn(mulRn(0.5f, x),
               addRn(1.0f, mathErf(mulRn(x, 0.70710678118654752440f))));
}
COCONET_HD double gelu(double x) {
  return mulRn(mulRn(0.5, x),
               addRn(1.0, mathErf(mulRn(x, 0.70710678118654752440))));
}

/// silu(x) = x / (1 + exp(-x)).
COCONET_HD float silu(float x) { return divRn(x, addRn(1.0f, mathExp(-x))); }
COCONET_HD double silu(double x) { return divRn(x, addRn(1.0, mathExp(-x))); }

/// sigmoid(x) = 1 / (1 + exp(-x)).
COCONET_HD float sigmoid(float x) {
  return divRn(1.0f, addRn(1.0f, mathExp(-x)));
}
COCONET_HD double sigmoid(double x) {
  return divRn(1.0, addRn(1.0, mathExp(-x)));
}

/// relu(x) = max(x, 0) of a float; a NaN stays NaN.
COCONET_HD float relu(float x) { return x > 0.0f || isNaN(x) ? x : 0.0f; }
COCONET_HD double relu(double x) { return x > 0.0 || isNaN(x) ? x : 0.0; }

/// |x| of a float (intAbs is the integers').
COCONET_HD float abs(float x) { return mathAbs(x); }
COCONET_HD double abs(double x) { return mathAbs(x); }

} // namespace ops
} // namespace coconet::rt

#endif // COCONET_RUNTIME_NUMERIC_H
