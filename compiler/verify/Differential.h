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
// ir::Program::reassociations). Then each float result may differ by a
// few roundings of its element type:
//   |a - b| <= ulps * eps(dtype) * max(|a|, |b|, scale)
// where eps is the spacing of the type at 1 (2^-23 for f32, 2^-10 for
// f16, 2^-7 for bf16, 2^-52 for f64), ulps = 16 and scale is the largest
// magnitude of the reference result (an absolute floor for values that
// cancel to near zero). Integer and bool results are always compared
// exactly.
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

/// The tolerance, in units of eps(dtype), for reassociated results.
constexpr double kReassociationUlps = 16;

/// Spacing of a float type at 1.0.
double epsilonOf(ir::DType dtype);

struct ResultDiff {
  std::string name;
  ir::DType dtype = ir::DType::F32;
  int64_t elements = 0;
  /// Elements whose bits differ.
  int64_t differing = 0;
  /// Elements outside the tolerance.
  int64_t failing = 0;
  double maxAbs = 0;
  /// max |a - b| / (eps(dtype) * max(|a|, |b|, scale)): the difference in
  /// units of the type's precision.
  double maxUlps = 0;
  /// The first failing element, described.
  std::string firstFailure;
};

struct Comparison {
  /// True when every result had to be, and was, bitwise equal.
  bool bitwise = true;
  /// Why a tolerance applies (the candidate's reassociations), or empty.
  std::vector<std::string> reasons;
  /// The tolerance, in ulps, when not bitwise.
  double toleranceUlps = kReassociationUlps;
  std::vector<ResultDiff> results;
  /// Shape/count mismatch between the programs' results, or empty.
  std::string structural;
  bool ok() const;
  /// One line per result.
  void print(llvm::raw_ostream &os) const;
};

/// Compares two tensors of one type and shape: bitwise, or (ulps > 0)
/// within `ulps` units of the type's precision as above.
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
