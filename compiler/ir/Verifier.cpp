//===- Verifier.cpp - invariants of the typed IR --------------------------===//
//
// Checks what every pass must preserve: operands defined before use, ids in
// program order, layouts with one entry per mesh axis and sliced dimensions
// in range, bodies reading existing operands, and the type facts of each
// kind that passes rely on (e.g. an allgather's result is its input with
// the axis replicated). A violation is a compiler bug, reported as text.
//
//===----------------------------------------------------------------------===//

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
    if (e->op == ScalarOp::Operand &&
        e->operandIndex >= stage.operands.size())
      return "body reads operand " + std::to_string(e->operandIndex) +
             " of " + std::to_string(stage.operands.size());
    work.append(e->args.begin(), e->args.end());
  }
  return "";
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
    if (stage.axis < 0 ||
        stage.axis >= static_cast<int>(program.mesh.size()))
      return "axis " + std::to_string(stage.axis) + " out of range";
    return "";
  };
  switch (stage.kind) {
  case StageKind::Param:
    return expectOperands(0);
  case StageKind::Elementwise:
    return checkBody(stage);
  case StageKind::Reduction:
  case StageKind::Transpose:
    return expectOperands(1);
  case StageKind::MatMul:
    return expectOperands(2);
  case StageKind::LayerNorm:
    return expectOperands(4);
  case StageKind::RmsNorm:
    return expectOperands(3);
  case StageKind::AllReduce:
  case StageKind::Broadcast:
  case StageKind::Reduce:
    if (auto e = expectOperands(1); !e.empty())
      return e;
    return axisOk(true);
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::SendRecv: {
    if (auto e = expectOperands(1); !e.empty())
      return e;
    if (auto e = axisOk(false); !e.empty())
      return e;
    const TensorType &in = stage.operands[0]->type;
    if (in.dtype != stage.type.dtype || in.shape != stage.type.shape)
      return "communication changes the element type or shape";
    if (stage.kind == StageKind::AllGather) {
      if (in.layout[stage.axis].state != AxisState::Sliced ||
          stage.type.layout[stage.axis].state != AxisState::Replicated)
        return "allgather must turn a sliced axis into a replicated one";
    }
    if (stage.kind == StageKind::ReduceScatter) {
      const AxisLayout &out = stage.type.layout[stage.axis];
      if (out.state != AxisState::Sliced || out.dim != stage.dim)
        return "reducescatter must slice its dimension over its axis";
    }
    return "";
  }
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
  return "";
}

} // namespace coconet::ir
