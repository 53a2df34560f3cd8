//===- Simulator.cpp - the reference simulator ----------------------------===//
//
// Runs the stages in program order; each stage is computed for every rank
// before the next one starts. Computation stages work on one rank's blocks
// (mapping every element to global coordinates, so that replicated operands
// are read at a slice's offset); communication stages are in
// Collectives.cpp.
//
//===----------------------------------------------------------------------===//

#include "sim/Simulator.h"

#include "ir/ScalarEval.h"
#include "sim/Inputs.h"
#include "sim/SimImpl.h"
#include "support/FloatOrder.h"

#include "coconet/float_range.h"
#include "coconet/reduce_order.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>

namespace coconet::sim {

using ir::DType;
using ir::Stage;
using ir::StageKind;

namespace detail {

int64_t operandIndex(const Placement &operand, llvm::ArrayRef<int64_t> global) {
  const size_t rank = operand.globalShape.size(), outRank = global.size();
  int64_t index = 0;
  for (size_t d = 0; d < rank; ++d) {
    int64_t g = operand.globalShape[d] == 1 ? 0 : global[d + outRank - rank];
    int64_t l = g - operand.offset[d];
    if (l < 0 || l >= operand.localShape[d])
      return -1;
    index = index * operand.localShape[d] + l;
  }
  return index;
}

llvm::Error internalError(const Stage &stage, const llvm::Twine &what) {
  return llvm::createStringError(("internal error in the simulator at stage '" +
                                  stage.name + "': " + what +
                                  " (this is a compiler bug; please report it)")
                                     .str());
}

} // namespace detail

namespace {

using detail::internalError;
using detail::operandIndex;

/// Shared state of one run.
struct Run {
  const ir::Program &program;
  const SimOptions &options;
  SimResult &result;

  const Tensor &in(const Stage &s, int64_t rank) const {
    return result.values[s.id][rank];
  }
  const Placement &at(const Stage &s, int64_t rank) const {
    return result.placements[s.id][rank];
  }

