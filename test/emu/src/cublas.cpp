//===- cublas.cpp - the cuBLAS calls the runtime's matmul makes -----------===//
//
// Against the real cublas_api.h: a handle holds its stream and pointer
// mode; cublasGemmStridedBatchedEx runs, in order on the handle's stream,
// the CPU runtime's matmul, which sums each element's products in
// ascending k order in f64 and rounds once, as the simulator does (real
// cuBLAS accumulates f16 and bf16 in f32). Only what coconet's matmul asks
// for is emulated: no transposes, tight leading dimensions, alpha 1 and
// beta 0, one element type; anything else is refused
// (CUBLAS_STATUS_NOT_SUPPORTED) with a message.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"
#include "coconet/emu/device.h"
#include "emu_internal.h"

#include <cublas_v2.h>

#include <cstdio>
#include <string>

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
};

namespace {

cublasStatus_t refuse(const std::string &what) {
  std::fprintf(stderr, "cublas emulation: %s\n", what.c_str());
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

bool dtypeOf(cudaDataType t, coconet::rt::DType *out) {
  switch (t) {
  case CUDA_R_16F:
    *out = coconet::rt::DType::F16;
    return true;
  case CUDA_R_16BF:
    *out = coconet::rt::DType::BF16;
    return true;
  case CUDA_R_32F:
    *out = coconet::rt::DType::F32;
    return true;
  case CUDA_R_64F:
    *out = coconet::rt::DType::F64;
    return true;
  default:
    return false;
  }
}

/// Is the scalar at `p` (of the compute type) `value`?
bool scalarIs(const void *p, cublasComputeType_t compute, double value) {
  if (compute == CUBLAS_COMPUTE_64F)
    return *static_cast<const double *>(p) == value;
  return *static_cast<const float *>(p) == static_cast<float>(value);
}

} // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle,
                                       cublasPointerMode_t *mode) {
  *mode = handle->mode;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle,
                                       cublasPointerMode_t mode) {
  handle->mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "success"
                                         : "error (emulated cuBLAS)";
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long strideA, const void *B, cudaDataType Btype, int ldb,
    long long strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
    long long strideC, int batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t) {
  coconet::rt::DType dtype;
  if (Atype != Btype || Atype != Ctype || !dtypeOf(Atype, &dtype))
    return refuse("cublasGemmStridedBatchedEx: mixed or unknown types");
  if (transa != CUBLAS_OP_N || transb != CUBLAS_OP_N)
    return refuse("cublasGemmStridedBatchedEx: a transposed operand");
  if (lda != m || ldb != k || ldc != m)
    return refuse("cublasGemmStridedBatchedEx: leading dimensions other "
                  "than the extents");
  if (handle->mode != CUBLAS_POINTER_MODE_HOST)
    return refuse("cublasGemmStridedBatchedEx: alpha and beta on the device");
  if (!scalarIs(alpha, computeType, 1) || !scalarIs(beta, computeType, 0))
    return refuse("cublasGemmStridedBatchedEx: alpha other than 1 or beta "
                  "other than 0");
  for (const void *p : {A, B, static_cast<const void *>(C)})
    if (!coconet::emu::isDevicePointer(p))
      return refuse("cublasGemmStridedBatchedEx: an operand that is not "
                    "device memory");
  // Column-major C (m x n) = A (m x k) B (k x n) is row-major
  // C^T (n x m) = B^T (n x k) A^T (k x m), with B's and A's memory as is.
  coconet::emu::enqueueTask(handle->stream, [=] {
    coconet::rt::cpu::matmul(dtype, batchCount, n, m, k, B, strideB, A, strideA,
                             C, strideC);
    return cudaSuccess;
  });
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
