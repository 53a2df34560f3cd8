//===- combine.cpp - combining blocks as the simulator does ---------------===//
//
// combineBlocks is the simulator's `combine` (compiler/sim/Collectives.cpp)
// on storage types, by the same rules (coconet/combine.h): floats accumulate
// in f64 in the members' order (a halving tree) and round once; integers
// accumulate in wrapping 64-bit arithmetic (i32 sign-extended) and wrap to
// their width; avg divides the f64 sum by the number of members. It works a
// tile at a time, with one functor per operator and vectorised conversions
// (cpu/convert.h), at memory speed (matmul is matmul.cpp's). It is
// OpenMP-parallel over output elements; each element is computed by one thread,
// in a fixed order, so the results do not depend on the number of threads.
//
//===----------------------------------------------------------------------===//

#include "coconet/combine.h"
#include "coconet/cpu/convert.h"
#include "coconet/cpu/runtime.h"
#include "coconet/tile.h"

#include "../element.h"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace coconet::rt::cpu {

namespace {

using detail::visitDType;

// Elements per tile: coconet/tile.h's kTile (the generated kernels' tile,
// which combineTile takes at most). A tile's accumulators and converted
// values stay in the first-level cache, and each loop over a tile is one
// `omp simd` loop.
/// Below this many elements a combination runs on one thread.
constexpr int64_t kParallelThreshold = 1 << 15;

/// The value every element of a block tile holds, as the accumulator: a
/// double for floats (f16 and bf16 widened, a tile at a time, exactly; on
/// F16C for f16), the wrapping 64-bit pattern for integers.
template <typename Traits, typename Acc>
void loadTile(const typename Traits::Storage *in, Acc *acc, float *wide,
              int64_t n) {
  if constexpr (std::is_same_v<typename Traits::Storage, Half> ||
                std::is_same_v<typename Traits::Storage, BFloat16>) {
    widen(in, wide, n);
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      acc[j] = static_cast<double>(wide[j]);
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      acc[j] = Traits::load(in[j]);
  }
}

/// Stores accumulators, rounding each once: f16 and bf16 through a float
/// rounded to odd (numeric.h), narrowed a tile at a time.
template <typename Traits, typename Acc>
void storeTile(const Acc *acc, typename Traits::Storage *out, float *narrowed,
               int64_t n) {
  if constexpr (std::is_same_v<typename Traits::Storage, Half> ||
                std::is_same_v<typename Traits::Storage, BFloat16>) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      narrowed[j] = floatFromBits(detail::floatBitsRoundedToOdd(acc[j]));
    narrow(narrowed, out, n);
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      out[j] = Traits::store(acc[j]);
  }
}

/// How two values combine (coconet/combine.h), one functor per operator
/// so that the loops have no switch inside.
template <ReduceOp Op, bool kUnsigned> struct CombineOp {
  double operator()(double a, double b) const { return combineFloat<Op>(a, b); }
  uint64_t operator()(uint64_t a, uint64_t b) const {
    return combineInt<Op, kUnsigned>(a, b);
  }
};

/// acc[0, n) = elements [first, first + n) of the blocks of members
/// [lo, lo + count) combined in the members' order M(lo, count)
/// (coconet/combine.h's combineMembersInOrder, a tile at a time): the left
/// half into acc, the right half into a tile of its own, then acc (+) it.
template <typename Traits, typename Op, typename Acc>
void memberTreeTile(const void *const *blocks, int64_t lo, int64_t count,
                    int64_t first, Acc *acc, float *wide, int64_t n, Op op) {
  using T = typename Traits::Storage;
  if (count == 1) {
    loadTile<Traits>(static_cast<const T *>(blocks[lo]) + first, acc, wide, n);
    return;
  }
  const int64_t left = reduce_order::leftCount(count);
  memberTreeTile<Traits>(blocks, lo, left, first, acc, wide, n, op);
  Acc v[kTile];
  memberTreeTile<Traits>(blocks, lo + left, count - left, first, v, wide, n,
                         op);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    acc[j] = op(acc[j], v[j]);
}

