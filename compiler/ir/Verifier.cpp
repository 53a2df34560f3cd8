//===- Verifier.cpp - invariants of the typed IR --------------------------===//
//
// Checks what every pass must preserve: operands defined before use, ids in
// program order, layouts with one entry per mesh axis and sliced dimensions
// in range, bodies reading existing operands, and the type facts of each
// kind that passes rely on: every stage's layout is the one the layout
// rules (ir/LayoutRules.h, the functions sema infers layouts with) give it
// from its operands', e.g. an allgather's result is its input with the axis
// replicated. A violation is a compiler bug, reported as text.
//
//===----------------------------------------------------------------------===//

#include "ir/AlgorithmTable.h"
#include "ir/LayoutRules.h"
#include "ir/Program.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace coconet::ir {

static std::string checkLayout(const Program &program, const Stage &stage) {
  const Layout &layout = stage.type.layout;
  if (layout.size() != program.mesh.size())
    return "layout has " + std::to_string(layout.size()) +
           " axes but the mesh has " + std::to_string(program.mesh.size());
  for (const AxisLayout &a : layout.getAxes())
    if (a.state == AxisState::Sliced &&
        (a.dim < 0 || a.dim >= static_cast<int>(stage.type.rank())))
      return "sliced dimension " + std::to_string(a.dim) + " out of range";
  return "";
}

static std::string checkBody(const Stage &stage) {
  if (!stage.body)
    return "elementwise stage without a body";
  llvm::SmallVector<const ScalarExpr *, 16> work{stage.body};
  while (!work.empty()) {
    const ScalarExpr *e = work.pop_back_val();
    if (!e)
      return "null body node";
    if (e->op == ScalarOp::Operand && e->operandIndex >= stage.operands.size())
      return "body reads operand " + std::to_string(e->operandIndex) + " of " +
             std::to_string(stage.operands.size());
    work.append(e->args.begin(), e->args.end());
  }
  return "";
}

/// The layout the rules of ir/LayoutRules.h give `stage`, from its
/// operands' layouts; nullopt with the rule's complaint in `why` when the
/// operands break the rule. Parameters are declared, not inferred.
static std::optional<Layout> ruleLayout(const Program &program,
                                        const Stage &stage, std::string &why) {
  const unsigned axes = program.mesh.size();
  const TensorType &t = stage.type;
  auto in = [&](unsigned i) -> const TensorType & {
    return stage.operands[i]->type;
  };
  // The elementwise join of operands broadcast into the result's rank.
  auto join = [&](llvm::ArrayRef<Stage *> operands) -> std::optional<Layout> {
    Layout out = Layout::replicated(axes);
    for (const Stage *op : operands) {
      auto joined = joinLayouts(
          out, alignLayout(op->type.layout, op->type.rank(), t.rank()), why);
      if (!joined)
        return std::nullopt;
      out = *joined;
    }
    return out;
  };
  switch (stage.kind) {
  case StageKind::Param:
    return t.layout;
  case StageKind::Elementwise:
    // A constant (`c: f32[N] sliced(0) = 0;`: no operands but replicated
    // scalars) is the same everywhere, so any layout holds it.
    if (llvm::all_of(stage.operands, [](const Stage *o) {
          return o->type.isScalar() && o->type.layout.isReplicated();
        }))
      return t.layout;
    return join(stage.operands);
  case StageKind::Reduction:
    return reductionLayout(in(0).layout, in(0).rank(), stage.dim);
  case StageKind::MatMul:
    return matmulLayout(in(0).layout, in(0).rank(), in(1).layout, in(1).rank(),
                        why);
  case StageKind::Transpose:
    return transposeLayout(in(0).layout, stage.dim, stage.dim2);
  case StageKind::LayerNorm:
  case StageKind::RmsNorm:
    // x joined with gamma (and beta); epsilon is a replicated scalar.
    return join(llvm::ArrayRef<Stage *>(stage.operands).drop_back());
  case StageKind::TopK:
  case StageKind::CumSum:
    return alongLayout(in(0).layout, stage.dim, why);
  case StageKind::Reshape: {
    const bool flatten = t.rank() < in(0).rank();
    const Dim &outer = (flatten ? in(0) : t).shape[stage.dim];
    return reshapeLayout(in(0).layout, stage.dim, flatten,
                         outer == Dim::constant(1), why);
  }
  case StageKind::Gather:
    return gatherLayout(in(0).layout, in(1).layout, in(1).rank(), stage.dim,
                        why);
  case StageKind::Scatter:
    return scatterLayout(in(0).layout, in(1).layout, in(1).rank(), in(2).layout,
                         stage.dim, why);
  case StageKind::GroupedMatMul:
    // Each member's rows by its own experts (the batch dimension of a
    // matmul of the rows by the weights [E, K, N]); another axis cutting
    // N or K as a matmul's rule says.
    return matmulLayout(in(0).layout, 3, in(2).layout, 3, why);
  case StageKind::AllReduce:
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::Broadcast:
  case StageKind::Reduce:
  case StageKind::SendRecv:
  case StageKind::AllToAll:
  case StageKind::AllToAllV: {
    unsigned badAxis = 0;
    auto layout = communicationLayout(stage.kind, in(0).layout, stage.axis,
                                      stage.dim, why, badAxis);
    if (!layout)
      why = ": needs " + why + " on axis " + std::to_string(badAxis);
    return layout;
  }
  }
  return std::nullopt;
}

