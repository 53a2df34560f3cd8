//===- types.h - element types and reduction operators ----------*- C++ -*-===//
//
// The runtime's names for the language's element types and collective
// reduction operators, and the CPU target's storage types for f16 and bf16
// (16-bit patterns; arithmetic converts to float, as on a GPU). Host-only
// except for the storage types, which are plain structs.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_TYPES_H
#define COCONET_RUNTIME_TYPES_H

#include "coconet/numeric.h"

#include <cstddef>
#include <cstdint>

namespace coconet::rt {

/// Element types (coconet/dtypes.def; the compiler's ir::DType has the
/// same values).
enum class DType {
#define DTYPE(Name, Printed, Bytes, Kind) Name,
#include "coconet/dtypes.def"
};
/// Bytes of one element (bool: 1).
size_t dtypeSize(DType dtype);
/// "f16", "bf16", "f32", ...
const char *dtypeName(DType dtype);
bool isFloat(DType dtype);

/// Reduction operators of collectives (coconet/reduce_ops.def; the
/// compiler's ir::ReduceOp has the same values).
enum class ReduceOp {
#define REDUCE_OP(Name, Printed) Name,
#include "coconet/reduce_ops.def"
};
const char *reduceOpName(ReduceOp op);

/// An f16 value stored as its bits (the CPU target's storage type).
struct Half {
  uint16_t bits;
};
/// A bf16 value stored as its bits.
struct BFloat16 {
  uint16_t bits;
};
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2,
              "16-bit storage types");

inline float toFloat(Half h) { return halfBitsToFloat(h.bits); }
inline float toFloat(BFloat16 h) { return bfloat16BitsToFloat(h.bits); }
/// Round to nearest even, from float or (once) from double.
inline Half toHalf(float v) { return Half{floatToHalfBits(v)}; }
inline Half toHalf(double v) { return Half{doubleToHalfBits(v)}; }
inline BFloat16 toBFloat16(float v) { return BFloat16{floatToBFloat16Bits(v)}; }
inline BFloat16 toBFloat16(double v) {
  return BFloat16{doubleToBFloat16Bits(v)};
}

} // namespace coconet::rt

#endif // COCONET_RUNTIME_TYPES_H
