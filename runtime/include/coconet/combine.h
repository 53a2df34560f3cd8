//===- combine.h - how elements are held and how members combine -*- C++
//-*-===//
//
// One definition, for the simulator (compiler/sim/Collectives.cpp), the CPU
// runtime's collectives (src/cpu/combine.cpp), the CUDA target's team
// kernels (cuda/team.h) and the generated reductions, of two rules whose
// bits must agree between them:
//
//   - how an element is held while it is combined (Element<T>): a float
//     element as the double it is exactly equal to, an integer or bool
//     element as a 64-bit pattern (i32 sign-extended, bool 0 or 1); storing
//     rounds a double once to the element type, or wraps an integer to its
//     width;
//   - how two members' values combine (combineFloat, combineInt): floats
//     sum and multiply in f64 carrying the first NaN (numeric.h), max and
//     min are maximumNumber/minimumNumber; integers sum and multiply
//     wrapping at 64 bits, max and min compare signed (unsigned for u64).
//     Avg combines as a sum; the caller divides the f64 sum by the count of
//     members once, at the end;
//   - in which order the members combine (combineMembersInOrder): the
//     block tree of a reduction (reduce_order.h) over member indices,
//     M(lo, 1) = member lo, M(lo, n) = M(lo, ceil(n/2)) (+) M(lo +
//     ceil(n/2), floor(n/2)): ascending order for 2 and 3 members, the
//     perfect pairwise tree for a power of two, so that the partial values
//     of a tensor sliced over a power-of-two number of ranks combine as the
//     whole tensor's own block tree does (docs/language.md).
//
// Header only; every function is usable in CUDA device code (COCONET_HD).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_COMBINE_H
#define COCONET_RUNTIME_COMBINE_H

#include "coconet/numeric.h"
#include "coconet/reduce_order.h"
#include "coconet/types.h"

#include <cstdint>
#include <type_traits>

namespace coconet::rt {

// --- How an element is held
// ----------------------------------------------------

/// An integer element: a wrapping 64-bit pattern, sign-extended.
template <typename T> struct Element {
  using Storage = T;
  using Acc = uint64_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = false;
  static COCONET_HD Acc load(T v) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  /// Wrapped to T's width.
  static COCONET_HD T store(Acc a) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a));
  }
};
template <> struct Element<uint64_t> {
  using Storage = uint64_t;
  using Acc = uint64_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = true;
  static COCONET_HD Acc load(uint64_t v) { return v; }
  static COCONET_HD uint64_t store(Acc a) { return a; }
};
/// A bool stored as itself (CUDA) ...
template <> struct Element<bool> {
  using Storage = bool;
  using Acc = uint64_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = false;
  static COCONET_HD Acc load(bool v) { return v ? 1 : 0; }
  static COCONET_HD bool store(Acc a) { return a != 0; }
};
/// ... or as one byte (the CPU target): any non-zero byte reads as true.
template <> struct Element<uint8_t> {
  using Storage = uint8_t;
  using Acc = uint64_t;
  static constexpr bool kFloat = false;
  static constexpr bool kUnsigned = false;
  static COCONET_HD Acc load(uint8_t v) { return v != 0; }
  static COCONET_HD uint8_t store(Acc a) { return a != 0; }
};
template <> struct Element<float> {
  using Storage = float;
  using Acc = double;
  static constexpr bool kFloat = true;
  static COCONET_HD Acc load(float v) { return v; }
  /// Rounded once, to nearest even.
  static COCONET_HD float store(Acc a) { return static_cast<float>(a); }
};
template <> struct Element<double> {
  using Storage = double;
  using Acc = double;
  static constexpr bool kFloat = true;
  static COCONET_HD Acc load(double v) { return v; }
  static COCONET_HD double store(Acc a) { return a; }
};
/// f16 and bf16 as their bits (the CPU target's storage types).
template <> struct Element<Half> {
  using Storage = Half;
  using Acc = double;
  static constexpr bool kFloat = true;
  static COCONET_HD Acc load(Half v) { return halfBitsToFloat(v.bits); }
  static COCONET_HD Half store(Acc a) { return Half{doubleToHalfBits(a)}; }
};
template <> struct Element<BFloat16> {
  using Storage = BFloat16;
  using Acc = double;
  static constexpr bool kFloat = true;
  static COCONET_HD Acc load(BFloat16 v) { return bfloat16BitsToFloat(v.bits); }
  static COCONET_HD BFloat16 store(Acc a) {
    return BFloat16{doubleToBFloat16Bits(a)};
  }
};