/// topk, cumsum, gather and scatter: dimension, shapes and element types
/// as ir/Program.h states them.
static std::string checkIndexShapes(const Stage &stage) {
  const TensorType &t = stage.type;
  const TensorType &x = stage.operands[0]->type;
  if (stage.dim < 0 || stage.dim >= static_cast<int>(x.rank()))
    return "dimension " + std::to_string(stage.dim) + " out of range";
  const unsigned dim = stage.dim;
  if (stage.kind == StageKind::TopK) {
    Shape want = x.shape;
    want[dim] = Dim::constant(stage.k);
    if (stage.k < 1 || t.shape != want)
      return "topk of " + std::to_string(stage.k) + " gives shape " +
             shapeStr(t.shape);
    if (t.dtype != (stage.topkIndices ? DType::I32 : x.dtype))
      return "topk gives the wrong element type";
    return "";
  }
  if (stage.kind == StageKind::CumSum)
    return t.shape == x.shape && t.dtype == x.dtype ? ""
                                                    : "cumsum changes its type";
  // Gather and scatter.
  {
    const TensorType &index = stage.operands[1]->type;
    const TensorType *source =
        stage.kind == StageKind::Scatter ? &stage.operands[2]->type : nullptr;
    if (index.dtype != DType::I32 && index.dtype != DType::I64)
      return "its index is not i32 or i64";
    if (index.rank() <= dim || index.rank() > x.rank())
      return "its index has rank " + std::to_string(index.rank());
    for (unsigned d = 0; d < index.rank(); ++d)
      if (d != dim && index.shape[d] != x.shape[d])
        return "its index's shape " + shapeStr(index.shape) +
               " does not match " + shapeStr(x.shape);
    Shape want = x.shape;
    if (source) {
      want[dim] = index.shape[dim];
      if (source->shape != want || source->dtype != x.dtype)
        return "its source " + source->str(Mesh()) + " does not match";
      want = x.shape;
    } else {
      want[dim] = index.shape[dim];
    }
    if (t.shape != want || t.dtype != x.dtype)
      return "its result's type " + shapeStr(t.shape) + " is not " +
             shapeStr(want);
    return "";
  }
}