  llvm::Error placeAll();
  llvm::Error loadParams();
  llvm::Error compute(const Stage &stage, int64_t rank);
  llvm::Error elementwise(const Stage &stage, int64_t rank);
  llvm::Error reduction(const Stage &stage, int64_t rank);
  llvm::Error matmul(const Stage &stage, int64_t rank);
  template <typename T> llvm::Error matmulAs(const Stage &stage, int64_t rank);
  llvm::Error transpose(const Stage &stage, int64_t rank);
  llvm::Error norm(const Stage &stage, int64_t rank);
};

/// Largest global tensor the simulator agrees to hold.
constexpr int64_t kMaxElements = int64_t(1) << 28;

llvm::Error Run::placeAll() {
  const RankGrid &grid = result.grid;
  for (const auto &stage : program.getStages()) {
    llvm::SmallVector<int64_t, 4> shape;
    int64_t elements = 1;
    for (const ir::Dim &dim : stage->type.shape) {
      auto v = dim.evaluate(result.sizes);
      const bool bound = llvm::all_of(dim.symbols(), [&](const std::string &s) {
        return result.sizes.count(s);
      });
      if (!v && bound)
        return llvm::createStringError(
            llvm::formatv("size '{0}' of '{1}' overflows 64 bits with these "
                          "sizes",
                          dim.str(), stage->name)
                .str());
      if (!v || *v <= 0)
        return llvm::createStringError(
            llvm::formatv("size '{0}' of '{1}' has no value; bind it with "
                          "--size",
                          dim.str(), stage->name)
                .str());
      shape.push_back(*v);
      elements *= *v;
      if (elements > kMaxElements)
        return llvm::createStringError(
            llvm::formatv("'{0}' would have more than {1} elements, too many "
                          "for the simulator",
                          stage->name, kMaxElements)
                .str());
    }
    auto &perRank = result.placements[stage->id];
    for (int64_t r = 0; r < grid.numRanks(); ++r) {
      auto p = place(shape, stage->type.layout, program.mesh, grid,
                     grid.coordsOf(r), stage->name);
      if (!p)
        return p.takeError();
      perRank.push_back(std::move(*p));
    }
    result.values[stage->id].resize(grid.numRanks());
  }
  return llvm::Error::success();
}

llvm::Error Run::loadParams() {
  const RankGrid &grid = result.grid;
  for (const auto &[name, value] : options.scalarValues) {
    const Stage *s = program.findStage(name);
    if (!s || !s->isParam())
      return llvm::createStringError("--set " + name + ": program '" +
                                     program.name + "' has no parameter '" +
                                     name + "'");
  }
  for (const auto &[name, path] : options.inputFiles) {
    const Stage *s = program.findStage(name);
    if (!s || !s->isParam())
      return llvm::createStringError("--input " + name + ": program '" +
                                     program.name + "' has no parameter '" +
                                     name + "'");
  }
  for (const Stage *param : program.getParams()) {
    const ir::Layout &layout = param->type.layout;
    const Placement &first = at(*param, 0);
    const bool stacked = layout.isLocalAnywhere();
    llvm::SmallVector<int64_t, 4> assembledShape;
    if (stacked)
      assembledShape.push_back(grid.numRanks());
    llvm::append_range(assembledShape, first.globalShape);

    // The assembled tensor, if it comes from the options.
    std::optional<Tensor> given;
    if (auto it = options.scalarValues.find(param->name);
        it != options.scalarValues.end()) {
      auto t = parseScalar(*param, it->second);
      if (!t)
        return t.takeError();
      // A scalar, or every element of a tensor (on every rank).
      Tensor all(param->type.dtype, assembledShape);
      for (int64_t i = 0; i < all.size(); ++i)
        all.setScalar(i, t->getScalar(0));
      given = std::move(all);
    } else if (auto it = options.inputFiles.find(param->name);
               it != options.inputFiles.end()) {
      auto t = readInputFile(*param, assembledShape, it->second);
      if (!t)
        return t.takeError();
      given = std::move(*t);
    } else if (auto it = options.inputTensors.find(param->name);
               it != options.inputTensors.end()) {
      if (it->second.shape() != llvm::ArrayRef<int64_t>(assembledShape) ||
          it->second.dtype() != param->type.dtype)
        return llvm::createStringError("input tensor '" + param->name +
                                       "' has the wrong type or shape");
      given = it->second;
    }

    std::map<int64_t, Tensor> generated; // per local group
    for (int64_t r = 0; r < grid.numRanks(); ++r) {
      const Placement &p = at(*param, r);
      Tensor global;
      if (given && stacked) {
        // Entry r of the stacked tensor.
        global = Tensor(param->type.dtype, p.globalShape);
        int64_t n = global.size();
        for (int64_t i = 0; i < n; ++i)
          global.setScalar(i, given->getScalar(r * n + i));
      } else if (given) {
        global = *given;
      } else {
        int64_t group = localGroup(layout, grid, grid.coordsOf(r));
        auto it = generated.find(group);
        if (it == generated.end())
          it = generated
                   .emplace(group,
                            generateInput(*param, p.globalShape, options.seed,
                                          group, options.inputKind))
                   .first;
        global = it->second;
      }
      result.values[param->id][r] = extractBlock(global, p);
    }

    // Ranks of one local group holding the same block must agree (the
    // value is replicated between them): only a stacked file can break it.
    if (given && stacked) {
      for (int64_t r = 0; r < grid.numRanks(); ++r)
        for (int64_t q = 0; q < r; ++q)
          if (localGroup(layout, grid, grid.coordsOf(q)) ==
                  localGroup(layout, grid, grid.coordsOf(r)) &&
              at(*param, q).offset == at(*param, r).offset &&
              !(in(*param, q) == in(*param, r)))
            return llvm::createStringError(
                llvm::formatv(
                    "input '{0}': entries {1} and {2} must be equal: the "
                    "parameter is {3}, so ranks {1} and {2} hold the same "
                    "block",
                    param->name, q, r, layout.str(program.mesh))
                    .str());
    }
  }
  return llvm::Error::success();
}

llvm::Error Run::elementwise(const Stage &stage, int64_t rank) {
  const Placement &p = at(stage, rank);
  Tensor out(stage.type.dtype, p.localShape);
  llvm::SmallVector<Scalar, 4> operands(stage.operands.size());
  // Operands read at each element's segment, and that segment (walked
  // forward: the elements of a block are in order).
  llvm::SmallVector<bool, 4> bySegment(stage.operands.size());
  const rt::SegmentTable *table = nullptr;
  for (unsigned j = 0; j < stage.operands.size(); ++j)
    if ((bySegment[j] = ir::readsBySegment(program, stage, j)))
      table = &result.table(stage.type.segments);
  int64_t segment = 0;
  // Each element's global coordinates, walked in order from the first.
  Coords c(p.offset.begin(), p.offset.end());
  for (int64_t i = 0; i < out.size(); ++i) {
    if (i)
      Tensor::nextCoords(c, p.localShape, p.offset);
    if (table) {
      if (i == 0)
        segment = table->segmentOf(c[0]);
      while (table->end(segment) <= c[0])
        ++segment;
    }
    for (size_t j = 0; j < stage.operands.size(); ++j) {
      const Stage &op = *stage.operands[j];
      int64_t index = bySegment[j] ? segment : operandIndex(at(op, rank), c);
      if (index < 0)
        return internalError(stage, "operand '" + op.name +
                                        "' has no element here on rank " +
                                        llvm::Twine(rank));
      operands[j] = in(op, rank).getScalar(index);
    }
    uint64_t globalIndex =
        static_cast<uint64_t>(Tensor::linearIndex(c, p.globalShape));
    out.setScalar(i, ir::evalScalar(*stage.body, operands, globalIndex));
  }
  result.values[stage.id][rank] = std::move(out);
  return llvm::Error::success();
}

/// The reduction `kind` of the n values get(k) (k < n) of element type
/// `dtype`, in the order of coconet/reduce_order.h: floats (and the squares
/// of integers) in f64, integers with wrapping 64-bit arithmetic.
template <typename Get>
Scalar reduceSequence(ir::ReductionKind kind, DType dtype, int64_t n, Get get) {
  namespace order = rt::reduce_order;
  const bool max = kind == ir::ReductionKind::Max;
  const bool maxMin = max || kind == ir::ReductionKind::Min;
  const bool squares =
      kind == ir::ReductionKind::Norm || kind == ir::ReductionKind::SumSquares;
  Scalar s;
  if (ir::isFloat(dtype) || squares) {
    auto term = [&](int64_t k) {
      const Scalar v = get(k);
      const double f = ir::isFloat(dtype)
                           ? v.f
                           : static_cast<double>(static_cast<int64_t>(v.i));
      return squares ? order::square(f) : f;
    };
    double r;
    if (maxMin)
      r = order::reduce(
          n, static_cast<double>(NAN), term, [&](double a, double b) {
            return max ? support::maxNumber(a, b) : support::minNumber(a, b);
          });
    else
      r = order::reduce(n, 0.0, term, [](double a, double b) { return a + b; });
    if (kind == ir::ReductionKind::Norm)
      r = std::sqrt(r);
    s.f = order::canonicalNaN(r);
    return s;
  }
  auto term = [&](int64_t k) { return get(k).i; };
  if (!maxMin) {
    s.i = order::reduce(n, uint64_t{0}, term,
                        [](uint64_t a, uint64_t b) { return a + b; });
    return s;
  }
  // The integer max of nothing is the type's least value, min its
  // greatest: the identity of the combination.
  const bool u = dtype == DType::U64;
  uint64_t identity = 0;
  switch (dtype) {
  case DType::I32:
    identity = static_cast<uint64_t>(
        static_cast<int64_t>(max ? INT32_MIN : INT32_MAX));
    break;
  case DType::I64:
    identity = static_cast<uint64_t>(max ? INT64_MIN : INT64_MAX);
    break;
  case DType::U64:
    identity = max ? 0 : UINT64_MAX;
    break;
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
  case DType::Bool:
    break; // not integers that reach here
  }
  s.i = order::reduce(n, identity, term, [&](uint64_t a, uint64_t b) {
    if (u)
      return max ? std::max(a, b) : std::min(a, b);
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    return static_cast<uint64_t>(max ? std::max(x, y) : std::min(x, y));
  });
  return s;
}

/// Whether the simulator keeps the term sums of `stage` (SimResult).
static bool hasTermSums(const Stage &stage) {
  return stage.kind == StageKind::Reduction &&
         ir::isFloat(stage.operands[0]->type.dtype) &&
         (stage.reduction == ir::ReductionKind::Sum ||
          stage.reduction == ir::ReductionKind::Norm ||
          stage.reduction == ir::ReductionKind::SumSquares);
}

llvm::Error Run::reduction(const Stage &stage, int64_t rank) {
  const Stage &x = *stage.operands[0];
  const Tensor &input = in(x, rank);
  const Placement &p = at(stage, rank);
  Tensor out(stage.type.dtype, p.localShape);
  llvm::ArrayRef<int64_t> inShape = input.shape();
  // The sum of the terms' magnitudes, beside the reduction.
  const bool terms = options.recordTermSums && hasTermSums(stage);
  const bool sumOfSquares = stage.reduction != ir::ReductionKind::Sum;
  Tensor magnitudes;
  if (terms)
    magnitudes = Tensor(DType::F64, p.localShape);
  auto magnitude = [&](double v) {
    return sumOfSquares ? v * v : std::fabs(v);
  };
  if (!stage.segments.empty()) {
    // Per segment, over the elements of this rank's block.
    const rt::SegmentTable &table = result.table(stage.segments);
    const int64_t lo = at(x, rank).offset[0], hi = lo + input.size();
    for (int64_t s = 0; s < table.segments(); ++s) {
      double sum = 0;
      const int64_t b = std::max(lo, table.begin(s)),
                    e = std::min(hi, table.end(s));
      // The piece of the segment in this block, from its own first element.
      out.setScalar(s,
                    reduceSequence(stage.reduction, x.type.dtype,
                                   std::max<int64_t>(e - b, 0), [&](int64_t k) {
                                     return input.getScalar(b - lo + k);
                                   }));
      for (int64_t g = b; terms && g < e; ++g)
        sum += magnitude(input.get(g - lo));
      if (terms)
        magnitudes.set(s, sum);
    }
  } else if (stage.dim < 0) {
    double sum = 0;
    out.setScalar(
        0, reduceSequence(stage.reduction, x.type.dtype, input.size(),
                          [&](int64_t k) { return input.getScalar(k); }));
    for (int64_t i = 0; terms && i < input.size(); ++i)
      sum += magnitude(input.get(i));
    if (terms)
      magnitudes.set(0, sum);
  } else {
    const size_t dim = static_cast<size_t>(stage.dim);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < dim; ++d)
      outer *= inShape[d];
    for (size_t d = dim + 1; d < inShape.size(); ++d)
      inner *= inShape[d];
    if (outer * inner != out.size())
      return internalError(stage, "reduced block has the wrong size");
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t n = 0; n < inner; ++n) {
        double sum = 0;
        auto at = [&](int64_t k) { return (o * inShape[dim] + k) * inner + n; };
        out.setScalar(
            o * inner + n,
            reduceSequence(stage.reduction, x.type.dtype, inShape[dim],
                           [&](int64_t k) { return input.getScalar(at(k)); }));
        for (int64_t k = 0; terms && k < inShape[dim]; ++k)
          sum += magnitude(input.get(at(k)));
        if (terms)
          magnitudes.set(o * inner + n, sum);
      }
  }
  result.values[stage.id][rank] = std::move(out);
  if (terms) {
    auto &perRank = result.termSums[stage.id];
    perRank.resize(static_cast<size_t>(result.grid.numRanks()));
    perRank[rank] = std::move(magnitudes);
  }
  return llvm::Error::success();
}

