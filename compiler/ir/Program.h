//===- Program.h - the typed IR: stages and programs ------------*- C++ -*-===//
//
// A program is a DAG of stages in SSA form: every Stage defines one tensor
// value (a scalar is a tensor of rank 0) and reads the values of its operand
// stages. Stages are kept in program order, which is a topological order.
//
// Semantics of each kind (P is the number of ranks of the stage's axis):
//   Param          an input; its type is the declared one.
//   Elementwise    body evaluated per element of the result shape; operands
//                  broadcast against the trailing dimensions of the result.
//                  Of a segmented result, an operand whose shape is the
//                  table's segment count [T] is read at the element's
//                  segment (`expand(r, table)`; readsBySegment()).
//   Reduction      sum / max / min / norm (L2) over all elements (dim = -1,
//                  giving a scalar) or along `dim`; accumulates in f64 and
//                  rounds once. Of a sliced or local input it is a per-rank
//                  partial value (layout local) until a collective combines it.
//                  With `segments` (a table, dim = -1): one value per segment
//                  of the segmented input, shape [T], each over the segment's
//                  elements in their order (those of the rank's block: per
//                  (segment, rank) partial values when the input is sliced).
//   MatMul         [..., M, K] x [..., K, N] -> [..., M, N]; accumulates in
//                  f64, rounds once.
//   Reshape        flatten(x, dim) merges dimensions `dim` and `dim + 1`;
//                  unflatten(x, dim, n) splits `dim` into [size / n, n].
//                  The elements keep their row-major order.
//   Transpose      swaps dimensions `dim` and `dim2` (dim < dim2; the last
//                  two unless the program names others).
//   LayerNorm      (x, gamma, beta, eps) over the last dimension.
//   RmsNorm        (x, gamma, eps) over the last dimension.
//   TopK           (x) the `k` largest elements along `dim`, largest first,
//                  an equal value ranked after the one at the lower index
//                  (a NaN above every number); `topkIndices` gives their
//                  positions along `dim` (i32) instead of the values.
//   CumSum         (x) the inclusive running sum along `dim`: floats
//                  accumulate in f64 in ascending order, each element
//                  rounded once; integers wrap at 64 bits.
//   Gather         (x, index) result[.., j, ..] = x[.., index[.., j, ..], ..]
//                  along `dim`; the index has x's dimensions before `dim`,
//                  any size along it and, after it, x's or none (read at
//                  the position with the trailing coordinates dropped). An
//                  index outside [0, size of x along dim) gives 0.
//   Scatter        (into, index, x) into with x written along `dim`:
//                  result[.., index[.., j, ..], ..] = x[.., j, ..] (the index
//                  as for gather); writes with an index outside
//                  [0, size of into along dim) are dropped; of two writes
//                  to one element, the one with the greater j stays.
//   AllReduce      combine over the axis in ascending rank order, in f64,
//                  rounding once; every rank gets the result.
//   ReduceScatter  as AllReduce, rank i of the axis keeps block i along `dim`.
//   AllGather      concatenates the blocks along the sliced dimension.
//   Broadcast      every rank of the axis gets the value of rank `root`.
//   Reduce         rank `root` gets the combination; the others get zeros.
//   SendRecv       rank i of the axis receives the value of rank i - offset,
//                  zeros when there is no such rank.
//   AllToAll       the same global value, re-sliced: the input is sliced
//                  along some dimension d over the axis, the result along
//                  `dim`; rank i sends block j along `dim` of its block to
//                  rank j, which concatenates what it receives along d in
//                  rank order.
//   AllToAllV      (x, counts) dropless dispatch over the axis: x is
//                  [P, M, ...] sliced(0), counts i32[P, E] sliced(0), E a
//                  multiple of P, G = E / P. Member p's rows go out in E
//                  consecutive segments, segment e of counts[p, e] rows (a
//                  negative count is 0) to member e / G; member q gets, for
//                  p ascending, p's segments q*G .. q*G+G-1 packed into its
//                  [R] rows (the result's dimension 1). A row past x's M is
//                  a row of zeros; a row past R is dropped; rows nothing
//                  reaches are zeros. With `countsResult` (operands:
//                  counts only): the counts member q received,
//                  result[q, p*G + g] = counts[p, q*G + g].
//   GroupedMatMul  (a, counts, b) a [P, R, K] sliced(0), b [E, K, N]
//                  sliced(0), counts i32[P, E] sliced(0): member q's rows in
//                  E consecutive segments of counts[q, j] rows (negative:
//                  0), segment j times b[q*G + j % G]; rows past R
//                  dropped, rows past the segments zero. Each segment as
//                  MatMul.
// Any stage may carry `updates = p`: `x = update(p, e)` makes the stage that
// computes e write its value into parameter p in place; it is then a result.
// A collective's `axis` is an index into the mesh, or -1 for every axis.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_IR_PROGRAM_H
#define COCONET_IR_PROGRAM_H

