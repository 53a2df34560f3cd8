//===- SimImpl.h - internals shared by the simulator's files ----*- C++ -*-===//

#ifndef COCONET_SIM_SIMIMPL_H
#define COCONET_SIM_SIMIMPL_H

#include "sim/Simulator.h"

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

/// An error for a broken invariant: a bug in the compiler, not the input.
llvm::Error internalError(const ir::Stage &stage, const llvm::Twine &what);

} // namespace coconet::sim::detail

#endif // COCONET_SIM_SIMIMPL_H
