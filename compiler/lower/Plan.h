//===- Plan.h - the kernel-level plan of one scheduled program --*- C++ -*-===//
//
// Lowering turns a scheduled program into a plan that every target prints
// the same way (the printers stay thin): the buffers of one rank, and the
// steps of one training step in the order they run on one stream.
//
// Buffers hold one rank's *block* of a value. Their shapes are local
// extents: a global size divided by the sizes of the mesh axes that slice
// it, bound when the program object is created. Parameters are the
// caller's memory (tensors by pointer, scalars by value); returned values
// are written into caller-provided outputs; everything else lives in
// scratch slots that intermediates with disjoint lifetimes share.
//
// Steps:
//   Elementwise   one loop over a domain computing fused member stages;
//                 inputs are read through an access pattern that maps the
//                 domain's coordinates to the operand's block (broadcasts,
//                 replicated operands at the slice's offset), every input
//                 is loaded before any output is stored, so an update can
//                 overwrite the parameter it reads at the same index
//   Reduction     sum / max / min / norm / sum of squares of a block, over
//                 all elements or along one dimension (f64 accumulation)
//   Norm          layernorm / rmsnorm per row of the last dimension
//   Transpose     swaps the last two dimensions of a block
//   Index         topk / cumsum / gather / scatter along one dimension
//   MatMul        C = A x B of the blocks (batched)
//   Collective    allreduce, reducescatter, allgather, broadcast, reduce,
//                 sendrecv of contiguous blocks over one mesh axis (-1: all)
//   Pack/Unpack   move the scattered (gathered) dimension of a block to the
//                 front and back, for collectives along a dimension > 0
//   Copy          a block to another buffer (a result that could not be
//                 computed in place); StoreScalar a scalar argument into a
//                 buffer (for a step that needs it in memory)
//
// A fused collective (reducescatter or allreduce + compute + allgather in
// one `fuse`) lowers to its sequential steps (collective, elementwise
// kernel, collective: what runs when the members of its mesh axis cannot
// reach each other's memory) and a FusedCollective that says how one
// kernel computes the same steps on the team's symmetric memory (the
// buffers its peers read or write: Buffer::team). An overlap (matmul +
// collective in chunks) is an OverlapGroup.
//
// The plan stands alone: it holds everything a code generator prints (the
// program's name, mesh and size names, each value's type, each
// collective's kind, operator, root, offset and axis), so code generators
// read no IR but the value types and scalar bodies this header includes.
// lower/Lower.h builds one.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_LOWER_PLAN_H
#define COCONET_LOWER_PLAN_H

#include "ir/ScalarExpr.h"
#include "ir/Types.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <memory>

