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
  virtual void emitElementwiseLoops(CodeWriter &w, const lower::Plan &plan,
                                    const lower::Step &step,
                                    const lower::ElementwiseKernel &k,
                                    const UniformValues &uniform) const = 0;
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
  /// `g` is the step's geometry ("cc_s.cc_NAME").
  virtual void emitCollective(CodeWriter &w, const lower::Plan &plan,
                              const lower::CollectiveCall &call,
                              llvm::StringRef g) const = 0;
  virtual void emitMatMul(CodeWriter &w, const lower::Plan &plan,
                          const lower::MatMulCall &call,
                          llvm::StringRef g) const = 0;
  virtual void emitCopy(CodeWriter &w, llvm::StringRef to, llvm::StringRef from,
                        llvm::StringRef count, ir::DType dtype) const = 0;
  virtual void emitStoreScalar(CodeWriter &w, llvm::StringRef to,
                               llvm::StringRef value) const = 0;
  /// Runs kernel step `step` with `args` (its geometry first).
  virtual void emitLaunch(CodeWriter &w, const lower::Plan &plan,
                          const lower::Step &step, llvm::StringRef g,
                          llvm::StringRef args) const = 0;

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
