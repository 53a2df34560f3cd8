//===- combine.cpp - combining blocks and matmul as the simulator does ----===//
//
// combineBlocks is the simulator's `combine` (compiler/sim/Collectives.cpp)
// on storage types: floats accumulate in f64 in ascending member order and
// round once; integers accumulate in wrapping 64-bit arithmetic (i32
// sign-extended) and wrap to their width; avg divides the f64 sum by the
// number of members. matmul is the simulator's (compiler/sim/Simulator.cpp):
// every element sums its K products in ascending order, in f64 or wrapping
// 64-bit integers, and rounds once. Both are OpenMP-parallel over output
// elements; each element is computed by one thread, in a fixed order, so
// the results do not depend on the number of threads.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"

#include "../element.h"

#include <algorithm>

namespace coconet::rt::cpu {

namespace {

using detail::visitDType;

/// Below this many elements a combination runs on one thread.
constexpr int64_t kParallelThreshold = 1 << 15;

template <typename Traits>
void combineTyped(const typename Traits::T *blocks, int64_t members,
                  typename Traits::T *out, int64_t count, ReduceOp op) {
#pragma omp parallel for if (count >= kParallelThreshold)
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (Traits::kFloat) {
      double acc = Traits::load(blocks[i]);
      for (int64_t m = 1; m < members; ++m) {
        const double v = Traits::load(blocks[m * count + i]);
        switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg:
          acc += v;
          break;
        case ReduceOp::Prod:
          acc *= v;
          break;
        case ReduceOp::Max:
          acc = maxNumber(acc, v);
          break;
        case ReduceOp::Min:
          acc = minNumber(acc, v);
          break;
        }
      }
      if (op == ReduceOp::Avg)
        acc /= static_cast<double>(members);
      out[i] = Traits::store(acc);
    } else {
      uint64_t acc = Traits::load(blocks[i]);
      for (int64_t m = 1; m < members; ++m) {
        const uint64_t v = Traits::load(blocks[m * count + i]);
        switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg: // integers have no avg; the simulator sums
          acc += v;
          break;
        case ReduceOp::Prod:
          acc *= v;
          break;
        case ReduceOp::Max:
        case ReduceOp::Min: {
          const bool max = op == ReduceOp::Max;
          if (Traits::kUnsigned)
            acc = max ? std::max(acc, v) : std::min(acc, v);
          else
            acc =
                static_cast<uint64_t>(max ? std::max(static_cast<int64_t>(acc),
                                                     static_cast<int64_t>(v))
                                          : std::min(static_cast<int64_t>(acc),
                                                     static_cast<int64_t>(v)));
          break;
        }
        }
      }
      out[i] = Traits::store(acc);
    }
  }
}

template <typename Traits>
void matmulTyped(int64_t batch, int64_t m, int64_t n, int64_t k,
                 const typename Traits::T *a, int64_t strideA,
                 const typename Traits::T *b, int64_t strideB,
                 typename Traits::T *c, int64_t strideC) {
  const int64_t perBatch = m * n;
  const int64_t total = batch * perBatch;
#pragma omp parallel for
  for (int64_t index = 0; index < total; ++index) {
    const int64_t bi = index / perBatch, rest = index % perBatch;
    const int64_t i = rest / n, j = rest % n;
    const typename Traits::T *row = a + bi * strideA + i * k;
    const typename Traits::T *column = b + bi * strideB + j;
    typename Traits::T *result = c + bi * strideC + i * n + j;
    if constexpr (Traits::kFloat) {
      double sum = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        sum += Traits::load(row[kk]) * Traits::load(column[kk * n]);
      *result = Traits::store(sum);
    } else {
      uint64_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        sum += Traits::load(row[kk]) * Traits::load(column[kk * n]);
      *result = Traits::store(sum);
    }
  }
}

} // namespace

void combineBlocks(const void *blocks, int64_t members, void *out,
                   int64_t count, DType dtype, ReduceOp op) {
  if (members < 1 || count < 1)
    return;
  visitDType(dtype, [&](auto traits) {
    using Traits = decltype(traits);
    using T = typename Traits::T;
    combineTyped<Traits>(static_cast<const T *>(blocks), members,
                         static_cast<T *>(out), count, op);
  });
}

void matmul(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
            const void *a, int64_t strideA, const void *b, int64_t strideB,
            void *c, int64_t strideC) {
  if (batch < 1 || m < 1 || n < 1 || k < 0)
    return;
  visitDType(dtype, [&](auto traits) {
    using Traits = decltype(traits);
    using T = typename Traits::T;
    matmulTyped<Traits>(batch, m, n, k, static_cast<const T *>(a), strideA,
                        static_cast<const T *>(b), strideB, static_cast<T *>(c),
                        strideC);
  });
}

} // namespace coconet::rt::cpu
