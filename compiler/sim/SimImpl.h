//===- SimImpl.h - internals shared by the simulator's files ----*- C++ -*-===//

#ifndef COCONET_SIM_SIMIMPL_H
#define COCONET_SIM_SIMIMPL_H

#include "sim/Simulator.h"

#include "ir/AlgorithmTable.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <type_traits>
#include <vector>

namespace coconet::sim::detail {

/// The index, in `operand`'s block, of the element that a result element
/// at global coordinates `global` reads: trailing dimensions align and
/// size-1 dimensions repeat. -1 when this rank's block does not hold it.
int64_t operandIndex(const Placement &operand, llvm::ArrayRef<int64_t> global);

/// Computes a communication stage on every rank.
/// `termSums`: also record a float sum allreduce's sum of |member values|
/// (SimResult::termSums).
llvm::Error runCommunication(const ir::Program &program, const ir::Stage &stage,
                             SimResult &result, bool termSums = false);

/// A collective run by an algorithm file (sim/Algorithms.cpp).
class AlgorithmRun {
public:
  explicit AlgorithmRun(const ir::AlgorithmTable &table);
  /// Whether the table runs on `members` ranks with `inputElements`
  /// elements of each rank's input: the error says why not.
  llvm::Error check(const ir::Stage &stage, llvm::StringRef axis,
                    int64_t members, int64_t inputElements) const;
  /// The value rank `rank` holds of one element of chunk `chunk` when the
  /// algorithm ends, rank r contributing `contributions[r]` (a reduction:
  /// every rank contributes to every chunk); `combine` combines two values
  /// and rounds to the element type.
  ir::Scalar
  value(uint64_t chunk, llvm::ArrayRef<ir::Scalar> contributions, unsigned rank,
        llvm::function_ref<ir::Scalar(ir::Scalar, ir::Scalar)> combine) const;

private:
  struct Step {
    uint32_t step;
    ir::AlgorithmTable::Transfer transfer;
  };
  const ir::AlgorithmTable &table;
  /// The transfers of each chunk, in the steps' order.
  std::vector<std::vector<Step>> perChunk;
  mutable std::vector<ir::Scalar> held, sent;
};

/// Computes topk, cumsum, gather or scatter on one rank: `in` and `at` are
/// the operands' blocks and placements, `po` the result's (IndexOps.cpp).
llvm::Error indexOp(const ir::Stage &stage, llvm::ArrayRef<const Tensor *> in,
                    llvm::ArrayRef<const Placement *> at, const Placement &po,
                    Tensor &out);

/// alltoallv on every rank; grouped_matmul on one (Dispatch.cpp).
llvm::Error runAllToAllV(const ir::Program &program, const ir::Stage &stage,
                         SimResult &result);
llvm::Error groupedMatmul(const ir::Stage &stage, SimResult &result,
                          int64_t rank);

/// A matmul operand's elements as one flat array of what the product
/// multiplies: each element's Scalar::f for a float result, Scalar::i for
/// an integer one (Tensor::getScalar).
template <typename T> std::vector<T> matmulValues(const Tensor &t) {
  std::vector<T> values(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    ir::Scalar s = t.getScalar(i);
    if constexpr (std::is_same_v<T, double>)
      values[i] = s.f;
    else
      values[i] = s.i;
  }
  return values;
}

/// sums[j] += x * row[j] for j < n: one step k of n matmul sums at once
/// (matmul and grouped_matmul add their products k ascending from 0, in
/// f64 for floats, wrapping for integers).
template <typename T> void addProducts(T x, const T *row, T *sums, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    sums[j] += x * row[j];
}

/// Stores matmul sums into `out` from element `first` on: each as the
/// Scalar a product of its kind gives (f for floats, i for integers),
/// rounded or wrapped to the element type.
template <typename T>
void storeSums(llvm::ArrayRef<T> sums, Tensor &out, int64_t first) {
  for (size_t j = 0; j < sums.size(); ++j) {
    ir::Scalar s;
    if constexpr (std::is_same_v<T, double>)
      s.f = sums[j];
    else
      s.i = sums[j];
    out.setScalar(first + static_cast<int64_t>(j), s);
  }
}

/// An error for a broken invariant: a bug in the compiler, not the input.
llvm::Error internalError(const ir::Stage &stage, const llvm::Twine &what);

} // namespace coconet::sim::detail

#endif // COCONET_SIM_SIMIMPL_H
