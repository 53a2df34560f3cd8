//===- cpu/convert.h - f16 and bf16 arrays to float and back ----*- C++ -*-===//
//
// What the CPU target's kernels and collectives convert narrow values with,
// a tile at a time: exactly numeric.h's conversions (round to nearest even;
// NaN quiet with its top payload bits), through F16C (vcvtph2ps /
// vcvtps2ph) where the CPU has it — checked once, at the first call — and
// through numeric.h's branch-free code, which vectorises, otherwise or when
// the environment variable COCONET_CONVERSIONS=portable asks for it.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_CONVERT_H
#define COCONET_RUNTIME_CPU_CONVERT_H

#include "coconet/tile.h"
#include "coconet/types.h"

#include <cstdint>

namespace coconet::rt::cpu {

/// out[i] = the value of in[i], for i < n (exact).
void widen(const Half *in, float *out, int64_t n);
void widen(const BFloat16 *in, float *out, int64_t n);
/// out[i] = in[i] rounded to nearest even, for i < n (exact when in[i] is
/// already a value of the narrow type).
void narrow(const float *in, Half *out, int64_t n);
void narrow(const float *in, BFloat16 *out, int64_t n);

/// A tile of zeros of element type T: what a fused gather's row reads where
/// its index holds a position outside the data (the generated kernels read
/// it in place of the row, so the loop over the row has no select).
template <typename T> inline const T kZeroTile[kTile] = {};

/// How f16 arrays are converted.
enum class ConversionPath { Portable, F16C };
ConversionPath conversionPath();
/// Uses `path` from now on (F16C only where the CPU has it: false, and
/// nothing changes, otherwise). For tests and benchmarks.
bool setConversionPath(ConversionPath path);

} // namespace coconet::rt::cpu

#endif // COCONET_RUNTIME_CPU_CONVERT_H