#include "ir/ScalarExpr.h"
#include "ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::ir {

enum class StageKind {
#define STAGE(Name, Printed, Description) Name,
#include "ir/StageKinds.def"
};

/// The printed name ("allreduce"), which for a communication stage is also
/// the builtin that makes one.
llvm::StringRef stageKindName(StageKind kind);
/// The kind printed as `name`.
std::optional<StageKind> parseStageKind(llvm::StringRef name);
/// "an allreduce", "a reduction", "a parameter".
llvm::StringRef stageKindDescription(StageKind kind);

/// Is this kind a collective or point-to-point communication?
bool isCommunication(StageKind kind);

/// Does `algorithm` implement collectives of `kind`? (Library: every
/// communication; one-shot: allreduce, reducescatter, allgather; two-shot:
/// allreduce.)
bool algorithmImplements(CollectiveAlgorithm algorithm, StageKind kind);

struct AlgorithmTable;
enum class AlgorithmCollective : uint8_t;
/// The stage kind of an algorithm's collective (ir/AlgorithmTable.h).
StageKind stageKindOf(AlgorithmCollective collective);

/// One SSA value of a program. Which attribute fields are meaningful
/// depends on the kind (see the file comment).
class Stage {
public:
  StageKind kind = StageKind::Param;
  /// Position in program order (assigned by Program::renumber()).
  unsigned id = 0;
  /// The stage's name: the statement or parameter name, or `x.1` for a
  /// stage split out of the expression of statement `x`.
  std::string name;
  TensorType type;
  llvm::SmallVector<Stage *, 4> operands;
  /// The DSL statement (or parameter) that defined it.
  llvm::SMRange loc;
  /// The unscheduled program's value this stage holds when a schedule gave
  /// it another name: `split` names the reducescatter and the allgather
  /// that replace an allreduce, which hold a block of its value and the
  /// whole. Empty when the stage's own name is that value's.
  std::string holds;
  /// The name of the unscheduled program's value this stage holds (its
  /// own name unless `holds` says otherwise).
  llvm::StringRef valueName() const { return holds.empty() ? name : holds; }

  // Attributes.
  unsigned paramIndex = 0;                      ///< Param
  const ScalarExpr *body = nullptr;             ///< Elementwise
  ReductionKind reduction = ReductionKind::Sum; ///< Reduction
  /// Reduction (-1: all); ReduceScatter (scattered dim); TopK, CumSum,
  /// Gather, Scatter (the indexed dimension).
  int dim = -1;
  /// Reduction: one value per segment of this table (dim = -1); empty for
  /// a whole-tensor or per-dimension reduction.
  std::string segments;
  ReduceOp reduceOp = ReduceOp::Sum; ///< AllReduce, ReduceScatter, Reduce
  int axis = 0;             ///< communication: mesh axis, -1 for all axes
  int64_t root = 0;         ///< Broadcast, Reduce: coordinate along the axis
  int64_t offset = 0;       ///< SendRecv
  int dim2 = -1;            ///< Transpose: the second dimension swapped
  int64_t k = 0;            ///< TopK: how many
  bool topkIndices = false; ///< TopK: the positions, not the values
  /// AllToAllV: the counts each member received, not the rows.
  bool countsResult = false;
  /// communication: how it moves its data (a schedule's `algorithm`).
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  /// Synthesized: the algorithm file's table (ir/AlgorithmTable.h).
  std::shared_ptr<const AlgorithmTable> table;
  /// The parameter this stage's value is written into, or null.
  Stage *updates = nullptr;
  /// Param: a schedule turned this replicated parameter into sliced storage
  /// (its type is the sliced one); the program's interface changed.
  bool sharded = false;

  bool isParam() const { return kind == StageKind::Param; }
};

/// Stages that run as one kernel (`fuse`): elementwise stages, optionally
/// preceded by one reducescatter or allreduce and followed by one allgather
/// (a fused collective). Fusion changes no values.
struct Kernel {
  /// Members in program order.
  llvm::SmallVector<Stage *, 8> stages;
  /// The fuse directive that created it (the last one that grew it).
  llvm::SMRange loc;
  /// Does it hold a collective?
  bool isFusedCollective() const;
};

