//===- CodegenImpl.h - internals shared by the code generators --*- C++ -*-===//
//
// What both targets print the same way: C++ type names and literals, the
// scalar bodies of elementwise members (with the target's spelling of each
// operation), the per-step geometry (sizes, strides and block offsets the
// program object computes once when it is created) and the index
// expressions kernels read their inputs with.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_CODEGEN_CODEGENIMPL_H
#define COCONET_CODEGEN_CODEGENIMPL_H

#include "codegen/Codegen.h"
#include "codegen/Names.h"
#include "codegen/Target.h"

#include "support/CodeWriter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <string>
#include <vector>

namespace coconet::codegen {

using support::CodeWriter;

/// The C++ type of a value of `dtype` that is not f16 or bf16 (those are
/// the target's).
std::string plainType(ir::DType dtype);
/// The C++ type a value of `dtype` is computed in (float for f16/bf16/f32).
std::string computeType(ir::DType dtype);
/// "coconet::rt::DType::F16".
std::string runtimeDType(ir::DType dtype);
/// "coconet::rt::ReduceOp::Sum".
std::string runtimeReduceOp(ir::ReduceOp op);
/// "OneShot": a team algorithm's enumerator in the runtimes' enums
/// (coconet/team_algorithms.def).
std::string teamAlgorithmEnumerator(ir::CollectiveAlgorithm algorithm);
/// The expression rounding a double `expr` once to `dtype`, in the storage
/// type (for accumulated results).
std::string storeFromDouble(const Target &t, ir::DType dtype,
                            llvm::StringRef expr);
/// A literal of the compute type of `dtype` holding exactly `value`
/// (already rounded to the type).
std::string floatLiteral(double value, ir::DType dtype);
std::string intLiteral(int64_t value, ir::DType dtype);

/// The subexpressions of a kernel's bodies computed once before its loop
/// (they depend only on scalars and constants) and the variables holding
/// them (`cc_u<N>`).
struct UniformValues {
  llvm::DenseMap<const ir::ScalarExpr *, std::string> values;
  /// "type expression" -> the variable computing it, so that equal uniform
  /// expressions of different members are computed once.
  llvm::StringMap<std::string> byText;
  unsigned temp = 0;
};

/// Prints the statements that compute one member's body into `out` (a
/// new const variable of the compute type). `operands` are the member's
/// operand values, `globalIndex` the element's global row-major index
/// (used by dropout). `temp` numbers the temporaries of one kernel.
/// Subexpressions in `uniform` are read from their variables. With
/// `storeRounds`, the root's own rounding to f16/bf16 is left out: its one
/// use is a store that rounds to the same type exactly as the rounding
/// would (the CPU target's tile narrowing), and rounding twice gives the
/// bits of rounding once.
void emitBody(CodeWriter &w, const ir::ScalarExpr *body,
              llvm::ArrayRef<std::string> operands, llvm::StringRef globalIndex,
              llvm::StringRef out, const Target &target, unsigned &temp,
              const UniformValues *uniform = nullptr, bool storeRounds = false);
/// Prints the subexpressions of one member's body that depend on no
/// element (every leaf a constant or an operand with `uniformOperand` set;
/// no dropout) and adds them to `uniform`. Returns the variable holding
/// the whole body when it is uniform (and not a bare operand or constant),
/// else "".
std::string emitUniformBody(CodeWriter &w, const ir::ScalarExpr *body,
                            llvm::ArrayRef<std::string> operands,
                            llvm::ArrayRef<bool> uniformOperand,
                            const Target &target, UniformValues &uniform);

/// One int64 field of a step's geometry and the expression (over `sizes.X`
/// and `cc_mesh->coord(a)`) that computes it when the object is created.
struct GeometryField {
  std::string name;
  std::string expr;
};
/// The geometry of step `step` of `plan`; empty when the step needs none.
std::vector<GeometryField> stepGeometry(const lower::Plan &plan,
                                        const lower::Step &step);
/// The name of a step's geometry struct and of the member holding it.
std::string geometryType(const lower::Step &step);
std::string geometryMember(const lower::Step &step);
/// The State's member holding a reduction step's runtime Reducer.
std::string reducerMember(const lower::Step &step);
/// "coconet::rt::ReductionKind::Norm".
std::string runtimeReductionKind(ir::ReductionKind kind);

/// Is the row-major stride of dimension `dim` of an input 1 (every later
/// dimension has extent 1)? Then no stride field is kept for it.
bool unitStride(const lower::KernelInput &in, unsigned dim);
bool unitStride(llvm::ArrayRef<lower::DimAccess> dims, unsigned dim);
/// Does an elementwise kernel need its domain coordinates?
/// Does some input read by segment (`expand`)?
bool readsBySegment(const lower::ElementwiseKernel &k);
bool needsCoordinates(const lower::ElementwiseKernel &k);
/// Prints `const int64_t cc_c<d> = ...;` for every domain dimension `d`
/// with `used[d]`, from the flat index `flat`, reading the extents
/// `geom.e<d>`.
void emitCoordinates(CodeWriter &w, llvm::ArrayRef<bool> used,
                     llvm::StringRef flat, llvm::StringRef geom);
/// The domain dimensions an elementwise kernel's element needs.
llvm::SmallVector<bool, 4> usedCoordinates(const lower::ElementwiseKernel &k);
/// Marks the domain dimensions input `in` is read by.
void usedBy(const lower::KernelInput &in, llvm::MutableArrayRef<bool> used);
/// The index of input `i` (its KernelInput `in`) at the current element:
/// "0" for a scalar, `flat` for a flat input, else the sum over its
/// dimensions of (coordinate + shift) * stride, from `geom` fields
/// `s<i>_<k>` and `d<i>_<k>`.
std::string inputIndex(const lower::ElementwiseKernel *k,
                       const lower::KernelInput &in, unsigned i,
                       const lower::Extents &domain, llvm::StringRef flat,
                       llvm::StringRef geom);
/// A fused gather's input `i`: the index element's position at the
/// current element (geom fields x<i>_<k>, y<i>_<k>), and the variable
/// holding the position it reads (inputIndex uses it along the gather's
/// dimension; geom.a<i> is the data's extent there).
std::string gatherPosition(const lower::KernelInput &in, unsigned i,
                           const lower::Extents &domain, llvm::StringRef geom);
std::string gatherVar(unsigned i);
/// The global row-major index of the current element: sum over d of
/// (cc_c<d> + geom.off<d>) * geom.gs<d>.
std::string globalIndexExpr(unsigned rank, llvm::StringRef geom);

/// The by-value type of a scalar parameter in the API (its compute type).
std::string scalarParamType(ir::DType dtype);
/// The API's parameter list of `plan` for `target`, without the outputs
/// ("const __half *g, float *w, ..., float lr"), and the outputs.
std::string apiParams(const lower::Plan &plan, const Target &target);
std::string apiOutputs(const lower::Plan &plan, const Target &target);

/// The source file (`.cu` / `.cpp`) and the header of `plan`.
std::string emitSource(const lower::Plan &plan, const EmitOptions &options);
std::string emitHeader(const lower::Plan &plan, const EmitOptions &options);
/// The driver's `main`.
std::string emitDriver(const lower::Plan &plan, const EmitOptions &options);
/// `cc_Program::Sizes cc_sizes;` set from `const int64_t *cc_s` (every size
/// in plan.allSizeNames() order) and, for a program with segment tables,
/// `cc_Program::Tables cc_tables;` from `const int64_t *const *cc_t`: what
/// the driver's and the Python entry points' create() receive.
void emitSizesFrom(CodeWriter &w, const lower::Plan &plan);
void emitTablesFrom(CodeWriter &w, const lower::Plan &plan);
/// A C, C++ or Python string literal of `text`: printable ASCII kept,
/// '"' and '\\' escaped, any other byte as \xNN ending the literal there
/// ("\x0a" "1": the next character is not read as a digit of the escape).
std::string quoted(llvm::StringRef text);
/// The program's description (coconet/description.h) as `const
/// cc_description cc_program`, its arrays before it: what the driver and
/// the Python entry points both print (DescriptionCode.cpp).
void emitDescription(CodeWriter &w, const lower::Plan &plan);
/// The Python entry points, module and stub (--emit=python): NAME_python.cpp
/// / .cu, NAME.py, NAME.pyi.
std::vector<File> emitPython(const lower::Plan &plan,
                             const EmitOptions &options);
/// The loops of an elementwise kernel (ElementwiseCode.cpp): lower/
/// KernelBody's operations for every block form of the target. With
/// `fused`, that fused collective's kernel; with `ranged`, over the elements
/// [cc_begin, cc_end) (kernel parameters) of the domain, else all of them.
void emitElementwiseBlocks(CodeWriter &w, const Target &t,
                           const lower::Plan &plan, const lower::Step &step,
                           const lower::ElementwiseKernel &k,
                           const UniformValues &uniform,
                           const FusedKernel *fused, bool ranged);
/// The independent items of kernel step `step` (its geometry `g`) that its
/// parallel loop shares out: elements, outputs, rows (Kernels.cpp, next to
/// each kind's kernel).
std::string kernelItems(const lower::Step &step, llvm::StringRef g);
/// The kernels (Kernels.cpp): one function per kernel step, and the code
/// of one step inside `operator()`.
void emitKernels(CodeWriter &w, const Target &target, const lower::Plan &plan);
void emitStep(CodeWriter &w, const Target &target, const lower::Plan &plan,
              unsigned index);

/// A kernel function's parameters: its geometry `cc_g`, then `extra`, then
/// its buffers and scalars (kernelArgs), the pointers __restrict__ where the
/// target says so.
std::string kernelParams(const Target &t, const lower::Plan &plan,
                         const lower::Step &step, llvm::StringRef extra);
/// One parameter of a kernel function and the argument `operator()` passes.
struct KernelArg {
  std::string decl;  ///< "const float *w", "float lr"
  std::string value; ///< "w", "lr"
};
/// The buffers a kernel step reads and writes, then the scalar parameters
/// it reads by value (ScalarParam buffers), each once, in a stable order.
llvm::SmallVector<unsigned, 8> kernelArgBuffers(const lower::Plan &plan,
                                                const lower::Step &step);
/// Those as kernel parameters (pointers, const when only read; scalars by
/// value) and the arguments `operator()` passes.
std::vector<KernelArg> kernelArgs(const lower::Plan &plan,
                                  const lower::Step &step,
                                  const Target &target);
/// A member's value variable inside an elementwise kernel: its stage's
/// name, made distinct from the kernel's parameters.
std::string memberName(const lower::Plan &plan, const lower::Step &step,
                       const lower::ElementwiseKernel::Member &member);

/// In create(): `call` (an expression giving a coconet::rt::Status), and
/// when it fails, its status with "PLAN: WHAT: " before the message, so
/// that a memory that cannot be had is named ("adam: the scratch memory
/// (t_rs, t_g32): cannot allocate ... bytes of host memory").
void emitCreateCall(CodeWriter &w, const lower::Plan &plan,
                    const std::string &call, const std::string &what);

/// What one fused collective's kernel computes (FusedCode.cpp): the steps
/// of `f` as one kernel over its team's symmetric memory.
/// A fused collective's one kernel as codegen prints it: the plan's
/// decisions (lower::FusedKernelPlan, lower/FusedKernels.cpp) and the
/// names and steps codegen gives them.
struct FusedKernel : lower::FusedKernelPlan {
  const lower::FusedCollective *f = nullptr;
  /// The kernel function: "cc_fused_" + step.name.
  std::string name;
  const lower::CollectiveCall *reducing = nullptr, *gather = nullptr;
  /// The team's State member ("cc_team_world").
  std::string team;
};
/// The fused kernels of `plan`, in the order of plan.fusedCollectives (only
/// the fused collectives that run as one kernel).
std::vector<FusedKernel> fusedKernels(const lower::Plan &plan);
/// Does the program object say how its fused collectives and overlaps run
/// (path())? Some exist. `appendPath` adds an expression's text to it in
/// create().
bool hasPath(const lower::Plan &plan);
void appendPath(CodeWriter &w, const std::string &what);
/// The State member holding the team of `axis`.
std::string teamMember(const lower::Plan &plan, unsigned axis);
/// The header's declarations of the symmetric memory and the path taken
/// (inside the class, public).
void emitSymmetricApi(CodeWriter &w, const lower::Plan &plan,
                      const Target &target);
/// The State members, create()'s code (after the geometry) and the
/// destructor's, operator()'s staging before the steps and after them, and
/// the steps of a fused collective (its kernel, else its steps).
void emitTeamState(CodeWriter &w, const lower::Plan &plan,
                   const Target &target);
void emitTeamCreate(CodeWriter &w, const lower::Plan &plan,
                    const Target &target);
void emitTeamDestroy(CodeWriter &w, const lower::Plan &plan);
void emitTeamMethods(CodeWriter &w, const lower::Plan &plan,
                     const Target &target);
void emitStagingIn(CodeWriter &w, const lower::Plan &plan,
                   const Target &target);
void emitStagingOut(CodeWriter &w, const lower::Plan &plan,
                    const Target &target);
/// Emits step `index` of operator(), or the fused collective starting there
/// (returning the index of its last step), and steps it runs anyway.
unsigned emitStepOrFused(CodeWriter &w, const Target &target,
                         const lower::Plan &plan, unsigned index);

/// Overlaps (OverlapCode.cpp).
/// Is step `index` a kernel that an overlap runs in parts (its function
/// takes the range of elements it computes)?
bool rangedStep(const lower::Plan &plan, unsigned index);
/// Does step `index` not run (an alltoall's pack, which the parts of the
/// matmul overlapped with it do themselves)? It has no kernel then.
bool skippedStep(const lower::Plan &plan, unsigned index);
/// Is buffer `b` never used (the result of a matmul whose parts write the
/// alltoall's packed buffer instead)? It is not declared then.
bool unusedBuffer(const lower::Plan &plan, unsigned b);
/// The overlap run in parts whose producer is step `index`, if any.
const lower::OverlapGroup *overlapAt(const lower::Plan &plan, unsigned index);
/// Emits the steps of overlap `o` in parts; returns its last step.
unsigned emitOverlap(CodeWriter &w, const Target &target,
                     const lower::Plan &plan, const lower::OverlapGroup &o);
/// The State members, create()'s code and the destructor's for overlaps.
void emitOverlapState(CodeWriter &w, const lower::Plan &plan,
                      const Target &target);
void emitOverlapCreate(CodeWriter &w, const lower::Plan &plan,
                       const Target &target);
void emitOverlapDestroy(CodeWriter &w, const lower::Plan &plan,
                        const Target &target);
/// The operands of a collective or matmul step as a whole.
CollectiveOperands collectiveOperands(const lower::Plan &plan,
                                      const lower::CollectiveCall &c,
                                      llvm::StringRef g);
MatMulOperands matMulOperands(const lower::Plan &plan,
                              const lower::MatMulCall &mm, llvm::StringRef g);
/// The function (CPU) or kernel (CUDA) of fused kernel `k`.
void emitFusedKernel(CodeWriter &w, const Target &t, const lower::Plan &plan,
                     const FusedKernel &k);
/// The call of fused kernel `k` in operator() over `range` (whole, or a
/// part of an overlap).
void emitFusedCall(CodeWriter &w, const Target &t, const lower::Plan &plan,
                   const FusedKernel &k, const KernelRange &range);

/// How a fused kernel changes emitElementBody: one input's value is given
/// (the reduced value), one member is stored into the tile `cc_s<m>` (the
/// gathered member, copied into every member after the tile), and one
/// member's own store is left out.
struct BodyOverrides {
  std::optional<unsigned> input;
  std::string inputValue;
  std::optional<unsigned> tileMember;
  std::optional<unsigned> skipStore;
  /// A tile within one segment: each value per segment is the tile's one
  /// value `cc_u<i>`, not its filled tile `cc_l<i>[cc_j]` (CpuTarget).
  bool tableScalars = false;
  /// The positions of the row-invariant fused gathers (rowInvariantGather)
  /// were computed before the row tile's loop (CpuTarget).
  bool gathersHoisted = false;
};

/// Is `in` a fused gather whose position is the same along a row of a
/// domain of `rank` dimensions (the index reads no coordinate of the last
/// dimension, and the gathered dimension is not the last)?
bool rowInvariantGather(const lower::KernelInput &in, unsigned rank);
/// `cc_p<i>` of fused gather input `i`: the position its index holds,
/// clamped to 0 outside the data (`cc_v<i>` says whether it was inside).
void emitGatherPosition(CodeWriter &w, const lower::Plan &plan,
                        const lower::KernelInput &in, unsigned i,
                        const lower::Extents &domain, const Target &target);

/// Is `in` read at consecutive elements along the last dimension of a
/// domain of `rank` dimensions (flat, shifted, or its last dimension
/// follows the domain's last one)?
bool rowContiguous(const lower::KernelInput &in, unsigned rank);
/// Is a tensor of `dtype` converted a tile at a time in ElementForm::Tile?
bool isNarrow(ir::DType dtype);
/// The body of one element of an elementwise kernel at flat index `cc_i`
/// (geometry `cc_g`): loads, member computations, stores. Reads the
/// subexpressions in `uniform` from their variables.
void emitElementBody(CodeWriter &w, const lower::Plan &plan,
                     const lower::Step &step, const lower::ElementwiseKernel &k,
                     const Target &target, ElementForm form,
                     const UniformValues &uniform,
                     const BodyOverrides &overrides = {});
/// `const T cc_in<i> = ...;` for every scalar input, then the members'
/// subexpressions that depend on no element (before a kernel's loop, so
/// that e.g. Adam's `1 - pow(beta1, step)` is computed once, not once per
/// element). Returns what it hoisted, for emitElementBody.
UniformValues emitScalarInputs(CodeWriter &w, const lower::Plan &plan,
                               const lower::ElementwiseKernel &k,
                               const Target &target);

/// The name of a buffer inside `operator()` and kernels.
const std::string &bufferName(const lower::Plan &plan, unsigned buffer);
/// Does some step of `plan` multiply matrices?
bool hasMatMul(const lower::Plan &plan);
/// The axes (-1: every axis) of the collectives whose schedule chose the
/// one- or two-shot algorithm, ascending, each once.
llvm::SmallVector<int, 2> teamAlgorithmAxes(const lower::Plan &plan);
/// The collectives an algorithm file runs, with their steps, and what the
/// generated code holds and does for them (AlgorithmCode.cpp): the tables
/// (file scope), the State's runners, their checks and making in create().
llvm::SmallVector<std::pair<const lower::Step *, const lower::CollectiveCall *>,
                  2>
algorithmCalls(const lower::Plan &plan);
void emitAlgorithmTables(CodeWriter &w, const lower::Plan &plan);
void emitAlgorithmState(CodeWriter &w, const lower::Plan &plan,
                        const Target &t);
void emitAlgorithmCreate(CodeWriter &w, const lower::Plan &plan,
                         const Target &t);
/// The targets (CpuTarget.cpp, CudaTarget.cpp).
const Target &cpuTarget();
const Target &cudaTarget();
/// "first line of a banner" shared by every generated file.
std::string banner(const lower::Plan &plan, const EmitOptions &options,
                   llvm::StringRef what);

/// The kernel of a topk, cumsum, gather or scatter step (IndexCode.cpp).
void emitIndexKernel(CodeWriter &w, const Target &t, const lower::Plan &plan,
                     const lower::Step &step, const lower::IndexKernel &k);

} // namespace coconet::codegen

#endif // COCONET_CODEGEN_CODEGENIMPL_H
