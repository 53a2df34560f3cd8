//===- OverlapCode.cpp - an overlap's matmul and collective in parts ------===//
//
// An overlap that runs in parts (lower/Chunks.cpp) is one loop in
// operator(): for each part c, the matmul computes the part's rows (of
// every block, written chunk-major for a reducescatter), then the target
// hands the consumer's part to what runs beside the matmul (a second
// stream on CUDA, the progress thread on the CPU) and the loop goes on to
// the next part. The consumer's part is the collective on the part's
// elements, or the fused collective's kernel on them (where the team is
// available; else its steps on them, and its allgather once after the
// last part). A dispatch (an alltoall whose parts a matmul reads) is two
// loops: every part's alltoall handed to what runs beside, then each
// part's matmul once that part has arrived.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace coconet::codegen {

using namespace lower;

namespace {

using names::createSize;

/// The index of `o` in plan.overlaps (names its State fields).
std::string indexOf(const Plan &plan, const OverlapGroup &o) {
  return std::to_string(&o - plan.overlaps.data());
}

/// Whether `o`'s consumer is an alltoall, or its producer (a dispatch):
/// its parts are batches.
bool isAllToAll(const Plan &plan, const OverlapGroup &o) {
  const auto *c = std::get_if<CollectiveCall>(&plan.steps[o.consumer].body);
  return o.dispatch || (c && c->kind == Collective::AllToAll);
}

bool anyDispatch(const Plan &plan) {
  return llvm::any_of(plan.overlaps, [](const OverlapGroup &o) {
    return o.inChunks() && o.dispatch;
  });
}

/// The most parts of a dispatch (the events the CUDA target keeps).
int64_t dispatchParts(const Plan &plan) {
  int64_t most = 0;
  for (const OverlapGroup &o : plan.overlaps)
    if (o.inChunks() && o.dispatch)
      most = std::max(most, o.chunks);
  return most;
}

bool anyInChunks(const Plan &plan) {
  return llvm::any_of(plan.overlaps,
                      [](const OverlapGroup &o) { return o.inChunks(); });
}

/// The fused collective whose first step is `step` and that one kernel
/// computes, and its FusedKernel.
std::optional<FusedKernel> fusedAt(const Plan &plan, unsigned step) {
  for (const FusedKernel &k : fusedKernels(plan))
    if (k.f->steps.front() == step)
      return k;
  return std::nullopt;
}

/// Part `cc_c` (elements [cc_begin, cc_end) of each block) of step `index`,
/// one of the overlap's per-part steps.
void emitPart(CodeWriter &w, const Target &t, const Plan &plan,
              const OverlapGroup &o, unsigned index) {
  const Step &step = plan.steps[index];
  const std::string i = indexOf(plan, o);
  const std::string part = "cc_s.cc_part" + i;
  const std::string g = "cc_s." + geometryMember(step);
  w.comment("Step " + std::to_string(index) + ": " + step.summary +
            ", this part.");
  if (const auto *c = std::get_if<CollectiveCall>(&step.body)) {
    CollectiveOperands ops = collectiveOperands(plan, *c, g);
    switch (c->kind) {
    case Collective::ReduceScatter:
      // Part c of every block, together (the matmul wrote it so).
      ops.in += " + cc_c * cc_s.cc_blocks" + i + " * " + part;
      ops.out += " + cc_begin";
      ops.count = "cc_s.cc_blocks" + i + " * " + part;
      ops.outCount = part;
      t.emitCollective(w, plan, *c, ops);
      return;
    case Collective::AllReduce:
      ops.in += " + cc_begin";
      ops.out += " + cc_begin";
      ops.count = ops.outCount = part;
      t.emitCollective(w, plan, *c, ops);
      return;
    case Collective::AllGather: {
      // Every member's part c, each to its place: one broadcast per root.
      CollectiveCall b = *c;
      b.kind = Collective::Broadcast;
      const std::string block =
          printCount(plan.buffers[c->input].shape, plan.mesh, names::stateSize);
      ops.in += " + cc_begin";
      ops.out += " + cc_q * (" + block + ") + cc_begin";
      ops.count = ops.outCount = part;
      ops.root = "cc_q";
      emitLines(w, t.info.collectiveGroupBegin);
      w.open("for (int64_t cc_q = 0; cc_q < " +
             printAxisSize(c->axis, plan.mesh, names::stateSize) + "; ++cc_q)");
      t.emitCollective(w, plan, b, ops);
      w.close();
      emitLines(w, t.info.collectiveGroupEnd);
      return;
    }
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:
    case Collective::AllToAll:
    case Collective::AllToAllV:
      llvm_unreachable("planOverlaps keeps only allreduce, reducescatter and "
                       "allgather in parts");
    }
  }
  // An elementwise kernel on the part's elements.
  std::string args = g + ", cc_begin, cc_end";
  for (const KernelArg &a : kernelArgs(plan, step, t))
    args += ", " + a.value;
  t.emitLaunch(w, plan, step, g, args, {"cc_begin", "cc_end", ""});
}

} // namespace