/// A producer (a matmul) that runs concurrently with the collective that
/// consumes it (`overlap`): both are cut along dimension `dim` of the
/// producer's result into `chunks` parts per block that the collective
/// handles (for a reducescatter or allgather, each rank's block is cut in
/// `chunks` parts), and the collective of chunk c starts when the producer
/// has computed chunk c. Overlap changes no values.
struct Overlap {
  Stage *producer = nullptr;
  Stage *consumer = nullptr;
  int64_t chunks = 1;
  int dim = 0;
  llvm::SMRange loc;
  /// Dropless (an alltoallv and a grouped matmul): the alltoallv, whose
  /// counts' E / P experts a member holds are cut into the parts; else null.
  const Stage *alltoallv() const {
    for (const Stage *s : {producer, consumer})
      if (s && s->kind == StageKind::AllToAllV)
        return s;
    return nullptr;
  }
};

/// A segment table parameter (`layers: segments[T]`): T consecutive
/// segments of lengths given at run time, covering the `length` elements of
/// every tensor segmented by it. Not a stage: its values are never computed
/// on, only used to index. T is a size name bound by the table.
struct SegmentTableDecl {
  std::string name;
  Dim count;  ///< T
  Dim length; ///< N, the length of the tensors it segments
  llvm::SMRange loc;
};

/// `require(cond, "message");`: a condition over the program's scalar
/// parameters (replicated, so every rank decides alike) that must hold for
/// the step to mean anything. Every host checks it before the step runs
/// and refuses the call with the message: the simulator, the generated
/// operator() on both targets (on the host, no synchronisation), and so
/// the Python module and the drivers.
struct Requirement {
  /// A bool body whose Operand leaves read `params[operandIndex]`.
  const ScalarExpr *condition = nullptr;
  /// The scalar parameters it reads, in order of first read.
  llvm::SmallVector<Stage *, 2> params;
  /// The condition as the source writes it ("step >= 1"), and the message.
  std::string text, message;
  /// "adam.coco:14", for the refusal.
  std::string where;
  llvm::SMRange loc;
};

/// The refusal every host prints when `r` fails, after its own prefix
/// ("adam: "), cut around the parameters' values, which each host prints
/// itself: pieces[i] comes before the value of r.params[i], the last piece
/// after the last value. {"step = ", ": the step counts from 1
/// (require(step >= 1) at adam.coco:14)"} prints as "step = 0: the step
/// counts from 1 (require(step >= 1) at adam.coco:14)".
llvm::SmallVector<std::string, 3> requirementPieces(const Requirement &r);

/// A program: parameters, stages and results.
class Program {
public:
  std::string name;
  Mesh mesh;
  llvm::SMRange loc;
  /// Size names in order of first appearance (mesh sizes first).
  llvm::SmallVector<std::string, 4> sizeNames;
  /// Segment tables, in declaration order.
  llvm::SmallVector<SegmentTableDecl, 1> tables;
  const SegmentTableDecl *findTable(llvm::StringRef name) const;

  Program() = default;
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  /// Creates a stage at the end of program order.
  Stage *addStage(StageKind kind, llvm::StringRef name, TensorType type,
                  llvm::ArrayRef<Stage *> operands, llvm::SMRange loc);
  /// Creates a scalar expression node owned by the program.
  const ScalarExpr *addExpr(ScalarExpr expr);

  llvm::ArrayRef<std::unique_ptr<Stage>> getStages() const { return stages; }
  llvm::ArrayRef<Stage *> getParams() const { return params; }
  /// Updates (in parameter order) followed by returned values.
  llvm::ArrayRef<Stage *> getResults() const { return results; }
  /// Adds an update (named after the parameter it updates) or, with
  /// `returned`, a returned value (named after the stage, even when that
  /// stage also updates a parameter).
  void addResult(Stage *stage, bool returned = false) {
    results.push_back(stage);
    resultNames.push_back(stage->updates && !returned ? stage->updates->name
                                                      : stage->name);
  }
  /// The name result `i` is known by in the interface: the updated
  /// parameter, else the returned stage's name in the source (schedules
  /// may replace the stage, never the name).
  llvm::StringRef getResultName(size_t i) const { return resultNames[i]; }
  Stage *findStage(llvm::StringRef name) const;
  /// The stage that updates `param`, or null.
  Stage *findUpdateOf(const Stage *param) const;
  /// Assigns ids in program order.
  void renumber();

  // Mutation, for passes. Ids are kept in program order.