llvm::Error Run::matmul(const Stage &stage, int64_t rank) {
  return ir::isFloat(stage.type.dtype) ? matmulAs<double>(stage, rank)
                                       : matmulAs<uint64_t>(stage, rank);
}

/// Row-major strides of a block of `shape`.
static Coords stridesOf(llvm::ArrayRef<int64_t> shape) {
  Coords strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

/// Whether `coords` lie in the block of `p`.
static bool inBlock(llvm::ArrayRef<int64_t> coords, const Placement &p) {
  for (size_t d = 0; d < coords.size(); ++d)
    if (coords[d] < 0 || coords[d] >= p.localShape[d])
      return false;
  return true;
}

template <typename T>
llvm::Error Run::matmulAs(const Stage &stage, int64_t rank) {
  const Stage &a = *stage.operands[0], &b = *stage.operands[1];
  const Placement &pa = at(a, rank), &pb = at(b, rank), &po = at(stage, rank);
  const size_t ra = pa.globalShape.size(), rb = pb.globalShape.size();
  const int64_t kLocal = pa.localShape[ra - 1];
  // The row of b's block that a's column k multiplies is kOffset + k.
  const int64_t kOffset = pa.offset[ra - 1] - pb.offset[rb - 2];
  const std::vector<T> va = detail::matmulValues<T>(in(a, rank)),
                       vb = detail::matmulValues<T>(in(b, rank));
  const Coords sa = stridesOf(pa.localShape), sb = stridesOf(pb.localShape);
  Tensor out(stage.type.dtype, po.localShape);
  // One row of the result at a time: its n elements' sums, each over k
  // ascending from 0 (in f64 for floats, integers wrapping), accumulated
  // side by side (the same additions in the same order as one element's
  // loop over k, and a loop over j that vectorises).
  const int64_t n = po.localShape[ra - 1];
  std::vector<T> sums(static_cast<size_t>(n));
  Coords c, ca(ra), cb(rb);
  for (int64_t first = 0; first < out.size(); first += n) {
    Tensor::coordsOf(first, po.localShape, c);
    for (size_t d = 0; d < c.size(); ++d)
      c[d] += po.offset[d];
    // Batch dimensions of a match the result's; b's align at the end.
    for (size_t d = 0; d + 2 < ra; ++d)
      ca[d] = c[d] - pa.offset[d];
    for (size_t d = 0; d + 2 < rb; ++d)
      cb[d] = pb.globalShape[d] == 1 ? 0 : c[d + ra - rb] - pb.offset[d];
    ca[ra - 2] = c[ra - 2] - pa.offset[ra - 2];
    ca[ra - 1] = 0;
    cb[rb - 2] = kOffset;
    // Every k of every element must find its elements: b's block is
    // checked first, as at k = 0 (a's coordinates other than k do not
    // change with k).
    for (int64_t j = 0; j < n && kLocal > 0; ++j) {
      cb[rb - 1] = c[ra - 1] + j - pb.offset[rb - 1];
      if (!inBlock(cb, pb))
        return internalError(stage, "right operand block misses an element");
      if (!inBlock(ca, pa))
        return internalError(stage, "left operand block misses an element");
      if (kOffset + kLocal > pb.localShape[rb - 2])
        return internalError(stage, "right operand block misses an element");
    }
    std::fill(sums.begin(), sums.end(), T(0));
    if (kLocal > 0) {
      cb[rb - 1] = c[ra - 1] - pb.offset[rb - 1];
      const T *rowA = va.data() + Tensor::linearIndex(ca, pa.localShape);
      const T *rowB = vb.data() + Tensor::linearIndex(cb, pb.localShape);
      for (int64_t k = 0; k < kLocal; ++k)
        detail::addProducts(rowA[k * sa[ra - 1]], rowB + k * sb[rb - 2],
                            sums.data(), n);
    }
    detail::storeSums(llvm::ArrayRef<T>(sums), out, first);
  }
  result.values[stage.id][rank] = std::move(out);
  return llvm::Error::success();
}

llvm::Error Run::transpose(const Stage &stage, int64_t rank) {
  const Tensor &x = in(*stage.operands[0], rank);
  const Placement &p = at(stage, rank);
  Tensor out(stage.type.dtype, p.localShape);
  const Coords zero(p.localShape.size(), 0);
  Coords walk = zero, c;
  for (int64_t i = 0; i < out.size(); ++i) {
    if (i)
      Tensor::nextCoords(walk, p.localShape, zero);
    c = walk;
    std::swap(c[stage.dim], c[stage.dim2]);
    out.setScalar(i, x.getScalar(Tensor::linearIndex(c, x.shape())));
  }
  result.values[stage.id][rank] = std::move(out);
  return llvm::Error::success();
}

llvm::Error Run::norm(const Stage &stage, int64_t rank) {
  const bool layer = stage.kind == StageKind::LayerNorm;
  const Stage &x = *stage.operands[0];
  const Stage &gamma = *stage.operands[1];
  const Stage *beta = layer ? stage.operands[2] : nullptr;
  const Stage &eps = *stage.operands.back();
  const Placement &p = at(stage, rank);
  const Tensor &tx = in(x, rank);
  const size_t r = p.localShape.size();
  const int64_t h = p.localShape[r - 1];
  if (h != p.globalShape[r - 1])
    return internalError(stage, "the normalised dimension is sliced");
  const double e = in(eps, rank).get(0);
  Tensor out(stage.type.dtype, p.localShape);
  // Each element's global coordinates, walked in order (i = row * h + j).
  Coords c(p.offset.begin(), p.offset.end());
  for (int64_t row = 0; row < out.size() / h; ++row) {
    double mean = 0, sq = 0;
    for (int64_t j = 0; j < h; ++j)
      mean += tx.get(row * h + j);
    mean /= static_cast<double>(h);
    for (int64_t j = 0; j < h; ++j) {
      double v = tx.get(row * h + j) - (layer ? mean : 0.0);
      sq += v * v;
    }
    double scale = 1.0 / std::sqrt(sq / static_cast<double>(h) + e);
    for (int64_t j = 0; j < h; ++j) {
      int64_t i = row * h + j;
      if (i)
        Tensor::nextCoords(c, p.localShape, p.offset);
      int64_t gi = operandIndex(at(gamma, rank), c);
      int64_t bi = beta ? operandIndex(at(*beta, rank), c) : 0;
      if (gi < 0 || bi < 0)
        return internalError(stage, "gamma or beta misses an element");
      double v =
          (tx.get(i) - (layer ? mean : 0.0)) * scale * in(gamma, rank).get(gi);
      if (beta)
        v += in(*beta, rank).get(bi);
      out.set(i, v);
    }
  }
  result.values[stage.id][rank] = std::move(out);
  return llvm::Error::success();
}

llvm::Error Run::compute(const Stage &stage, int64_t rank) {
  switch (stage.kind) {
  case StageKind::Elementwise:
    return elementwise(stage, rank);
  case StageKind::Reduction:
    return reduction(stage, rank);
  case StageKind::MatMul:
    return matmul(stage, rank);
  case StageKind::Transpose:
    return transpose(stage, rank);
  case StageKind::LayerNorm:
  case StageKind::RmsNorm:
    return norm(stage, rank);
  case StageKind::TopK:
  case StageKind::CumSum:
  case StageKind::Gather:
  case StageKind::Scatter:
  case StageKind::Reshape: {
    llvm::SmallVector<const Tensor *, 3> tensors;
    llvm::SmallVector<const Placement *, 3> placements;
    for (const Stage *op : stage.operands) {
      tensors.push_back(&in(*op, rank));
      placements.push_back(&at(*op, rank));
    }
    return detail::indexOp(stage, tensors, placements, at(stage, rank),
                           result.values[stage.id][rank]);
  }
  case StageKind::GroupedMatMul:
    return detail::groupedMatmul(stage, result, rank);
  case StageKind::Param:
  case StageKind::AllToAllV:
  case StageKind::AllReduce:
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::Broadcast:
  case StageKind::Reduce:
  case StageKind::SendRecv:
  case StageKind::AllToAll:
    break;
  }
  return internalError(stage, "not a computation stage");
}

} // namespace