bool rangedStep(const Plan &plan, unsigned index) {
  if (!std::holds_alternative<ElementwiseKernel>(plan.steps[index].body))
    return false;
  return llvm::any_of(plan.overlaps, [&](const OverlapGroup &o) {
    return o.inChunks() && llvm::is_contained(o.perChunk, index);
  });
}

bool skippedStep(const Plan &plan, unsigned index) {
  return llvm::any_of(plan.overlaps, [&](const OverlapGroup &o) {
    return o.inChunks() && o.packStep == index;
  });
}

bool unusedBuffer(const Plan &plan, unsigned b) {
  // The pack's input (the matmul's parts write the packed buffer), or the
  // unpack's output (the matmul's parts read what arrived).
  return llvm::any_of(plan.overlaps, [&](const OverlapGroup &o) {
    if (!o.inChunks() || !o.packStep)
      return false;
    const auto &pack = std::get<PackKernel>(plan.steps[*o.packStep].body);
    return (o.dispatch ? pack.output : pack.input) == b;
  });
}

const OverlapGroup *overlapAt(const Plan &plan, unsigned index) {
  for (const OverlapGroup &o : plan.overlaps)
    if (o.inChunks() && o.producer == index)
      return &o;
  return nullptr;
}

void emitOverlapState(CodeWriter &w, const Plan &plan, const Target &t) {
  if (!anyInChunks(plan))
    return;
  w.comment("Overlaps in parts: each block's rows per part, the blocks, and "
            "a part's\nelements per block.");
  for (const OverlapGroup &o : plan.overlaps)
    if (o.inChunks())
      w.line("int64_t cc_rows" + indexOf(plan, o) + " = 0, cc_blocks" +
             indexOf(plan, o) + " = 1, cc_part" + indexOf(plan, o) + " = 0;");
  emitLines(w, t.info.overlapState);
  if (anyDispatch(plan))
    emitLines(w, t.info.dispatch.state);
}

void emitOverlapCreate(CodeWriter &w, const Plan &plan, const Target &t) {
  if (anyInChunks(plan))
    emitLines(w, t.info.overlapCreate);
  for (const OverlapGroup &o : plan.overlaps) {
    const std::string steps = "\"overlap of steps " +
                              std::to_string(o.producer) + " and " +
                              std::to_string(o.consumer) + ": ";
    if (!o.inChunks()) {
      appendPath(w, steps + "one after the other (" + o.sequential->detail +
                        ")\"");
      continue;
    }
    appendPath(w, steps +
                      (o.chunks == 1 ? std::string("1 part, nothing beside it")
                                     : std::to_string(o.chunks) +
                                           " parts, each beside the next") +
                      " (\" + " + t.info.overlapPath.str() + " + \")\"");
  }
  if (!anyInChunks(plan))
    return;
  if (anyDispatch(plan) && !t.info.dispatch.prepare.empty())
    w.line("COCONET_RETURN_IF_ERROR(" + t.info.dispatch.prepare.str() + "(" +
           std::to_string(dispatchParts(plan)) + "));");
  for (const OverlapGroup &o : plan.overlaps) {
    if (!o.inChunks())
      continue;
    const std::string i = indexOf(plan, o);
    const std::string blocks =
        !o.blockAxis ? "1" : printAxisSize(*o.blockAxis, plan.mesh, createSize);
    w.line("state->cc_blocks" + i + " = " + blocks + ";");
    if (o.dropless) {
      // A part's experts (of those each member holds).
      const auto &mm = std::get<MatMulCall>(
          plan.steps[o.dispatch ? o.consumer : o.producer].body);
      w.line("state->cc_part" + i + " = " +
             printExtent(mm.localGroups, plan.mesh, createSize) + " / " +
             std::to_string(o.chunks) + ";");
      continue;
    }
    if (isAllToAll(plan, o)) {
      const auto &mm = std::get<MatMulCall>(
          plan.steps[o.dispatch ? o.consumer : o.producer].body);
      // Batches per part; a part of one member's block: those batches'
      // rows that go to one member.
      w.line("state->cc_rows" + i + " = " +
             printCount(mm.batch, plan.mesh, createSize) + " / " +
             std::to_string(o.chunks) + ";");
      // (Of a dispatch, those batches' rows that came from one member.)
      w.line("state->cc_part" + i + " = state->cc_rows" + i + " * (" +
             printExtent(mm.m, plan.mesh, createSize) + " / state->cc_blocks" +
             i + ") * " +
             printExtent(o.dispatch ? mm.k : mm.n, plan.mesh, createSize) +
             ";");
      continue;
    }
    const auto &mm = std::get<MatMulCall>(plan.steps[o.producer].body);
    if (o.batches) {
      // Batches per part, and a part's elements.
      w.line("state->cc_rows" + i + " = " +
             printCount(mm.batch, plan.mesh, createSize) + " / " +
             std::to_string(o.chunks) + ";");
      w.line("state->cc_part" + i + " = state->cc_rows" + i + " * " +
             printExtent(mm.m, plan.mesh, createSize) + " * " +
             printExtent(mm.n, plan.mesh, createSize) + ";");
      continue;
    }
    w.line("state->cc_rows" + i + " = " +
           printExtent(mm.m, plan.mesh, createSize) + " / (state->cc_blocks" +
           i + " * " + std::to_string(o.chunks) + ");");
    w.line("state->cc_part" + i + " = state->cc_rows" + i + " * " +
           printExtent(mm.n, plan.mesh, createSize) + ";");
  }
}

