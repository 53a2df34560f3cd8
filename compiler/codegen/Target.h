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
#include "lower/KernelBody.h"

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
  /// An alltoall's elements per member (count / P), and how far apart its
  /// blocks are in the input and the output (empty: blockCount, contiguous).
  std::string blockCount, blockStride;
  /// An alltoallv's counts, rows in and out, elements per row and counts
  /// per member.
  std::string counts, rowsIn, rowsOut, row, groups;
  /// The state's member for the step's runtime object (an alltoallv's).
  std::string state;
  /// An alltoallv in an overlap's parts: which part, and how many (empty:
  /// the whole call).
  std::string part, parts;
};
/// What a matmul call multiplies (expressions in operator()).
struct MatMulOperands {
  std::string batch, m, n, k, a, strideA, b, strideB, c, strideC;
  /// A grouped matmul's counts and groups (empty for a matmul).
  std::string counts, groups, localGroups;
  /// The state's member for its counts on the host (CUDA).
  std::string hostCounts;
  /// A grouped matmul in an overlap's parts: which part, and how many
  /// (empty: the whole call).
  std::string part, parts;
};
/// The elements [lo, hi) of its domain a kernel computes: empty for all
/// (the kernel has no range parameters), else expressions in operator().
struct KernelRange {
  std::string lo, hi;
  /// A fused kernel's part: where its reduced input's elements start.
  std::string fromAt;
  bool whole() const { return lo.empty(); }
};

/// How a block of an elementwise kernel holds its elements (a target runs
/// a kernel's blocks in one or more of these forms, TargetInfo::flatBlocks)
/// and how emitElementBody reads and writes them. Scalar inputs are always the
/// variables `cc_in<i>` emitScalarInputs declared before the loop.
enum class ElementForm {
  Scalar,     ///< inputs loaded at their index, outputs stored at `cc_i`
  VectorLane, ///< flat inputs from `cc_l<i>.v[cc_j]`, outputs into
              ///< `cc_s<member>.v[cc_j]`
  Tile,       ///< flat f16/bf16 inputs from the widened tile `cc_l<i>[cc_j]`,
              ///< f16/bf16 outputs as floats into `cc_s<member>[cc_j]`
              ///< (narrowed after the tile); the rest as Scalar
  RowTile,    ///< as Tile, for a tile within one row of the domain's last
              ///< dimension: the loop sets the coordinates `cc_c<d>`, and
              ///< the f16/bf16 inputs contiguous along the row
              ///< (rowContiguous) come from the widened tile
};
/// What a target's block operations need to know: the kernel, its body's
/// operations (lower/KernelBody.h), its hoisted values, the fused kernel it
/// is (or null) and whether it runs over a range.
struct BlockContext {
  const lower::Plan &plan;
  const lower::Step &step;
  const lower::ElementwiseKernel &k;
  const lower::KernelBody &body;
  const UniformValues &uniform;
  const FusedKernel *fused;
  bool ranged;
};

/// What a target spells as fixed text: names, headers, and lines of C++
/// printed as they are by emitLines (each line of the text at the writer's
/// indentation, leading spaces indenting it further; "" prints nothing).
struct TargetInfo {
  // --- Files ---
  /// "CUDA", "CPU" (for banners); ".cu", ".cpp"; the namespace of the
  /// target's runtime ("coconet::rt::cuda").
  llvm::StringRef displayName, sourceExtension, runtimeNamespace;
  /// The program's header's and source's includes.
  llvm::StringRef headerIncludes, sourceIncludes;

  // --- Kernels ---
  /// What the file's kernels need before the first one.
  llvm::StringRef kernelPrelude;
  /// Written after the `*` of a pointer a kernel only reads, and of one it
  /// writes. (No two pointers of a kernel alias: distinct buffers, and the
  /// API asks the caller for distinct tensors.)
  llvm::StringRef readOnlyPointer, writtenPointer;
  /// An elementwise kernel's first lines (before its scalar inputs).
  llvm::StringRef elementwisePrologue;
  /// The forms an elementwise kernel's blocks run in, one loop each, in
  /// order: one whose tensors are all read at the loop's index (flat), and
  /// any other.
  llvm::ArrayRef<ElementForm> flatBlocks, otherBlocks;
  /// Several threads compute one group (an output of a reduction, a row of
  /// a norm), or one thread does. With several: the qualifier of a value
  /// the group shares, the condition of its leader thread, its barrier.
  bool groupThreads = false;
  llvm::StringRef groupShared, groupLeader, groupBarrier;
  /// A pack or unpack kernel copies one whole chunk per item (a row: one
  /// memcpy, the rows over the threads), or one element per item (a GPU
  /// thread each).
  bool packRows = false;

