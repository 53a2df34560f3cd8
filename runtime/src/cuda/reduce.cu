//===- reduce.cu - reductions in the language's order on a GPU ------------===//
//
// cuda/runtime.h's Reducer: sum, norm, sumsq, max and min of every piece of
// a reduction step (coconet/reduce_pieces.h) in the order
// coconet/reduce_order.h defines, the simulator's, in two kernels:
//
//   1. blockPartials: every block of the grid works; each warp takes one
//      block of terms at a time (its 32 threads are the 32 lanes: thread l
//      adds terms l, l + 32, ... of the block, a warp's loads 128
//      contiguous bytes), then the lane tree in shared memory; the block's
//      partial value goes to its fixed slot. No atomics.
//   2. pieceTrees: one block per piece: thread t evaluates node t at the
//      deepest level with at most kThreads nodes of the piece's block
//      tree, then the perfect tree above them pairwise in shared memory;
//      thread 0 stores the result (a norm's square root, NaN made the
//      canonical NaN, rounded once).
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/runtime.h"

#include "coconet/combine.h"
#include "coconet/cuda/kernels.h"
#include "coconet/cuda/team.h"
#include "coconet/reduce_order.h"

#include "with_type.h"

#include <string>
#include <type_traits>

namespace coconet::rt::cuda {

namespace {

using namespace kernels;
namespace order = reduce_order;

/// Warps (blocks of terms at a time) of one block of kernel 1.
constexpr int kWarps = kThreads / order::kLanes;
static_assert(kThreads % order::kLanes == 0, "whole warps");

// --- What is combined (the CPU runtime's kinds, src/cpu/reduce.cpp) -------

template <bool kSquares> struct FloatSum {
  using Acc = double;
  static constexpr bool kOfFloats = true;
  __device__ static Acc identity() { return 0.0; }
  template <typename T> __device__ static Acc term(T v) {
    const double d = cc_acc<T>::load(v);
    return kSquares ? order::square(d) : d;
  }
  __device__ static Acc combine(Acc a, Acc b) { return __dadd_rn(a, b); }
};
template <bool kMax> struct FloatMaxMin {
  using Acc = double;
  static constexpr bool kOfFloats = true;
  __device__ static Acc identity() { return static_cast<double>(NAN); }
  template <typename T> __device__ static Acc term(T v) {
    return cc_acc<T>::load(v);
  }
  __device__ static Acc combine(Acc a, Acc b) {
    return kMax ? maxNumber(a, b) : minNumber(a, b);
  }
};
struct IntSum {
  using Acc = uint64_t;
  static constexpr bool kOfFloats = false;
  __device__ static Acc identity() { return 0; }
  template <typename T> __device__ static Acc term(T v) {
    return cc_acc<T>::load(v);
  }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};
struct IntSquares {
  using Acc = double;
  static constexpr bool kOfFloats = false;
  __device__ static Acc identity() { return 0.0; }
  template <typename T> __device__ static Acc term(T v) {
    return order::square(
        static_cast<double>(static_cast<int64_t>(cc_acc<T>::load(v))));
  }
  __device__ static Acc combine(Acc a, Acc b) { return __dadd_rn(a, b); }
};
template <bool kMax, bool kUnsigned, uint64_t kIdentity> struct IntMaxMin {
  using Acc = uint64_t;
  static constexpr bool kOfFloats = false;
  __device__ static Acc identity() { return kIdentity; }
  template <typename T> __device__ static Acc term(T v) {
    return cc_acc<T>::load(v);
  }
  __device__ static Acc combine(Acc a, Acc b) {
    return combineInt<kMax ? ReduceOp::Max : ReduceOp::Min, kUnsigned>(a, b);
  }
};

/// The piece of block b: the last piece whose first block is at most b
/// (empty pieces have no blocks, so it holds b).
__device__ __forceinline__ int64_t pieceOf(const int64_t *first, int64_t pieces,
                                           int64_t b) {
  int64_t lo = 0, hi = pieces;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (first[mid] <= b)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

template <typename K, typename T>
__global__ void __launch_bounds__(kThreads)
    blockPartials(const T *x, const int64_t *begin, const int64_t *length,
                  const int64_t *first, int64_t pieces, int64_t stride,
                  int64_t blocks, typename K::Acc *partials) {
  using Acc = typename K::Acc;
  __shared__ Acc lanes[kWarps][order::kLanes];
  const int warp = static_cast<int>(threadIdx.x) / order::kLanes;
  const int lane = static_cast<int>(threadIdx.x) % order::kLanes;
  // Every thread of the block takes every round (the barriers).
  for (int64_t round = static_cast<int64_t>(blockIdx.x) * kWarps;
       round < blocks; round += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t b = round + warp;
    Acc acc = K::identity();
    if (b < blocks) {
      const int64_t s = pieceOf(first, pieces, b);
      const int64_t at = (b - first[s]) * order::kBlock;
      const int64_t left = length[s] - at;
      const int64_t n = left < order::kBlock ? left : order::kBlock;
      const T *from = x + begin[s] + at * stride;
#pragma unroll 8
      for (int64_t k = lane; k < n; k += order::kLanes)
        acc = K::combine(acc, K::term(from[k * stride]));
    }
    lanes[warp][lane] = acc;
    __syncthreads();
    for (int s = order::kLanes / 2; s > 0; s /= 2) {
      if (lane < s)
        lanes[warp][lane] =
            K::combine(lanes[warp][lane], lanes[warp][lane + s]);
      __syncthreads();
    }
    if (lane == 0 && b < blocks)
      partials[b] = lanes[warp][0];
    __syncthreads();
  }
}

/// The finished value of a piece as an Out: a float's square root for a
/// norm, NaN the canonical NaN, rounded once; an integer wrapped.
template <typename Out, typename Acc>
__device__ __forceinline__ Out finish(Acc value, bool root) {
  if constexpr (std::is_same_v<Acc, double>) {
    double v = root ? __dsqrt_rn(value) : value;
    v = order::canonicalNaN(v);
    if constexpr (cc_acc<Out>::kFloat)
      return cc_acc<Out>::store(v);
    else
      return cc_acc<Out>::store(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else {
    if constexpr (cc_acc<Out>::kFloat)
      return cc_acc<Out>::store(
          static_cast<double>(static_cast<int64_t>(value)));
    else
      return cc_acc<Out>::store(value);
  }
}

template <typename K, typename Out>
__global__ void __launch_bounds__(kThreads)
    pieceTrees(const int64_t *first, int64_t pieces,
               const typename K::Acc *partials, bool root, Out *out) {
  using Acc = typename K::Acc;
  __shared__ Acc nodes[kThreads];
  const int t = static_cast<int>(threadIdx.x);
  auto combine = [](Acc a, Acc b) { return K::combine(a, b); };
  for (int64_t s = blockIdx.x; s < pieces; s += gridDim.x) {
    const int64_t m = first[s + 1] - first[s];
    const int depth = m == 0 ? 0 : order::treeDepth(m, kThreads);
    const int count = 1 << depth;
    if (t < count) {
      Acc v = K::identity();
      if (m > 0) {
        int64_t lo = 0, n = 0;
        order::treeNode(m, depth, t, &lo, &n);
        v = order::combineTree(
            first[s] + lo, n, [&](int64_t b) { return partials[b]; }, combine);
      }
      nodes[t] = v;
    }
    __syncthreads();
    for (int w = 1; w < count; w *= 2) {
      if (t % (2 * w) == 0 && t + w < count)
        nodes[t] = combine(nodes[t], nodes[t + w]);
      __syncthreads();
    }
    if (t == 0)
      out[s] = finish<Out>(nodes[0], root);
    __syncthreads();
  }
}

/// Calls f(K()) for the combination of `kind` on elements of `dtype`.
template <typename F> Status withKind(ReductionKind kind, DType dtype, F &&f) {
  const bool isF = isFloat(dtype);
  switch (kind) {
  case ReductionKind::Sum:
    return isF ? f(FloatSum<false>()) : f(IntSum());
  case ReductionKind::Norm:
  case ReductionKind::SumSquares:
    return isF ? f(FloatSum<true>()) : f(IntSquares());
  case ReductionKind::Max:
  case ReductionKind::Min:
    break;
  }
  const bool max = kind == ReductionKind::Max;
  if (isF)
    return max ? f(FloatMaxMin<true>()) : f(FloatMaxMin<false>());
  return withIntMaxMin<IntMaxMin>(dtype, max, f);
}

unsigned gridOf(int64_t items) {
  return static_cast<unsigned>(items < 1 ? 1 : items > 65535 ? 65535 : items);
}

} // namespace

Reducer::~Reducer() {
  if (memory_ != nullptr)
    allocator_->deallocate(memory_, bytes_);
}

Status Reducer::create(const ReductionPieces &pieces, Allocator &allocator) {
  if (memory_ != nullptr)
    return Status::error(StatusCode::Internal, "a Reducer created twice");
  const size_t n = pieces.begin.size();
  // begin, length, first (n + 1) and the partial values (8 bytes each).
  const size_t words = 3 * n + 1 + static_cast<size_t>(pieces.blocks());
  if (words > SIZE_MAX / 8)
    return Status::error(StatusCode::InvalidArgument,
                         "a reduction too large for memory");
  void *memory = nullptr;
  COCONET_RETURN_IF_ERROR(allocator.allocate(words * 8, &memory));
  allocator_ = &allocator;
  memory_ = memory;
  bytes_ = words * 8;
  int64_t *base = static_cast<int64_t *>(memory);
  begin_ = base;
  length_ = base + n;
  first_ = base + 2 * n;
  partials_ = base + 3 * n + 1;
  COCONET_RETURN_IF_ERROR(copyToMemory(begin_, pieces.begin.data(), n * 8));
  COCONET_RETURN_IF_ERROR(copyToMemory(length_, pieces.length.data(), n * 8));
  COCONET_RETURN_IF_ERROR(
      copyToMemory(first_, pieces.firstBlock.data(), (n + 1) * 8));
  pieces_ = static_cast<int64_t>(n);
  blocks_ = pieces.blocks();
  stride_ = pieces.stride;
  return Status::success();
}

Status Reducer::run(ReductionKind kind, DType dtype, const void *in,
                    DType outType, void *out, cudaStream_t stream) const {
  if (memory_ == nullptr)
    return Status::error(StatusCode::Internal, "a Reducer run before create");
  if (outType != dtype && outType != DType::F64 &&
      !(outType == DType::F32 && isFloat(dtype)))
    return Status::error(StatusCode::InvalidArgument,
                         std::string("a reduction of ") + dtypeName(dtype) +
                             " into " + dtypeName(outType));
  const bool root = kind == ReductionKind::Norm;
  return withType(dtype, [&](auto inValue) -> Status {
    using T = decltype(inValue);
    if constexpr (std::is_same_v<T, bool>)
      return Status::error(StatusCode::InvalidArgument,
                           "a reduction of bool elements");
    else
      return withKind(kind, dtype, [&](auto k) -> Status {
        using K = decltype(k);
        using Acc = typename K::Acc;
        if constexpr (cc_acc<T>::kFloat != K::kOfFloats) {
          return Status::error(StatusCode::Internal,
                               "a reduction of mismatched kind and type");
        } else {
          Acc *partials = static_cast<Acc *>(partials_);
          if (blocks_ > 0)
            COCONET_CUDA_CHECK(cc_launch(
                blockPartials<K, T>, gridOf((blocks_ + kWarps - 1) / kWarps),
                kThreads, 0, stream, static_cast<const T *>(in), begin_,
                length_, first_, pieces_, stride_, blocks_, partials));
          if (outType == dtype)
            COCONET_CUDA_CHECK(cc_launch(
                pieceTrees<K, T>, gridOf(pieces_), kThreads, 0, stream, first_,
                pieces_, partials, root, static_cast<T *>(out)));
          else if (outType == DType::F32)
            COCONET_CUDA_CHECK(cc_launch(
                pieceTrees<K, float>, gridOf(pieces_), kThreads, 0, stream,
                first_, pieces_, partials, root, static_cast<float *>(out)));
          else
            COCONET_CUDA_CHECK(cc_launch(
                pieceTrees<K, double>, gridOf(pieces_), kThreads, 0, stream,
                first_, pieces_, partials, root, static_cast<double *>(out)));
          return Status::success();
        }
      });
  });
}

} // namespace coconet::rt::cuda
