//===- Collectives.cpp - communication stages of the simulator -----------===//
//
// Every collective works on the groups of ranks that differ only along the
// stage's mesh axis (all ranks for axis -1). Reductions combine the members'
// blocks in ascending rank order in f64 (wrapping 64-bit arithmetic for
// integers) and round once.
//
//===----------------------------------------------------------------------===//

#include "sim/SimImpl.h"

#include "coconet/combine.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <optional>

namespace coconet::sim::detail {

using ir::DType;
using ir::ReduceOp;
using ir::Stage;
using ir::StageKind;

namespace {

/// The runtime's operator: the same table (coconet/reduce_ops.def).
rt::ReduceOp runtimeOp(ReduceOp op) {
  switch (op) {
#define REDUCE_OP(Name, Printed)                                               \
  case ReduceOp::Name:                                                         \
    return rt::ReduceOp::Name;
#include "coconet/reduce_ops.def"
  }
  llvm_unreachable("a reduce operator of no kind");
}

/// Combines element `index` of every member's block, in the members'
/// order, by the rules every target shares (coconet/combine.h).
Scalar combine(ReduceOp op, DType dtype, llvm::ArrayRef<const Tensor *> blocks,
               int64_t index) {
  const bool isF = ir::isFloat(dtype);
  const bool isU = dtype == DType::U64;
  const rt::ReduceOp rop = runtimeOp(op);
  Scalar acc = rt::combineMembersInOrder(
      static_cast<int64_t>(blocks.size()),
      [&](int64_t m) { return blocks[m]->getScalar(index); },
      [&](Scalar a, const Scalar &b) {
        if (isF)
          a.f = rt::combineFloat(rop, a.f, b.f);
        else
          a.i = rt::combineInt(rop, isU, a.i, b.i);
        return a;
      });
  if (op == ReduceOp::Avg)
    acc.f /= static_cast<double>(blocks.size());
  return acc;
}

std::string axisName(const ir::Program &program, int axis) {
  return axis < 0 ? std::string("all axes")
                  : "axis '" + program.mesh.axes[axis].name + "'";
}

} // namespace

llvm::Error runCommunication(const ir::Program &program, const Stage &stage,
                             SimResult &result, bool termSums) {
  if (stage.kind == StageKind::AllToAllV)
    return runAllToAllV(program, stage, result);
  const Stage &x = *stage.operands[0];
  const RankGrid &grid = result.grid;
  const int64_t numRanks = grid.numRanks();
  std::vector<Tensor> outs(numRanks);
  // A float sum allreduce's terms are its members' values: the sum of their
  // magnitudes bounds a reassociation of it (verify/Differential.h).
  // So are a reducescatter's (an algorithm file reassociates it too).
  const bool magnitudes = termSums &&
                          (stage.kind == StageKind::AllReduce ||
                           stage.kind == StageKind::ReduceScatter) &&
                          stage.reduceOp == ReduceOp::Sum &&
                          ir::isFloat(x.type.dtype);
  // A collective an algorithm file runs (sim/Algorithms.cpp).
  std::optional<AlgorithmRun> algorithm;
  if (stage.table)
    algorithm.emplace(*stage.table);
  const bool isF = ir::isFloat(x.type.dtype);
  const rt::ReduceOp rop = runtimeOp(stage.reduceOp);
  auto combineTwo = [&](Scalar a, Scalar b) {
    if (isF)
      a.f = ir::roundTo(x.type.dtype, rt::combineFloat(rop, a.f, b.f));
    else
      a.i =
          ir::wrapTo(x.type.dtype,
                     rt::combineInt(rop, x.type.dtype == DType::U64, a.i, b.i));
    return a;
  };
  llvm::SmallVector<Scalar, 8> contributions;
  if (magnitudes)
    result.termSums[stage.id].assign(static_cast<size_t>(numRanks), Tensor());
  for (int64_t r = 0; r < numRanks; ++r) {
    int64_t pos = 0;
    auto members = grid.group(r, stage.axis, pos);
    const int64_t groupSize = static_cast<int64_t>(members.size());
    const Placement &po = result.placements[stage.id][r];
    const Tensor &mine = result.values[x.id][r];
    Tensor out(stage.type.dtype, po.localShape);
    llvm::SmallVector<const Tensor *, 8> blocks;
    for (int64_t m : members)
      blocks.push_back(&result.values[x.id][m]);
    for (const Tensor *b : blocks)
      if (b->shape() != mine.shape())
        return internalError(stage, "the members' blocks differ in shape");
    if (algorithm)
      if (llvm::Error e = algorithm->check(stage, axisName(program, stage.axis),
                                           groupSize, mine.size()))
        return e;
    // The value of element `at` of every member's block combined by the
    // algorithm into chunk `chunk` on this member.
    auto byAlgorithm = [&](uint64_t chunk, int64_t at) {
      contributions.clear();
      for (const Tensor *b : blocks)
        contributions.push_back(b->getScalar(at));
      return algorithm->value(chunk, contributions, static_cast<unsigned>(pos),
                              combineTwo);
    };
    const int64_t chunkElements =
        algorithm
            ? mine.size() / static_cast<int64_t>(stage.table->inputChunks())
            : 0;

    switch (stage.kind) {
    case StageKind::AllReduce:
      for (int64_t i = 0; i < out.size(); ++i)
        out.setScalar(
            i, algorithm ? byAlgorithm(i / chunkElements, i)
                         : combine(stage.reduceOp, x.type.dtype, blocks, i));
      if (magnitudes) {
        Tensor sums(DType::F64, po.localShape);
        for (int64_t i = 0; i < out.size(); ++i) {
          double m = 0;
          for (const Tensor *b : blocks)
            m += std::fabs(b->get(i));
          sums.set(i, m);
        }
        result.termSums[stage.id][static_cast<size_t>(r)] = std::move(sums);
      }
      break;
    case StageKind::ReduceScatter: {
      // The input block covers the same region on every member. Packed,
      // member pos's block is chunks [pos k, (pos + 1) k) of the
      // algorithm's, in the order of its own elements.
      const Placement &pi = result.placements[x.id][r];
      // Each element's global coordinates, walked in order.
      Coords c(po.offset.begin(), po.offset.end());
      for (int64_t i = 0; i < out.size(); ++i) {
        if (i)
          Tensor::nextCoords(c, po.localShape, po.offset);
        int64_t j = operandIndex(pi, c);
        if (j < 0)
          return internalError(stage, "scattered block outside the input");
        out.setScalar(
            i, algorithm
                   ? byAlgorithm(static_cast<uint64_t>(pos) *
                                         stage.table->chunksPerRank +
                                     static_cast<uint64_t>(i / chunkElements),
                                 j)
                   : combine(stage.reduceOp, x.type.dtype, blocks, j));
      }
      if (magnitudes) {
        Tensor sums(DType::F64, po.localShape);
        c.assign(po.offset.begin(), po.offset.end());
        for (int64_t i = 0; i < out.size(); ++i) {
          if (i)
            Tensor::nextCoords(c, po.localShape, po.offset);
          const int64_t j = operandIndex(pi, c);
          double m = 0;
          for (const Tensor *b : blocks)
            m += std::fabs(b->get(j));
          sums.set(i, m);
        }
        result.termSums[stage.id][static_cast<size_t>(r)] = std::move(sums);
      }
      break;
    }
    case StageKind::AllGather:
    case StageKind::AllToAll: {
      // Every element of the result's block lies in exactly one member's
      // input block (an alltoall's result is the same global value, sliced
      // along another dimension).
      // Each element's global coordinates, walked in order.
      Coords c(po.offset.begin(), po.offset.end());
      for (int64_t i = 0; i < out.size(); ++i) {
        if (i)
          Tensor::nextCoords(c, po.localShape, po.offset);
        int64_t found = -1;
        for (size_t m = 0; m < members.size() && found < 0; ++m) {
          int64_t j = operandIndex(result.placements[x.id][members[m]], c);
          if (j >= 0) {
            out.setScalar(i, blocks[m]->getScalar(j));
            found = j;
          }
        }
        if (found < 0)
          return internalError(stage, "no member holds a gathered element");
      }
      break;
    }
    case StageKind::Broadcast:
    case StageKind::Reduce: {
      if (stage.root >= groupSize)
        return llvm::createStringError(
            llvm::formatv(
                "{0} '{1}': root {2} is out of range; {3} has {4} ranks",
                stage.kind == StageKind::Broadcast ? "broadcast" : "reduce",
                stage.name, stage.root, axisName(program, stage.axis),
                groupSize)
                .str());
      if (stage.kind == StageKind::Broadcast) {
        out = *blocks[stage.root];
      } else if (pos == stage.root) {
        for (int64_t i = 0; i < out.size(); ++i)
          out.setScalar(i, combine(stage.reduceOp, x.type.dtype, blocks, i));
      } // else: zeros
      break;
    }
    case StageKind::AllToAllV:
      return internalError(stage, "alltoallv has its own run");
    case StageKind::SendRecv: {
      int64_t from = pos - stage.offset;
      if (from >= 0 && from < groupSize)
        out = *blocks[from];
      break;
    }
#define STAGE(Name, Printed, Description) case StageKind::Name:
#define COMMUNICATION_STAGE(Name, Printed, Description)
#include "ir/StageKinds.def"
      return internalError(stage, "not a communication stage");
    }
    outs[r] = std::move(out);
  }
  result.values[stage.id] = std::move(outs);
  return llvm::Error::success();
}

} // namespace coconet::sim::detail
