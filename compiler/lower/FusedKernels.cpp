//===- FusedKernels.cpp - what a fused collective's one kernel does -------===//
//
// For each fused collective that one kernel computes where the team exists
// (Fusion.cpp), the kernel's plan (FusedKernelPlan): the elementwise
// step it extends (or, without one, a one-member step that passes the
// reduced or gathered block through), the input that is the reduced value
// (combined from every member's memory instead of read), the member the
// allgather gathers (stored into every member's block of its output), and
// which of the two it also stores where it is (the reduced value when a
// later step or a result reads it, the gathered block when its own buffer
// is read or is this member's block of the output). The code generators
// print these decisions; they make none.
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::lower {

namespace {

/// A flat access of a buffer over `domain`.
KernelInput flatInput(unsigned buffer, const Extents &domain) {
  KernelInput in;
  in.buffer = buffer;
  in.flat = true;
  for (unsigned d = 0; d < domain.size(); ++d) {
    DimAccess a;
    a.domainDim = d;
    a.operandAxes = domain[d].axes;
    a.extent = domain[d];
    in.dims.push_back(a);
  }
  if (in.dims.empty()) { // a one-element block: read at index 0 all the same
    DimAccess a;
    a.extent = Extent{ir::Dim::constant(1), {}};
    in.dims.push_back(a);
  }
  return in;
}

/// A kernel of one member that passes `in` through: the reduced value (to
/// the gather, or stored), or the block the allgather gathers.
void makePassThrough(const Plan &plan, const FusedCollective &f, unsigned in,
                     FusedKernelPlan &k) {
  const Buffer &b = plan.buffers[in];
  k.identity = std::make_shared<ir::ScalarExpr>();
  k.identity->op = ir::ScalarOp::Operand;
  k.identity->dtype = b.dtype;
  ElementwiseKernel body;
  body.domain = f.domain;
  body.inputs.push_back(flatInput(in, f.domain));
  body.flat = true;
  ElementwiseKernel::Member m;
  m.name = m.identifier = b.name;
  m.body = k.identity.get();
  m.operands.push_back({Source::Kind::Input, 0});
  m.output = in;
  body.members.push_back(std::move(m));
  k.step.name = "fused_" + plan.steps[f.steps.front()].name;
  k.step.summary = "the fused collective of steps " +
                   std::to_string(f.steps.front()) + " to " +
                   std::to_string(f.steps.back());
  k.step.body = std::move(body);
  k.step.reads.push_back(in);
  k.step.writes.push_back(in);
  k.madeStep = true;
}

FusedKernelPlan planOne(const Plan &plan, const FusedCollective &f) {
  FusedKernelPlan k;
  const CollectiveCall *reducing =
      f.reducing ? &std::get<CollectiveCall>(plan.steps[*f.reducing].body)
                 : nullptr;
  const CollectiveCall *gather =
      f.gather ? &std::get<CollectiveCall>(plan.steps[*f.gather].body)
               : nullptr;
  const int reducedBuffer = reducing ? int(reducing->output) : -1;
  const int gatheredBuffer = gather ? int(gather->input) : -1;
  if (f.kernel)
    k.step = plan.steps[*f.kernel];
  else
    makePassThrough(plan, f, reducing ? reducing->output : gather->input, k);
  const ElementwiseKernel &body = k.kernel();
  for (unsigned i = 0; i < body.inputs.size(); ++i)
    if (static_cast<int>(body.inputs[i].buffer) == reducedBuffer)
      k.reducedInput = i;
  for (unsigned m = 0; m < body.members.size(); ++m)
    if (gatheredBuffer >= 0 &&
        body.members[m].output == static_cast<unsigned>(gatheredBuffer))
      k.gatheredMember = m;
  k.gatherReduced = gather && !k.gatheredMember && k.reducedInput;
  k.storeReduced = f.storeReduced && !k.madeStep;
  if (gather) {
    k.selfInView = plan.buffers[gather->input].kind == Buffer::Kind::View;
    k.storeGatheredLocally = k.selfInView || f.storeGathered;
  }
  // What the fused kernel reads and writes: not the reduced value's
  // buffer (combined from every member instead) unless it is stored; the
  // gathered buffer only where it is stored locally.
  llvm::erase_if(k.step.reads, [&](unsigned b) {
    return static_cast<int>(b) == reducedBuffer && !(k.madeStep && !reducing);
  });
  llvm::erase_if(k.step.writes, [&](unsigned b) {
    return static_cast<int>(b) == reducedBuffer ||
           (static_cast<int>(b) == gatheredBuffer && !k.storeGatheredLocally);
  });
  if (f.storeReduced)
    k.step.writes.push_back(reducing->output);
  k.ranged = llvm::any_of(plan.overlaps, [&](const OverlapGroup &o) {
    return o.inChunks() && llvm::is_contained(o.perChunk, f.steps.front());
  });
  return k;
}

} // namespace

void planFusedKernels(Plan &plan) {
  for (FusedCollective &f : plan.fusedCollectives)
    if (f.fused())
      f.oneKernel = planOne(plan, f);
}

} // namespace coconet::lower