static std::string checkKind(const Program &program, const Stage &stage) {
  auto expectOperands = [&](size_t n) -> std::string {
    if (stage.operands.size() != n)
      return "expects " + std::to_string(n) + " operands, has " +
             std::to_string(stage.operands.size());
    return "";
  };
  auto axisOk = [&](bool allowAll) -> std::string {
    if (stage.axis == -1 && allowAll)
      return "";
    if (stage.axis < 0 || stage.axis >= static_cast<int>(program.mesh.size()))
      return "axis " + std::to_string(stage.axis) + " out of range";
    return "";
  };
  auto sameElements = [&]() -> std::string {
    const TensorType &in = stage.operands[0]->type;
    if (in.dtype != stage.type.dtype || in.shape != stage.type.shape)
      return "communication changes the element type or shape";
    return "";
  };
  switch (stage.kind) {
  case StageKind::Param:
    return expectOperands(0);
  case StageKind::Elementwise:
    return checkBody(stage);
  case StageKind::Reduction:
    return expectOperands(1);
  case StageKind::Transpose: {
    if (auto e = expectOperands(1); !e.empty())
      return e;
    const Shape &in = stage.operands[0]->type.shape;
    Shape want = in;
    if (stage.dim < 0 || stage.dim >= stage.dim2 ||
        stage.dim2 >= static_cast<int>(in.size()))
      return "swaps dimensions " + std::to_string(stage.dim) + " and " +
             std::to_string(stage.dim2);
    std::swap(want[stage.dim], want[stage.dim2]);
    return want == stage.type.shape ? "" : "transposes to the wrong shape";
  }
  case StageKind::MatMul:
    return expectOperands(2);
  case StageKind::LayerNorm:
    return expectOperands(4);
  case StageKind::RmsNorm:
    return expectOperands(3);
  case StageKind::TopK:
  case StageKind::CumSum:
    if (auto e = expectOperands(1); !e.empty())
      return e;
    return checkIndexShapes(stage);
  case StageKind::Reshape: {
    if (auto e = expectOperands(1); !e.empty())
      return e;
    const TensorType &in = stage.operands[0]->type;
    const Shape &out = stage.type.shape;
    const bool flatten = out.size() + 1 == in.shape.size();
    const size_t big = flatten ? in.shape.size() : out.size();
    if ((!flatten && big != in.shape.size() + 1) || stage.dim < 0 ||
        static_cast<size_t>(stage.dim) + 1 >= big ||
        in.dtype != stage.type.dtype)
      return "reshapes " + in.str(program.mesh) + " to " +
             stage.type.str(program.mesh);
    const Shape &wide = flatten ? in.shape : out;
    const Shape &narrow = flatten ? out : in.shape;
    Shape want(wide.begin(), wide.begin() + stage.dim);
    want.push_back(wide[stage.dim] * wide[stage.dim + 1]);
    want.append(wide.begin() + stage.dim + 2, wide.end());
    return want == narrow ? "" : "reshapes to the wrong shape";
  }
  case StageKind::Gather:
    if (auto e = expectOperands(2); !e.empty())
      return e;
    return checkIndexShapes(stage);
  case StageKind::Scatter:
    if (auto e = expectOperands(3); !e.empty())
      return e;
    return checkIndexShapes(stage);
  case StageKind::AllReduce:
  case StageKind::Broadcast:
  case StageKind::Reduce:
    if (auto e = expectOperands(1); !e.empty())
      return e;
    return axisOk(true);
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::SendRecv:
  case StageKind::AllToAll:
    if (auto e = expectOperands(1); !e.empty())
      return e;
    if (auto e = axisOk(false); !e.empty())
      return e;
    return sameElements();
  case StageKind::AllToAllV: {
    if (auto e = expectOperands(stage.countsResult ? 1 : 2); !e.empty())
      return e;
    if (auto e = axisOk(false); !e.empty())
      return e;
    const TensorType &counts = stage.operands.back()->type;
    if (counts.dtype != DType::I32 || counts.rank() != 2)
      return "counts of type " + counts.str(program.mesh) + ", not i32[P, E]";
    if (stage.countsResult)
      return sameElements();
    const TensorType &x = stage.operands[0]->type;
    Shape want = x.shape;
    if (want.size() < 2 || x.dtype != stage.type.dtype ||
        stage.type.rank() != want.size())
      return "moves " + x.str(program.mesh) + " to " +
             stage.type.str(program.mesh);
    want[1] = stage.type.shape[1];
    return want == stage.type.shape ? "" : "changes more than the rows";
  }
  case StageKind::GroupedMatMul: {
    if (auto e = expectOperands(3); !e.empty())
      return e;
    const TensorType &a = stage.operands[0]->type, &c = stage.operands[1]->type,
                     &b = stage.operands[2]->type;
    if (a.rank() != 3 || b.rank() != 3 || c.rank() != 2 ||
        c.dtype != DType::I32 || a.shape[2] != b.shape[1] ||
        c.shape[1] != b.shape[0] || a.dtype != b.dtype ||
        stage.type.dtype != a.dtype ||
        stage.type.shape != Shape{a.shape[0], a.shape[1], b.shape[2]})
      return "grouped matmul of " + a.str(program.mesh) + " by " +
             b.str(program.mesh) + " in groups " + c.str(program.mesh) +
             " gives " + stage.type.str(program.mesh);
    return "";
  }
  }
  return "";
}

