//===- Report.h - what a scheduled program launches and moves ---*- C++ -*-===//
//
// --emit=report: for one (scheduled) program, the kernels and collectives
// one step launches, in order, and for each the bytes one rank reads from
// and writes to memory and sends over the network, computed analytically
// from the shapes as formulas in the size names (and as numbers when sizes
// are bound). This is the cost model the tuner will use; Report.cpp and
// docs/report.md state its assumptions.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_ANALYSIS_REPORT_H
#define COCONET_ANALYSIS_REPORT_H

#include "analysis/Polynomial.h"
#include "ir/Program.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::analysis {

/// One launch of a step and what it costs one rank.
struct LaunchCost {
  enum class Kind {
    Kernel,          ///< a fuse group or one unfused computation stage
    FusedCollective, ///< a fuse group holding a collective
    Matmul,          ///< an unfused matmul
    Collective,      ///< an unfused communication stage
  };
  Kind kind = Kind::Kernel;
  /// "kernel k0 (elementwise): g32 m1", "allgather ag over world: ...".
  std::string description;
  /// Bytes read from and written to memory, sent over the network (as many
  /// are received), and floating-point operations.
  Polynomial read, write, sent, flops;
  /// Elements added in order into f64 running sums (the sums, norms and
  /// sums of squares of reductions; a layer norm's mean and variance, an
  /// RMS norm's mean square): one dependent add each, which the exact CPU
  /// target cannot vectorise; and the sums they make (independent chains:
  /// a rank's threads share them out).
  Polynomial ordered, orderedChains;
  /// Elements that draw a Philox random number (dropout).
  Polynomial drawn;
  /// Calls of the math library an elementwise body makes (exp, log, tanh,
  /// erf, gelu, silu, sigmoid, pow; not sqrt, an instruction): elements
  /// times such operations. The exact CPU target evaluates them in f64 one
  /// element at a time.
  Polynomial libm;
  /// Roundings to f16 or bf16 an elementwise body makes (each arithmetic,
  /// math, cast or dropout result of such a type, computed in float and
  /// rounded): elements times such operations. The exact CPU target rounds
  /// with integer operations on the float's bits, a dozen and more
  /// instructions each.
  Polynomial rounded;
  /// Elements of the right-hand operands of the launch's matmuls (every
  /// batch of a batched one): what one call reads of B. The CPU target
  /// widens and packs B into panels once per call (runtime/src/cpu/
  /// matmul.cpp), so a matmul cut into an overlap's parts of its rows packs
  /// it once a part; `batched`: the parts are batches (each packs its own).
  Polynomial packed;
  bool batched = false;
  /// The launch's matmul as one call computes it on a rank: the rows and
  /// columns of a batch of its result, and its batches (1 unbatched). The
  /// CPU target packs B once per block of rows it hands a thread, so how
  /// often a call packs it depends on these (tune::matmulPackings).
  Polynomial matmulRows, matmulCols, matmulBatch;
  /// A fused collective: the bytes its staging copies read and write when
  /// the caller's tensors are not the program's symmetric memory (the
  /// reducing collective's input copied in; the gathered output copied out,
  /// and in first when the kernel reads the parameter it updates).
  Polynomial staging;
  /// Bytes written to buffers the launch does not read (a new result, not an
  /// update in place): a write-back cache reads each such line before the
  /// store, so on a CPU they cross the memory bus twice.
  Polynomial fresh;
  /// The buffers the launch reads or writes, each as the stage that owns it
  /// (an update's parameter) and the bytes of it touched: a step's footprint
  /// is the union over its launches.
  llvm::SmallVector<std::pair<const ir::Stage *, Polynomial>, 8> touched;
  /// The stages of the launch, in program order.
  llvm::SmallVector<const ir::Stage *, 8> members;
  /// Per communication member, the bytes one rank holds of what it moves
  /// (the input; the output of an allgather): the n of the network
  /// formulas, from which a tuner prices each algorithm.
  llvm::SmallVector<std::pair<const ir::Stage *, Polynomial>, 2> transfers;
};

/// The launches of one step of `program`, in program order; with
/// `sequential`, each fused collective as its collectives and its kernel
/// (the form `coconetc --sequential` generates, and the fallback's).
std::vector<LaunchCost> analyzeLaunches(const ir::Program &program,
                                        bool sequential = false);
/// The same with the form of each fused collective chosen by `sequential`
/// (true: its collectives and kernel), as the lowering decides it
/// (tune/PlanLaunches.h).
std::vector<LaunchCost>
analyzeLaunches(const ir::Program &program,
                llvm::function_ref<bool(const ir::Kernel &)> sequential);

/// Prints the report of `program`, whose step makes `launches`, under
/// `scheduleName` ("unscheduled" when none). `sizes` may bind some or all size
/// names (mesh sizes included); formulas whose names are all bound are then
/// also printed as numbers. With `times` (one line per launch, then the step's
/// in `totalTime`), each launch and the total also print a predicted `time` row
/// (a tuner's cost model computes them; this library only counts).
void printReport(const ir::Program &program,
                 llvm::ArrayRef<LaunchCost> launches,
                 llvm::StringRef scheduleName, const ir::DimEnv &sizes,
                 llvm::raw_ostream &os, llvm::ArrayRef<std::string> times = {},
                 llvm::StringRef totalTime = {});

} // namespace coconet::analysis

#endif // COCONET_ANALYSIS_REPORT_H