// --- How two members' values combine -----------------------------------------

template <ReduceOp Op> COCONET_HD double combineFloat(double a, double b) {
  if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Avg)
    return combineAdd(a, b);
  else if constexpr (Op == ReduceOp::Prod)
    return combineMul(a, b);
  else if constexpr (Op == ReduceOp::Max)
    return maxNumber(a, b);
  else
    return minNumber(a, b);
}

template <ReduceOp Op, bool kUnsigned>
COCONET_HD uint64_t combineInt(uint64_t a, uint64_t b) {
  if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Avg)
    return a + b;
  else if constexpr (Op == ReduceOp::Prod)
    return a * b;
  else if constexpr (kUnsigned)
    return Op == ReduceOp::Max ? (a > b ? a : b) : (a < b ? a : b);
  else
    return Op == ReduceOp::Max
               ? (static_cast<int64_t>(a) > static_cast<int64_t>(b) ? a : b)
               : (static_cast<int64_t>(a) < static_cast<int64_t>(b) ? a : b);
}

/// Two held values of Element<T> combined by Op.
template <ReduceOp Op, typename T>
COCONET_HD typename Element<T>::Acc combine(typename Element<T>::Acc a,
                                            typename Element<T>::Acc b) {
  if constexpr (Element<T>::kFloat)
    return combineFloat<Op>(a, b);
  else
    return combineInt<Op, Element<T>::kUnsigned>(a, b);
}

/// The same with the operator known only at run time (the simulator).
COCONET_HD double combineFloat(ReduceOp op, double a, double b) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Avg:
    return combineFloat<ReduceOp::Sum>(a, b);
  case ReduceOp::Prod:
    return combineFloat<ReduceOp::Prod>(a, b);
  case ReduceOp::Max:
    return combineFloat<ReduceOp::Max>(a, b);
  case ReduceOp::Min:
    return combineFloat<ReduceOp::Min>(a, b);
  }
  return a;
}
COCONET_HD uint64_t combineInt(ReduceOp op, bool isUnsigned, uint64_t a,
                               uint64_t b) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Avg:
    return combineInt<ReduceOp::Sum, false>(a, b);
  case ReduceOp::Prod:
    return combineInt<ReduceOp::Prod, false>(a, b);
  case ReduceOp::Max:
    return isUnsigned ? combineInt<ReduceOp::Max, true>(a, b)
                      : combineInt<ReduceOp::Max, false>(a, b);
  case ReduceOp::Min:
    return isUnsigned ? combineInt<ReduceOp::Min, true>(a, b)
                      : combineInt<ReduceOp::Min, false>(a, b);
  }
  return a;
}

/// Calls f(Op<kMax, kUnsigned, kIdentity>()) for the integer max (`max`) or
/// min of `dtype` (i32, i64, u64; floats and bool do not come here): whether
/// it compares unsigned, and its identity, the type's least value for a max
/// and greatest for a min, as a wrapping 64-bit pattern (the reductions of
/// both targets' runtimes).
template <template <bool, bool, uint64_t> class Op, typename F>
auto withIntMaxMin(DType dtype, bool max, F &&f) {
  switch (dtype) {
  case DType::I32:
    return max ? f(Op<true, false,
                      static_cast<uint64_t>(static_cast<int64_t>(INT32_MIN))>())
               : f(Op<false, false,
                      static_cast<uint64_t>(
                          static_cast<int64_t>(INT32_MAX))>());
  case DType::U64:
    return max ? f(Op<true, true, 0>()) : f(Op<false, true, UINT64_MAX>());
  case DType::I64:
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
  case DType::Bool:
    break; // i64 (floats and bool do not come here)
  }
  return max ? f(Op<true, false, static_cast<uint64_t>(INT64_MIN)>())
             : f(Op<false, false, static_cast<uint64_t>(INT64_MAX)>());
}