void emitOverlapDestroy(CodeWriter &w, const Plan &plan, const Target &t) {
  if (anyInChunks(plan))
    emitLines(w, t.info.overlapDestroy);
  if (anyDispatch(plan))
    emitLines(w, t.info.dispatch.destroy);
}

/// Opens the loop over an overlap's `chunks` parts of `part` elements:
/// part cc_c starts at cc_begin (and, `withEnd`, ends at cc_end).
void openPartLoop(CodeWriter &w, int64_t chunks, const std::string &part,
                  bool withEnd) {
  w.open("for (int64_t cc_c = 0; cc_c < " + std::to_string(chunks) +
         "; ++cc_c)");
  if (!withEnd) {
    w.line("const int64_t cc_begin = cc_c * " + part + ";");
    return;
  }
  w.line("const int64_t cc_begin = cc_c * " + part + ", cc_end = cc_begin + " +
         part + ";");
  w.line("(void)cc_end;");
}

/// Part cc_c's `body` (its collective) in the block `open` starts, which
/// hands it to what runs beside: the progress thread on the CPU, the second
/// stream on CUDA.
void emitHanded(CodeWriter &w, const Target &t, llvm::StringRef open,
                llvm::function_ref<void()> body) {
  w.line(open);
  w.indent();
  emitLines(w, t.info.part.head);
  body();
  emitLines(w, t.info.part.tail);
  w.dedent();
  w.line(t.info.part.close);
}

/// Hands part cc_c's `body` to what runs beside, after what came before.
void emitBesidePart(CodeWriter &w, const Target &t,
                    llvm::function_ref<void()> body) {
  emitLines(w, t.info.part.before);
  emitHanded(w, t, t.info.part.open, body);
}

/// A dispatch's first loop: every part's `body` (its collective) handed to
/// what runs beside, in order, each marked as arrived once done.
void emitArrivals(CodeWriter &w, const Target &t, const OverlapGroup &o,
                  const std::string &part, llvm::function_ref<void()> body) {
  const TargetInfo::Dispatch &hooks = t.info.dispatch;
  emitLines(w, hooks.before);
  openPartLoop(w, o.chunks, part, true);
  emitHanded(w, t, hooks.open, body);
  emitLines(w, hooks.arrived);
  w.close();
}

