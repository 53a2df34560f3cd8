//===- Target.h - what differs between code generation targets -*- C++ -*-===//
//
// The emitters of codegen/ (kernels, steps, the program object, the driver)
// are written once; everything that a target spells its own way is asked
// of a Target: storage types and math spelling, the form of loops, kernels
// and launches, how the threads that reduce one value share it, library and
// collective calls, and the parts of the program object and the driver that
// only one target has. CpuTarget.cpp (OpenMP loops, the runtime's MPI
// collectives) and CudaTarget.cpp (grid-stride kernels, NCCL, cuBLAS)
// implement it. No emitter tests which target it prints for: a new kernel
// kind is written once, with the hooks it needs here.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_CODEGEN_TARGET_H
#define COCONET_CODEGEN_TARGET_H

#include "codegen/Codegen.h"

#include "support/CodeWriter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace coconet::codegen {

using support::CodeWriter;
struct UniformValues;
struct FusedKernel;

/// What a collective call moves (expressions in operator()): by default
/// its buffers and its geometry's counts; a part of an overlap moves a
/// part of them.
struct CollectiveOperands {
  std::string in, out, count, outCount, root;
};
/// What a matmul call multiplies (expressions in operator()).
struct MatMulOperands {
  std::string batch, m, n, k, a, strideA, b, strideB, c, strideC;
};
/// The elements [lo, hi) of its domain a kernel computes: empty for all
/// (the kernel has no range parameters), else expressions in operator().
struct KernelRange {
  std::string lo, hi;
  /// A fused kernel's part: where its reduced input's elements start.
  std::string fromAt;
  bool whole() const { return lo.empty(); }
};

class Target {
public:
  virtual ~Target() = default;

  /// The target of `kind`.
  static const Target &get(TargetKind kind);

  // --- Files -------------------------------------------------------------

  /// "CUDA", "CPU" (for banners).
  virtual llvm::StringRef displayName() const = 0;
  /// ".cu", ".cpp".
  virtual llvm::StringRef sourceExtension() const = 0;
  /// The namespace of the target's runtime: "coconet::rt::cuda".
  virtual llvm::StringRef runtimeNamespace() const = 0;

  // --- Values ------------------------------------------------------------

  /// The C++ type a value of `dtype` is stored as.
  virtual std::string storageType(ir::DType dtype) const = 0;
  /// A stored element `expr` converted to its compute type.
  virtual std::string load(ir::DType dtype, llvm::StringRef expr) const = 0;
  /// A compute-type value (already rounded to `dtype`) as the storage type.
  virtual std::string store(ir::DType dtype, llvm::StringRef expr) const = 0;
  /// A double rounded once to an f16 or bf16 `dtype`, as the storage type.
  virtual std::string storeNarrowFromDouble(ir::DType dtype,
                                            llvm::StringRef expr) const = 0;
  /// A float rounded to an f16 or bf16 `dtype` and widened back.
  virtual std::string roundNarrow(ir::DType dtype,
                                  llvm::StringRef expr) const = 0;
  /// A double rounded once to an f16 or bf16 `dtype`, widened to float.
  virtual std::string narrowFromDouble(ir::DType dtype,
                                       llvm::StringRef expr) const = 0;
  /// `a Operator b` rounded once, never contracted: `printed` is the
  /// operation's name ("add"), `op` its C operator ("+").
  virtual std::string arith(llvm::StringRef printed, llvm::StringRef op,
                            bool isDouble, llvm::StringRef a,
                            llvm::StringRef b) const = 0;
  /// A call of the platform's math function `fn` ("exp", "pow") of floats
  /// (or doubles).
  virtual std::string mathCall(llvm::StringRef fn, bool isDouble,
                               llvm::StringRef args) const = 0;
  /// sqrt, correctly rounded (the language's sqrt).
  virtual std::string sqrtRounded(bool isDouble, llvm::StringRef x) const = 0;

  // --- Kernels -----------------------------------------------------------

