//===- reduce.cpp - reductions in the language's order, at memory speed ---===//
//
// sum, norm, sumsq, max and min over a tensor, its segments or along a
// dimension, in the order coconet/reduce_order.h defines (the simulator's):
// threads take blocks of kBlock terms, a block's kLanes lanes are vector
// registers (a float sum or sum of squares: eight 4-double vectors, f16 and
// bf16 widened a block at a time), and each segment's partial values are
// combined by the block tree. Every block's partial value is computed by
// one thread in the one order, so results do not depend on the number of
// threads. Compiled with the build's cpu-flags.txt, as generated code is.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/convert.h"
#include "coconet/cpu/runtime.h"
#include "coconet/reduce_order.h"

#include "../element.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace coconet::rt::cpu {

namespace {

namespace order = reduce_order;
using detail::visitDType;

/// Below this many terms a reduction runs on one thread.
constexpr int64_t kParallelThreshold = 1 << 15;

/// Four doubles, four floats: GCC's and clang's vector extensions (AVX2
/// registers where the flags allow, pairs of SSE2 ones otherwise).
typedef double Double4 __attribute__((vector_size(32)));
typedef float Float4 __attribute__((vector_size(16)));

// --- What is combined ------------------------------------------------------

/// A float sum (kSquares: of squares) in f64.
template <bool kSquares> struct FloatSum {
  using Acc = double;
  static constexpr bool kOfFloats = true, kFast = true;
  static Acc identity() { return 0.0; }
  static Acc term(double v) { return kSquares ? order::square(v) : v; }
  static Acc combine(Acc a, Acc b) { return a + b; }
};
template <bool kMax> struct FloatMaxMin {
  using Acc = double;
  static constexpr bool kOfFloats = true, kFast = false;
  static Acc identity() { return static_cast<double>(NAN); }
  static Acc term(double v) { return v; }
  static Acc combine(Acc a, Acc b) {
    return kMax ? maxNumber(a, b) : minNumber(a, b);
  }
};
/// Integers: a wrapping sum, or the sum of squares taken in f64.
struct IntSum {
  using Acc = uint64_t;
  static constexpr bool kOfFloats = false, kFast = false;
  static Acc identity() { return 0; }
  static Acc term(uint64_t v) { return v; }
  static Acc combine(Acc a, Acc b) { return a + b; }
};
struct IntSquares {
  using Acc = double;
  static constexpr bool kOfFloats = false, kFast = false;
  static Acc identity() { return 0.0; }
  static Acc term(uint64_t v) {
    return order::square(static_cast<double>(static_cast<int64_t>(v)));
  }
  static Acc combine(Acc a, Acc b) { return a + b; }
};
template <bool kMax, bool kUnsigned, uint64_t kIdentity> struct IntMaxMin {
  using Acc = uint64_t;
  static constexpr bool kOfFloats = false, kFast = false;
  static Acc identity() { return kIdentity; }
  static Acc term(uint64_t v) { return v; }
  static Acc combine(Acc a, Acc b) {
    return combineInt<kMax ? ReduceOp::Max : ReduceOp::Min, kUnsigned>(a, b);
  }
};

// --- One block's partial value -----------------------------------------------

/// The lanes' sums of kLanes consecutive floats or doubles at a time: lane l
/// is element l of vector l / 4, and the lane tree's first three levels
/// add whole vectors.
template <bool kSquares, typename T> double fastBlock(const T *x, int64_t n) {
  static_assert(order::kLanes == 32, "eight vectors of four lanes");
  Double4 acc[8];
  COCONET_UNROLL
  for (int v = 0; v < 8; ++v)
    acc[v] = Double4{0.0, 0.0, 0.0, 0.0};
  const int64_t full = n / order::kLanes;
  for (int64_t j = 0; j < full; ++j) {
    const T *p = x + j * order::kLanes;
    // Unrolled, so that the eight accumulators stay in registers (a loop
    // over them kept them in memory: a store and a load on every chain).
    COCONET_UNROLL
    for (int v = 0; v < 8; ++v) {
      Double4 d;
      if constexpr (std::is_same_v<T, float>) {
#if defined(__AVX__)
        // One vcvtps2pd of 16 bytes (GCC splits the generic form below into
        // two 8-byte halves).
        d = reinterpret_cast<Double4>(_mm256_cvtps_pd(_mm_loadu_ps(p + 4 * v)));
#else
        Float4 f;
        std::memcpy(&f, p + 4 * v, sizeof f);
        d = __builtin_convertvector(f, Double4);
#endif
      } else {
        std::memcpy(&d, p + 4 * v, sizeof d);
      }
      acc[v] += kSquares ? d * d : d;
    }
  }
  // The tail: at most one more term for each of the first lanes.
  for (int64_t k = full * order::kLanes; k < n; ++k) {
    const int l = static_cast<int>(k % order::kLanes);
    const double t = static_cast<double>(x[k]);
    acc[l / 4][l % 4] += kSquares ? t * t : t;
  }
  // The lane tree: s = 16, 8, 4 add vectors; s = 2, 1 within vector 0.
  COCONET_UNROLL
  for (int v = 0; v < 4; ++v)
    acc[v] += acc[v + 4];
  COCONET_UNROLL
  for (int v = 0; v < 2; ++v)
    acc[v] += acc[v + 2];
  acc[0] += acc[1];
  const double l0 = acc[0][0] + acc[0][2], l1 = acc[0][1] + acc[0][3];
  return l0 + l1;
}

/// Block b of the piece (x, its n terms): its partial value. `wide` holds
/// kBlock floats (f16 and bf16 widen into it).
template <typename K, typename Traits>
typename K::Acc blockPartial(const typename Traits::Storage *x, int64_t n,
                             float *wide) {
  using Storage = typename Traits::Storage;
  if constexpr (K::kFast && std::is_same_v<K, FloatSum<true>>) {
    if constexpr (std::is_same_v<Storage, Half> ||
                  std::is_same_v<Storage, BFloat16>) {
      widen(x, wide, n);
      return fastBlock<true>(wide, n);
    } else {
      return fastBlock<true>(x, n);
    }
  } else if constexpr (K::kFast) {
    if constexpr (std::is_same_v<Storage, Half> ||
                  std::is_same_v<Storage, BFloat16>) {
      widen(x, wide, n);
      return fastBlock<false>(wide, n);
    } else {
      return fastBlock<false>(x, n);
    }
  } else {
    return order::blockPartial(
        n, K::identity(),
        [&](int64_t k) { return K::term(Traits::load(x[k])); },
        [](typename K::Acc a, typename K::Acc b) { return K::combine(a, b); });
  }
}

// --- Pieces ---------------------------------------------------------------

/// Stores a finished value as `outType`: a float rounded once (NaN the
/// canonical one; a norm's square root first), an integer wrapped.
template <typename Acc>
void storeResult(Acc value, bool root, DType outType, void *out, int64_t i) {
  visitDType(outType, [&](auto traits) {
    using T = decltype(traits);
    using Storage = typename T::Storage;
    Storage *o = static_cast<Storage *>(out);
    if constexpr (std::is_same_v<Acc, double>) {
      double v = root ? std::sqrt(value) : value;
      v = order::canonicalNaN(v);
      if constexpr (T::kFloat)
        o[i] = T::store(v);
      else
        o[i] = T::store(static_cast<uint64_t>(static_cast<int64_t>(v)));
    } else {
      if constexpr (T::kFloat)
        o[i] = T::store(static_cast<double>(static_cast<int64_t>(value)));
      else
        o[i] = T::store(value);
    }
  });
}

/// Every piece's result: threads over all pieces' blocks, then over the
/// pieces (each piece's block tree on one thread).
template <typename K, typename Traits>
void reducePieces(const typename Traits::Storage *x, const ReductionPieces &p,
                  typename K::Acc *partials, bool root, DType outType,
                  void *out) {
  using Acc = typename K::Acc;
  const int64_t pieces = p.pieces(), blocks = p.blocks();
  const int64_t *first = p.firstBlock.data();
  const bool parallel = blocks * order::kBlock >= kParallelThreshold ||
                        pieces >= kParallelThreshold;
#pragma omp parallel if (parallel)
  {
    static thread_local std::vector<float> wide;
    wide.resize(order::kBlock);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t s =
          std::upper_bound(first, first + pieces + 1, b) - first - 1;
      const int64_t at = (b - first[s]) * order::kBlock;
      const int64_t n = std::min(order::kBlock, p.length[s] - at);
      if (p.stride == 1) {
        partials[b] =
            blockPartial<K, Traits>(x + p.begin[s] + at, n, wide.data());
      } else {
        const typename Traits::Storage *from = x + p.begin[s] + at * p.stride;
        partials[b] = order::blockPartial(
            n, K::identity(),
            [&](int64_t k) {
              return K::term(Traits::load(from[k * p.stride]));
            },
            [](Acc u, Acc v) { return K::combine(u, v); });
      }
    }
#pragma omp for schedule(static)
    for (int64_t s = 0; s < pieces; ++s) {
      const int64_t m = first[s + 1] - first[s];
      const Acc value =
          m == 0 ? K::identity()
                 : order::combineTree(
                       first[s], m, [&](int64_t b) { return partials[b]; },
                       [](Acc u, Acc v) { return K::combine(u, v); });
      storeResult(value, root, outType, out, s);
    }
  }
}

