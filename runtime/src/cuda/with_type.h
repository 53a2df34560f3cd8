//===- with_type.h - a dtype's CUDA storage type, once -----------*- C++
//-*-===//
//
// Private to the CUDA runtime (team_collectives.cu, reduce.cu): calls a
// function with a value of the storage type of an element type, so that
// one switch turns a run-time DType into a template instantiation.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_CUDA_WITH_TYPE_H
#define COCONET_RUNTIME_SRC_CUDA_WITH_TYPE_H

#include "coconet/status.h"
#include "coconet/types.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace coconet::rt::cuda {

/// Calls `f` with a value of the storage type of `dtype` (__half,
/// __nv_bfloat16, float, double, int32_t, int64_t, uint64_t, bool).
template <typename F> Status withType(DType dtype, F &&f) {
  switch (dtype) {
  case DType::F16:
    return f(__half());
  case DType::BF16:
    return f(__nv_bfloat16());
  case DType::F32:
    return f(float());
  case DType::F64:
    return f(double());
  case DType::I32:
    return f(int32_t());
  case DType::I64:
    return f(int64_t());
  case DType::U64:
    return f(uint64_t());
  case DType::Bool:
    return f(bool());
  }
  return Status::error(StatusCode::InvalidArgument, "unknown element type");
}

} // namespace coconet::rt::cuda

#endif // COCONET_RUNTIME_SRC_CUDA_WITH_TYPE_H
