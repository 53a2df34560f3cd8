//===- Chunks.cpp - when an overlap runs in chunks ------------------------===//
//
// `overlap(y, c) chunks K` lowers to the matmul's step followed by the
// consumer's steps. They run in K parts of the matmul's rows when the
// parts are independent and contiguous:
//   - the matmul is not batched, and the chunked dimension is its rows;
//   - the consumer's steps (the collective, or the fused collective it
//     starts) come right after the matmul's;
//   - a reducescatter consumer scatters the rows (no pack) over one axis;
//     each of its P blocks is cut into K parts, and part c of every block
//     is computed together and written together (chunk-major), which only
//     the reducescatter may read: the matmul's result is scratch that no
//     other step reads;
//   - a fused collective's allgather runs after the last part where it is
//     not computed by the fused kernel (the fallback).
// Otherwise they run whole, one after the other, and the plan says why.
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace coconet::lower {

namespace {

/// Fills in `o`'s parts, or says why it runs whole.
std::optional<Refusal> analyse(Plan &plan, OverlapGroup &o) {
  using K = Refusal::Kind;
  const auto *mm = std::get_if<MatMulCall>(&plan.steps[o.producer].body);
  const auto *c = std::get_if<CollectiveCall>(&plan.steps[o.consumer].body);
  if (!mm || !c)
    return Refusal{K::Steps, "the producer is not a matmul step followed by a "
                             "collective"};
  if (llvm::any_of(mm->batch, [](const Extent &e) { return !e.isOne(); }))
    return Refusal{K::Shape, "the matmul is batched"};
  if (o.dim != 0 || plan.buffers[mm->c].shape.size() != 2)
    return Refusal{K::Shape, "the chunks are not along the matmul's rows"};
  if (c->input != mm->c)
    return Refusal{K::Access,
                   "the collective does not read the matmul's result where "
                   "it is (it is packed or stored first)"};
  // The consumer's steps: the fused collective it starts, or itself.
  const FusedCollective *fused = nullptr;
  for (const FusedCollective &f : plan.fusedCollectives)
    if (f.steps.front() == o.consumer)
      fused = &f;
  if (fused) {
    for (unsigned s : fused->steps) {
      if (fused->gather && s == *fused->gather && s != o.consumer) {
        o.after = s;
        continue;
      }
      if (!std::holds_alternative<CollectiveCall>(plan.steps[s].body) &&
          !std::holds_alternative<ElementwiseKernel>(plan.steps[s].body))
        return Refusal{K::Steps, "the fused collective has a step that is "
                                 "no collective or kernel"};
      o.perChunk.push_back(s);
    }
  } else {
    o.perChunk.push_back(o.consumer);
  }
  if (o.consumer != o.producer + 1)
    return Refusal{K::Steps,
                   "other steps run between the matmul and the collective"};
  for (unsigned s : o.perChunk)
    if (const auto *k = std::get_if<ElementwiseKernel>(&plan.steps[s].body);
        k && k->domain.size() < 2 && !k->flat)
      return Refusal{K::Shape, "the kernel's parts are not whole rows"};

  switch (c->kind) {
  case Collective::ReduceScatter: {
    if (c->axis < 0 && plan.mesh.size() > 1)
      return Refusal{K::Axes,
                     "the reducescatter is over every axis of the mesh"};
    o.blockAxis = static_cast<unsigned>(c->axis < 0 ? 0 : c->axis);
    const Buffer &y = plan.buffers[mm->c];
    if (y.kind != Buffer::Kind::Scratch)
      return Refusal{K::Memory, "'" + y.value +
                                    "' is a result (its parts would be "
                                    "stored out of order)"};
    for (unsigned i = 0; i < plan.steps.size(); ++i)
      if (i != o.consumer && llvm::is_contained(plan.steps[i].reads, mm->c))
        return Refusal{K::Memory,
                       "'" + y.value + "' is also read by step " +
                           std::to_string(i) +
                           " (its parts are stored in the reducescatter's "
                           "order)"};
    return std::nullopt;
  }
  case Collective::AllReduce:
  case Collective::AllGather:
    return std::nullopt;
  case Collective::Broadcast:
  case Collective::Reduce:
  case Collective::SendRecv:
  case Collective::AllToAll:
    return Refusal{K::Steps, "the collective is not an allreduce, "
                             "reducescatter or allgather"};
  }
  llvm_unreachable("a collective of no kind");
}

} // namespace

void planOverlaps(Plan &plan, bool sequential) {
  for (OverlapGroup &o : plan.overlaps) {
    o.sequential = sequential ? Refusal::asked() : analyse(plan, o);
    if (!o.inChunks()) {
      o.perChunk.clear();
      o.after.reset();
      o.blockAxis.reset();
      continue;
    }
    // Its steps run in a loop: no collective group crosses it.
    if (o.producer > 0)
      plan.steps[o.producer - 1].groupWithNext = false;
    for (unsigned s : o.perChunk)
      plan.steps[s].groupWithNext = false;
    if (o.after)
      plan.steps[*o.after].groupWithNext = false;
  }
}

} // namespace coconet::lower