/// The batched matmul of part cc_c of an alltoall overlap (`rows` batches
/// from cc_c * rows on), for the rows of member cc_q (a batch's `blocks`
/// blocks of rows): the side the alltoall moves (A for a dispatch, which
/// reads what arrived; C for a combine, which writes what goes out) at
/// cc_q's block of `moved`'s part, the other side at those rows in place.
MatMulOperands memberRowsOperands(const Plan &plan, const MatMulCall &mm,
                                  const std::string &g, const std::string &cg,
                                  const std::string &rows,
                                  const std::string &blocks,
                                  const std::string &moved, bool movedIsA) {
  MatMulOperands ops = matMulOperands(plan, mm, g);
  const std::string rowsPerBlock = "(" + g + ".m / " + blocks + ")";
  const std::string at = moved + " + cc_q * " + cg + ".block_count + cc_begin";
  const std::string inPlace =
      "(cc_c * " + rows + " * " + g + ".m + cc_q * " + rowsPerBlock + ")";
  ops.batch = rows;
  ops.m = rowsPerBlock;
  if (movedIsA) {
    ops.a = at;
    ops.strideA = rowsPerBlock + " * " + g + ".k";
  } else {
    ops.a += " + " + inPlace + " * " + g + ".k";
  }
  if (mm.batchedB)
    ops.b += " + cc_c * " + rows + " * " + g + ".k * " + g + ".n";
  if (movedIsA) {
    ops.c += " + " + inPlace + " * " + g + ".n";
  } else {
    ops.c = at;
    ops.strideC = rowsPerBlock + " * " + g + ".n";
  }
  return ops;
}

/// Part cc_c of every block of alltoall step `index` (an overlap's part,
/// the elements [cc_begin, cc_begin + part) of each member's block), in
/// one call of blocks apart.
void emitAllToAllPart(CodeWriter &w, const Target &t, const Plan &plan,
                      const OverlapGroup &o, unsigned index) {
  const Step &step = plan.steps[index];
  const auto &c = std::get<CollectiveCall>(step.body);
  const std::string cg = "cc_s." + geometryMember(step);
  w.comment("Step " + std::to_string(index) + ": " + step.summary +
            ", this part of every block.");
  CollectiveOperands cops = collectiveOperands(plan, c, cg);
  cops.in += " + cc_begin";
  cops.out += " + cc_begin";
  cops.blockCount = "cc_s.cc_part" + indexOf(plan, o);
  cops.blockStride = cg + ".block_count";
  t.emitCollective(w, plan, c, cops);
}

/// A dispatch (lower/Chunks.cpp): the alltoall hands out the batched
/// matmul's batches; part c is batches [c * rows, (c + 1) * rows) of this
/// rank. Every part's alltoall is handed to what runs beside (in order),
/// then the matmul computes each part as soon as it has arrived, reading
/// every member's rows where they arrived (one call per member), while the
/// later parts are still on their way.
unsigned emitDispatchOverlap(CodeWriter &w, const Target &t, const Plan &plan,
                             const OverlapGroup &o) {
  const std::string i = indexOf(plan, o);
  const Step &producer = plan.steps[o.producer];
  const auto &c = std::get<CollectiveCall>(producer.body);
  const Step &consumer = plan.steps[o.consumer];
  const auto &mm = std::get<MatMulCall>(consumer.body);
  const std::string g = "cc_s." + geometryMember(consumer);
  const std::string cg = "cc_s." + geometryMember(producer);
  const std::string part = "cc_s.cc_part" + i, rows = "cc_s.cc_rows" + i,
                    blocks = "cc_s.cc_blocks" + i;
  w.line();
  w.comment("Steps " + std::to_string(o.producer) + " to " +
            std::to_string(o.consumer) + ": " + producer.summary + " in " +
            std::to_string(o.chunks) + " parts of the batches " +
            consumer.summary +
            " reads;\nthe matmul computes each part as "
            "soon as it has arrived,\nreading it where it arrived (step " +
            std::to_string(o.producer + 1) +
            (o.after ? " runs after the last part,\nfor the other steps that "
                       "read it), while the later parts arrive."
                     : " does not run), while the later parts\narrive."));
  emitArrivals(w, t, o, part,
               [&] { emitAllToAllPart(w, t, plan, o, o.producer); });
  openPartLoop(w, o.chunks, part, false);
  emitLines(w, t.info.dispatch.await);
  w.comment("Step " + std::to_string(o.consumer) + ": " + consumer.summary +
            ", this part: the rows that came from member cc_q.");
  w.open("for (int64_t cc_q = 0; cc_q < " + blocks + "; ++cc_q)");
  t.emitMatMul(w, plan, mm,
               memberRowsOperands(plan, mm, g, cg, rows, blocks,
                                  bufferName(plan, c.output), true));
  w.close();
  w.close();
  emitLines(w, t.info.overlapEnd);
  if (o.after) {
    w.line();
    w.comment("Step " + std::to_string(*o.after) + ": " +
              plan.steps[*o.after].summary +
              ", after the last part (other steps read it).");
    emitStep(w, t, plan, *o.after);
  }
  return o.consumer;
}

