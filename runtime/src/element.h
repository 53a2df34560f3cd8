//===- element.h - elements stored as the simulator holds them -*- C++ -*-===//
//
// Private to the runtime. The simulator holds a float element as the
// double it is exactly equal to and an integer or bool element as a 64-bit
// pattern (sign-extended for i32, 0 or 1 for bool); storing rounds a double
// once to the element type, or wraps an integer to its width. These traits
// do the same on the runtime's storage types (f16/bf16 as their bits, bool
// as one byte), so that the CPU collectives, matmul and the driver compute
// exactly the simulator's values (coconet/combine.h). visitDType
// dispatches once per call, not per element.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_ELEMENT_H
#define COCONET_RUNTIME_SRC_ELEMENT_H

#include "coconet/combine.h"
#include "coconet/types.h"

#include <cstdint>

namespace coconet::rt::detail {

// The traits of each element type are coconet/combine.h's Element<T>
// (the CUDA target's team kernels use the same).
using F16Traits = Element<Half>;
using BF16Traits = Element<BFloat16>;
using F32Traits = Element<float>;
using F64Traits = Element<double>;
using I32Traits = Element<int32_t>;
using I64Traits = Element<int64_t>;
using U64Traits = Element<uint64_t>;
/// Any non-zero byte reads as true; stores 0 or 1.
using BoolTraits = Element<uint8_t>;

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
