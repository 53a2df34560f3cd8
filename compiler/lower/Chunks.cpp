//===- Chunks.cpp - when an overlap runs in chunks ------------------------===//
//
// `overlap(y, c) chunks K` lowers to the matmul's step followed by the
// consumer's steps. They run in K parts of the matmul's rows when the
// parts are independent and contiguous:
//   - the matmul is not batched, and the chunked dimension is its rows;
//   - or the matmul is batched [B, M, N] and an allreduce (not fused)
//     reads its result where it is: the parts are batches, each reduced
//     as soon as it is computed (a mixture-of-experts layer's experts cut
//     over a second axis, whose partial sums the allreduce completes);
//   - the consumer's steps (the collective, or the fused collective it
//     starts) come right after the matmul's;
//   - a reducescatter consumer scatters the rows (no pack) over one axis;
//     each of its P blocks is cut into K parts, and part c of every block
//     is computed together and written together (chunk-major), which only
//     the reducescatter may read: the matmul's result is scratch that no
//     other step reads;
//   - a fused collective's allgather runs after the last part where it is
//     not computed by the fused kernel (the fallback);
//   - an alltoall follows a batched matmul [B, M, N] and scatters its rows:
//     the parts are batches (experts), each part's matmul writes the rows
//     every member gets in the alltoall's packed order (the pack step
//     between them does not run, and the matmul's own result stays
//     unwritten, so no other step may read it), then the part of every
//     block goes out in one alltoall of blocks apart;
//   - the other way round (a dispatch), an alltoall hands out the batches
//     of the batched matmul that reads it and gathers its rows: each part
//     of the batches arrives in one alltoall of blocks apart, and the
//     part's matmul reads the rows where they arrived (the unpack step
//     between them does not run; its result stays unwritten, or, where
//     other steps read it, the unpack runs after the last part);
//   - dropless, an alltoallv and the grouped matmul that reads its rows
//     (with the counts its members received, exchanged by the step between
//     them, which runs first), or a grouped matmul and the alltoallv that
//     sends its rows back (by the same counts): the parts are groups of the
//     experts each member holds, part c every (source, expert) segment of
//     experts [c G/K, (c + 1) G/K), where the whole call puts it.
// Otherwise they run whole, one after the other, and the plan says why.
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace coconet::lower {

namespace {

/// Whether some step other than `except` reads buffer `b`.
std::optional<unsigned> otherReader(const Plan &plan, unsigned b,
                                    llvm::ArrayRef<unsigned> except) {
  for (unsigned i = 0; i < plan.steps.size(); ++i)
    if (!llvm::is_contained(except, i) &&
        llvm::is_contained(plan.steps[i].reads, b))
      return i;
  return std::nullopt;
}

/// A batched matmul [B, M, N] (B its one batch dimension, sliced over the
/// alltoall's axis) whose result an alltoall scatters along M: part c is
/// the batches [c B/K, (c + 1) B/K) of this rank, and each part's matmul
/// writes the rows every member gets where the alltoall sends them from
/// (the packed order, so the pack step does not run).
std::optional<Refusal> analyseAllToAll(Plan &plan, OverlapGroup &o,
                                       const MatMulCall &mm,
                                       const CollectiveCall &c) {
  using K = Refusal::Kind;
  if (mm.batch.size() != 1 || plan.buffers[mm.c].shape.size() != 3 ||
      o.dim != 0 || c.scatterDim != 1)
    return Refusal{K::Shape, "an alltoall runs in parts after a batched "
                             "matmul [B, M, N] whose batches are the parts "
                             "and whose rows M it scatters"};
  const Buffer &y = plan.buffers[mm.c];
  if (o.consumer == o.producer + 2) {
    const auto *pack =
        std::get_if<PackKernel>(&plan.steps[o.producer + 1].body);
    if (!pack || pack->unpack || pack->input != mm.c || pack->output != c.input)
      return Refusal{K::Steps,
                     "other steps run between the matmul and the collective"};
    // The matmul's parts write the packed buffer: its own stays unwritten.
    if (y.kind != Buffer::Kind::Scratch)
      return Refusal{K::Memory, "'" + y.value +
                                    "' is a result (its parts are written "
                                    "in the alltoall's order)"};
    if (auto i = otherReader(plan, mm.c, {o.producer + 1}))
      return Refusal{K::Memory,
                     "'" + y.value + "' is also read by step " +
                         std::to_string(*i) +
                         " (its parts are written in the alltoall's order)"};
    o.packStep = o.producer + 1;
    o.partsInto = pack->output;
  } else if (o.consumer == o.producer + 1 && c.input == mm.c) {
    o.partsInto = mm.c; // one batch per rank: the packed order is its own
  } else {
    return Refusal{K::Steps,
                   "other steps run between the matmul and the collective"};
  }
  o.blockAxis = static_cast<unsigned>(c.axis);
  o.perChunk.push_back(o.consumer);
  return std::nullopt;
}

/// An alltoall that hands out experts (scatters dimension 0 of [E, C, H],
/// gathers its rows C) and the batched matmul [B, M, K] x [B, K, N] that
/// reads it (a mixture-of-experts dispatch): part c is the batches
/// [c B/K, (c + 1) B/K) of this rank; the alltoall receives every member's
/// rows of those batches in one call of blocks apart, and the part's matmul
/// reads them where they arrived (one call per member's rows), so the
/// unpack step between them does not run and its result stays unwritten;
/// where other steps read that result (SwiGLU's second matmul), the unpack
/// runs once, after the last part.
std::optional<Refusal> analyseDispatch(Plan &plan, OverlapGroup &o,
                                       const CollectiveCall &c,
                                       const MatMulCall &mm) {
  using K = Refusal::Kind;
  o.dispatch = true;
  if (mm.batch.size() != 1 || plan.buffers[mm.a].shape.size() != 3 ||
      o.dim != 0 || c.scatterDim != 0)
    return Refusal{K::Shape, "a matmul runs in parts after an alltoall that "
                             "hands out its batches [B, M, K] and gathers "
                             "its rows M"};
  if (o.consumer != o.producer + 2)
    return Refusal{K::Steps,
                   "other steps run between the collective and the matmul"};
  const auto *unpack =
      std::get_if<PackKernel>(&plan.steps[o.producer + 1].body);
  if (!unpack || !unpack->unpack || unpack->input != c.output ||
      unpack->output != mm.a || unpack->outer.size() != 1 ||
      unpack->inner.size() != 1)
    return Refusal{K::Shape, "a matmul runs in parts after an alltoall that "
                             "hands out its batches [B, M, K] and gathers "
                             "its rows M"};
  const Buffer &d = plan.buffers[mm.a];
  if (d.kind != Buffer::Kind::Scratch)
    return Refusal{K::Memory, "'" + d.value +
                                  "' is a result (the matmul's parts read "
                                  "what arrived where it arrived)"};
  if (otherReader(plan, mm.a, {o.producer + 1, o.consumer}))
    o.after = o.producer + 1;
  else
    o.packStep = o.producer + 1;
  o.blockAxis = static_cast<unsigned>(c.axis);
  o.perChunk.push_back(o.consumer);
  return std::nullopt;
}

/// A batched matmul [B, M, N] (one batch dimension, the chunked one) and
/// the allreduce that reads its result where it is: part c is the batches
/// [c B/K, (c + 1) B/K) this rank computes, contiguous in the result, and
/// the allreduce of part c runs as soon as it is computed.
std::optional<Refusal> analyseBatches(const Plan &plan, OverlapGroup &o,
                                      const MatMulCall &mm,
                                      const CollectiveCall &c) {
  using K = Refusal::Kind;
  if (c.kind != Collective::AllReduce || mm.batch.size() != 1 ||
      plan.buffers[mm.c].shape.size() != 3 || o.dim != 0)
    return Refusal{K::Shape, "the matmul is batched (a batched matmul runs "
                             "in parts of its batches before an allreduce "
                             "or an alltoall)"};
  if (c.input != mm.c)
    return Refusal{K::Access,
                   "the collective does not read the matmul's result where "
                   "it is (it is packed or stored first)"};
  if (o.consumer != o.producer + 1)
    return Refusal{K::Steps,
                   "other steps run between the matmul and the collective"};
  for (const FusedCollective &f : plan.fusedCollectives)
    if (f.steps.front() == o.consumer)
      return Refusal{K::Steps, "the allreduce of a batched matmul is fused"};
  o.batches = true;
  o.perChunk.push_back(o.consumer);
  return std::nullopt;
}

/// An alltoallv and a grouped matmul, either way round (`o.dispatch`: the
/// alltoallv first): part c is the segments of experts [c G/K, (c + 1) G/K)
/// of every member's block, at the rows the whole calls use, so the parts
/// need the matmul's segments to be the alltoallv's: the same counts (of a
/// dispatch, the ones its members received, exchanged by the step between
/// them, which runs before the parts).
std::optional<Refusal> analyseDropless(Plan &plan, OverlapGroup &o) {
  using K = Refusal::Kind;
  o.dropless = true;
  const Step &v = plan.steps[o.dispatch ? o.producer : o.consumer];
  const Step &g = plan.steps[o.dispatch ? o.consumer : o.producer];
  const auto *c = std::get_if<CollectiveCall>(&v.body);
  const auto *mm = std::get_if<MatMulCall>(&g.body);
  if (!c || c->kind != Collective::AllToAllV || !mm || !mm->counts)
    return Refusal{K::Steps,
                   "the steps are not an alltoallv and a grouped matmul"};
  if (o.dispatch) {
    if (mm->a != c->output)
      return Refusal{K::Access, "the grouped matmul does not read the rows "
                                "where the alltoallv puts them"};
    const auto *counts =
        o.consumer == o.producer + 2
            ? std::get_if<CollectiveCall>(&plan.steps[o.producer + 1].body)
            : nullptr;
    if (!counts || counts->kind != Collective::AllToAll ||
        counts->input != c->counts || counts->output != *mm->counts)
      return Refusal{K::Steps,
                     "the step between them is not the exchange of the counts "
                     "the grouped matmul reads"};
    o.first = o.producer + 1;
  } else {
    if (c->input != mm->c)
      return Refusal{K::Access, "the alltoallv does not send the grouped "
                                "matmul's rows where they are"};
    if (o.consumer != o.producer + 1)
      return Refusal{K::Steps,
                     "other steps run between the matmul and the collective"};
    if (c->counts != *mm->counts)
      return Refusal{K::Access, "the alltoallv's counts are not the grouped "
                                "matmul's"};
  }
  if (!(mm->groups == c->groups))
    return Refusal{K::Shape, "the alltoallv and the grouped matmul count "
                             "different experts"};
  o.perChunk.push_back(o.consumer);
  return std::nullopt;
}

/// Fills in `o`'s parts, or says why it runs whole.
std::optional<Refusal> analyse(Plan &plan, OverlapGroup &o) {
  using K = Refusal::Kind;
  // Dropless: an alltoallv on either side.
  for (unsigned s : {o.producer, o.consumer})
    if (const auto *c = std::get_if<CollectiveCall>(&plan.steps[s].body);
        c && c->kind == Collective::AllToAllV) {
      o.dispatch = s == o.producer;
      return analyseDropless(plan, o);
    }
  if (const auto *c = std::get_if<CollectiveCall>(&plan.steps[o.producer].body);
      c && c->kind == Collective::AllToAll) {
    const auto *mm = std::get_if<MatMulCall>(&plan.steps[o.consumer].body);
    if (!mm)
      return Refusal{K::Steps, "the alltoall is not followed by a matmul step"};
    return analyseDispatch(plan, o, *c, *mm);
  }
  const auto *mm = std::get_if<MatMulCall>(&plan.steps[o.producer].body);
  const auto *c = std::get_if<CollectiveCall>(&plan.steps[o.consumer].body);
  if (!mm || !c)
    return Refusal{K::Steps, "the producer is not a matmul step followed by a "
                             "collective"};
  if (c->kind == Collective::AllToAll)
    return analyseAllToAll(plan, o, *mm, *c);
  if (llvm::any_of(mm->batch, [](const Extent &e) { return !e.isOne(); }))
    return analyseBatches(plan, o, *mm, *c);
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
  case Collective::AllToAll: // analyseAllToAll
  case Collective::AllToAllV:
  case Collective::Broadcast:
  case Collective::Reduce:
  case Collective::SendRecv:
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
      o.packStep.reset();
      o.first.reset();
      continue;
    }
    // Its steps run in a loop: no collective group crosses it.
    if (o.producer > 0)
      plan.steps[o.producer - 1].groupWithNext = false;
    for (unsigned s : o.perChunk)
      plan.steps[s].groupWithNext = false;
    if (o.after)
      plan.steps[*o.after].groupWithNext = false;
    if (o.packStep)
      plan.steps[*o.packStep].groupWithNext = false;
    if (o.first)
      plan.steps[*o.first].groupWithNext = false;
  }
}

} // namespace coconet::lower
