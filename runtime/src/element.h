//===- element.h - elements stored as the simulator holds them -*- C++ -*-===//
//
// Private to the runtime. The simulator holds a float element as the
// double it is exactly equal to and an integer or bool element as a 64-bit
// pattern (sign-extended for i32, 0 or 1 for bool); storing rounds a double
// once to the element type, or wraps an integer to its width. These traits
// do the same on the runtime's storage types (f16/bf16 as their bits, bool
// as one byte), so that the CPU collectives, matmul and the driver compute
// exactly the simulator's values. visitDType dispatches once per call, not
// per element.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_ELEMENT_H
#define COCONET_RUNTIME_SRC_ELEMENT_H

#include "coconet/numeric.h"
#include "coconet/types.h"

#include <cstdint>

namespace coconet::rt::detail {

struct F16Traits {
  using T = Half;
  static constexpr bool kFloat = true;
  static double load(T v) { return halfBitsToFloat(v.bits); }
  static T store(double v) { return Half{doubleToHalfBits(v)}; }
};
struct BF16Traits {
  using T = BFloat16;
  static constexpr bool kFloat = true;
  static double load(T v) { return bfloat16BitsToFloat(v.bits); }
  static T store(double v) { return BFloat16{doubleToBFloat16Bits(v)}; }
};
struct F32Traits {
  using T = float;
  static constexpr bool kFloat = true;
  static double load(T v) { return v; }
  static T store(double v) { return static_cast<float>(v); }
};
struct F64Traits {
  using T = double;
  static constexpr bool kFloat = true;
  static double load(T v) { return v; }
  static T store(double v) { return v; }
};
struct I32Traits {
  using T = int32_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = false;
  static uint64_t load(T v) { return static_cast<uint64_t>(int64_t(v)); }
  static T store(uint64_t v) { return static_cast<int32_t>(uint32_t(v)); }
};
struct I64Traits {
  using T = int64_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = false;
  static uint64_t load(T v) { return static_cast<uint64_t>(v); }
  static T store(uint64_t v) { return static_cast<int64_t>(v); }
};
struct U64Traits {
  using T = uint64_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = true;
  static uint64_t load(T v) { return v; }
  static T store(uint64_t v) { return v; }
};
/// Any non-zero byte reads as true; stores 0 or 1.
struct BoolTraits {
  using T = uint8_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = false;
  static uint64_t load(T v) { return v != 0; }
  static T store(uint64_t v) { return v != 0; }
};

/// Calls f(Traits{}) for the traits of `dtype`.
template <typename F> decltype(auto) visitDType(DType dtype, F &&f) {
  switch (dtype) {
  case DType::F16:
    return f(F16Traits{});
  case DType::BF16:
    return f(BF16Traits{});
  case DType::F32:
    return f(F32Traits{});
  case DType::F64:
    return f(F64Traits{});
  case DType::I32:
    return f(I32Traits{});
  case DType::I64:
    return f(I64Traits{});
  case DType::U64:
    return f(U64Traits{});
  case DType::Bool:
    break;
  }
  return f(BoolTraits{});
}

} // namespace coconet::rt::detail

#endif // COCONET_RUNTIME_SRC_ELEMENT_H