/// out[i] = the members' element i combined in the members' order,
/// accumulated exactly (f64 for floats) and rounded once; a tile of
/// elements at a time, the tiles shared by OpenMP's threads. The order of
/// each element's operations is the simulator's, so the bits are too.
/// out[0, n) = elements [first, first + n) of the members' blocks combined
/// (n at most kTile): one tile.
template <typename Traits, typename Op>
void combineOneTile(const void *const *blocks, int64_t members, int64_t first,
                    typename Traits::Storage *out, int64_t n, Op op, bool avg) {
  using Acc = std::conditional_t<Traits::kFloat, double, uint64_t>;
  Acc acc[kTile];
  float wide[kTile];
  memberTreeTile<Traits>(blocks, 0, members, first, acc, wide, n, op);
  if constexpr (Traits::kFloat) {
    if (avg) {
      const double divisor = static_cast<double>(members);
#pragma omp simd
      for (int64_t j = 0; j < n; ++j)
        acc[j] /= divisor;
    }
  }
  storeTile<Traits>(acc, out, wide, n);
}

template <typename Traits, typename Op>
void combineTyped(const void *const *blocks, int64_t members, int64_t offset,
                  typename Traits::Storage *out, int64_t count, Op op, bool avg,
                  bool parallel) {
  const int64_t tiles = (count + kTile - 1) / kTile;
  auto tile = [&](int64_t t) {
    const int64_t first = t * kTile;
    combineOneTile<Traits>(blocks, members, offset + first, out + first,
                           std::min(kTile, count - first), op, avg);
  };
  // A fused kernel's tile runs inside its own parallel loop: no parallel
  // region here at all (even one that is not taken costs a team's set-up
  // per call).
  if (!parallel) {
    for (int64_t t = 0; t < tiles; ++t)
      tile(t);
    return;
  }
  const bool many = count >= kParallelThreshold;
#pragma omp parallel for schedule(static) if (many)
  for (int64_t t = 0; t < tiles; ++t)
    tile(t);
}

template <typename Traits>
void combineOp(const void *const *blocks, int64_t members, int64_t offset,
               typename Traits::Storage *out, int64_t count, ReduceOp op,
               bool parallel) {
  constexpr bool kUnsigned = [] {
    if constexpr (Traits::kFloat)
      return false;
    else
      return Traits::kUnsigned;
  }();
  switch (op) {
  case ReduceOp::Sum:
    return combineTyped<Traits>(blocks, members, offset, out, count,
                                CombineOp<ReduceOp::Sum, kUnsigned>{}, false,
                                parallel);
  case ReduceOp::Avg: // integers have no avg (checked); the sum, divided
    return combineTyped<Traits>(blocks, members, offset, out, count,
                                CombineOp<ReduceOp::Sum, kUnsigned>{}, true,
                                parallel);
  case ReduceOp::Prod:
    return combineTyped<Traits>(blocks, members, offset, out, count,
                                CombineOp<ReduceOp::Prod, kUnsigned>{}, false,
                                parallel);
  case ReduceOp::Max:
    return combineTyped<Traits>(blocks, members, offset, out, count,
                                CombineOp<ReduceOp::Max, kUnsigned>{}, false,
                                parallel);
  case ReduceOp::Min:
    return combineTyped<Traits>(blocks, members, offset, out, count,
                                CombineOp<ReduceOp::Min, kUnsigned>{}, false,
                                parallel);
  }
}

} // namespace

void combineMembers(const void *const *members, int64_t numMembers, void *out,
                    int64_t count, DType dtype, ReduceOp op) {
  if (numMembers < 1 || count < 1)
    return;
  visitDType(dtype, [&](auto traits) {
    using Traits = decltype(traits);
    combineOp<Traits>(members, numMembers, 0,
                      static_cast<typename Traits::Storage *>(out), count, op,
                      /*parallel=*/true);
  });
}

void combineTile(const void *const *members, int64_t numMembers, int64_t offset,
                 void *out, int64_t count, DType dtype, ReduceOp op) {
  if (numMembers < 1 || count < 1)
    return;
  visitDType(dtype, [&](auto traits) {
    using Traits = decltype(traits);
    combineOp<Traits>(members, numMembers, offset,
                      static_cast<typename Traits::Storage *>(out), count, op,
                      /*parallel=*/false);
  });
}

void combineBlocks(const void *blocks, int64_t members, void *out,
                   int64_t count, DType dtype, ReduceOp op) {
  if (members < 1 || count < 1)
    return;
  std::vector<const void *> each(static_cast<size_t>(members));
  const size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  for (int64_t m = 0; m < members; ++m)
    each[static_cast<size_t>(m)] =
        static_cast<const uint8_t *>(blocks) + static_cast<size_t>(m) * bytes;
  combineMembers(each.data(), members, out, count, dtype, op);
}

} // namespace coconet::rt::cpu