/// The stage's layout is the one the layout rules give it.
static std::string checkLayoutRule(const Program &program, const Stage &stage) {
  std::string why;
  std::optional<Layout> expected = ruleLayout(program, stage, why);
  if (!expected)
    return "its operands break the layout rule of " +
           stageKindName(stage.kind).str() + why;
  if (*expected != stage.type.layout)
    return "layout " + stage.type.layout.str(program.mesh) +
           ", but the layout rule of " + stageKindName(stage.kind).str() +
           " gives " + expected->str(program.mesh);
  return "";
}

/// Segmentation: a segmented value is 1-D over its table's length; a
/// per-segment reduction reads a value segmented by its table and gives
/// [T]; an elementwise stage's segmented operands have its table and its
/// by-segment operands are not sliced; other kinds keep their input's
/// segmentation.
static std::string checkSegments(const Program &program, const Stage &stage) {
  const TensorType &t = stage.type;
  if (t.isSegmented()) {
    const SegmentTableDecl *table = program.findTable(t.segments);
    if (!table)
      return "segmented by '" + t.segments + "', which is not a table";
    if (t.rank() != 1 || t.shape[0] != table->length)
      return "segmented by '" + t.segments + "' but its shape is " +
             shapeStr(t.shape) + ", not [" + table->length.str() + "]";
  }
  if (!stage.segments.empty()) {
    const SegmentTableDecl *table = program.findTable(stage.segments);
    if (stage.kind != StageKind::Reduction || !table)
      return "reduces by '" + stage.segments + "', which is not a table";
    if (stage.dim != -1 || stage.operands.empty() ||
        stage.operands[0]->type.segments != stage.segments)
      return "per-segment reduction of a value not segmented by '" +
             stage.segments + "'";
    if (t.isSegmented() || t.rank() != 1 || t.shape[0] != table->count)
      return "per-segment reduction of type " + t.str(program.mesh) +
             ", not [" + table->count.str() + "]";
    return "";
  }
  switch (stage.kind) {
  case StageKind::Param:
    return "";
  case StageKind::Elementwise:
    for (unsigned i = 0; i < stage.operands.size(); ++i) {
      const TensorType &in = stage.operands[i]->type;
      if (readsBySegment(program, stage, i)) {
        if (in.layout.isSlicedAnywhere())
          return "reads sliced '" + stage.operands[i]->name + "' by segment";
      } else if (in.isSegmented() && in.segments != t.segments) {
        return "operand '" + stage.operands[i]->name + "' is segmented by '" +
               in.segments + "', the stage by '" + t.segments + "'";
      }
    }
    return "";
  case StageKind::Reduction:
    return t.isSegmented() ? "a reduction's result is segmented" : "";
  case StageKind::TopK:
  case StageKind::CumSum:
  case StageKind::Gather:
  case StageKind::Scatter:
    for (const Stage *op : stage.operands)
      if (op->type.isSegmented())
        return "reads segmented '" + op->name + "' by index";
    return t.isSegmented() ? "its result is segmented" : "";
  case StageKind::AllToAllV:
  case StageKind::GroupedMatMul:
    for (const Stage *op : stage.operands)
      if (op->type.isSegmented())
        return "reads segmented '" + op->name + "' by rows";
    return t.isSegmented() ? "its result is segmented" : "";
  case StageKind::MatMul:
  case StageKind::Transpose:
  case StageKind::Reshape:
  case StageKind::LayerNorm:
  case StageKind::RmsNorm:
  case StageKind::AllReduce:
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::Broadcast:
  case StageKind::Reduce:
  case StageKind::SendRecv:
  case StageKind::AllToAll:
    if (stage.operands.empty() ||
        stage.operands[0]->type.segments != t.segments)
      return "segmentation differs from its input's";
    return "";
  }
  return "";
}