/// Calls f(K{}) for the combination of `kind` on elements of `dtype`.
template <typename F> void visitKind(ReductionKind kind, DType dtype, F &&f) {
  const bool isF = isFloat(dtype);
  switch (kind) {
  case ReductionKind::Sum:
    return isF ? f(FloatSum<false>{}) : f(IntSum{});
  case ReductionKind::Norm:
  case ReductionKind::SumSquares:
    return isF ? f(FloatSum<true>{}) : f(IntSquares{});
  case ReductionKind::Max:
  case ReductionKind::Min:
    break;
  }
  const bool max = kind == ReductionKind::Max;
  if (isF)
    return max ? f(FloatMaxMin<true>{}) : f(FloatMaxMin<false>{});
  return withIntMaxMin<IntMaxMin>(dtype, max, f);
}

} // namespace

Reducer::~Reducer() {
  if (partials_ != nullptr)
    allocator_->deallocate(partials_, bytes_);
}

Status Reducer::create(ReductionPieces pieces, Allocator &allocator) {
  if (allocator_ != nullptr)
    return Status::error(StatusCode::Internal, "a Reducer created twice");
  allocator_ = &allocator;
  pieces_ = std::move(pieces);
  // One 8-byte partial value (a double or a wrapping integer) per block.
  if (pieces_.blocks() > 0) {
    if (static_cast<uint64_t>(pieces_.blocks()) > SIZE_MAX / 8)
      return Status::error(StatusCode::InvalidArgument,
                           "a reduction too large for memory");
    bytes_ = static_cast<size_t>(pieces_.blocks()) * 8;
    COCONET_RETURN_IF_ERROR(allocator.allocate(bytes_, &partials_));
  }
  return Status::success();
}

