//===- status.cpp - CUDA, NCCL and cuBLAS failures as a Status ------------===//

#include "coconet/cuda/runtime.h"

#include "../call_status.h"

namespace coconet::rt::cuda {

Status cudaStatus(cudaError_t err, const char *call, const char *file,
                  int line) {
  return detail::callFailed(StatusCode::CudaError, call,
                            cudaGetErrorString(err), file, line);
}

Status ncclStatus(ncclResult_t err, const char *call, const char *file,
                  int line) {
  std::string reason = ncclGetErrorString(err);
  // NCCL keeps a more precise message of the last failure on this thread.
  if (const char *last = ncclGetLastError(nullptr); last && *last)
    reason += ": " + std::string(last);
  return detail::callFailed(StatusCode::NcclError, call, reason, file, line);
}

Status cublasStatus(cublasStatus_t err, const char *call, const char *file,
                    int line) {
  return detail::callFailed(StatusCode::CublasError, call,
                            cublasGetStatusString(err), file, line);
}

ncclDataType_t ncclType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  case DType::U64:
    return ncclUint64;
  case DType::Bool:
    break;
  }
  return ncclUint8; // bool: one byte
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Prod:
    return ncclProd;
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  case ReduceOp::Avg:
    break;
  }
  return ncclAvg;
}

} // namespace coconet::rt::cuda