/// An overlap cuts each block of the chunked dimension into `chunks`
/// parts; the sizes must allow that (as they must for slices).
static llvm::Error checkOverlaps(const ir::Program &program,
                                 const SimResult &result) {
  for (const ir::Overlap &o : program.overlaps) {
    // Dropless: parts of the experts each member of the alltoallv's axis
    // holds (E / P of its counts [P, E]).
    if (const ir::Stage *v = o.alltoallv()) {
      const Placement &c = result.placement(*v->operands[1], 0);
      const int64_t members = result.grid.axisSize(v->axis < 0 ? 0 : v->axis);
      const int64_t experts = c.localShape[1] / members;
      if (experts % o.chunks != 0)
        return llvm::createStringError(llvm::formatv(
            "'{0}' is overlapped with '{1}' in {2} parts of the experts each "
            "member of the alltoallv holds, {3}: that must be a multiple of "
            "{2}; choose sizes that divide evenly",
            o.producer->name, o.consumer->name, o.chunks, experts));
      continue;
    }
    // Each rank's block of the producer along the chunked dimension; a
    // reducescatter cuts it further into one block per rank of its axis.
    const Placement &p = result.placement(*o.producer, 0);
    int64_t size = p.localShape[o.dim];
    int64_t blocks = 1;
    if (o.consumer->kind == StageKind::ReduceScatter)
      blocks =
          result.grid.axisSize(o.consumer->axis < 0 ? 0 : o.consumer->axis);
    if (size % (blocks * o.chunks) != 0)
      return llvm::createStringError(llvm::formatv(
          "'{0}' is overlapped with '{1}' in {2} chunks along dimension {3}, "
          "of which each rank computes {4}: that must be a multiple of {5} "
          "({2} chunks{6}); choose sizes that divide evenly",
          o.producer->name, o.consumer->name, o.chunks, o.dim, size,
          blocks * o.chunks,
          blocks > 1 ? llvm::formatv(" for each of the {0} blocks the "
                                     "reducescatter hands out",
                                     blocks)
                           .str()
                     : std::string()));
  }
  return llvm::Error::success();
}