  // --- Steps of operator() ---
  /// Around independent collectives issued together.
  llvm::StringRef collectiveGroupBegin, collectiveGroupEnd;
  /// What operator() declares before its steps (the stream they use).
  llvm::StringRef stepPrologue;
  /// The last argument of a runtime call that runs on the steps' stream
  /// (", cc_stream"; "" where there is none).
  llvm::StringRef stepStreamArg;

  /// The runtime's header the one- and two-shot collectives need ("":
  /// none beyond the mesh's).
  llvm::StringRef algorithmHeader;
  /// Algorithm files (codegen/AlgorithmCode.cpp): the runtime's class that
  /// runs a table, made once by create() ("": the mesh runs tables without
  /// one), and the header it and the tables need.
  llvm::StringRef algorithmRunner;
  llvm::StringRef algorithmFileHeader;

  // --- Overlaps ---
  /// The runtime's header an overlap's code needs ("": none).
  llvm::StringRef overlapHeader;
  /// The State's members for overlaps, their creation at the end of
  /// create() and their destruction.
  llvm::StringRef overlapState, overlapCreate, overlapDestroy;
  /// An expression (in create(), after overlapCreate) of what the parts of
  /// an overlap run on.
  llvm::StringRef overlapPath;
  /// Around the consumer's part `cc_c` of an overlap, after the producer's
  /// part: it runs while the producer computes the next part. `before`,
  /// then `open` (the part's statements indented from here), `head`, the
  /// part, `tail`, and `close` back at the outer indentation.
  struct Region {
    llvm::StringRef before, open, head, tail, close;
  } part;
  /// After the last part: the steps that follow see every part done.
  llvm::StringRef overlapEnd;
  /// A dispatch (an alltoall's parts, each read by a matmul as soon as it
  /// has arrived): State members and their destruction (where any overlap
  /// has a dispatch); `prepare`, a runtime call create() makes with the
  /// most parts of any dispatch as its argument (none: no call); `before`
  /// before the first loop; each part's alltoall in `part` but opened by
  /// `open` (instead of part.open), followed by `arrived`; `await` before
  /// the matmul's part in the second loop. The loops' part is cc_c.
  struct Dispatch {
    llvm::StringRef state, prepare, destroy, before, open, arrived, await;
  } dispatch;

  // --- Fused collectives ---
  /// The runtime's header declaring its Team; the team's rank and size and
  /// its barrier inside a fused kernel; where the kernel runs on the team's
  /// memory (for its comment).
  llvm::StringRef teamHeader, teamRank, teamSize, teamBarrier, teamMemory;

  // --- The program object ---
  /// Where the caller's tensors are: "device", "host".
  llvm::StringRef memorySpace;
  /// What the class documentation says of scalar arguments; its last lines
  /// (how a step runs); operator()'s documentation.
  llvm::StringRef scalarDoc, classStepDoc, stepDoc;
  /// create()'s parameters after the sizes (", cudaStream_t stream") and
  /// the State's initialisation from them.
  llvm::StringRef createParams, stateInit;

  // --- The driver ---
  /// Lines before the driver's includes.
  llvm::StringRef driverPreamble;
  /// Whether the driver always runs under MPI; else the lines around what
  /// it does only under MPI, and before what it does otherwise.
  bool alwaysMpi = false;
  llvm::StringRef ifMpi, orElse, endIfMpi;
  /// The runtime's header of the driver's Block and Session (in
  /// runtimeNamespace + "::driver").
  llvm::StringRef driverHeader;

  // --- The Python entry points (--emit=python) ---
  /// The runtime's header of the world they run on (in runtimeNamespace +
  /// "::python"); create()'s arguments after the sizes and tables, from the
  /// entry point's `cc_stream` ("": none).
  llvm::StringRef pythonHeader, pythonStreamArg;
  /// The `target` the description gives ("cpu", "cuda").
  llvm::StringRef pythonTarget;
};

/// Prints `text` (TargetInfo's lines) at the writer's indentation.
void emitLines(CodeWriter &w, llvm::StringRef text);

/// A narrowing to f16 or bf16 `dtype` (Target::narrow).
enum class Narrowing {
  StoreFromDouble, ///< a double rounded once, as the storage type
  RoundFloat,      ///< a float rounded to the type and widened back
  FromDouble,      ///< a double rounded once, widened to float
};