namespace coconet::ir {
struct AlgorithmTable;
} // namespace coconet::ir
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::lower {

/// The communication a CollectiveCall makes: the communication stage kinds
/// of ir/StageKinds.def.
enum class Collective {
#define STAGE(Name, Printed, Description)
#define COMMUNICATION_STAGE(Name, Printed, Description) Name,
#include "ir/StageKinds.def"
};
/// "allreduce", "reducescatter", ...
llvm::StringRef collectiveName(Collective kind);

/// The size of one dimension of a rank's block: the global size divided
/// by the product of the sizes of `axes` (the mesh axes slicing it, in
/// mesh order). Exact: the generated code checks divisibility once.
struct Extent {
  ir::Dim global;
  llvm::SmallVector<unsigned, 2> axes;

  bool isOne() const {
    return axes.empty() && global.isConstant() && global.coefficient() == 1;
  }
  bool operator==(const Extent &o) const {
    return global == o.global && axes == o.axes;
  }
  bool operator!=(const Extent &o) const { return !(*this == o); }
};
using Extents = llvm::SmallVector<Extent, 4>;

/// The number of elements of a block, compared structurally: the product
/// of its extents' global sizes over the product of the sizes of their
/// mesh axes (sorted: a block of N / P rows and H columns has as many
/// elements as one of N rows and H / P columns).
struct ElementCount {
  /// The constant factor (0 when the product of constants overflows: no
  /// such block can be made) and the size names, sorted.
  int64_t coefficient = 1;
  llvm::SmallVector<std::string, 4> symbols;
  llvm::SmallVector<unsigned, 4> axes;
  bool operator==(const ElementCount &o) const {
    return coefficient == o.coefficient && symbols == o.symbols &&
           axes == o.axes;
  }
  bool operator!=(const ElementCount &o) const { return !(*this == o); }
};
ElementCount elementCount(llvm::ArrayRef<Extent> extents);

/// Prints extents for a target: turns a size name into the expression
/// that holds its value (e.g. "sizes_.N").
using SizeNamer = llvm::function_ref<std::string(llvm::StringRef sizeName)>;
/// Turns a mesh axis index into the expression holding this rank's
/// coordinate along it.
using CoordNamer = llvm::function_ref<std::string(unsigned axis)>;
/// The SizeNamer of documentation: a size as its name ("N / P").
inline std::string sizeAsWritten(llvm::StringRef sizeName) {
  return sizeName.str();
}
/// "N / P", "4 * H", "1". Parenthesised when it is a quotient or product.
std::string printExtent(const Extent &e, const ir::Mesh &mesh,
                        SizeNamer sizeVar);
/// The product of extents ("(N / P) * H"); "1" for none.
std::string printCount(llvm::ArrayRef<Extent> extents, const ir::Mesh &mesh,
                       SizeNamer sizeVar);
/// The offset of this rank's block along a dimension of global size
/// `global` sliced over `axes`: (mixed-radix index of the rank's coordinates
/// over `axes`) * (global / product of their sizes). `coordVar` turns an
/// axis index into the expression holding this rank's coordinate. "0" when
/// `axes` is empty.
std::string printOffset(const Extent &e, const ir::Mesh &mesh,
                        SizeNamer sizeVar, CoordNamer coordVar);
/// The product of the sizes of `axes` ("P", "D * T"); every axis for -1.
std::string printAxisSize(int axis, const ir::Mesh &mesh, SizeNamer sizeVar);

/// Memory one rank reads or writes.
struct Buffer {
  enum class Kind {
    Param,       ///< a tensor parameter: the caller's pointer
    ScalarParam, ///< a scalar parameter: passed by value, no memory
    Output,      ///< a returned value: the caller's output pointer
    Scratch,     ///< owned by the program object, in slot `slot`
    View,        ///< this rank's block of buffer `base` along mesh axis
                 ///< `viewAxis` (at coord * the block's elements): a value
                 ///< that an allgather gathers, written where it goes
    Table,       ///< segment table `table`'s kernel table (int64: the T
                 ///< segment ends, then the segment of every chunk's first
                 ///< element: coconet/segment_walk.h), owned by the
                 ///< program object and filled once by create()
  };
  Kind kind = Kind::Scratch;
  /// A C identifier, unique in the plan: the parameter's name, `out_NAME`
  /// for outputs, `t_STAGE` for scratch.
  std::string name;
  ir::DType dtype = ir::DType::F32;
  /// The local block; empty for a scalar (one element).
  Extents shape;
  /// The value it holds, as the program names it ("g", "x.1"), and its
  /// global type ("f16[N] local").
  std::string value;
  ir::TensorType type;
  /// Param, ScalarParam: the parameter's position in the declaration.
  unsigned paramIndex = 0;
  /// Param: a schedule sharded it (the caller passes this rank's slice).
  bool sharded = false;
  /// Output: the index of the result in Plan::results.
  unsigned result = 0;
  /// Scratch: the arena slot.
  std::optional<unsigned> slot;
  /// Table: the index into Plan::tables.
  unsigned table = 0;
  /// View: the buffer it is a block of, and the axis its blocks are along.
  unsigned base = 0;
  unsigned viewAxis = 0;
  /// Scratch written only by a collective whose result equals its input
  /// when its group has one member: then this is buffer `loneInput` itself
  /// (a parameter nothing writes), and the collective moves nothing. None:
  /// always the slot. `loneAxis` is the collective's axis (-1: every axis).
  std::optional<unsigned> loneInput;
  int loneAxis = 0;
  /// Param: written by the step (an update in place).
  bool written = false;
  /// The mesh axis whose team's symmetric memory holds this buffer when
  /// the fused collectives run as one kernel (peers read it: a reducing
  /// collective's input; or write it: an allgather's output); none: none.
  /// Scratch is allocated there; a Param or Output is the caller's memory,
  /// copied there and back (staging) unless the caller passes the
  /// program's own symmetric memory for it (zero copy).
  std::optional<unsigned> team;
};

/// How an elementwise-style kernel reads one dimension of an operand from
/// the coordinates of its loop domain.
struct DimAccess {
  /// A size-1 dimension that broadcasts: always index 0.
  bool zero = false;
  /// The domain dimension it follows (trailing alignment).
  unsigned domainDim = 0;
  /// The axes slicing the operand's dimension. When they differ from the
  /// domain dimension's, the index is shifted by the difference of the
  /// blocks' offsets (a replicated operand read at the slice's offset).
  llvm::SmallVector<unsigned, 2> operandAxes;
  /// The operand's extent along this dimension (its row-major stride
  /// follows from the extents).
  Extent extent;
};

/// How a fused gather's input finds its element (docs/schedules.md,
/// `fuse`): the loop's element with dimension `dim` replaced by the
/// position the index holds there; 0 where the position is outside
/// [0, the data's extent along `dim`), as the gather's kernel reads.
struct GatherAccess {
  /// The index buffer and the dimension it indexes.
  unsigned index = 0;
  unsigned dim = 0;
  /// How the index is read over the domain: its dimensions are the
  /// domain's leading ones (it may end after `dim`).
  llvm::SmallVector<DimAccess, 4> indexDims;
};

/// An operand of a kernel read from a buffer.
struct KernelInput {
  unsigned buffer = 0;
  /// One entry per dimension of the operand; empty for a scalar.
  llvm::SmallVector<DimAccess, 4> dims;
  /// Read at the loop's flat index (same block shape as the domain, no
  /// broadcast, no shift), or a scalar.
  bool flat = false;
  /// Read at each element's segment of this table (Plan::tables; `expand`):
  /// element [segment] of a [T] buffer; `dims` is its one dimension.
  std::optional<unsigned> table;
  /// Read at the loop's flat index plus a constant: the shapes agree but
  /// for dimension 0, which the domain slices and the operand holds whole
  /// (or sliced over fewer axes), e.g. a replicated weight read at a
  /// slice's offset.
  bool shifted = false;
  /// Read through an index (a fused gather): `dims` are the data's, the
  /// one along `gather->dim` replaced by the index's value.
  std::optional<GatherAccess> gather;
  bool isScalar() const { return dims.empty(); }
};

/// Where a member stage's operand comes from.
struct Source {
  enum class Kind { Input, Member };
  Kind kind = Kind::Input;
  unsigned index = 0; ///< into ElementwiseKernel::inputs or ::members
};

/// One loop over `domain` computing `members` in order.
struct ElementwiseKernel {
  /// The members' common block shape and its global form.
  Extents domain;
  ir::Shape globalShape;
  llvm::SmallVector<KernelInput, 4> inputs;
  struct Member {
    /// The stage's name in the program ("g32") and as a C identifier.
    std::string name;
    std::string identifier;
    /// The value of one element (its operands are `operands`).
    const ir::ScalarExpr *body = nullptr;
    llvm::SmallVector<Source, 4> operands;
    /// The buffer the member's value is stored into; none when it stays in
    /// registers (read only by later members).
    std::optional<unsigned> output;
  };
  llvm::SmallVector<Member, 8> members;
  /// Every input is flat, shifted or a scalar: the loop can run on
  /// vectors.
  bool flat = false;
  /// Some member needs the element's global row-major index (dropout).
  bool needsGlobalIndex = false;
};

struct ReductionKernel {
  unsigned input = 0, output = 0;
  ir::ReductionKind kind = ir::ReductionKind::Sum;
  /// Per segment of this table (Plan::tables): T outputs, each over the
  /// elements of its segment that the input block holds, in order; the
  /// input is 1-D (`reduced`).
  std::optional<unsigned> table;
  /// The input block as [outer, reduced, inner]; for a reduction over all
  /// elements, outer and inner are empty and `reduced` is every extent.
  Extents outer, reduced, inner;
  ir::DType inType = ir::DType::F32;
};

struct NormKernel {
  bool layerNorm = true;
  unsigned x = 0, output = 0;
  /// gamma (and beta) read like elementwise operands over x's domain.
  KernelInput gamma;
  std::optional<KernelInput> beta;
  /// The epsilon: a scalar input (by value or a one-element buffer).
  unsigned eps = 0;
  /// x's block: rows (every dimension but the last) and the row length.
  Extents rows;
  Extent row;
};

struct TransposeKernel {
  unsigned input = 0, output = 0;
  /// The input block as [batch, rows, middle, cols, inner]: rows and cols
  /// are the swapped dimensions (middle and inner empty for the last two).
  Extents batch;
  Extent rows, cols;
  Extents middle, inner;
  bool lastTwo() const { return middle.empty() && inner.empty(); }
};

/// topk, cumsum, gather or scatter along one dimension of a block; every
/// block is [outer, along dim, inner] (ir/Program.h states the semantics;
/// the layout rules make the blocks agree on outer and inner). One work
/// item per line along the dimension (topk, cumsum, scatter: the line of
/// the result, its copy of `into` first, then the source's writes in
/// order), or per element of the result (gather).
struct IndexKernel {
  enum class Op { TopKValues, TopKIndices, CumSum, Gather, Scatter };
  Op op = Op::CumSum;
  /// The data (topk, cumsum, gather: x; scatter: into), the index (gather,
  /// scatter), the source (scatter: x), the result.
  unsigned data = 0, index = 0, source = 0, output = 0;
  Extents outer, inner;
  /// The data's extent along the dimension, and the result's (topk: k) or
  /// the index's (gather, scatter).
  Extent along, taken;
  /// The index has the inner dimensions (else it ends at the dimension and
  /// every inner element reads the same position).
  bool indexInner = false;
  /// The data's element type (the index's is its buffer's).
  ir::DType dtype = ir::DType::F32;
};

/// "topk", "topk-indices", "cumsum", "gather", "scatter".
llvm::StringRef indexOpName(IndexKernel::Op op);

struct MatMulCall {
  unsigned a = 0, b = 0, c = 0;
  /// A is [batch..., M, K]; B is [K, N] or [batch..., K, N].
  Extents batch;
  Extent m, n, k;
  bool batchedB = false;
  /// A grouped matmul (grouped_matmul): A is one member's [M, K] rows in
  /// `groups` segments whose lengths the i32 buffer `counts` holds; B is
  /// [localGroups, K, N], segment j multiplied by B[j % localGroups].
  std::optional<unsigned> counts;
  Extent groups, localGroups;
};

struct CollectiveCall {
  Collective kind = Collective::AllReduce;
  ir::DType dtype = ir::DType::F32;
  /// AllReduce, ReduceScatter, Reduce: how values combine.
  ir::ReduceOp op = ir::ReduceOp::Sum;
  /// The mesh axis (-1: every axis).
  int axis = 0;
  /// Broadcast, Reduce: the root's coordinate along the axis.
  int64_t root = 0;
  /// SendRecv: rank i receives from rank i - offset.
  int64_t offset = 0;
  /// How it moves its data (a schedule's `algorithm`; Auto: the target's
  /// default, the communication library's).
  ir::CollectiveAlgorithm algorithm = ir::CollectiveAlgorithm::Auto;
  /// Synthesized: the algorithm file's table, and the name of the
  /// generated code's copy of it (coconet/algorithm.h's Table).
  std::shared_ptr<const ir::AlgorithmTable> table;
  std::string tableName;
  unsigned input = 0, output = 0;
  /// Elements of the input block (allreduce, broadcast, reduce, sendrecv,
  /// alltoall: also of the output; reducescatter: P times the output's;
  /// allgather: the output is P times this), P being the size of the axis
  /// group.
  Extents count;
  /// Elements of the output block.
  Extents outCount;
  /// AllToAll: elements of the block one member sends another (count / P),
  /// and the dimension it scatters.
  Extents blockCount;
  int scatterDim = 0;
  /// AllToAllV: the i32 buffer of the counts (E per member), the rows of
  /// the input and of the output (dimension 1), the elements of a row and
  /// E (the counts per member).
  unsigned counts = 0;
  Extent rowsIn, rowsOut, groups;
  Extents row;
};

/// Moves dimension `dim` of a block to the front (pack, before a
/// reducescatter along it) or back (unpack, after an allgather along it):
/// [outer, P * chunk, inner] <-> [P, outer, chunk, inner].
struct PackKernel {
  bool unpack = false;
  unsigned input = 0, output = 0;
  Extents outer;
  /// The number of blocks: the size of the collective's axis.
  int axis = 0;
  /// One block's extent along the dimension, and the dimensions after it.
  Extent chunk;
  Extents inner;
};

struct CopyCall {
  unsigned input = 0, output = 0;
  Extents count;
};

struct StoreScalarCall {
  unsigned input = 0; ///< a ScalarParam
  unsigned output = 0;
};

/// One step: what it computes, the buffers it reads and writes.
struct Step {
  using Body =
      std::variant<ElementwiseKernel, ReductionKernel, NormKernel,
                   TransposeKernel, IndexKernel, MatMulCall, CollectiveCall,
                   PackKernel, CopyCall, StoreScalarCall>;
  /// A C identifier named after the stages it computes, unique in the
  /// plan: `k3_g32_to_w1`, `allreduce_gs`, `matmul_y`, `copy_out_y`.
  std::string name;
  Body body;
  llvm::SmallVector<unsigned, 4> reads, writes;
  /// The next step is a communication step issued in the same group
  /// (ncclGroupStart/End) as this one.
  bool groupWithNext = false;
  /// A short description for comments and --emit=plan.
  std::string summary;
};

/// A fuse group holding a collective, lowered to `steps` (adjacent, in
/// order: a reducescatter or allreduce, an elementwise kernel, an
/// allgather; each may be absent, not all), which run in sequence when the
/// team is not available. One kernel computes the same on the team of mesh
/// axis `axis`: each member reads its block of the reducing collective's
/// input from every member's symmetric memory, combines it in the
/// members' order (as the simulator does), computes the kernel's members and
/// stores the gathered value into every member's symmetric output.
/// Why steps that could run together run in sequence (a fused collective
/// that no kernel computes, an overlap that runs whole): its kind, for a
/// test or a tool to branch on, and its words with the names involved,
/// which --emit=plan and the program's path() print.
struct Refusal {
  enum class Kind {
    Asked,  ///< the sequential form was asked for (--sequential)
    Steps,  ///< the steps are not of the kinds or in the order it needs
    Axes,   ///< their mesh axes allow no one team
    Shape,  ///< their elements, rows or dimensions do not fit one loop
    Access, ///< a step reads or writes where one kernel cannot
    Memory, ///< a buffer cannot live where the form needs it
  };
  Kind kind;
  std::string detail;
  static Refusal asked() {
    return {Kind::Asked, "the sequential form was asked for"};
  }
};

/// What the one kernel of a fused collective computes, reads and writes
/// (lower/FusedKernels.cpp): every decision the code generators follow.
struct FusedKernelPlan {
  /// The elementwise kernel it extends, with the buffers it reads and
  /// writes as a fused kernel (the reduced value is combined from every
  /// member, not read; the gathered value is stored into every member, and
  /// into its own buffer only where storeGatheredLocally). For a fused
  /// collective without an elementwise kernel, a kernel of one member that
  /// passes its input through (`madeStep`; its body is `identity`).
  Step step;
  bool madeStep = false;
  std::shared_ptr<ir::ScalarExpr> identity;
  /// The kernel's input that is the reducing collective's result, and the
  /// member the allgather gathers, where they exist.
  std::optional<unsigned> reducedInput, gatheredMember;
  /// It gathers the reduced value itself (no member is gathered).
  bool gatherReduced = false;
  /// It stores the reduced value into the reducing collective's output
  /// buffer itself (FusedCollective::storeReduced; a made step's one
  /// member stores it as its own output instead).
  bool storeReduced = false;
  /// The gathered member is stored into its own buffer too; and that
  /// buffer is this member's block of the gathered output (a view), which
  /// the gather then leaves out.
  bool storeGatheredLocally = false, selfInView = false;
  /// An overlap runs it in parts: it computes the elements [begin, end) of
  /// its domain and reads its reduced input at an offset it is given.
  bool ranged = false;
  const ElementwiseKernel &kernel() const {
    return std::get<ElementwiseKernel>(step.body);
  }
};

struct FusedCollective {
  llvm::SmallVector<unsigned, 3> steps;
  llvm::SMRange loc;
  /// The team: the mesh axis of its collectives.
  int axis = 0;
  /// Its reducing collective, elementwise kernel and allgather (steps),
  /// where it has them.
  std::optional<unsigned> reducing, kernel, gather;
  /// The elements of the loop: the reducing collective's output block, the
  /// kernel's domain, the allgather's input block (all the same).
  Extents domain;
  /// The reducing collective's result is also stored in its buffer (read
  /// by a step outside the kernel, or a result).
  bool storeReduced = false;
  /// The gathered block is also stored in its own buffer (the allgather's
  /// input, read elsewhere or a result; not when it is a view of the
  /// output, which the member's own store is).
  bool storeGathered = false;
  /// Why the steps run in sequence on every path (none when one kernel
  /// computes them where the team is available).
  std::optional<Refusal> sequential;
  bool fused() const { return !sequential; }
  /// Its one kernel where fused() (set by planFusedKernels, after the
  /// overlaps are planned).
  std::optional<FusedKernelPlan> oneKernel;
};

/// An overlap: the producer (a matmul step) computes its result in
/// `chunks` parts of its rows, and the consumer's steps for part c run as
/// soon as part c is done, while the producer computes part c + 1 (on
/// CUDA a second stream ordered by events; on the CPU a progress thread).
/// The rows are cut into blocks (the reducescatter's members when the
/// consumer is one, along `blockAxis`; one block otherwise), each block
/// into `chunks` parts; with several blocks the producer writes its result
/// chunk-major (part c of every block together), so that part c's
/// reducescatter reads contiguous blocks.
struct OverlapGroup {
  unsigned producer = 0, consumer = 0;
  int64_t chunks = 1;
  int dim = 0;
  llvm::SMRange loc;
  /// The steps that run once per part, on its rows: the consumer, or the
  /// steps of the fused collective it starts (one kernel where the team is
  /// available) but its allgather, which runs after the last part
  /// (`after`).
  llvm::SmallVector<unsigned, 3> perChunk;
  std::optional<unsigned> after;
  /// The axis of the reducescatter (or alltoall) whose members the blocks
  /// go to; none: one block.
  std::optional<unsigned> blockAxis;
  /// An alltoall consumer: the pack step between the matmul and it, which
  /// the parts do not run (each part's matmul writes its rows in the packed
  /// order itself), and the buffer the matmul's parts write (the pack's
  /// output, or the matmul's own result where there is no pack).
  /// An alltoall producer (`dispatch`): the unpack step between it and the
  /// matmul, which the parts do not run (each part's matmul reads its rows
  /// where the alltoall received them: its output); where other steps read
  /// the unpacked tensor, the unpack is `after` instead and runs once,
  /// after the last part.
  std::optional<unsigned> packStep;
  unsigned partsInto = 0;
  bool dispatch = false;
  /// A batched matmul and an allreduce: the parts are batches.
  bool batches = false;
  /// An alltoallv and a grouped matmul (`dispatch`: the alltoallv first):
  /// the parts are groups of the experts each member holds; `first`, the
  /// step that exchanges the counts the grouped matmul reads, runs before
  /// the parts.
  bool dropless = false;
  std::optional<unsigned> first;
  /// Why producer and consumer run one after the other, whole (none when
  /// they run in parts).
  std::optional<Refusal> sequential;
  bool inChunks() const { return !sequential; }
};

/// A divisibility the sizes must satisfy, checked when the program object
/// is created: `global` divides by the product of `axes` sizes times
/// `factor`.
/// A size the generated code checks when the program is created: `global`
/// divisible by the product of the sizes of `axes` and `factor`, or, where
/// `atLeast` is set, not below it (a topk's k).
struct SizeCheck {
  ir::Dim global;
  llvm::SmallVector<unsigned, 2> axes;
  int64_t factor = 1;
  /// What it is for: "dimension 0 of 'g'".
  std::string what;
  int64_t atLeast = 0;
};

struct Plan {
  /// The program's name in the source.
  std::string programName;
  /// The C identifier of the program object: `adam`, `adam_rs_c_ag`.
  std::string name;
  /// The schedule ("" when unscheduled).
  std::string schedule;
  ir::Mesh mesh;
  /// The program's size names, in order of first appearance.
  llvm::SmallVector<std::string, 4> sizeNames;

  struct Param {
    /// The name in the source and the position in the declaration.
    std::string name;
    unsigned index = 0;
    ir::TensorType type;
    unsigned buffer = 0;
  };
  /// In declaration order.
  std::vector<Param> params;

  /// A segment table: create() takes its lengths (the count `count`, a
  /// size name; they sum to `length`), checks them and fills `buffer`.
  struct Table {
    std::string name;
    std::string count;
    ir::Dim length;
    unsigned buffer = 0;
  };
  std::vector<Table> tables;

  struct Result {
    /// The name in the program's interface.
    std::string name;
    /// The value's global type.
    ir::TensorType type;
    /// The name of the updated parameter, or "" for a returned value.
    std::string updates;
    /// Where the result ends up: the parameter's buffer, or an Output.
    unsigned buffer = 0;
  };
  /// Updates (parameter order) then returned values, as the IR orders them.
  std::vector<Result> results;

  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  /// Scratch slots: a slot's size is the largest of its buffers.
  unsigned numSlots = 0;
  std::vector<FusedCollective> fusedCollectives;
  /// The mesh axes whose members form a team (symmetric memory and one
  /// kernel over it): those of a fused collective that runs as one kernel,
  /// in axis order. Decided with the fused collectives; the code
  /// generators create a team for each.
  llvm::SmallVector<unsigned, 2> teamAxes;
  std::vector<OverlapGroup> overlaps;
  std::vector<SizeCheck> checks;

  /// A requirement on the scalar parameters (ir::Requirement), checked by
  /// operator() before anything runs: the condition, whose Operand leaves
  /// read `buffers` (ScalarParams), and the refusal after the program
  /// object's name, cut around the parameters' values
  /// (ir::requirementPieces: pieces[i] before buffers[i]'s value).
  struct Requirement {
    const ir::ScalarExpr *condition = nullptr;
    llvm::SmallVector<unsigned, 2> buffers;
    llvm::SmallVector<std::string, 3> pieces;
    /// The condition as the source writes it, and the message (for the
    /// header's documentation).
    std::string text, message;
  };
  std::vector<Requirement> requirements;

  /// The outputs (returned values), in result order.
  llvm::SmallVector<unsigned, 4> outputs() const;
  /// Every size the program object is created with, each once: the mesh
  /// axes' sizes first, then the other size names.
  std::vector<std::string> allSizeNames() const;
};

/// The stable text form of --emit=plan.
void printPlan(const Plan &plan, llvm::raw_ostream &os);

} // namespace coconet::lower

#endif // COCONET_LOWER_PLAN_H