/// An overlap of a batched matmul and the alltoall that scatters its rows
/// (lower/Chunks.cpp): part c is batches [c * rows, (c + 1) * rows); its
/// matmul writes the rows of those batches that go to member q at q's
/// block of the packed buffer, and the alltoall sends the part of every
/// block at once.
unsigned emitAllToAllOverlap(CodeWriter &w, const Target &t, const Plan &plan,
                             const OverlapGroup &o) {
  const std::string i = indexOf(plan, o);
  const Step &producer = plan.steps[o.producer];
  const auto &mm = std::get<MatMulCall>(producer.body);
  const Step &consumer = plan.steps[o.consumer];
  const std::string g = "cc_s." + geometryMember(producer);
  const std::string cg = "cc_s." + geometryMember(consumer);
  const std::string part = "cc_s.cc_part" + i, rows = "cc_s.cc_rows" + i,
                    blocks = "cc_s.cc_blocks" + i;
  w.line();
  w.comment("Steps " + std::to_string(o.producer) + " to " +
            std::to_string(o.consumer) + ": " + producer.summary + " in " +
            std::to_string(o.chunks) +
            " parts of its batches, each written in the order " +
            consumer.summary + "\nsends it" +
            (o.packStep ? " (for step " + std::to_string(*o.packStep) +
                              ", which does not run)"
                        : std::string()) +
            "; each part goes out as soon as it is done, while the next part "
            "is\ncomputed.");
  openPartLoop(w, o.chunks, part, true);
  w.comment("Step " + std::to_string(o.producer) + ": " + producer.summary +
            ", this part: the rows member cc_q gets, to its block.");
  w.open("for (int64_t cc_q = 0; cc_q < " + blocks + "; ++cc_q)");
  t.emitMatMul(w, plan, mm,
               memberRowsOperands(plan, mm, g, cg, rows, blocks,
                                  bufferName(plan, o.partsInto), false));
  w.close();
  emitBesidePart(w, t, [&] { emitAllToAllPart(w, t, plan, o, o.consumer); });
  w.close();
  emitLines(w, t.info.overlapEnd);
  return o.consumer;
}

/// Dropless (lower/Chunks.cpp): an alltoallv and a grouped matmul, part c
/// the segments of experts [cc_begin, cc_end) of every block. Of a
/// dispatch, the counts' exchange first, then two loops as a dispatch's;
/// of a combine, one loop as an alltoall's.
unsigned emitDroplessOverlap(CodeWriter &w, const Target &t, const Plan &plan,
                             const OverlapGroup &o) {
  const std::string i = indexOf(plan, o);
  const Step &producer = plan.steps[o.producer];
  const Step &consumer = plan.steps[o.consumer];
  const unsigned vi = o.dispatch ? o.producer : o.consumer;
  const unsigned gi = o.dispatch ? o.consumer : o.producer;
  const Step &vs = plan.steps[vi], &gs = plan.steps[gi];
  const auto &c = std::get<CollectiveCall>(vs.body);
  const auto &mm = std::get<MatMulCall>(gs.body);
  const std::string part = "cc_s.cc_part" + i;
  auto emitAllToAllV = [&] {
    w.comment("Step " + std::to_string(vi) + ": " + vs.summary +
              ", this part: the segments of experts [cc_begin, cc_end) of\n"
              "every block.");
    CollectiveOperands cops =
        collectiveOperands(plan, c, "cc_s." + geometryMember(vs));
    cops.part = "cc_c";
    cops.parts = std::to_string(o.chunks);
    t.emitCollective(w, plan, c, cops);
  };
  auto emitGrouped = [&] {
    w.comment("Step " + std::to_string(gi) + ": " + gs.summary +
              ", this part: the segments of experts [cc_begin, cc_end).");
    MatMulOperands ops = matMulOperands(plan, mm, "cc_s." + geometryMember(gs));
    ops.part = "cc_c";
    ops.parts = std::to_string(o.chunks);
    t.emitMatMul(w, plan, mm, ops);
  };
  w.line();
  if (o.dispatch) {
    w.comment("Steps " + std::to_string(o.producer) + " to " +
              std::to_string(o.consumer) + ": " + producer.summary + " in " +
              std::to_string(o.chunks) + " parts of each member's experts, " +
              consumer.summary +
              "\nreads; the matmul computes each part as "
              "soon as it has arrived, while the later parts\narrive. Step " +
              std::to_string(*o.first) + " (the counts it reads) first.");
    emitStep(w, t, plan, *o.first);
    emitArrivals(w, t, o, part, emitAllToAllV);
    openPartLoop(w, o.chunks, part, true);
    emitLines(w, t.info.dispatch.await);
    emitGrouped();
    w.close();
  } else {
    w.comment("Steps " + std::to_string(o.producer) + " to " +
              std::to_string(o.consumer) + ": " + producer.summary + " in " +
              std::to_string(o.chunks) +
              " parts of each member's experts; each part goes out (" +
              consumer.summary +
              ")\nas soon as it is done, while the next "
              "part is computed.");
    openPartLoop(w, o.chunks, part, true);
    emitGrouped();
    emitBesidePart(w, t, emitAllToAllV);
    w.close();
  }
  emitLines(w, t.info.overlapEnd);
  return o.consumer;
}