Status Reducer::run(ReductionKind kind, DType dtype, const void *in,
                    DType outType, void *out) {
  if (allocator_ == nullptr)
    return Status::error(StatusCode::Internal, "a Reducer run before create");
  if (dtype == DType::Bool)
    return Status::error(StatusCode::InvalidArgument,
                         "a reduction of bool elements");
  bool ran = false;
  visitDType(dtype, [&](auto traits) {
    using Traits = decltype(traits);
    visitKind(kind, dtype, [&](auto k) {
      using K = decltype(k);
      // visitKind chooses a combination of the element's kind.
      if constexpr (!std::is_same_v<typename Traits::Storage, uint8_t> &&
                    Traits::kFloat == K::kOfFloats) {
        reducePieces<K, Traits>(
            static_cast<const typename Traits::Storage *>(in), pieces_,
            static_cast<typename K::Acc *>(partials_),
            kind == ReductionKind::Norm, outType, out);
        ran = true;
      }
    });
  });
  return ran ? Status::success()
             : Status::error(StatusCode::Internal,
                             "a reduction of mismatched kind and type");
}

Status reduce(ReductionKind kind, DType dtype, const void *in, int64_t count,
              const int64_t *ends, int64_t segments, int64_t offset,
              DType outType, void *out) {
  ReductionPieces pieces;
  COCONET_RETURN_IF_ERROR(ReductionPieces::ofSegments(
      ends, segments, count, offset, "reduce", &pieces));
  Reducer r;
  COCONET_RETURN_IF_ERROR(r.create(std::move(pieces), defaultAllocator()));
  return r.run(kind, dtype, in, outType, out);
}

Status reduceAlong(ReductionKind kind, DType dtype, const void *in,
                   int64_t outer, int64_t reduced, int64_t inner, DType outType,
                   void *out) {
  ReductionPieces pieces;
  COCONET_RETURN_IF_ERROR(
      ReductionPieces::along(outer, reduced, inner, "reduceAlong", &pieces));
  Reducer r;
  COCONET_RETURN_IF_ERROR(r.create(std::move(pieces), defaultAllocator()));
  return r.run(kind, dtype, in, outType, out);
}

} // namespace coconet::rt::cpu
