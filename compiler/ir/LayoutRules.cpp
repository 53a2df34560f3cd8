//===- LayoutRules.cpp - layout inference rules of the language -----------===//
//
// Axis-by-axis layout rules; see LayoutRules.h and docs/language.md.
//
//===----------------------------------------------------------------------===//

#include "ir/LayoutRules.h"

namespace coconet::ir {

Layout alignLayout(const Layout &layout, unsigned fromRank, unsigned toRank) {
  Layout out = layout;
  for (unsigned a = 0; a < out.size(); ++a)
    if (out[a].state == AxisState::Sliced)
      out[a].dim += static_cast<int>(toRank) - static_cast<int>(fromRank);
  return out;
}

std::optional<Layout> joinLayouts(const Layout &a, const Layout &b,
                                  std::string &hint) {
  Layout out = a;
  for (unsigned i = 0; i < a.size() && i < b.size(); ++i) {
    const AxisLayout &x = a[i], &y = b[i];
    if (x.state == AxisState::Replicated) {
      out[i] = y;
      continue;
    }
    if (y.state == AxisState::Replicated || x == y)
      continue;
    if (x.state == AxisState::Sliced && y.state == AxisState::Sliced) {
      hint = "; slices of different dimensions cannot be combined "
             "element by element; allgather one of them first";
      return std::nullopt;
    }
    hint = "; a local value cannot be combined with a sliced one; "
           "reducescatter the local value or allgather the sliced one";
    return std::nullopt;
  }
  // A dimension sliced over several axes holds its blocks in mesh order
  // (outer axes first). An operand sliced over fewer of them holds a block
  // that contains the result's block only if its axes are the outer ones.
  auto prefixOf = [&](const Layout &in) {
    for (unsigned i = 0; i < out.size(); ++i) {
      if (out[i].state != AxisState::Sliced)
        continue;
      for (unsigned j = i + 1; j < out.size(); ++j)
        if (in[j].state == AxisState::Sliced && in[j].dim == out[i].dim &&
            in[i].state != AxisState::Sliced)
          return false;
    }
    return true;
  };
  if (!prefixOf(a) || !prefixOf(b)) {
    hint = "; a dimension sliced over several axes is cut in mesh order, so "
           "an operand sliced over fewer of them must be sliced over the "
           "outer ones; allgather the operand sliced over the inner axis first";
    return std::nullopt;
  }
  return out;
}

Layout reductionLayout(const Layout &in, unsigned rank, int dim) {
  (void)rank;
  Layout out = in;
  for (unsigned a = 0; a < out.size(); ++a) {
    AxisLayout &x = out[a];
    if (x.state != AxisState::Sliced)
      continue;
    if (dim < 0 || x.dim == dim)
      x = {AxisState::Local, 0};
    else if (x.dim > dim)
      --x.dim;
  }
  return out;
}

std::optional<Layout> matmulLayout(const Layout &a, unsigned ra,
                                   const Layout &b, unsigned rb,
                                   std::string &hint) {
  Layout out(a.size());
  const int aK = static_cast<int>(ra) - 1, bK = static_cast<int>(rb) - 2,
            bN = static_cast<int>(rb) - 1;
  for (unsigned i = 0; i < a.size(); ++i) {
    const AxisLayout &x = a[i], &y = b[i];
    bool xs = x.state == AxisState::Sliced, ys = y.state == AxisState::Sliced;
    if (!xs && !ys) {
      bool local = x.state == AxisState::Local || y.state == AxisState::Local;
      out[i] = {local ? AxisState::Local : AxisState::Replicated, 0};
      continue;
    }
    if (xs && ys && x.dim == aK && y.dim == bK) {
      out[i] = {AxisState::Local, 0}; // partial sums over K
      continue;
    }
    if (xs && x.dim != aK && y.state == AxisState::Replicated) {
      out[i] = x; // rows or batches of a
      continue;
    }
    if (ys && y.dim == bN && x.state == AxisState::Replicated) {
      out[i] = {AxisState::Sliced, static_cast<int>(ra) - 1}; // columns
      continue;
    }
    if (xs && ys && rb == ra && x.dim == y.dim && x.dim < aK - 1 &&
        y.dim < bK) {
      out[i] = x; // the same batch slice on both sides
      continue;
    }
    hint = "; slice the contraction dimension of both operands, the rows of "
           "the left one or the columns of the right one";
    return std::nullopt;
  }
  return out;
}

Layout transposeLayout(const Layout &in, int first, int second) {
  Layout out = in;
  for (unsigned a = 0; a < out.size(); ++a) {
    if (out[a].state != AxisState::Sliced)
      continue;
    if (out[a].dim == second)
      out[a].dim = first;
    else if (out[a].dim == first)
      out[a].dim = second;
  }
  return out;
}

std::optional<Layout> communicationLayout(StageKind kind, const Layout &in,
                                          int axis, int dim, std::string &need,
                                          unsigned &badAxis) {
  Layout out = in;
  unsigned first = axis < 0 ? 0 : static_cast<unsigned>(axis);
  unsigned last = axis < 0 ? in.size() : first + 1;
  for (unsigned a = first; a < last && a < in.size(); ++a) {
    const AxisLayout &x = in[a];
    badAxis = a;
    switch (kind) {
    case StageKind::AllGather:
      if (x.state != AxisState::Sliced) {
        need = "a sliced input";
        return std::nullopt;
      }
      // Gathering one axis of a dimension cut over several keeps the
      // blocks contiguous only for the innermost of them.
      for (unsigned b = a + 1; axis >= 0 && b < in.size(); ++b)
        if (in[b].state == AxisState::Sliced && in[b].dim == x.dim) {
          badAxis = b;
          need = "dimension " + std::to_string(x.dim) +
                 " gathered over its inner axis first";
          return std::nullopt;
        }
      out[a] = {AxisState::Replicated, 0};
      break;
    case StageKind::AllReduce:
    case StageKind::Broadcast:
      if (x.state == AxisState::Sliced) {
        need = "a local or replicated input";
        return std::nullopt;
      }
      out[a] = {AxisState::Replicated, 0};
      break;
    case StageKind::ReduceScatter:
      if (x.state == AxisState::Sliced || in.slicesDim(dim)) {
        need = x.state == AxisState::Sliced
                   ? "a local or replicated input"
                   : "an input whose scattered dimension " +
                         std::to_string(dim) + " is not sliced yet";
        return std::nullopt;
      }
      out[a] = {AxisState::Sliced, dim};
      break;
    case StageKind::AllToAll:
      if (x.state != AxisState::Sliced) {
        need = "a sliced input";
        return std::nullopt;
      }
      if (x.dim == dim) {
        need = "an input sliced along a dimension other than the scattered "
               "dimension " +
               std::to_string(dim);
        return std::nullopt;
      }
      if (in.slicesDim(dim)) {
        need = "an input whose scattered dimension " + std::to_string(dim) +
               " is not sliced yet";
        return std::nullopt;
      }
      // As for allgather: the gathered dimension's blocks are contiguous
      // only for the innermost axis that slices it.
      for (unsigned b = a + 1; b < in.size(); ++b)
        if (in[b].state == AxisState::Sliced && in[b].dim == x.dim) {
          badAxis = b;
          need = "dimension " + std::to_string(x.dim) +
                 " gathered over its inner axis first";
          return std::nullopt;
        }
      out[a] = {AxisState::Sliced, dim};
      break;
    case StageKind::AllToAllV:
      // Each member's rows stay its block: the same layout.
      if (x.state != AxisState::Sliced || x.dim != 0) {
        need = "an input sliced along dimension 0";
        return std::nullopt;
      }
      break;
    case StageKind::Reduce:
    case StageKind::SendRecv:
      if (x.state == AxisState::Sliced) {
        need = "a local or replicated input";
        return std::nullopt;
      }
      out[a] = {AxisState::Local, 0};
      break;
    case StageKind::Param:
    case StageKind::Elementwise:
    case StageKind::Reduction:
    case StageKind::MatMul:
    case StageKind::Transpose:
    case StageKind::LayerNorm:
    case StageKind::RmsNorm:
    case StageKind::TopK:
    case StageKind::CumSum:
    case StageKind::Gather:
    case StageKind::Scatter:
    case StageKind::Reshape:
    case StageKind::GroupedMatMul:
      need = "a communication stage";
      return std::nullopt;
    }
  }
  return out;
}

std::optional<Layout> reshapeLayout(const Layout &in, int dim, bool flatten,
                                    bool outerIsOne, std::string &hint) {
  Layout out = in;
  for (unsigned a = 0; a < out.size(); ++a) {
    if (out[a].state != AxisState::Sliced || out[a].dim < dim)
      continue;
    if (!flatten) {
      if (out[a].dim > dim || outerIsOne)
        ++out[a].dim;
      continue;
    }
    if (out[a].dim == dim + 1 && outerIsOne) {
      out[a].dim = dim;
    } else if (out[a].dim == dim + 1) {
      hint = "its inner dimension " + std::to_string(dim + 1) +
             " is sliced, so a rank's rows would not be contiguous; "
             "allgather it first";
      return std::nullopt;
    }
    if (out[a].dim > dim + 1)
      --out[a].dim;
  }
  return out;
}

std::optional<Layout> alongLayout(const Layout &in, int dim,
                                  std::string &hint) {
  if (in.slicesDim(dim)) {
    hint = "dimension " + std::to_string(dim) +
           " is sliced across ranks; allgather it first, or slice another "
           "dimension";
    return std::nullopt;
  }
  return in;
}

/// The axes on which `l` is sliced along `dim`.
static llvm::SmallVector<unsigned, 2> rowAxes(const Layout &l, int dim) {
  llvm::SmallVector<unsigned, 2> out;
  for (unsigned a = 0; a < l.size(); ++a)
    if (l[a].state == AxisState::Sliced && l[a].dim == dim)
      out.push_back(a);
  return out;
}

/// The index operations read whole blocks: on every axis the data `a` and
/// the index (or source) `b` are in the same state, except that one may be
/// local and the other replicated (local), `a` may be sliced along a
/// dimension at or after `bRank` that `b` does not have while `b` is
/// replicated, and on the axes `rows` (where `b` is sliced along the
/// indexed dimension) `a` is local or replicated and the result `state`.
static std::optional<Layout> sameBlocks(const Layout &a, const Layout &b,
                                        unsigned bRank,
                                        llvm::ArrayRef<unsigned> rows,
                                        AxisLayout state, llvm::StringRef what,
                                        std::string &hint) {
  Layout out = a;
  for (unsigned axis = 0; axis < a.size(); ++axis) {
    const AxisLayout &x = a[axis], &y = b[axis];
    const bool xs = x.state == AxisState::Sliced;
    const bool ys = y.state == AxisState::Sliced;
    if (llvm::is_contained(rows, axis)) {
      if (xs) {
        hint = "the rows are sliced across ranks, so " + what.str() +
               " must be local or replicated on their axis";
        return std::nullopt;
      }
      out[axis] = state;
    } else if (xs && ys) {
      if (x.dim != y.dim) {
        hint = "they are sliced along different dimensions";
        return std::nullopt;
      }
    } else if (xs) {
      if (static_cast<unsigned>(x.dim) < bRank ||
          y.state != AxisState::Replicated) {
        hint = "slice both alike (each rank reads whole blocks)";
        return std::nullopt;
      }
    } else if (ys) {
      hint = "slice both alike (each rank reads whole blocks)";
      return std::nullopt;
    } else if (y.state == AxisState::Local) {
      out[axis] = y;
    }
  }
  return out;
}

std::optional<Layout> gatherLayout(const Layout &x, const Layout &index,
                                   unsigned indexRank, int dim,
                                   std::string &hint) {
  if (x.slicesDim(dim)) {
    hint = "the gathered dimension " + std::to_string(dim) +
           " of the data is sliced across ranks; allgather it first";
    return std::nullopt;
  }
  return sameBlocks(x, index, indexRank, rowAxes(index, dim),
                    {AxisState::Sliced, dim}, "the data", hint);
}

std::optional<Layout> scatterLayout(const Layout &into, const Layout &index,
                                    unsigned indexRank, const Layout &x,
                                    int dim, std::string &hint) {
  if (into.slicesDim(dim)) {
    hint = "the scattered dimension " + std::to_string(dim) +
           " of the destination is sliced across ranks; allgather it first";
    return std::nullopt;
  }
  // The source: x read with its index.
  auto source = sameBlocks(x, index, indexRank, {}, {}, "the source", hint);
  if (!source)
    return std::nullopt;
  // No dimension of `into` is missing from the source (~0u).
  return sameBlocks(into, *source, ~0u, rowAxes(*source, dim),
                    {AxisState::Local, 0}, "the destination", hint);
}

} // namespace coconet::ir