/// Kernels: members are stages of the program, each in one kernel, listed
/// in program order, and convex: no path leaves a kernel and comes back.
static std::string checkKernels(const Program &program,
                                const llvm::DenseSet<const Stage *> &defined) {
  llvm::DenseSet<const Stage *> seen;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const Kernel &kernel = program.kernels[k];
    std::string which = "kernel k" + std::to_string(k) + ": ";
    if (kernel.stages.empty())
      return which + "no stages";
    llvm::DenseSet<const Stage *> members;
    for (size_t i = 0; i < kernel.stages.size(); ++i) {
      const Stage *s = kernel.stages[i];
      if (!defined.contains(s))
        return which + "a member is not a stage of the program";
      if (!seen.insert(s).second)
        return which + "'" + s->name + "' is in two kernels";
      if (i && kernel.stages[i - 1]->id >= s->id)
        return which + "members out of program order";
      if (s->isParam())
        return which + "holds parameter '" + s->name + "'";
      members.insert(s);
    }
    // Stages outside the kernel that depend on a member.
    llvm::DenseSet<const Stage *> below;
    for (const auto &stagePtr : program.getStages()) {
      const Stage *s = stagePtr.get();
      bool fromKernel = false, fromBelow = false;
      for (const Stage *op : s->operands) {
        fromKernel |= members.contains(op);
        fromBelow |= below.contains(op);
      }
      if (members.contains(s)) {
        if (fromBelow)
          return which + "'" + s->name +
                 "' depends on the kernel through a stage outside it";
      } else if (fromKernel || fromBelow) {
        below.insert(s);
      }
    }
  }
  return "";
}

std::string verifyProgram(const Program &program) {
  llvm::DenseSet<const Stage *> defined;
  unsigned index = 0;
  unsigned params = 0;
  for (const auto &stagePtr : program.getStages()) {
    const Stage &stage = *stagePtr;
    auto fail = [&](const std::string &what) {
      return "stage %" + std::to_string(stage.id) + " '" + stage.name +
             "': " + what;
    };
    if (stage.id != index++)
      return fail("id out of program order");
    for (const Stage *op : stage.operands)
      if (!op || !defined.contains(op))
        return fail("operand used before it is defined");
    if (stage.isParam() && stage.paramIndex != params++)
      return fail("parameter index out of order");
    if (auto e = checkLayout(program, stage); !e.empty())
      return fail(e);
    if (auto e = checkKind(program, stage); !e.empty())
      return fail(e);
    if (stage.algorithm != CollectiveAlgorithm::Auto &&
        (!algorithmImplements(stage.algorithm, stage.kind) ||
         program.kernelOf(&stage)))
      return fail("algorithm " +
                  collectiveAlgorithmName(stage.algorithm).str() +
                  " on a stage it cannot run (kind or kernel)");
    if ((stage.algorithm == CollectiveAlgorithm::Synthesized) !=
            (stage.table != nullptr) ||
        (stage.table && stageKindOf(stage.table->collective) != stage.kind))
      return fail("an algorithm file's table on a stage of another kind, or "
                  "a synthesized algorithm without one");
    if (auto e = checkLayoutRule(program, stage); !e.empty())
      return fail(e);
    if (auto e = checkSegments(program, stage); !e.empty())
      return fail(e);
    if (stage.updates) {
      if (!defined.contains(stage.updates) || !stage.updates->isParam())
        return fail("updates something that is not an earlier parameter");
      if (stage.updates->type != stage.type)
        return fail("update changes the parameter's type");
    }
    defined.insert(&stage);
  }
  for (const Stage *r : program.getResults())
    if (!defined.contains(r))
      return "a result is not a stage of the program";
  if (auto e = checkKernels(program, defined); !e.empty())
    return e;
  for (const Overlap &o : program.overlaps) {
    if (!defined.contains(o.producer) || !defined.contains(o.consumer))
      return "an overlap names a stage that is not in the program";
    std::string pair = "overlap of '" + o.producer->name + "' with '" +
                       o.consumer->name + "': ";
    if (!llvm::is_contained(o.consumer->operands, o.producer))
      return pair + "the consumer does not read the producer";
    if (o.chunks < 1 || o.dim < 0 ||
        o.dim >= static_cast<int>(o.producer->type.rank()))
      return pair + "bad chunking";
  }
  for (const Requirement &r : program.requirements) {
    for (const Stage *p : r.params)
      if (!defined.contains(p) || !p->isParam() || !p->type.isScalar())
        return "require(" + r.text +
               "): reads something that is not a scalar parameter";
    if (!r.condition || r.condition->dtype != DType::Bool)
      return "require(" + r.text + "): the condition is not a bool";
    for (const ScalarExpr *e : postOrder(r.condition))
      if (e->op == ScalarOp::Operand && e->operandIndex >= r.params.size())
        return "require(" + r.text + "): a leaf reads no parameter";
  }
  return "";
}

} // namespace coconet::ir
