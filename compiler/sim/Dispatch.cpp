//===- Dispatch.cpp - alltoallv and grouped_matmul in the simulator ------===//
//
// Dropless routing as ir/Program.h defines it, member by member: the
// simulator's reading is the definition every target must reproduce bit for
// bit (runtime/src/cpu/alltoallv.cpp, runtime/src/cuda/alltoallv.cpp).
//
//===----------------------------------------------------------------------===//

#include "sim/SimImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace coconet::sim::detail {

using ir::Stage;

namespace {

/// Elements per row of a block [1, rows, ...]: the product of dimensions
/// 2 onward.
int64_t rowElements(llvm::ArrayRef<int64_t> localShape) {
  int64_t n = 1;
  for (size_t d = 2; d < localShape.size(); ++d)
    n *= localShape[d];
  return n;
}

} // namespace

llvm::Error runAllToAllV(const ir::Program &program, const Stage &stage,
                         SimResult &result) {
  const Stage &counts = *stage.operands.back();
  const RankGrid &grid = result.grid;
  std::vector<Tensor> outs(grid.numRanks());
  for (int64_t r = 0; r < grid.numRanks(); ++r) {
    int64_t pos = 0;
    auto members = grid.group(r, stage.axis, pos);
    const int64_t numMembers = static_cast<int64_t>(members.size());
    const int64_t e = result.values[counts.id][r].size();
    if (e % numMembers != 0)
      return llvm::createStringError(llvm::formatv(
          "alltoallv '{0}': {1} counts for the {2} ranks of axis '{3}'; the "
          "counts' dimension 1 must be a multiple of the axis's size",
          stage.name, e, numMembers, program.mesh.axes[stage.axis].name));
    const int64_t groups = e / numMembers;
    // Member m's count for segment j (a negative count moves nothing).
    auto count = [&](int64_t m, int64_t j) {
      return std::max<int64_t>(
          0, result.values[counts.id][members[m]].getScalar(j).i);
    };
    const Placement &po = result.placements[stage.id][r];
    Tensor out(stage.type.dtype, po.localShape);
    if (stage.countsResult) {
      // What each member sent this one, as it wrote it.
      for (int64_t m = 0; m < numMembers; ++m)
        for (int64_t g = 0; g < groups; ++g)
          out.setScalar(
              m * groups + g,
              result.values[counts.id][members[m]].getScalar(pos * groups + g));
      outs[r] = std::move(out);
      continue;
    }
    const Stage &x = *stage.operands[0];
    const int64_t rows = po.localShape[1];
    const int64_t width = rowElements(po.localShape);
    int64_t at = 0; // where the next member's rows land
    for (int64_t m = 0; m < numMembers; ++m) {
      const Tensor &from = result.values[x.id][members[m]];
      const int64_t sent = result.placements[x.id][members[m]].localShape[1];
      int64_t start = 0, length = 0;
      for (int64_t j = 0; j < pos * groups; ++j)
        start += count(m, j);
      for (int64_t g = 0; g < groups; ++g)
        length += count(m, pos * groups + g);
      // Rows past `sent` are zeros; rows past `rows` are dropped.
      for (int64_t i = 0; i < length && at + i < rows && start + i < sent; ++i)
        for (int64_t k = 0; k < width; ++k)
          out.setScalar((at + i) * width + k,
                        from.getScalar((start + i) * width + k));
      at += length;
    }
    outs[r] = std::move(out);
  }
  result.values[stage.id] = std::move(outs);
  return llvm::Error::success();
}

/// grouped_matmul's products: the rows of each count's group (j) times
/// the block of expert j % local, K ascending as matmul adds (f64 for
/// floats, integers wrap); rows past the last group stay 0.
template <typename T>
static void groupedProducts(const Tensor &ta, const Tensor &tc,
                            const Tensor &tb, int64_t rows, int64_t k,
                            int64_t n, int64_t local, Tensor &out) {
  const std::vector<T> va = matmulValues<T>(ta), vb = matmulValues<T>(tb);
  std::vector<T> sums(static_cast<size_t>(n));
  int64_t start = 0;
  for (int64_t j = 0; j < tc.size() && start < rows; ++j) {
    const int64_t length = std::max<int64_t>(0, tc.getScalar(j).i);
    const T *expert = vb.data() + (j % local) * k * n;
    for (int64_t row = start; row < std::min(rows, start + length); ++row) {
      std::fill(sums.begin(), sums.end(), T(0));
      for (int64_t i = 0; i < k; ++i)
        addProducts(va[row * k + i], expert + i * n, sums.data(), n);
      storeSums(llvm::ArrayRef<T>(sums), out, row * n);
    }
    start += length;
  }
}

llvm::Error groupedMatmul(const Stage &stage, SimResult &result, int64_t rank) {
  const Stage &a = *stage.operands[0], &counts = *stage.operands[1],
              &b = *stage.operands[2];
  const Tensor &ta = result.values[a.id][rank],
               &tc = result.values[counts.id][rank],
               &tb = result.values[b.id][rank];
  const Placement &pa = result.placements[a.id][rank],
                  &pb = result.placements[b.id][rank],
                  &po = result.placements[stage.id][rank];
  const int64_t rows = pa.localShape[1], k = pa.localShape[2];
  const int64_t n = po.localShape[2], local = pb.localShape[0];
  if (pb.localShape[1] != k || pb.localShape[2] != n || local < 1)
    return internalError(stage, "the experts' block does not fit the rows");
  Tensor out(stage.type.dtype, po.localShape);
  if (ir::isFloat(stage.type.dtype))
    groupedProducts<double>(ta, tc, tb, rows, k, n, local, out);
  else
    groupedProducts<uint64_t>(ta, tc, tb, rows, k, n, local, out);
  result.values[stage.id][rank] = std::move(out);
  return llvm::Error::success();
}

} // namespace coconet::sim::detail