/// Reads, takes or generates every segment table and binds its count.
static llvm::Error bindTables(const ir::Program &program,
                              const SimOptions &options, SimResult &result) {
  for (const auto &[name, path] : options.segmentFiles)
    if (!program.findTable(name))
      return llvm::createStringError("--segments " + name + ": program '" +
                                     program.name + "' has no segment table '" +
                                     name + "'");
  for (size_t i = 0; i < program.tables.size(); ++i) {
    const ir::SegmentTableDecl &decl = program.tables[i];
    const std::string &countName = decl.count.symbols().front();
    rt::SegmentTable table;
    rt::Status status;
    if (auto it = options.segmentFiles.find(decl.name);
        it != options.segmentFiles.end()) {
      status = rt::readSegmentTable(it->second, &table);
    } else if (auto it = options.segmentLengths.find(decl.name);
               it != options.segmentLengths.end()) {
      status = rt::SegmentTable::fromLengths(it->second, decl.name, &table);
    } else {
      auto count = decl.count.evaluate(result.sizes);
      auto length = decl.length.evaluate(result.sizes);
      if (!count || !length)
        return llvm::createStringError(llvm::formatv(
            "segment table '{0}' is not given and cannot be generated: bind "
            "{1} (its segment count) and {2} (its length) with --size, or "
            "give it with --segments {0}=FILE",
            decl.name, countName, decl.length.str()));
      // Its count against the simulator's limit before anything is made
      // (a table of 2^40 segments would be generated first, and then its
      // [T] tensors refused).
      if (*count > kMaxElements)
        return llvm::createStringError(llvm::formatv(
            "segment table '{0}' would have {1}={2} segments, more than the "
            "simulator holds ({3})",
            decl.name, countName, *count, kMaxElements));
      status =
          rt::randomSegmentTable(*count, *length, options.seed,
                                 rt::segmentTableStream(i), decl.name, &table);
    }
    if (!status.ok())
      return llvm::createStringError(status.message());
    if (table.segments() > kMaxElements)
      return llvm::createStringError(llvm::formatv(
          "segment table '{0}' has {1} segments, more than the simulator "
          "holds ({2})",
          decl.name, table.segments(), kMaxElements));
    auto bound = result.sizes.find(countName);
    if (bound != result.sizes.end() && bound->second != table.segments())
      return llvm::createStringError(llvm::formatv(
          "segment table '{0}' has {1} segments, but its count {2} is bound "
          "to {3}",
          decl.name, table.segments(), countName, bound->second));
    result.sizes[countName] = table.segments();
    if (auto length = decl.length.evaluate(result.sizes))
      if (rt::Status st = table.checkElements(*length, decl.length.str());
          !st.ok())
        return llvm::createStringError(st.message());
    result.tables.emplace(decl.name, std::move(table));
  }
  return llvm::Error::success();
}