unsigned emitOverlap(CodeWriter &w, const Target &t, const Plan &plan,
                     const OverlapGroup &o) {
  if (o.dropless)
    return emitDroplessOverlap(w, t, plan, o);
  if (o.dispatch)
    return emitDispatchOverlap(w, t, plan, o);
  if (isAllToAll(plan, o))
    return emitAllToAllOverlap(w, t, plan, o);
  const std::string i = indexOf(plan, o);
  const Step &producer = plan.steps[o.producer];
  const auto &mm = std::get<MatMulCall>(producer.body);
  const std::string g = "cc_s." + geometryMember(producer);
  unsigned last = o.perChunk.back();
  if (o.after)
    last = std::max(last, *o.after);
  w.line();
  w.comment("Steps " + std::to_string(o.producer) + " to " +
            std::to_string(last) + ": " + producer.summary + " in " +
            std::to_string(o.chunks) +
            " parts; each part's consumer runs as soon as the\npart is done, "
            "while the next part is computed.");
  const std::string part = "cc_s.cc_part" + i;
  openPartLoop(w, o.chunks, part, true);
  MatMulOperands ops = matMulOperands(plan, mm, g);
  if (o.batches) {
    // The matmul's part: batches [c * rows, (c + 1) * rows), in place.
    const std::string first = "cc_c * cc_s.cc_rows" + i;
    ops.batch = "cc_s.cc_rows" + i;
    ops.a += " + " + first + " * " + g + ".m * " + g + ".k";
    if (mm.batchedB)
      ops.b += " + " + first + " * " + g + ".k * " + g + ".n";
    ops.c += " + cc_begin";
  } else {
    // The matmul's part: rows [c * rows, (c + 1) * rows) of every block,
    // stored together.
    ops.batch = "cc_s.cc_blocks" + i;
    ops.m = "cc_s.cc_rows" + i;
    ops.a += " + cc_c * cc_s.cc_rows" + i + " * " + g + ".k";
    ops.strideA = "(" + g + ".m / cc_s.cc_blocks" + i + ") * " + g + ".k";
    ops.c += " + cc_c * cc_s.cc_blocks" + i + " * " + part;
    ops.strideC = part;
  }
  w.comment("Step " + std::to_string(o.producer) + ": " + producer.summary +
            ", this part.");
  t.emitMatMul(w, plan, mm, ops);
  const std::optional<FusedKernel> fused = fusedAt(plan, o.consumer);
  emitBesidePart(w, t, [&] {
    if (fused) {
      w.open("if (cc_s." + fused->team + ")");
      std::string fromAt = "0";
      if (fused->reducing && fused->reducing->kind == Collective::ReduceScatter)
        fromAt = "cc_c * (cc_s.cc_blocks" + i + " - 1) * " + part + " + cc_s." +
                 fused->team + "->rank() * " + part;
      emitFusedCall(w, t, plan, *fused, {"cc_begin", "cc_end", fromAt});
      w.dedent();
      w.line("} else {");
      w.indent();
    }
    for (unsigned s : o.perChunk)
      emitPart(w, t, plan, o, s);
    if (fused)
      w.close();
  });
  w.close();
  emitLines(w, t.info.overlapEnd);
  if (o.after) {
    w.line();
    w.comment("Step " + std::to_string(*o.after) + ": " +
              plan.steps[*o.after].summary + ", after the last part.");
    if (fused)
      w.open("if (!cc_s." + fused->team + ")");
    emitStep(w, t, plan, *o.after);
    if (fused)
      w.close();
  }
  return last;
}

} // namespace coconet::codegen