  /// What the file's kernels need before the first one.
  virtual void emitKernelPrelude(CodeWriter &w) const = 0;
  /// Opens the function of a kernel step named `name` with `params`; `flat`
  /// is an elementwise kernel that may run on vectors.
  virtual void openKernel(CodeWriter &w, llvm::StringRef name,
                          llvm::StringRef params, bool flat) const = 0;
  /// Written after the `*` of a pointer a kernel only reads, and of one it
  /// writes. (No two pointers of a kernel alias: distinct buffers, and the
  /// API asks the caller for distinct tensors.)
  virtual llvm::StringRef readOnlyPointer() const = 0;
  virtual llvm::StringRef writtenPointer() const = 0;
  /// A loop over `count` independent items, shared by every thread.
  virtual void openItemLoop(CodeWriter &w, llvm::StringRef var,
                            llvm::StringRef count) const = 0;
  /// The loops of an elementwise kernel around `body` (its scalar inputs
  /// and uniform values are declared between `prologue` and the loops).
  virtual void emitElementwisePrologue(CodeWriter &w) const = 0;
  /// With `fused`, the loops of that fused collective's kernel: the
  /// reduced input combined from every member, the gathered member stored
  /// into every member. With `ranged`, over the elements [cc_begin, cc_end)
  /// (kernel parameters) of the domain, else over all of them.
  virtual void emitElementwiseLoops(CodeWriter &w, const lower::Plan &plan,
                                    const lower::Step &step,
                                    const lower::ElementwiseKernel &k,
                                    const UniformValues &uniform,
                                    const FusedKernel *fused,
                                    bool ranged) const = 0;
  /// A loop over `count` groups (outputs of a reduction, rows of a norm):
  /// each group is one value that a group of threads computes.
  virtual void openGroupLoop(CodeWriter &w, llvm::StringRef var,
                             llvm::StringRef count) const = 0;
  /// The header of a loop (no braces) over the `count` elements of one
  /// group, each thread of the group taking its share.
  virtual std::string groupElementLoop(llvm::StringRef var,
                                       llvm::StringRef count) const = 0;
  /// Declares `cc_add` for groupCombine(..., "cc_add") when the target
  /// needs it.
  virtual void declareGroupSum(CodeWriter &w) const = 0;
  /// The group's threads' values of `value` combined by `combine` (a
  /// callable of two values) in a fixed order: the value itself where one
  /// thread computes a group.
  virtual std::string groupCombine(llvm::StringRef value,
                                   llvm::StringRef combine) const = 0;
  /// `var = groupCombine(var, combine);`, or nothing where one thread
  /// computes a group.
  virtual void emitGroupCombine(CodeWriter &w, llvm::StringRef var,
                                llvm::StringRef combine) const = 0;
  /// `lhs = value;`, computed once per group and seen by all of its
  /// threads (`shared` names the group's copy).
  virtual void shareFromLeader(CodeWriter &w, llvm::StringRef type,
                               llvm::StringRef shared, llvm::StringRef value,
                               llvm::StringRef lhs) const = 0;
  /// Opens what one thread of the group does alone; false (nothing
  /// opened, nothing to close) where one thread computes a group.
  virtual bool openLeader(CodeWriter &w) const = 0;
  /// The end of one group's iteration.
  virtual void endGroup(CodeWriter &w) const = 0;

  // --- Steps of operator() -------------------------------------------------

  /// Around independent collectives issued together.
  virtual void beginCollectiveGroup(CodeWriter &w) const = 0;
  virtual void endCollectiveGroup(CodeWriter &w) const = 0;
  /// What operator() declares before its steps (the stream they use).
  virtual void emitStepPrologue(CodeWriter &w) const = 0;
  virtual void emitCollective(CodeWriter &w, const lower::Plan &plan,
                              const lower::CollectiveCall &call,
                              const CollectiveOperands &ops) const = 0;
  virtual void emitMatMul(CodeWriter &w, const lower::Plan &plan,
                          const lower::MatMulCall &call,
                          const MatMulOperands &ops) const = 0;
  virtual void emitCopy(CodeWriter &w, llvm::StringRef to, llvm::StringRef from,
                        llvm::StringRef count, ir::DType dtype) const = 0;
  virtual void emitStoreScalar(CodeWriter &w, llvm::StringRef to,
                               llvm::StringRef value) const = 0;
  /// Runs kernel step `step` with `args` (its geometry first, then the
  /// range's bounds for a ranged kernel) on the elements of `range`.
  virtual void emitLaunch(CodeWriter &w, const lower::Plan &plan,
                          const lower::Step &step, llvm::StringRef g,
                          llvm::StringRef args,
                          const KernelRange &range) const = 0;

  // --- Overlaps
  // ----------------------------------------------------------------

  /// The runtime's header an overlap's code needs ("": none).
  virtual llvm::StringRef overlapHeader() const = 0;
  /// The State's members for overlaps, their creation at the end of
  /// create() and their destruction.
  virtual void emitOverlapState(CodeWriter &w) const = 0;
  virtual void emitOverlapCreate(CodeWriter &w) const = 0;
  virtual void emitOverlapDestroy(CodeWriter &w) const = 0;
  /// An expression (in create(), after emitOverlapCreate) of what the
  /// parts of an overlap run on.
  virtual std::string overlapPath() const = 0;
  /// Around the consumer's part `cc_c` of an overlap, after the producer's
  /// part: it runs while the producer computes the next part.
  virtual void emitPartBegin(CodeWriter &w) const = 0;
  virtual void emitPartEnd(CodeWriter &w) const = 0;
  /// After the last part: the steps that follow see every part done.
  virtual void emitOverlapEnd(CodeWriter &w) const = 0;