/// The program's requirements on its scalar parameters (replicated: rank
/// 0's values are every rank's), each evaluated as the hosts evaluate it.
static llvm::Error checkRequirements(const ir::Program &program,
                                     const SimResult &result) {
  for (const ir::Requirement &r : program.requirements) {
    llvm::SmallVector<ir::Scalar, 2> values;
    std::vector<std::string> texts;
    for (const Stage *p : r.params) {
      const ir::Scalar v = result.value(*p, 0).getScalar(0);
      values.push_back(v);
      const ir::DType t = p->type.dtype;
      if (ir::isFloat(t))
        texts.push_back(rt::numberText(static_cast<rt::DType>(t), v.f));
      else if (t == ir::DType::Bool)
        texts.push_back(v.i ? "true" : "false");
      else if (t == ir::DType::U64)
        texts.push_back(std::to_string(v.i));
      else
        texts.push_back(std::to_string(static_cast<int64_t>(v.i)));
    }
    if (ir::evalScalar(*r.condition, values, 0).i != 0)
      continue;
    const auto pieces = ir::requirementPieces(r);
    std::string failure = program.name + ": ";
    for (size_t i = 0; i < pieces.size(); ++i)
      failure += pieces[i] + (i < texts.size() ? texts[i] : "");
    return llvm::createStringError(failure);
  }
  return llvm::Error::success();
}