// --- In which order the members combine --------------------------------------

namespace detail {
/// M(lo, n) for n <= 2^Depth: unrolled by the compiler (no recursion at run
/// time, no stack: a GPU keeps it in registers).
template <int Depth, typename Load, typename Combine>
COCONET_HD auto memberTree(int64_t lo, int64_t n, Load &load, Combine &combine)
    -> decltype(load(lo)) {
  if constexpr (Depth == 0) {
    return load(lo);
  } else {
    if (n == 1)
      return load(lo);
    const int64_t left = reduce_order::leftCount(n);
    const auto l = memberTree<Depth - 1>(lo, left, load, combine);
    return combine(l,
                   memberTree<Depth - 1>(lo + left, n - left, load, combine));
  }
}
} // namespace detail

/// The most members combineFewMembersInOrder takes: its tree unrolled.
inline constexpr int64_t kFewMembers = 8;

/// The most members a GPU kernel combines (a team's fused kernels: the
/// order's top levels in registers, no stack). cuda::Team refuses larger
/// teams (their collectives then run as NCCL's).
inline constexpr int64_t kMaxDeviceMembers = 512;

namespace detail {
/// M(0, members) for 8 < members <= kMaxDeviceMembers, as a GPU keeps it:
/// the top `depth` levels of the tree are perfect (every node above them
/// holds at least two members), their 2^depth nodes hold at most 8 members
/// each (memberTree<3>, one copy of its code), and the perfect top combines
/// them in order: node i completes one subtree per trailing 1 bit of i,
/// each combining the left value pending at its level. (Pending values in
/// registers of their own, one per level, took a fused kernel from 39 to
/// 64 registers and spills; this array costs 48 bytes of stack.)
template <typename Load, typename Combine>
COCONET_HD auto memberTreeByLevels(int64_t members, Load &load,
                                   Combine &combine) -> decltype(load(0)) {
  using Acc = decltype(load(0));
  int depth = 1;
  while (((members - 1) >> depth) + 1 > kFewMembers) // ceil(members / 2^depth)
    ++depth;
  Acc pending[6]; // depth <= 6: 512 members at most
  const int64_t nodes = int64_t{1} << depth;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int64_t i = 0; i < nodes; ++i) {
    int64_t lo = 0, count = 0;
    reduce_order::treeNode(members, depth, i, &lo, &count);
    Acc v = memberTree<3>(lo, count, load, combine);
    int level = 0;
    while ((i >> level) & 1) {
      v = combine(pending[level], v);
      ++level;
    }
    if (level == depth)
      return v;
    pending[level] = v;
  }
  return pending[0]; // not reached
}
} // namespace detail

/// combineMembersInOrder for 1 <= members <= kFewMembers: the tree
/// unrolled, nothing else instantiated (a GPU kernel's registers).
template <typename Load, typename Combine>
COCONET_HD auto combineFewMembersInOrder(int64_t members, Load load,
                                         Combine combine) -> decltype(load(0)) {
  static_assert(kFewMembers == 8, "memberTree<3> holds 2^3 members");
  return detail::memberTree<3>(0, members, load, combine);
}

/// load(0), ..., load(members - 1) (1 <= members; on a GPU at most
/// kMaxDeviceMembers) combined by `combine` in the members' order
/// M(0, members) (the file comment).
template <typename Load, typename Combine>
COCONET_HD auto combineMembersInOrder(int64_t members, Load load,
                                      Combine combine) -> decltype(load(0)) {
  if (members <= kFewMembers)
    return combineFewMembersInOrder(members, load, combine);
#if !defined(__CUDA_ARCH__)
  if (members > kMaxDeviceMembers)
    return reduce_order::combineTree(0, members, load, combine);
#endif
  return detail::memberTreeByLevels(members, load, combine);
}

} // namespace coconet::rt

#endif // COCONET_RUNTIME_COMBINE_H