  // --- Fused collectives ----------------------------------------------------

  /// The runtime's header declaring its Team.
  virtual llvm::StringRef teamHeader() const = 0;
  /// A fused kernel's parameters that give it its team and the members'
  /// memory of the reducing collective's input (`cc_from`) and of the
  /// allgather's output (`cc_to`), and the team's rank, size and barrier
  /// inside it (codegen/FusedCode.cpp writes the kernel).
  virtual std::string fusedTeamParams(const lower::Plan &plan,
                                      const FusedKernel &k) const = 0;
  virtual llvm::StringRef teamRank() const = 0;
  virtual llvm::StringRef teamSize() const = 0;
  virtual void emitTeamBarrier(CodeWriter &w) const = 0;
  /// Where the kernel runs on the team's memory (for its comment).
  virtual llvm::StringRef teamMemory() const = 0;
  /// The arguments after its geometry that give it its team (`team`: the
  /// State's std::unique_ptr to the runtime's Team) and the members' memory.
  virtual std::string fusedTeamArgs(const lower::Plan &plan,
                                    const FusedKernel &k,
                                    llvm::StringRef team) const = 0;
  /// Runs it in operator(): `g` is its geometry, `args` all its arguments,
  /// on the elements of `range`.
  virtual void emitFusedLaunch(CodeWriter &w, const lower::Plan &plan,
                               const FusedKernel &k, llvm::StringRef g,
                               llvm::StringRef args,
                               const KernelRange &range) const = 0;
  /// What the State keeps for a symmetric buffer besides its pointer, and
  /// how create() fills it once `team` exists.
  virtual void emitTeamBufferState(CodeWriter &w, const lower::Plan &plan,
                                   const lower::Buffer &b) const = 0;
  virtual void emitTeamBufferBind(CodeWriter &w, const lower::Plan &plan,
                                  const lower::Buffer &b,
                                  llvm::StringRef team) const = 0;

  // --- The program object ----------------------------------------------------

  virtual void emitHeaderIncludes(CodeWriter &w) const = 0;
  virtual void emitSourceIncludes(CodeWriter &w) const = 0;
  /// Where the caller's tensors are: "device", "host".
  virtual llvm::StringRef memorySpace() const = 0;
  /// What the class documentation says of scalar arguments.
  virtual llvm::StringRef scalarDoc() const = 0;
  /// The class documentation's last lines (how a step runs).
  virtual void emitStepDoc(CodeWriter &w) const = 0;
  /// create()'s parameters after the sizes (", cudaStream_t stream").
  virtual llvm::StringRef createParams() const = 0;
  /// operator()'s documentation.
  virtual llvm::StringRef stepDoc() const = 0;
  /// The State's members, its initialisation in create(), the libraries
  /// created at the end of create() and destroyed in the destructor.
  virtual void emitStateMembers(CodeWriter &w,
                                const lower::Plan &plan) const = 0;
  virtual void emitStateInit(CodeWriter &w) const = 0;
  virtual void emitCreateLibraries(CodeWriter &w,
                                   const lower::Plan &plan) const = 0;
  virtual void emitDestroyLibraries(CodeWriter &w,
                                    const lower::Plan &plan) const = 0;

  // --- The driver ------------------------------------------------------------

  /// Lines before the driver's includes.
  virtual void emitDriverPreamble(CodeWriter &w) const = 0;
  /// `mpi` where the program runs under MPI, else `otherwise`.
  virtual void emitMpiOrElse(CodeWriter &w, llvm::ArrayRef<std::string> mpi,
                             llvm::ArrayRef<std::string> otherwise) const = 0;
  /// Where a block of the driver lives besides its host copy.
  virtual llvm::StringRef blockDoc() const = 0;
  virtual void emitBlockMembers(CodeWriter &w) const = 0;
  virtual void emitBlockAllocation(CodeWriter &w) const = 0;
  /// Copies block `name`'s host data to where the program reads it.
  virtual void emitUpload(CodeWriter &w, llvm::StringRef name) const = 0;
  /// The pointer the program is given for block `name`.
  virtual std::string blockPointer(llvm::StringRef name) const = 0;
  /// The world communicator and `cc_program` (into `cc_st`).
  virtual void emitCreateProgram(CodeWriter &w) const = 0;
  /// Waits for the steps enqueued so far (into `cc_st`, then checked).
  virtual void emitSynchronize(CodeWriter &w, bool check) const = 0;
  /// Copies `cc_result`'s data back to its host copy (into `cc_st`).
  virtual void emitDownload(CodeWriter &w) const = 0;
};

} // namespace coconet::codegen

#endif // COCONET_CODEGEN_TARGET_H
