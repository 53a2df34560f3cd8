//===- reduce_order.h - the order in which a reduction combines -*- C++ -*-===//
//
// One definition, for the simulator (compiler/sim/Simulator.cpp), the CPU
// runtime's reductions (src/cpu/reduce.cpp) and the CUDA target's
// reduction kernels (cuda/reduce.h), of the order in which `sum`, `norm`,
// `max`, `min` (and the IR's `sumsq`) combine the terms of a sequence
// t_0 ... t_{n-1} (docs/language.md, "The order of a reduction"):
//
//   - blocks: term i belongs to block i / kBlock;
//   - lanes: within block b, term i belongs to lane (i - b kBlock) %
//     kLanes; a lane starts from the identity and combines its terms in
//     ascending order (one dependent chain of kBlock / kLanes terms);
//   - the lane tree: for s = kLanes/2, ..., 2, 1, lane l < s becomes
//     lane l (+) lane l + s; lane 0 is the block's partial value;
//   - the block tree over the m partial values p_0 ... p_{m-1}:
//     T(lo, 1) = p_lo, T(lo, n) = T(lo, ceil(n/2)) (+) T(lo + ceil(n/2),
//     floor(n/2)); the reduction is T(0, m), the identity when n = 0.
//
// The chains are as long as a block's lane, every thread count and launch
// configuration computes the same tree, and a CPU (vector lanes x threads
// over blocks) and a GPU (a warp's lanes x warps over blocks, a second
// pass over the partial values) both evaluate it at memory speed. The
// block tree splits a power-of-two number of equal runs of blocks (ranks'
// slices) at their boundaries: their own trees are its subtrees.
//
// A float result that is NaN is the canonical quiet NaN (canonicalNaN), so
// that which NaN an addition of two returns (left to the hardware; a GPU
// gives its own) does not decide bits. Header only; every function is
// usable in CUDA device code (COCONET_HD).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_REDUCE_ORDER_H
#define COCONET_RUNTIME_REDUCE_ORDER_H

#include "coconet/numeric.h"

#include <cstdint>

namespace coconet::rt::reduce_order {

/// Terms of one block.
inline constexpr int64_t kBlock = 2048;
/// Lanes of one block (each a chain of kBlock / kLanes terms).
inline constexpr int kLanes = 32;
static_assert(kBlock % kLanes == 0 && (kLanes & (kLanes - 1)) == 0,
              "lanes divide a block and halve down to one");

/// Blocks of a sequence of n terms.
COCONET_HD int64_t blockCount(int64_t n) {
  return n <= 0 ? 0 : (n - 1) / kBlock + 1;
}

/// The canonical quiet NaN for a NaN, v otherwise.
COCONET_HD double canonicalNaN(double v) {
  return v != v ? doubleFromBits(UINT64_C(0x7ff8000000000000)) : v;
}

/// The square of a term in f64, rounded on its own (never fused into the
/// following addition: nvcc contracts a * b + c unless told not to).
COCONET_HD double square(double v) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(v, v);
#else
  return v * v;
#endif
}

/// The lane tree: lanes[0, kLanes) combined, their result returned (lanes
/// is overwritten).
template <typename Acc, typename Combine>
COCONET_HD Acc combineLanes(Acc *lanes, Combine combine) {
  for (int s = kLanes / 2; s > 0; s /= 2)
    for (int l = 0; l < s; ++l)
      lanes[l] = combine(lanes[l], lanes[l + s]);
  return lanes[0];
}

/// One block's partial value: terms term(k) for k in [0, n), n <= kBlock,
/// lane k % kLanes each. The reference form; the targets compute the same
/// lanes in vector registers or a warp.
template <typename Acc, typename Term, typename Combine>
COCONET_HD Acc blockPartial(int64_t n, Acc identity, Term term,
                            Combine combine) {
  Acc lanes[kLanes];
  for (int l = 0; l < kLanes; ++l)
    lanes[l] = identity;
  for (int64_t k = 0; k < n; ++k) {
    const int l = static_cast<int>(k % kLanes);
    lanes[l] = combine(lanes[l], term(k));
  }
  return combineLanes(lanes, combine);
}

/// The left part of a node of the block tree holding n partial values.
COCONET_HD int64_t leftCount(int64_t n) { return n - n / 2; }

/// Node `index` (0 <= index < 2^depth) of the tree over m partial values
/// at depth `depth`, where m >= 2^depth (so every node above it has two
/// children): its first partial value and how many it holds. The nodes at
/// one depth lie in index order; the tree above them is perfect, so they
/// combine pairwise: (0 (+) 1), (2 (+) 3), then pairs of those, ...
COCONET_HD void treeNode(int64_t m, int depth, int64_t index, int64_t *lo,
                         int64_t *count) {
  int64_t first = 0, n = m;
  for (int j = depth - 1; j >= 0; --j) {
    const int64_t left = leftCount(n);
    if ((index >> j) & 1) {
      first += left;
      n -= left;
    } else {
      n = left;
    }
  }
  *lo = first;
  *count = n;
}

/// The deepest depth whose nodes a thread each can take, for m partial
/// values and at most `threads` (a power of two) threads: the largest d
/// with 2^d <= min(m, threads).
COCONET_HD int treeDepth(int64_t m, int threads) {
  int d = 0;
  while ((int64_t{2} << d) <= m && (2 << d) <= threads)
    ++d;
  return d;
}

/// The block tree over partial(lo), ..., partial(lo + n - 1), n >= 1,
/// evaluated by one thread (no recursion: a stack of the left values
/// waiting for their right halves, at most 64 deep).
template <typename Partial, typename Combine>
COCONET_HD auto combineTree(int64_t lo, int64_t n, Partial partial,
                            Combine combine) -> decltype(partial(lo)) {
  using Acc = decltype(partial(lo));
  struct Frame {
    int64_t rightLo, rightCount;
    Acc left;
    bool haveLeft;
  };
  Frame stack[64];
  int top = 0;
  for (;;) {
    while (n > 1) {
      const int64_t left = leftCount(n);
      stack[top].rightLo = lo + left;
      stack[top].rightCount = n - left;
      stack[top].haveLeft = false;
      ++top;
      n = left;
    }
    Acc value = partial(lo);
    // Climb while this value completes right halves; descend into the
    // first right half still to do.
    for (;;) {
      if (top == 0)
        return value;
      Frame &f = stack[top - 1];
      if (!f.haveLeft) {
        f.left = value;
        f.haveLeft = true;
        lo = f.rightLo;
        n = f.rightCount;
        break;
      }
      value = combine(f.left, value);
      --top;
    }
  }
}

/// The whole order, by one thread: the reference (the simulator's).
/// identity for n == 0.
template <typename Acc, typename Term, typename Combine>
COCONET_HD Acc reduce(int64_t n, Acc identity, Term term, Combine combine) {
  if (n <= 0)
    return identity;
  auto partial = [&](int64_t b) {
    const int64_t first = b * kBlock;
    const int64_t count = n - first < kBlock ? n - first : kBlock;
    return blockPartial(
        count, identity, [&](int64_t k) { return term(first + k); }, combine);
  };
  return combineTree(0, blockCount(n), partial, combine);
}

} // namespace coconet::rt::reduce_order

#endif // COCONET_RUNTIME_REDUCE_ORDER_H
