//===- Buffers.cpp - where every value lives, and scratch sharing ---------===//
//
// A value computed by a stage lives:
//   - in registers, when it is an elementwise member that nothing outside
//     its kernel reads and that is no result;
//   - in the parameter it updates (written in place), when that is safe:
//     no later unit reads the parameter's old value, the parameter is not
//     itself returned, and the producing unit is an elementwise kernel that
//     reads the parameter only at the element it writes (kernels load every
//     input before storing any output);
//   - in the caller's output, when it is returned (the first time);
//   - in its place in the parameter an allgather of it updates (a view: the
//     rank's block of the parameter), when the allgather is its only
//     reader, gathers along the first dimension over one axis, and nothing
//     else reads the parameter's old value after the value's kernel (which
//     may read the parameter at the block it writes: it then reads the
//     view); the allgather then runs in place and moves only the others'
//     blocks;
//   - else in scratch.
// Results that end up elsewhere are copied after the last step: returned
// values first (they may read a parameter's old value), then updates.
// Scratch buffers then share slots greedily in step order: a slot is free
// again after the last step that reads its buffer.
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::lower {

using ir::Stage;

namespace {

/// Can `s`, in unit `unit` of `units`, write its value straight into the
/// parameter `p` it updates?
bool inPlaceSafe(const Lowering &l,
                 llvm::ArrayRef<llvm::SmallVector<const Stage *, 8>> units,
                 size_t unit, const Stage *s, const Stage *p) {
  const ir::Program &program = l.program;
  if (p->type.isScalar())
    return false;
  // The parameter's old value is returned.
  for (size_t j = l.numUpdates; j < program.getResults().size(); ++j)
    if (program.getResults()[j] == p)
      return false;
  // A later unit reads the old value.
  if (auto last = l.lastReader.find(p);
      last != l.lastReader.end() && last->second > unit)
    return false;
  // The producing unit reads it other than at the element it writes.
  const auto &members = units[unit];
  const bool kernel = isKernelUnit(members);
  for (const Stage *t : members) {
    if (!llvm::is_contained(t->operands, p))
      continue;
    // (A fused gather reads it at the positions its index holds.)
    if (!kernel || t->kind != ir::StageKind::Elementwise)
      return false;
    KernelInput in = accessOf(l, 0, p->type, s->type);
    if (!in.flat || in.isScalar())
      return false;
  }
  return true;
}

/// The allgather that gathers `s` (of unit `unit`) in place into the
/// parameter it updates, if it can (see the file comment); null otherwise.
const Stage *
gatheredInPlace(const Lowering &l,
                llvm::ArrayRef<llvm::SmallVector<const Stage *, 8>> units,
                size_t unit, const Stage *s) {
  const ir::Program &program = l.program;
  if (!isKernelUnit(units[unit]) || program.isResult(s))
    return nullptr;
  const auto &users = l.users.lookup(s);
  if (users.size() != 1 || users[0]->kind != ir::StageKind::AllGather)
    return nullptr;
  const Stage *ag = users[0];
  const Stage *p = ag->updates;
  // (An algorithm file's allgather reads its input while its output
  // fills: never in place.)
  if (!p || ag->axis < 0 || ag->table || s->type.isScalar())
    return nullptr;
  // Along the first dimension, which only the gathered axis slices.
  const ir::Layout &in = s->type.layout;
  if (in.slicingAxes(0) != llvm::SmallVector<unsigned, 2>{unsigned(ag->axis)})
    return nullptr;
  if (!p->type.layout.slicingAxes(0).empty())
    return nullptr;
  // The parameter's old value: returned, or read after the kernel.
  for (size_t j = 0; j < program.getResults().size(); ++j)
    if (program.getResults()[j] == p)
      return nullptr;
  if (auto last = l.lastReader.find(p);
      last != l.lastReader.end() && last->second > unit)
    return nullptr;
  // The kernel reads it only at the block it writes.
  for (const Stage *t : units[unit]) {
    if (!llvm::is_contained(t->operands, p))
      continue;
    if (t->kind != ir::StageKind::Elementwise)
      return nullptr;
    KernelInput read = accessOf(l, 0, p->type, s->type);
    if (!read.shifted || !read.dims[0].operandAxes.empty())
      return nullptr;
  }
  return ag;
}

} // namespace

void assignValueBuffers(
    Lowering &l, llvm::ArrayRef<llvm::SmallVector<const Stage *, 8>> units) {
  const ir::Program &program = l.program;
  Plan &plan = l.plan;
  auto &copies = l.copies;
  llvm::DenseMap<const Stage *, unsigned> unitOf;
  for (size_t u = 0; u < units.size(); ++u)
    for (const Stage *s : units[u]) {
      unitOf[s] = u;
      for (const Stage *o : s->operands)
        l.lastReader[o] = u; // units run in order: the last one stays
    }

  for (size_t u = 0; u < units.size(); ++u) {
    const bool kernel = isKernelUnit(units[u]);
    for (const Stage *s : units[u]) {
      bool readOutside =
          llvm::any_of(l.users.lookup(s), [&](const Stage *user) {
            return unitOf.lookup(user) != u;
          });
      if (kernel && !readOutside && !program.isResult(s)) {
        l.inRegisters[s] = true;
        continue;
      }
      if (const Stage *p = s->updates; p && inPlaceSafe(l, units, u, s, p)) {
        unsigned b = l.bufferOf.lookup(p);
        plan.buffers[b].written = true;
        l.bufferOf[s] = b;
        continue;
      }
      if (l.bufferOf.count(s)) // the allgather of a view, placed already
        continue;
      if (const Stage *ag = gatheredInPlace(l, units, u, s)) {
        const unsigned base = l.bufferOf.lookup(ag->updates);
        plan.buffers[base].written = true;
        const unsigned view = l.addValueBuffer(Buffer::Kind::View,
                                               "t_" + identifier(s->name), *s);
        plan.buffers[view].base = base;
        plan.buffers[view].viewAxis = static_cast<unsigned>(ag->axis);
        l.bufferOf[s] = view;
        l.bufferOf[ag] = base;
        l.viewOf[ag->updates] = view;
        continue;
      }
      l.bufferOf[s] = l.addValueBuffer(Buffer::Kind::Scratch,
                                       "t_" + identifier(s->name), *s);
    }
  }

  // Results: updates (in parameter order), then returned values.
  const unsigned updates = l.numUpdates;
  llvm::SmallVector<const Stage *, 4> returnedOnce;
  for (size_t i = 0; i < program.getResults().size(); ++i) {
    const Stage *s = program.getResults()[i];
    Plan::Result r;
    r.name = program.getResultName(i).str();
    r.type = s->type;
    const unsigned index = plan.results.size();
    if (i < updates && !s->updates->type.isScalar()) {
      r.updates = s->updates->name;
      r.buffer = l.bufferOf.lookup(s->updates);
      if (l.bufferOf.lookup(s) != r.buffer) {
        plan.buffers[r.buffer].written = true;
        copies.push_back({s, r.buffer});
      }
      plan.results.push_back(r);
      continue;
    }
    // A returned value (or the update of a scalar parameter, which the
    // caller passed by value): an output. The value's own scratch buffer
    // becomes the output the first time, if the value has one.
    if (i < updates)
      r.updates = s->updates->name;
    unsigned own = l.bufferOf.lookup(s);
    const Buffer &ownBuffer = plan.buffers[own];
    if (!s->isParam() && ownBuffer.kind == Buffer::Kind::Scratch &&
        !llvm::is_contained(returnedOnce, s)) {
      Buffer &b = plan.buffers[own];
      b.kind = Buffer::Kind::Output;
      b.name = l.uniqueName(identifier("out_" + r.name));
      b.result = index;
      r.buffer = own;
    } else {
      r.buffer = l.addValueBuffer(Buffer::Kind::Output,
                                  identifier("out_" + r.name), *s);
      plan.buffers[r.buffer].result = index;
      copies.insert(llvm::find_if(copies,
                                  [&](const Lowering::PendingCopy &c) {
                                    return plan.buffers[c.to].kind !=
                                           Buffer::Kind::Output;
                                  }),
                    {s, r.buffer});
    }
    returnedOnce.push_back(s);
    plan.results.push_back(r);
  }
}

void addResultCopies(Lowering &l) {
  Plan &plan = l.plan;
  for (const Lowering::PendingCopy &c : l.copies) {
    unsigned from = l.bufferOf.lookup(c.from);
    const Buffer &to = plan.buffers[c.to];
    Step step;
    step.name = "copy_" + to.name;
    if (plan.buffers[from].kind == Buffer::Kind::ScalarParam) {
      step.body = StoreScalarCall{from, c.to};
      step.summary = "store " + plan.buffers[from].name + " into " + to.name;
    } else {
      step.body = CopyCall{from, c.to, to.shape};
      step.reads.push_back(from);
      step.summary = "copy " + plan.buffers[from].name + " into " + to.name;
    }
    step.writes.push_back(c.to);
    l.addStep(std::move(step));
  }
  l.copies.clear();
}

void aliasLoneCollectives(Plan &plan) {
  for (const Step &step : plan.steps) {
    const auto *c = std::get_if<CollectiveCall>(&step.body);
    // A sendrecv over one member receives zeros (it has no sender); an
    // alltoallv's rows move by its counts, into as many rows as it has.
    if (!c || c->kind == Collective::SendRecv ||
        c->kind == Collective::AllToAllV || c->input == c->output)
      continue;
    const Buffer &in = plan.buffers[c->input];
    Buffer &out = plan.buffers[c->output];
    // The input must hold the same value as long as the output is read:
    // a parameter that no step writes (a scratch input's slot could be
    // reused while the output is still read).
    if (out.kind != Buffer::Kind::Scratch || in.kind != Buffer::Kind::Param ||
        in.written || in.dtype != out.dtype)
      continue;
    // Written by this collective only.
    const bool writtenElsewhere = llvm::any_of(plan.steps, [&](const Step &s) {
      return &s != &step && llvm::is_contained(s.writes, c->output);
    });
    if (writtenElsewhere)
      continue;
    out.loneInput = c->input;
    out.loneAxis = c->axis;
  }
}

void assignSlots(Plan &plan) {
  const size_t n = plan.buffers.size();
  std::vector<int> first(n, -1), last(n, -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (unsigned b : plan.steps[i].writes) {
      if (first[b] < 0)
        first[b] = static_cast<int>(i);
      last[b] = std::max(last[b], static_cast<int>(i));
    }
    for (unsigned b : plan.steps[i].reads) {
      if (first[b] < 0)
        first[b] = static_cast<int>(i);
      last[b] = static_cast<int>(i);
    }
  }
  // The steps of an overlap in parts run interleaved (and beside each
  // other): what any of them touches lives through all of them.
  for (const OverlapGroup &o : plan.overlaps) {
    if (!o.inChunks())
      continue;
    int end = static_cast<int>(o.producer);
    for (unsigned s : o.perChunk)
      end = std::max(end, static_cast<int>(s));
    if (o.after)
      end = std::max(end, static_cast<int>(*o.after));
    for (int i = static_cast<int>(o.producer); i <= end; ++i)
      for (const auto *list : {&plan.steps[i].reads, &plan.steps[i].writes})
        for (unsigned b : *list) {
          first[b] = std::min(first[b], static_cast<int>(o.producer));
          last[b] = std::max(last[b], end);
        }
  }
  // slot -> the last step of its current buffer
  std::vector<int> slotFreeAfter;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (unsigned b : plan.steps[i].writes) {
      Buffer &buf = plan.buffers[b];
      if (buf.kind != Buffer::Kind::Scratch || buf.slot)
        continue;
      int slot = -1;
      for (size_t s = 0; s < slotFreeAfter.size() && slot < 0; ++s)
        if (slotFreeAfter[s] < static_cast<int>(i))
          slot = static_cast<int>(s);
      if (slot < 0) {
        slot = static_cast<int>(slotFreeAfter.size());
        slotFreeAfter.push_back(0);
      }
      buf.slot = static_cast<unsigned>(slot);
      slotFreeAfter[slot] = last[b];
    }
  }
  plan.numSlots = slotFreeAfter.size();
}

} // namespace coconet::lower
