//===- Differential.h - a schedule against no schedule -------*- C++ -*-===//
//
// Differential verification, the project's guarantee that schedules
// preserve meaning: run the unscheduled (reference) and the scheduled
// (candidate) program on the simulator with the same inputs and compare
// every result, positionally (updates in parameter order, then returns),
// as assembled global tensors (so a sharded parameter is compared by
// gathering its slices).
//
// Equality is bitwise unless the candidate records a reassociation (a
// transformation that changed the order of floating-point additions, see
// ir::Program::reassociations) and some result differs. Then the error is
// bounded where the reassociation happens, not at the results (a sum that
// cancels to near zero can be far from its reassociated self in units of
// its own size, and anything computed from it further):
//   1. every float sum or norm reduction of the reference whose name the
//      candidate defines (reorder keeps the completed value's name) is a
//      reassociated value: per element, the candidate's value must lie
//      within reassociationBound() of the reference's, computed from the
//      number of terms and the sum of their magnitudes (the simulator
//      records it: SimOptions::recordTermSums);
//   2. the candidate is run again with each reassociated value replaced
//      by the reference's (SimOptions::afterStage); every result must then
//      be bitwise equal, so everything else the schedule changed is held
//      to bitwise equality.
// Integer and bool results are always compared exactly.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_VERIFY_DIFFERENTIAL_H
#define COCONET_VERIFY_DIFFERENTIAL_H

#include "ir/Program.h"
#include "sim/Simulator.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace coconet::verify {

/// Spacing of a float type at 1.0.
double epsilonOf(ir::DType dtype);

/// The largest difference between two evaluations `a` and `b` of one float
/// reduction of `kind` (Sum, or Norm = sqrt of a sum of squares) that add
/// the same `terms` terms in f64 in different orders and round the result
/// (Norm: its square root, in f64) once to `dtype`. `magnitude` is the sum
/// of the terms' magnitudes: sum |t_i| for Sum, sum t_i^2 for Norm. With
/// u = 2^-53 and g = gamma(n) = n u / (1 - n u), each f64 sum is within
/// g * magnitude of the exact one (any order of adding n terms is), so
///   Sum:  |a - b| <= 2 g M                      + rounding to dtype
///   Norm: |a - b| <= g M / sqrt((1 - g) M)      (the sums' difference
///                    + 2 u sqrt((1 + g) M)       through sqrt; sqrt's own
///                    + rounding to dtype          roundings)
/// where rounding to dtype is u_T (|a| + |b|) + the smallest subnormal of
/// dtype (none for f64, which the sum is already). M is inflated by g
/// first, since the simulator adds it in f64 too.
double reassociationBound(ir::ReductionKind kind, int64_t terms,
                          double magnitude, ir::DType dtype, double a,
                          double b);

/// The same for a float sum allreduce over two axes done axis by axis
/// (`hierarchical`): `terms` members' values added in another order, the
/// partial sums of the first axis rounded once to `dtype`: Sum's bound plus
/// u_T (1 + g) M and `terms` smallest subnormals of dtype. With `roundings`
/// k > 1 (a collective run by an algorithm file, which rounds at each of
/// its terms - 1 combines): gamma_k(u_T) (1 + g) M in place of u_T (1 + g) M
/// (each partial sum rounded to the type is at most M in magnitude, and k
/// roundings of them move the result by at most gamma_k of M, Higham's
/// bound for recursive summation).
double collectiveReassociationBound(int64_t terms, double magnitude,
                                    ir::DType dtype, double a, double b,
                                    int64_t roundings = 1);

/// Whether `b` is an acceptable reassociated value for `a`: the same bits
/// (NaN matches NaN), or both finite and within reassociationBound().
bool withinReassociationBound(ir::ReductionKind kind, int64_t terms,
                              double magnitude, ir::DType dtype, double a,
                              double b);

struct ResultDiff {
  std::string name;
  ir::DType dtype = ir::DType::F32;
  int64_t elements = 0;
  /// Elements whose bits differ.
  int64_t differing = 0;
  /// Elements outside the tolerance (bitwise: the differing ones).
  int64_t failing = 0;
  double maxAbs = 0;
  /// max |a - b| / (eps(dtype) * max(|a|, |b|, scale)), where scale is the
  /// largest finite magnitude of the expected tensor: the difference in
  /// units of the type's precision.
  double maxUlps = 0;
  /// The first failing element, described.
  std::string firstFailure;
};

/// A reassociated reduction of the candidate against the reference's.
struct ReassociatedValue {
  std::string name;
  ir::ReductionKind kind = ir::ReductionKind::Sum;
  /// Terms per element (the largest, over the ranks' blocks).
  int64_t terms = 0;
  /// Elements over every rank's block.
  int64_t elements = 0;
  int64_t differing = 0;
  /// Elements outside reassociationBound().
  int64_t failing = 0;
  /// max |a - b| / bound over the differing elements.
  double maxOfBound = 0;
  std::string firstFailure;
};

struct Comparison {
  /// True when every result had to be, and was, bitwise equal.
  bool bitwise = true;
  /// Why the results need not be bitwise equal (the candidate's
  /// reassociations, or --check-ulps), or empty.
  std::vector<std::string> reasons;
  /// compareWithFiles: the tolerance, in ulps (0: bitwise).
  double toleranceUlps = 0;
  /// The results as the programs computed them. Where the reassociation
  /// check ran (`substituted`), their differences are for information.
  std::vector<ResultDiff> results;
  /// The reassociation check ran: some result differed and the candidate
  /// reassociates.
  bool substituted = false;
  /// The reassociated values, each within its bound.
  std::vector<ReassociatedValue> reassociated;
  /// The results of the candidate rerun with the reference's reassociated
  /// values: bitwise equal.
  std::vector<ResultDiff> substitutedResults;
  /// Shape/count mismatch between the programs' results, or empty.
  std::string structural;
  bool ok() const;
  /// One line per result (and per reassociated value).
  void print(llvm::raw_ostream &os) const;
};

/// Compares two tensors of one type and shape: bitwise, or (ulps > 0)
/// within `ulps` units of the type's precision:
///   |a - b| <= ulps * eps(dtype) * max(|a|, |b|, scale).
ResultDiff compareTensors(llvm::StringRef name, const sim::Tensor &expected,
                          const sim::Tensor &actual, double ulps);

/// Compares every result of a simulator run of `program` with the file
/// `dir`/<result name>.npy (the assembled form a generated driver writes):
/// bitwise, or within `ulps`.
llvm::Expected<Comparison> compareWithFiles(const ir::Program &program,
                                            const sim::SimResult &result,
                                            llvm::StringRef dir, double ulps);

/// Runs both programs with `options` and compares their results.
llvm::Expected<Comparison> comparePrograms(const ir::Program &reference,
                                           const ir::Program &candidate,
                                           const sim::SimOptions &options);

} // namespace coconet::verify

#endif // COCONET_VERIFY_DIFFERENTIAL_H