  /// Creates a stage at position `index` of program order (not a Param).
  Stage *insertStage(unsigned index, StageKind kind, llvm::StringRef name,
                     TensorType type, llvm::ArrayRef<Stage *> operands,
                     llvm::SMRange loc);
  /// Removes a stage nothing reads and that is no result; it leaves its
  /// kernel and any overlap.
  void eraseStage(Stage *stage);
  /// Removes every stage for which `dead` holds, in one pass over the
  /// program (linear in its size): none may be a parameter or a result, or
  /// be read by a stage that stays.
  void eraseStages(llvm::function_ref<bool(const Stage *)> dead);
  /// The stages that read `stage`, in program order, each once.
  llvm::SmallVector<Stage *, 4> getUsers(const Stage *stage) const;
  bool isResult(const Stage *stage) const;
  /// Makes the users accepted by `filter` (all, without one) read `to`
  /// instead of `from`.
  void replaceUses(Stage *from, Stage *to,
                   llvm::function_ref<bool(const Stage &user)> filter = {});
  /// Makes every result that is `from` be `to`.
  void replaceResult(Stage *from, Stage *to);
  /// `base` if no stage has that name, else `base.1`, `base.2`, ...
  std::string uniqueName(llvm::StringRef base) const;
  /// A deep copy: stages, bodies, kernels and overlaps.
  std::unique_ptr<Program> clone() const;

  /// Requirements on the scalar parameters, in source order.
  std::vector<Requirement> requirements;
  /// Kernels (fuse groups), in the order they were created.
  std::vector<Kernel> kernels;
  /// Overlapped producer/consumer pairs.
  std::vector<Overlap> overlaps;
  /// The kernel holding `stage`, or null.
  Kernel *kernelOf(const Stage *stage);
  const Kernel *kernelOf(const Stage *stage) const;
  /// One line per transformation that changed the order of floating-point
  /// operations (e.g. a norm computed from per-rank partial sums), so its
  /// results may differ from the unscheduled program in the last bits.
  llvm::SmallVector<std::string, 2> reassociations;
  /// The float sum allreduces (by value name) that a transformation
  /// computes in another order (`hierarchical`): the verifier checks the
  /// stages holding them within a bound (verify/Differential.h).
  llvm::SmallVector<std::string, 2> reassociatedCollectives;

private:
  std::vector<std::unique_ptr<Stage>> stages;
  std::vector<std::unique_ptr<ScalarExpr>> exprs;
  llvm::SmallVector<Stage *, 8> params;
  llvm::SmallVector<Stage *, 8> results;
  llvm::SmallVector<std::string, 8> resultNames;
};

/// A schedule with its names resolved against its program: the checked
/// directives, which the pass manager (passes/) applies in order.
struct Schedule {
  struct Directive {
    enum class Kind {
      Split,
      Hierarchical,
      Reorder,
      Shard,
      Fuse,
      Overlap,
      Algorithm,
      Apply
    };
    Kind kind = Kind::Split;
    llvm::SmallVector<std::string, 2> results;
    llvm::SmallVector<std::string, 4> args;
    /// The source range of each argument (for diagnostics).
    llvm::SmallVector<llvm::SMRange, 4> argLocs;
    int64_t chunks = 0;
    /// Algorithm with a file: what the file says (read and checked by
    /// sema).
    std::shared_ptr<const AlgorithmTable> table;
    llvm::SMRange loc;
  };
  std::string name;
  std::string program;
  std::vector<Directive> directives;
  llvm::SMRange loc;
};

/// Everything one compilation produced: programs (imported ones included)
/// and schedules, in source order.
struct Module {
  std::vector<std::unique_ptr<Program>> programs;
  std::vector<Schedule> schedules;

  Program *findProgram(llvm::StringRef name) const;
  const Schedule *findSchedule(llvm::StringRef name) const;
};

/// Does elementwise `stage` read operand `index` at each element's segment
/// (`expand`): the stage is segmented and the operand's shape is its
/// table's [T]?
bool readsBySegment(const Program &program, const Stage &stage, unsigned index);

/// Prints a program in the stable text form of --emit=ir.
void printProgram(const Program &program, llvm::raw_ostream &os);
/// A stage's type and right-hand side as printed (operands by id), without
/// its name: equal signatures compute equal values.
std::string stageSignature(const Program &program, const Stage &stage);
/// Prints a schedule's directives.
void printSchedule(const Schedule &schedule, llvm::raw_ostream &os);

/// Makes every reduction of an exact widening cast (`norm(f32(g))` of an
/// f16 or bf16 g, or an f64 cast of an f32) read the cast's operand: the
/// same terms (a reduction holds them in f64), so the same bits, and the
/// widened copy needs no memory where nothing else outside a kernel reads
/// it. Sema calls it on every program it builds, so schedules, the tuner
/// and every target see the narrow read (ir/NarrowReductions.cpp).
void narrowReductions(Program &program);

/// Checks the IR invariants (operand order, types and layouts consistent with
/// each kind's rules). Returns an empty string when valid, else a description
/// of the first violation (a compiler bug, never a user error).
std::string verifyProgram(const Program &program);

} // namespace coconet::ir

#endif // COCONET_IR_PROGRAM_H
