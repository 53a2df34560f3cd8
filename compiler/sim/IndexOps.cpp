//===- IndexOps.cpp - topk, cumsum, gather and scatter in the simulator ---===//
//
// The operations that read or write by position along one dimension, in the
// most direct order (ir/Program.h states their semantics): every line along
// the dimension is walked from its first element. Blocks are read through
// global coordinates, so a replicated operand is read at a sliced result's
// offset. The targets compute the same with code of their own
// (codegen/IndexCode.cpp); the differential tests compare the two.
//
//===----------------------------------------------------------------------===//

#include "sim/SimImpl.h"

#include <cmath>

namespace coconet::sim::detail {

using ir::DType;
using ir::Scalar;
using ir::Stage;
using ir::StageKind;

namespace {

/// Is a ranked before b in topk's order (greater; a NaN above every
/// number, NaNs equal)? An equal value is not: the earlier position stays
/// ahead.
bool rankedBefore(DType dtype, Scalar a, Scalar b) {
  if (ir::isFloat(dtype)) {
    if (std::isnan(b.f))
      return false;
    return std::isnan(a.f) || a.f > b.f;
  }
  if (dtype == DType::U64)
    return a.i > b.i;
  return static_cast<int64_t>(a.i) > static_cast<int64_t>(b.i);
}

/// The global coordinates of the elements of a block placed at `p`, in
/// order: next() gives local element 0's, then 1's, ... (no division).
class BlockWalk {
public:
  explicit BlockWalk(const Placement &p)
      : p(p), c(p.offset.begin(), p.offset.end()) {}
  const Coords &next() {
    if (started)
      Tensor::nextCoords(c, p.localShape, p.offset);
    started = true;
    return c;
  }

private:
  const Placement &p;
  Coords c;
  bool started = false;
};

/// The element of `t` (placed at `p`, leading dimensions of `global`) at
/// global coordinates `global`, or an internal error.
llvm::Expected<int64_t> localIndex(const Stage &stage, const Placement &p,
                                   llvm::ArrayRef<int64_t> global,
                                   llvm::StringRef what) {
  int64_t index = operandIndex(p, global.take_front(p.globalShape.size()));
  if (index < 0)
    return internalError(stage, what + " has no element here");
  return index;
}

/// Moves global coordinates `g` along `dim` to the position the index
/// (placed at `pi`) holds for them; false when it is outside [0, n).
llvm::Expected<bool> toPosition(const Stage &stage, const Placement &pi,
                                const Tensor &index, unsigned dim, int64_t n,
                                Coords &g) {
  auto ii = localIndex(stage, pi, g, "the index");
  if (!ii)
    return ii.takeError();
  // An i32 or i64, as a signed value.
  const int64_t j = static_cast<int64_t>(index.getScalar(*ii).i);
  if (j < 0 || j >= n)
    return false;
  g[dim] = j;
  return true;
}

} // namespace

llvm::Error indexOp(const Stage &stage, llvm::ArrayRef<const Tensor *> in,
                    llvm::ArrayRef<const Placement *> at, const Placement &po,
                    Tensor &out) {
  const unsigned dim = stage.dim;
  out = Tensor(stage.type.dtype, po.localShape);
  Coords c, g;
  if (stage.kind == StageKind::TopK || stage.kind == StageKind::CumSum) {
    const Tensor &x = *in[0];
    const Placement &px = *at[0];
    const DType dtype = stage.operands[0]->type.dtype;
    const int64_t n = px.globalShape[dim];
    if (stage.kind == StageKind::TopK && stage.k > n)
      return llvm::createStringError(
          "'" + stage.name + "': topk of " + std::to_string(stage.k) +
          " along dimension " + std::to_string(dim) + ", which has only " +
          std::to_string(n) + " elements");
    // One line per result element at position 0 along `dim`.
    BlockWalk walk(po);
    for (int64_t i = 0; i < out.size(); ++i) {
      g = walk.next();
      if (g[dim] != po.offset[dim])
        continue;
      c.resize(g.size());
      for (size_t d = 0; d < g.size(); ++d)
        c[d] = g[d] - po.offset[d];
      auto xAt = [&](int64_t j) -> llvm::Expected<int64_t> {
        g[dim] = j;
        return localIndex(stage, px, g, "the input");
      };
      auto outAt = [&](int64_t j) {
        c[dim] = j;
        return Tensor::linearIndex(c, po.localShape);
      };
      if (stage.kind == StageKind::CumSum) {
        double sum = 0;
        uint64_t isum = 0;
        for (int64_t j = 0; j < n; ++j) {
          auto xi = xAt(j);
          if (!xi)
            return xi.takeError();
          Scalar v = x.getScalar(*xi);
          sum += v.f;
          isum += v.i;
          out.setScalar(outAt(j), Scalar{sum, isum});
        }
        continue;
      }
      // The k best so far, best first.
      llvm::SmallVector<std::pair<Scalar, int64_t>, 8> best;
      for (int64_t j = 0; j < n; ++j) {
        auto xi = xAt(j);
        if (!xi)
          return xi.takeError();
        Scalar v = x.getScalar(*xi);
        size_t p = best.size();
        while (p > 0 && rankedBefore(dtype, v, best[p - 1].first))
          --p;
        if (p >= static_cast<size_t>(stage.k))
          continue;
        best.insert(best.begin() + p, {v, j});
        if (best.size() > static_cast<size_t>(stage.k))
          best.pop_back();
      }
      for (int64_t j = 0; j < stage.k; ++j) {
        Scalar s = best[j].first;
        if (stage.topkIndices)
          s = Scalar{0, static_cast<uint64_t>(best[j].second)};
        out.setScalar(outAt(j), s);
      }
    }
    return llvm::Error::success();
  }
  if (stage.kind == StageKind::Gather) {
    const Tensor &x = *in[0], &index = *in[1];
    const int64_t n = at[0]->globalShape[dim];
    BlockWalk walk(po);
    for (int64_t i = 0; i < out.size(); ++i) {
      g = walk.next();
      auto inRange = toPosition(stage, *at[1], index, dim, n, g);
      if (!inRange)
        return inRange.takeError();
      if (!*inRange)
        continue; // out of range: 0
      auto xi = localIndex(stage, *at[0], g, "the data");
      if (!xi)
        return xi.takeError();
      out.setScalar(i, x.getScalar(*xi));
    }
    return llvm::Error::success();
  }
  if (stage.kind == StageKind::Scatter) {
    const Tensor &into = *in[0], &index = *in[1], &x = *in[2];
    BlockWalk walkOut(po);
    for (int64_t i = 0; i < out.size(); ++i) {
      g = walkOut.next();
      auto ti = localIndex(stage, *at[0], g, "the destination");
      if (!ti)
        return ti.takeError();
      out.setScalar(i, into.getScalar(*ti));
    }
    // The source in row-major order: along `dim`, every line's writes in
    // ascending order, so the last write to an element is the greatest j.
    const Placement &ps = *at[2];
    const int64_t n = po.globalShape[dim];
    BlockWalk walkSource(ps);
    for (int64_t i = 0; i < x.size(); ++i) {
      g = walkSource.next();
      auto inRange = toPosition(stage, *at[1], index, dim, n, g);
      if (!inRange)
        return inRange.takeError();
      if (!*inRange)
        continue; // out of range: dropped
      auto oi = localIndex(stage, po, g, "the result");
      if (!oi)
        return oi.takeError();
      out.setScalar(*oi, x.getScalar(i));
    }
    return llvm::Error::success();
  }
  if (stage.kind == StageKind::Reshape) {
    // The same row-major order: element L of the result is element L of
    // the input.
    const Placement &px = *at[0];
    const Coords zero(px.globalShape.size(), 0);
    BlockWalk walk(po);
    int64_t last = -2; // the previous element's global linear index
    for (int64_t i = 0; i < out.size(); ++i) {
      g = walk.next();
      const int64_t linear = Tensor::linearIndex(g, po.globalShape);
      // The next global element: the input's coordinates step on.
      if (linear == last + 1)
        Tensor::nextCoords(c, px.globalShape, zero);
      else
        Tensor::coordsOf(linear, px.globalShape, c);
      last = linear;
      auto xi = localIndex(stage, px, c, "the input");
      if (!xi)
        return xi.takeError();
      out.setScalar(i, in[0]->getScalar(*xi));
    }
    return llvm::Error::success();
  }
  return internalError(stage, "not an index operation");
}

} // namespace coconet::sim::detail
