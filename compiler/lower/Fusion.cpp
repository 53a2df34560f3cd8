//===- Fusion.cpp - when one kernel computes a fused collective -----------===//
//
// A fuse group holding a collective has been lowered to adjacent steps: a
// reducing collective (reducescatter or allreduce), an elementwise kernel,
// an allgather (each may be absent). These run as they are where the team
// (the members of the collectives' mesh axis) cannot reach each other's
// memory. Where it can, one kernel computes them all: each member reads its
// block of the reducing collective's input straight from every member's
// symmetric memory, combines it in the members' order, computes the
// kernel's members on it and stores the gathered value into every member's
// symmetric output. This file decides, per fused collective, whether that
// kernel exists (and records why not) and which buffers live in the team's
// symmetric memory (Buffer::team).
//
// The one kernel needs contiguous blocks (no pack before a reducescatter
// along a later dimension, no unpack after such an allgather), one team,
// one loop over the same elements, the reduced value read at the loop's
// element, and no member writing memory that another member of the team
// reads in the same kernel (the reducing collective's input is not the
// allgather's output, and the kernel reads the output only at its own
// block, which no peer writes).
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::lower {

namespace {

/// Is buffer `b` read by a step of `plan` other than those in `except`?
bool readElsewhere(const Plan &plan, unsigned b,
                   llvm::ArrayRef<unsigned> except) {
  for (unsigned i = 0; i < plan.steps.size(); ++i)
    if (!llvm::is_contained(except, i) &&
        llvm::is_contained(plan.steps[i].reads, b))
      return true;
  return false;
}

/// Fills in `f`'s parts, or says why one kernel cannot compute them.
std::optional<Refusal> analyse(Plan &plan, FusedCollective &f) {
  using K = Refusal::Kind;
  const CollectiveCall *reducing = nullptr, *gather = nullptr;
  const ElementwiseKernel *kernel = nullptr;
  for (unsigned i : f.steps) {
    const Step &step = plan.steps[i];
    if (const auto *c = std::get_if<CollectiveCall>(&step.body)) {
      if (c->kind == Collective::AllGather) {
        gather = c;
        f.gather = i;
      } else {
        reducing = c;
        f.reducing = i;
      }
    } else if (const auto *k = std::get_if<ElementwiseKernel>(&step.body)) {
      kernel = k;
      f.kernel = i;
    } else if (const auto *p = std::get_if<PackKernel>(&step.body)) {
      return Refusal{K::Shape,
                     p->unpack ? "the allgather gathers a dimension after the "
                                 "first, whose blocks are not contiguous"
                               : "the reducescatter scatters a dimension after "
                                 "the first, whose blocks are not contiguous"};
    }
    // A stored scalar (an allreduce of a scalar argument) runs before.
  }
  // One team: the axis of the collectives.
  const int single = plan.mesh.size() == 1 ? 0 : -1;
  auto axisOf = [&](const CollectiveCall *c) {
    return c->axis < 0 ? single : c->axis;
  };
  f.axis = reducing ? axisOf(reducing) : axisOf(gather);
  if (f.axis < 0)
    return Refusal{K::Axes, "its collectives are over every axis of the mesh"};
  if (reducing && gather && axisOf(gather) != f.axis)
    return Refusal{K::Axes, "its collectives are over different mesh axes"};

  // One loop over the same elements.
  if (reducing)
    f.domain = reducing->kind == Collective::ReduceScatter ? reducing->outCount
                                                           : reducing->count;
  else if (kernel)
    f.domain = kernel->domain;
  else
    f.domain = gather->count;
  const ElementCount n = elementCount(f.domain);
  if ((kernel && elementCount(kernel->domain) != n) ||
      (gather && elementCount(gather->count) != n))
    return Refusal{K::Shape, "its parts loop over different elements"};

  if (reducing && kernel)
    for (const KernelInput &in : kernel->inputs) {
      if (in.buffer != reducing->output)
        continue;
      if (!in.flat)
        return Refusal{K::Access,
                       "the kernel reads the reduced value at other elements"};
      if (in.isScalar()) // loaded once, before the kernel's loop
        return Refusal{K::Access,
                       "the kernel reads the reduced value as a scalar"};
    }
  if (gather) {
    if (kernel) {
      const bool produced = llvm::any_of(kernel->members, [&](const auto &m) {
        return m.output == gather->input;
      });
      // It gathers a member, or the reduced value itself.
      if (!produced && !(reducing && gather->input == reducing->output))
        return Refusal{K::Steps,
                       "the allgather gathers a value the kernel does not "
                       "compute"};
      for (const KernelInput &in : kernel->inputs)
        if (in.buffer == gather->output && !in.shifted)
          return Refusal{K::Access, "the kernel reads the gathered buffer "
                                    "where peers write it"};
    } else if (reducing && gather->input != reducing->output) {
      return Refusal{K::Steps,
                     "the allgather gathers a value the kernel does not "
                     "compute"};
    }
    if (reducing && reducing->input == gather->output)
      return Refusal{K::Access, "the reducing collective reads the buffer "
                                "the allgather writes"};
  }

  // The buffers the team reaches: none may be a view, or in another team.
  for (const CollectiveCall *c : {reducing, gather}) {
    if (!c)
      continue;
    const Buffer &b =
        plan.buffers[c == reducing ? reducing->input : gather->output];
    if (b.kind == Buffer::Kind::View)
      return Refusal{K::Memory, "'" + b.name + "' is a view of another buffer"};
    if (b.team && *b.team != static_cast<unsigned>(f.axis))
      return Refusal{K::Memory, "'" + b.name +
                                    "' is in the symmetric memory of another "
                                    "axis"};
  }
  return std::nullopt;
}

} // namespace

void planFusedCollectives(Plan &plan, bool sequential) {
  for (FusedCollective &f : plan.fusedCollectives) {
    f.sequential = sequential ? Refusal::asked() : analyse(plan, f);
    if (!f.fused())
      continue;
    // No collective group spans the kernel's boundaries (it replaces the
    // steps where the team exists).
    if (f.steps.front() > 0)
      plan.steps[f.steps.front() - 1].groupWithNext = false;
    plan.steps[f.steps.back()].groupWithNext = false;
    // Its kernel and allgather; and all of its steps.
    llvm::SmallVector<unsigned, 3> parts;
    for (const std::optional<unsigned> &s : {f.kernel, f.gather})
      if (s)
        parts.push_back(*s);
    llvm::SmallVector<unsigned, 3> all = parts;
    if (f.reducing)
      all.push_back(*f.reducing);
    if (f.reducing) {
      const auto &r = std::get<CollectiveCall>(plan.steps[*f.reducing].body);
      Buffer &in = plan.buffers[r.input];
      in.team = static_cast<unsigned>(f.axis);
      in.loneInput.reset();
      const Buffer &out = plan.buffers[r.output];
      f.storeReduced = out.kind != Buffer::Kind::Scratch ||
                       (!f.kernel && !f.gather) ||
                       readElsewhere(plan, r.output, parts);
      if (f.storeReduced)
        plan.buffers[r.output].loneInput.reset();
    }
    if (f.gather) {
      const auto &g = std::get<CollectiveCall>(plan.steps[*f.gather].body);
      Buffer &out = plan.buffers[g.output];
      out.team = static_cast<unsigned>(f.axis);
      out.loneInput.reset();
      const Buffer &in = plan.buffers[g.input];
      f.storeGathered =
          in.kind != Buffer::Kind::View && (in.kind != Buffer::Kind::Scratch ||
                                            readElsewhere(plan, g.input, all));
    }
  }
}

} // namespace coconet::lower
