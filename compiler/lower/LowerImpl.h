//===- LowerImpl.h - internals shared by the lowering's files ---*- C++ -*-===//

#ifndef COCONET_LOWER_LOWERIMPL_H
#define COCONET_LOWER_LOWERIMPL_H

#include "ir/Program.h"
#include "lower/Lower.h"
#include "lower/Plan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

namespace coconet::lower {

/// The extents of a value's block.
Extents extentsOf(const ir::TensorType &type);
/// A C identifier from a stage name ("ag.m1" -> "ag_m1"); never a C++
/// keyword.
std::string identifier(llvm::StringRef name);

/// What lowering one program keeps while it builds the plan.
struct Lowering {
  Lowering(const ir::Program &program, DiagnosticEngine &diags, Plan &plan)
      : program(program), diags(diags), plan(plan) {}
  const ir::Program &program;
  DiagnosticEngine &diags;
  Plan &plan;

  /// The buffer holding each stage's value (params included), if any.
  llvm::DenseMap<const ir::Stage *, unsigned> bufferOf;
  /// Stages computed in registers inside their kernel.
  llvm::DenseMap<const ir::Stage *, bool> inRegisters;
  /// A copy of a result to run after the last step.
  struct PendingCopy {
    const ir::Stage *from;
    unsigned to;
  };
  /// In the order they run: returned values, then updates.
  std::vector<PendingCopy> copies;
  /// ScalarParams stored into memory (inMemory), by parameter.
  llvm::DenseMap<const ir::Stage *, unsigned> storedScalars;
  /// A parameter whose block is a view (Buffer::Kind::View) that the
  /// kernel writing it reads instead of the parameter.
  llvm::DenseMap<const ir::Stage *, unsigned> viewOf;
  /// The step computing each stage that has one (the seams need them).
  llvm::DenseMap<const ir::Stage *, unsigned> stepOf;
  /// Each stage's readers, found once (Program::getUsers scans every
  /// stage: once per stage would make lowering quadratic).
  llvm::DenseMap<const ir::Stage *, llvm::SmallVector<const ir::Stage *, 4>>
      users;
  /// The last unit (of assignValueBuffers' units) reading each stage.
  llvm::DenseMap<const ir::Stage *, size_t> lastReader;
  /// The number of updates among the program's results (they come first).
  unsigned numUpdates = 0;
  /// The kernel steps added so far (steps that are no collective, matmul,
  /// copy or store): they are named k0_..., k1_...
  unsigned kernels = 0;
  /// The names given so far, for uniqueName and addStep.
  llvm::StringSet<> bufferNames, stepNames;

  /// `base`, or `base_1`, `base_2`, ... if a buffer has that name.
  std::string uniqueName(llvm::StringRef base) const;
  /// Adds a buffer and returns its index; the name is made unique.
  unsigned addBuffer(Buffer buffer);
  /// A buffer of kind `kind` named `name` (made unique) for `stage`'s
  /// value: its type, dtype and block shape are the stage's.
  unsigned addValueBuffer(Buffer::Kind kind, llvm::StringRef name,
                          const ir::Stage &stage);
  /// The buffer of `stage`'s value; null when it has none (a ScalarParam has
  /// one, with no memory).
  std::optional<unsigned> find(const ir::Stage *stage) const {
    auto it = bufferOf.find(stage);
    if (it == bufferOf.end())
      return std::nullopt;
    return it->second;
  }
  /// A buffer in memory holding `stage`'s value for a step that cannot take
  /// a scalar argument: stores a ScalarParam into a scratch buffer first.
  unsigned inMemory(const ir::Stage *stage);
  /// Adds a step, its name made unique; returns its index.
  unsigned addStep(Step step);

  /// The index into Plan::tables of the program's table `name`.
  unsigned tableOf(llvm::StringRef name) const {
    for (unsigned t = 0; t < plan.tables.size(); ++t)
      if (plan.tables[t].name == name)
        return t;
    llvm_unreachable("a segment table the program does not declare");
  }
  /// Reports an internal compiler error: a program sema accepted that the
  /// lowering cannot handle.
  void unsupported(const ir::Stage &stage, const llvm::Twine &what);
  bool failed = false;
};

/// A unit is one elementwise kernel: its stages are elementwise, and a
/// fused gather that only they read (the Fuse pass checks this).
bool isKernelUnit(llvm::ArrayRef<const ir::Stage *> unit);

/// Builders of the steps of one unit (LowerSteps.cpp); each adds its steps.
void lowerElementwise(Lowering &l, llvm::ArrayRef<const ir::Stage *> members);
void lowerStage(Lowering &l, const ir::Stage &stage);
/// The access pattern of operand `type` read over a domain of `domain`.
KernelInput accessOf(const Lowering &l, unsigned buffer,
                     const ir::TensorType &type, const ir::TensorType &domain);

/// Buffers (Buffers.cpp): decides where every value lives (in place in a
/// parameter, in an output, in scratch) given the order of the units, and
/// adds the copies results still need after the last step.
void assignValueBuffers(
    Lowering &l, llvm::ArrayRef<llvm::SmallVector<const ir::Stage *, 8>> units);
void addResultCopies(Lowering &l);
/// Shares scratch slots between buffers whose lifetimes do not overlap (the
/// steps of an overlap in parts count as one: they interleave).
void assignSlots(Plan &plan);
/// Decides which fused collectives one kernel computes (Fusion.cpp), and
/// which buffers live in a team's symmetric memory.
void planFusedCollectives(Plan &plan, bool sequential);
/// Decides which overlaps run in chunks (Chunks.cpp); after
/// planFusedCollectives (an overlap's parts run the steps of the fused
/// collective it starts, but its allgather).
void planOverlaps(Plan &plan, bool sequential);
/// What each fused collective's one kernel reads and writes
/// (FusedKernels.cpp); after planOverlaps (a kernel in an overlap's parts
/// is ranged).
void planFusedKernels(Plan &plan);
/// Marks the scratch outputs of collectives that can be their input when
/// the group has one member (Buffer::loneInput).
void aliasLoneCollectives(Plan &plan);

} // namespace coconet::lower

#endif // COCONET_LOWER_LOWERIMPL_H
