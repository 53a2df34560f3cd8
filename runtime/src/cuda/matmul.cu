//===- matmul.cu - the CUDA target's matmul -------------------------------===//
//
// Row-major C = A x B is column-major C^T = B^T x A^T, so cuBLAS is called
// with the operands swapped: gemm(n, m, k, B, A). f16 and bf16 inputs and
// outputs accumulate in f32 (CUBLAS_COMPUTE_32F), f32 in f32 without TF32,
// f64 in f64. Integers (and bool) use a grid-stride kernel that sums the K
// products of each element in ascending order in wrapping 64-bit
// arithmetic, as the simulator does, and wraps to the element's width. A
// batch with strideB == 0 reuses B for every batch entry.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/kernels.h"
#include "coconet/cuda/runtime.h"
#include "coconet/numeric.h"

#include <climits>

namespace coconet::rt::cuda {

namespace {

/// An integer or bool element widened as the simulator holds it.
template <typename T> __device__ __forceinline__ uint64_t widen(T v) {
  if constexpr (sizeof(T) == 1)
    return v != 0; // bool
  else
    return static_cast<uint64_t>(static_cast<int64_t>(v));
}

template <typename T> __device__ __forceinline__ T narrow(uint64_t v) {
  if constexpr (sizeof(T) == 1)
    return v != 0; // bool
  else
    return static_cast<T>(v); // keeps the low bits: wraps
}

template <typename T>
__global__ void integerMatmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                              const T *a, int64_t strideA, const T *b,
                              int64_t strideB, T *c, int64_t strideC) {
  const int64_t perBatch = m * n, total = batch * perBatch;
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       index < total; index += int64_t(gridDim.x) * blockDim.x) {
    const int64_t bi = index / perBatch, rest = index % perBatch;
    const int64_t i = rest / n, j = rest % n;
    const T *row = a + bi * strideA + i * k;
    const T *column = b + bi * strideB + j;
    uint64_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      sum = wrapAdd(sum, wrapMul(widen(row[kk]), widen(column[kk * n])));
    c[bi * strideC + i * n + j] = narrow<T>(sum);
  }
}

template <typename T>
Status launchIntegerMatmul(cudaStream_t stream, int64_t batch, int64_t m,
                           int64_t n, int64_t k, const void *a, int64_t strideA,
                           const void *b, int64_t strideB, void *c,
                           int64_t strideC) {
  constexpr int kThreads = 256;
  const int64_t total = batch * m * n;
  const int64_t wanted = (total + kThreads - 1) / kThreads;
  const unsigned blocks =
      static_cast<unsigned>(wanted < 4096 ? (wanted < 1 ? 1 : wanted) : 4096);
  COCONET_CUDA_CHECK(kernels::cc_launch(
      integerMatmul<T>, blocks, kThreads, 0, stream, batch, m, n, k,
      static_cast<const T *>(a), strideA, static_cast<const T *>(b), strideB,
      static_cast<T *>(c), strideC));
  return Status::success();
}

/// Restores a handle's pointer mode when it goes out of scope.
class PointerModeGuard {
public:
  explicit PointerModeGuard(cublasHandle_t handle) : handle(handle) {}
  Status setHost() {
    COCONET_CUBLAS_CHECK(cublasGetPointerMode(handle, &saved));
    COCONET_CUBLAS_CHECK(
        cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
    restore = true;
    return Status::success();
  }
  ~PointerModeGuard() {
    if (restore)
      cublasSetPointerMode(handle, saved);
  }

private:
  cublasHandle_t handle;
  cublasPointerMode_t saved = CUBLAS_POINTER_MODE_HOST;
  bool restore = false;
};

} // namespace

Status matmul(cublasHandle_t handle, cudaStream_t stream, DType dtype,
              int64_t batch, int64_t m, int64_t n, int64_t k, const void *a,
              int64_t strideA, const void *b, int64_t strideB, void *c,
              int64_t strideC) {
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "matmul: negative extent");
  if (batch == 0 || m == 0 || n == 0)
    return Status::success();
  const size_t size = dtypeSize(dtype);
  if (k == 0) {
    // Sums of nothing: +0 everywhere (cuBLAS would not touch C).
    COCONET_CUDA_CHECK(cudaMemset2DAsync(c, static_cast<size_t>(strideC) * size,
                                         0, static_cast<size_t>(m * n) * size,
                                         static_cast<size_t>(batch), stream));
    return Status::success();
  }

  switch (dtype) {
  case DType::I32:
    return launchIntegerMatmul<int32_t>(stream, batch, m, n, k, a, strideA, b,
                                        strideB, c, strideC);
  case DType::I64:
    return launchIntegerMatmul<int64_t>(stream, batch, m, n, k, a, strideA, b,
                                        strideB, c, strideC);
  case DType::U64:
    return launchIntegerMatmul<uint64_t>(stream, batch, m, n, k, a, strideA, b,
                                         strideB, c, strideC);
  case DType::Bool:
    return launchIntegerMatmul<uint8_t>(stream, batch, m, n, k, a, strideA, b,
                                        strideB, c, strideC);
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
    break;
  }

  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX)
    return Status::error(StatusCode::InvalidArgument,
                         "matmul: an extent exceeds INT_MAX, cuBLAS's limit");
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  const float alpha32 = 1, beta32 = 0;
  const double alpha64 = 1, beta64 = 0;
  const void *alpha = &alpha32, *beta = &beta32;
  if (dtype == DType::F16) {
    type = CUDA_R_16F;
  } else if (dtype == DType::BF16) {
    type = CUDA_R_16BF;
  } else if (dtype == DType::F64) {
    type = CUDA_R_64F;
    compute = CUBLAS_COMPUTE_64F;
    alpha = &alpha64;
    beta = &beta64;
  }
  PointerModeGuard guard(handle);
  COCONET_RETURN_IF_ERROR(guard.setHost());
  const int im = static_cast<int>(m), in = static_cast<int>(n),
            ik = static_cast<int>(k);
  COCONET_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, alpha, b, type, in, strideB,
      a, type, ik, strideA, beta, c, type, in, strideC, static_cast<int>(batch),
      compute, CUBLAS_GEMM_DEFAULT));
  return Status::success();
}

} // namespace coconet::rt::cuda