/// The loops a target spells (Target::openLoop).
enum class LoopKind {
  Items,         ///< independent items, shared by every thread
  Groups,        ///< groups, each one value a group of threads computes
  GroupElements, ///< the elements of one group, each thread its share
};

class Target {
public:
  explicit Target(const TargetInfo &info) : info(info) {}
  virtual ~Target() = default;

  /// The target of `kind`.
  static const Target &get(TargetKind kind);

  /// What it spells as fixed text.
  const TargetInfo info;

  // --- Values ------------------------------------------------------------

  /// The C++ type a value of `dtype` is stored as.
  virtual std::string storageType(ir::DType dtype) const = 0;
  /// A stored element `expr` converted to its compute type.
  virtual std::string load(ir::DType dtype, llvm::StringRef expr) const = 0;
  /// A compute-type value (already rounded to `dtype`) as the storage type.
  virtual std::string store(ir::DType dtype, llvm::StringRef expr) const = 0;
  /// `expr` narrowed to an f16 or bf16 `dtype` as `how` says.
  virtual std::string narrow(Narrowing how, ir::DType dtype,
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

  /// Opens the function of a kernel step named `name` with `params`; `flat`
  /// is an elementwise kernel that may run on vectors; `team` is a fused
  /// kernel whose grid waits on the team's barriers (every block resident).
  virtual void openKernel(CodeWriter &w, llvm::StringRef name,
                          llvm::StringRef params, bool flat,
                          bool team) const = 0;
  /// Opens a loop of `kind` of `var` over [0, count).
  virtual void openLoop(CodeWriter &w, LoopKind kind, llvm::StringRef var,
                        llvm::StringRef count) const = 0;
  /// Opens the loop over the blocks of an elementwise kernel in `form`
  /// and a block's set-up; closes it.
  virtual void openBlocks(CodeWriter &w, ElementForm form,
                          const BlockContext &c) const = 0;
  virtual void closeBlocks(CodeWriter &w, ElementForm form,
                           const BlockContext &c) const = 0;
  /// Operation `op` on a block in `form` (ElementwiseCode.cpp walks them;
  /// a StoreToPeers is printed inside its loop over the members `cc_q`).
  virtual void emitBlockOp(CodeWriter &w, ElementForm form,
                           const BlockContext &c,
                           const lower::BlockOp &op) const = 0;
  /// The group's threads' values of `value` combined by `combine` (a
  /// callable of two values) in a fixed order: the value itself where one
  /// thread computes a group.
  virtual std::string groupCombine(llvm::StringRef value,
                                   llvm::StringRef combine) const = 0;

  // --- Steps of operator() -------------------------------------------------

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

  // --- Fused collectives ----------------------------------------------------

  /// A fused kernel's parameters that give it its team and the members'
  /// memory of the reducing collective's input (`cc_from`) and of the
  /// allgather's output (`cc_to`) (codegen/FusedCode.cpp writes the kernel).
  virtual std::string fusedTeamParams(const lower::Plan &plan,
                                      const FusedKernel &k) const = 0;
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

  /// The State's members (`plan` may need libraries), the libraries
  /// created at the end of create() and destroyed in the destructor.
  virtual void emitStateMembers(CodeWriter &w,
                                const lower::Plan &plan) const = 0;
  virtual void emitCreateLibraries(CodeWriter &w,
                                   const lower::Plan &plan) const = 0;
  virtual void emitDestroyLibraries(CodeWriter &w,
                                    const lower::Plan &plan) const = 0;

  // --- Built from the above, the same for every target --------------------

  /// `mpi` where the program runs under MPI, else `otherwise`.
  void emitMpiOrElse(CodeWriter &w, llvm::ArrayRef<std::string> mpi,
                     llvm::ArrayRef<std::string> otherwise) const;
  /// `var = groupCombine(var, combine);` where several threads compute a
  /// group.
  void emitGroupCombine(CodeWriter &w, llvm::StringRef var,
                        llvm::StringRef combine) const;
  /// `lhs = value;`, computed once per group and seen by all of its
  /// threads (`shared` names the group's copy).
  void shareFromLeader(CodeWriter &w, llvm::StringRef type,
                       llvm::StringRef shared, llvm::StringRef value,
                       llvm::StringRef lhs) const;
  /// Opens what one thread of the group does alone; false (nothing
  /// opened, nothing to close) where one thread computes a group.
  bool openLeader(CodeWriter &w) const;
  /// The end of one group's iteration.
  void endGroup(CodeWriter &w) const;
};

} // namespace coconet::codegen

#endif // COCONET_CODEGEN_TARGET_H