llvm::Expected<SimResult> simulate(const ir::Program &program,
                                   const SimOptions &options) {
  llvm::SmallVector<int64_t, 2> axisSizes;
  for (const auto &axis : program.mesh.axes) {
    auto it = options.sizes.find(axis.size);
    if (it == options.sizes.end() || it->second <= 0)
      return llvm::createStringError("mesh axis '" + axis.name +
                                     "' needs a size: bind " + axis.size);
    if (it->second > 1024)
      return llvm::createStringError(
          llvm::formatv("mesh axis '{0}' has {1} ranks; the simulator runs "
                        "at most 1024 per axis",
                        axis.name, it->second)
              .str());
    axisSizes.push_back(it->second);
  }
  SimResult result(program, RankGrid(axisSizes));
  if (result.grid.numRanks() > 4096)
    return llvm::createStringError("the simulator runs at most 4096 ranks");
  result.sizes = options.sizes;
  if (auto err = bindTables(program, options, result))
    return err;
  result.placements.resize(program.getStages().size());
  result.termSums.resize(program.getStages().size());
  Run run{program, options, result};
  if (auto err = run.placeAll())
    return err;
  if (auto err = checkOverlaps(program, result))
    return err;
  if (auto err = run.loadParams())
    return err;
  if (auto err = checkRequirements(program, result))
    return err;
  for (const auto &stage : program.getStages()) {
    if (stage->isParam())
      continue;
    if (ir::isCommunication(stage->kind)) {
      if (auto err = detail::runCommunication(program, *stage, result,
                                              options.recordTermSums))
        return err;
      if (options.afterStage)
        if (auto err = options.afterStage(*stage, result))
          return err;
      continue;
    }
    for (int64_t r = 0; r < result.grid.numRanks(); ++r)
      if (auto err = run.compute(*stage, r))
        return err;
    if (options.afterStage)
      if (auto err = options.afterStage(*stage, result))
        return err;
  }
  return result;
}

} // namespace coconet::sim
