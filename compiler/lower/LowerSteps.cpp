//===- LowerSteps.cpp - the steps of one unit -----------------------------===//
//
// An elementwise unit becomes one loop; every other stage becomes its
// kernel or call. Collectives along a dimension other than the first move
// that dimension to the front of the block (pack) before a reducescatter,
// and back (unpack) after an allgather, since communication libraries
// scatter and gather contiguous blocks.
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace coconet::lower {

using ir::Stage;
using ir::StageKind;

namespace {

bool sameDims(llvm::ArrayRef<DimAccess> a, llvm::ArrayRef<DimAccess> b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const DimAccess &x = a[i], &y = b[i];
    if (x.zero != y.zero || x.domainDim != y.domainDim ||
        x.operandAxes != y.operandAxes || x.extent != y.extent)
      return false;
  }
  return true;
}

bool sameAccess(const KernelInput &a, const KernelInput &b) {
  if (a.buffer != b.buffer || a.table != b.table ||
      a.gather.has_value() != b.gather.has_value())
    return false;
  if (a.gather &&
      (a.gather->index != b.gather->index || a.gather->dim != b.gather->dim ||
       !sameDims(a.gather->indexDims, b.gather->indexDims)))
    return false;
  return sameDims(a.dims, b.dims);
}

/// Dimension d of `type` read at domain dimension d (leading alignment).
DimAccess leadingAccess(const ir::TensorType &type, unsigned d) {
  DimAccess a;
  a.domainDim = d;
  a.operandAxes = type.layout.slicingAxes(d);
  a.extent = Extent{type.shape[d], a.operandAxes};
  return a;
}

bool bodyHasDropout(const ir::ScalarExpr *body) {
  llvm::SmallVector<const ir::ScalarExpr *, 16> work{body};
  while (!work.empty()) {
    const ir::ScalarExpr *e = work.pop_back_val();
    if (e->op == ir::ScalarOp::Dropout)
      return true;
    llvm::append_range(work, e->args);
  }
  return false;
}

/// The plan's name for a communication stage kind.
Collective collectiveOf(StageKind kind) {
  switch (kind) {
#define STAGE(Name, Printed, Description)                                      \
  case StageKind::Name:                                                        \
    break;
#define COMMUNICATION_STAGE(Name, Printed, Description)                        \
  case StageKind::Name:                                                        \
    return Collective::Name;
#include "ir/StageKinds.def"
  }
  llvm_unreachable("not a communication stage");
}

std::string stepName(llvm::StringRef kind, llvm::StringRef stage) {
  return kind.str() + "_" + identifier(stage);
}

/// The number of kernels (elementwise and others) already in the plan.
Extents slice(const Extents &all, size_t from, size_t to) {
  return Extents(all.begin() + from, all.begin() + to);
}

/// The dimension of `in` an allgather over `axis` concatenates; -1 when the
/// axes gathered together slice different dimensions.
int gatheredDim(const ir::Layout &in, int axis) {
  if (axis >= 0)
    return in[axis].dim;
  int dim = in[0].dim;
  for (unsigned a = 1; a < in.size(); ++a)
    if (in[a].dim != dim)
      return -1;
  return dim;
}

void lowerCollective(Lowering &l, const Stage &s) {
  Plan &plan = l.plan;
  const Stage &x = *s.operands[0];
  unsigned input = l.inMemory(&x);
  unsigned output = l.bufferOf.lookup(&s);
  const char *kind = ir::stageKindName(s.kind).data();
  CollectiveCall call;
  call.kind = collectiveOf(s.kind);
  call.dtype = s.type.dtype;
  call.op = s.reduceOp;
  call.axis = s.axis;
  call.root = s.root;
  call.offset = s.offset;
  call.algorithm = s.algorithm;
  call.table = s.table;
  if (s.table)
    call.tableName = "cc_algorithm_" + identifier(s.name);
  call.input = input;
  call.output = output;
  call.count = plan.buffers[input].shape;
  call.outCount = plan.buffers[output].shape;

  // An alltoall sends block j along `dim` of its input to member j: that
  // block, with the gathered dimension as the input holds it.
  if (s.kind == StageKind::AllToAll) {
    call.blockCount = plan.buffers[input].shape;
    call.blockCount[s.dim] = plan.buffers[output].shape[s.dim];
    call.scatterDim = s.dim;
  }
  // Pack before a reducescatter or an alltoall along dimension d > 0.
  if ((s.kind == StageKind::ReduceScatter || s.kind == StageKind::AllToAll) &&
      s.dim > 0) {
    const Extents in = plan.buffers[input].shape;
    Extents outer = slice(in, 0, s.dim);
    if (!llvm::all_of(outer, [](const Extent &e) { return e.isOne(); })) {
      unsigned p = l.addValueBuffer(Buffer::Kind::Scratch,
                                    "t_" + identifier(s.name) + "_packed", x);
      plan.buffers[p].value = s.name;
      PackKernel pack;
      pack.input = input;
      pack.output = p;
      pack.outer = outer;
      pack.axis = s.axis;
      pack.chunk = plan.buffers[output].shape[s.dim];
      pack.inner = slice(in, s.dim + 1, in.size());
      Step step;
      step.name =
          "k" + std::to_string(l.kernels) + "_pack_" + identifier(s.name);
      step.summary = "pack dimension " + std::to_string(s.dim) + " of " +
                     plan.buffers[input].name + " to the front for " + s.name;
      step.body = pack;
      step.reads.push_back(input);
      step.writes.push_back(p);
      l.addStep(std::move(step));
      call.input = p;
    }
  }
  // Unpack after an allgather or an alltoall along dimension d > 0.
  std::optional<PackKernel> unpack;
  if (s.kind == StageKind::AllGather || s.kind == StageKind::AllToAll) {
    int dim = gatheredDim(x.type.layout, s.axis);
    if (dim < 0) {
      l.unsupported(s, "an allgather over every axis of a value the axes "
                       "slice along different dimensions");
      return;
    }
    const Extents out = plan.buffers[output].shape;
    Extents outer = slice(out, 0, dim);
    if (!llvm::all_of(outer, [](const Extent &e) { return e.isOne(); })) {
      unsigned g = l.addValueBuffer(Buffer::Kind::Scratch,
                                    "t_" + identifier(s.name) + "_gathered", s);
      PackKernel k;
      k.unpack = true;
      k.input = g;
      k.output = output;
      k.outer = outer;
      k.axis = s.axis;
      k.chunk = plan.buffers[input].shape[dim];
      k.inner = slice(out, dim + 1, out.size());
      unpack = k;
      call.output = g;
    }
  }
  Step step;
  step.name = stepName(kind, s.name);
  step.summary = std::string(kind) + " " + s.name;
  step.body = call;
  step.reads.push_back(call.input);
  step.writes.push_back(call.output);
  l.stepOf[&s] = l.addStep(std::move(step));
  if (unpack) {
    Step u;
    u.name = "k" + std::to_string(l.kernels) + "_unpack_" + identifier(s.name);
    u.summary = "unpack the blocks of " + s.name + " along dimension " +
                std::to_string(gatheredDim(x.type.layout, s.axis));
    u.reads.push_back(unpack->input);
    u.writes.push_back(unpack->output);
    u.body = *unpack;
    l.addStep(std::move(u));
  }
}

void lowerMatMul(Lowering &l, const Stage &s) {
  Plan &plan = l.plan;
  const Stage &a = *s.operands[0], &b = *s.operands[1];
  MatMulCall mm;
  mm.a = l.inMemory(&a);
  mm.b = l.inMemory(&b);
  mm.c = l.bufferOf.lookup(&s);
  const Extents ea = plan.buffers[mm.a].shape, eb = plan.buffers[mm.b].shape;
  const size_t ra = ea.size(), rb = eb.size();
  mm.batch = slice(ea, 0, ra - 2);
  mm.m = ea[ra - 2];
  mm.k = ea[ra - 1];
  mm.n = eb[rb - 1];
  if (rb > 2) {
    Extents bb = slice(eb, 0, rb - 2);
    bool ones = llvm::all_of(bb, [](const Extent &e) { return e.isOne(); });
    if (!ones && (rb != ra || bb != mm.batch)) {
      l.unsupported(s, "its right operand broadcasts some batch dimensions "
                       "but not others");
      return;
    }
    mm.batchedB = !ones;
  }
  Step step;
  step.name = stepName("matmul", s.name);
  step.summary = "matmul " + s.name;
  step.body = mm;
  step.reads = {mm.a, mm.b};
  step.writes.push_back(mm.c);
  l.stepOf[&s] = l.addStep(std::move(step));
}

/// grouped_matmul: a MatMulCall over one member's rows with the counts.
void lowerGroupedMatMul(Lowering &l, const Stage &s) {
  Plan &plan = l.plan;
  MatMulCall mm;
  mm.a = l.inMemory(s.operands[0]);
  mm.counts = l.inMemory(s.operands[1]);
  mm.b = l.inMemory(s.operands[2]);
  mm.c = l.bufferOf.lookup(&s);
  const Extents ea = plan.buffers[mm.a].shape, eb = plan.buffers[mm.b].shape;
  mm.batch = slice(ea, 0, 1);
  mm.m = ea[1];
  mm.k = ea[2];
  mm.n = eb[2];
  mm.groups = {s.operands[1]->type.shape[1], {}};
  mm.localGroups = eb[0];
  Step step;
  step.name = stepName("grouped_matmul", s.name);
  step.summary = "grouped matmul " + s.name;
  step.body = mm;
  step.reads = {mm.a, *mm.counts, mm.b};
  step.writes.push_back(mm.c);
  l.stepOf[&s] = l.addStep(std::move(step));
}

/// alltoallv: the rows (one call that exchanges the counts first), or the
/// counts each member received: an alltoall of the counts, E / P to each.
void lowerAllToAllV(Lowering &l, const Stage &s) {
  Plan &plan = l.plan;
  const Stage &counts = *s.operands.back();
  CollectiveCall call;
  call.kind = s.countsResult ? Collective::AllToAll : Collective::AllToAllV;
  call.dtype = s.type.dtype;
  call.axis = s.axis;
  call.algorithm = s.algorithm;
  call.counts = l.inMemory(&counts);
  call.input = s.countsResult ? call.counts : l.inMemory(s.operands[0]);
  call.output = l.bufferOf.lookup(&s);
  call.count = plan.buffers[call.input].shape;
  call.outCount = plan.buffers[call.output].shape;
  const ir::Dim e = counts.type.shape[1];
  if (s.countsResult) {
    call.blockCount = {Extent{e, {static_cast<unsigned>(s.axis)}}};
    call.scatterDim = 1;
  } else {
    call.rowsIn = call.count[1];
    call.rowsOut = call.outCount[1];
    call.row = slice(call.count, 2, call.count.size());
    call.groups = {e, {}};
  }
  Step step;
  step.name =
      stepName(s.countsResult ? "alltoallv_counts" : "alltoallv", s.name);
  step.summary = (s.countsResult ? "alltoallv counts " : "alltoallv ") + s.name;
  step.body = call;
  step.reads = {call.input};
  if (!s.countsResult)
    step.reads.push_back(call.counts);
  step.writes.push_back(call.output);
  l.stepOf[&s] = l.addStep(std::move(step));
}

} // namespace

KernelInput accessOf(const Lowering &l, unsigned buffer,
                     const ir::TensorType &type, const ir::TensorType &domain) {
  (void)l;
  KernelInput in;
  in.buffer = buffer;
  in.flat = true;
  const unsigned n = domain.rank(), r = type.rank();
  if (r != n)
    in.flat = r == 0;
  for (unsigned d = 0; d < r; ++d) {
    DimAccess a;
    a.domainDim = d + n - r;
    a.operandAxes = type.layout.slicingAxes(d);
    a.extent = Extent{type.shape[d], a.operandAxes};
    const ir::Dim &mine = type.shape[d], &theirs = domain.shape[a.domainDim];
    auto isOne = [](const ir::Dim &x) {
      return x.isConstant() && x.coefficient() == 1;
    };
    a.zero = isOne(mine) && !isOne(theirs);
    if (a.zero || mine != theirs ||
        a.operandAxes != domain.layout.slicingAxes(a.domainDim))
      in.flat = false;
    in.dims.push_back(std::move(a));
  }
  // Shifted: dimension 0 reads at an offset, every later one as the domain.
  if (!in.flat && r == n && r > 0) {
    in.shifted = true;
    for (unsigned d = 0; d < r && in.shifted; ++d) {
      const DimAccess &a = in.dims[d];
      bool same = !a.zero && a.operandAxes == domain.layout.slicingAxes(d) &&
                  type.shape[d] == domain.shape[d];
      if (d > 0 ? !same : (a.zero || type.shape[d] != domain.shape[d]))
        in.shifted = false;
    }
  }
  return in;
}

bool isKernelUnit(llvm::ArrayRef<const Stage *> unit) {
  return llvm::any_of(
      unit, [](const Stage *s) { return s->kind == StageKind::Elementwise; });
}

/// The input a fused gather `g` is to the members that read it: its data
/// read at the index's positions along its dimension.
KernelInput gatheredInput(Lowering &l, const Stage &g) {
  const Stage &data = *g.operands[0], &index = *g.operands[1];
  KernelInput in;
  in.buffer = l.inMemory(&data);
  for (unsigned d = 0; d < data.type.rank(); ++d)
    in.dims.push_back(leadingAccess(data.type, d));
  GatherAccess at;
  at.index = l.inMemory(&index);
  at.dim = g.dim;
  for (unsigned d = 0; d < index.type.rank(); ++d)
    at.indexDims.push_back(leadingAccess(index.type, d));
  in.gather = std::move(at);
  return in;
}

unsigned Lowering::inMemory(const Stage *stage) {
  unsigned b = bufferOf.lookup(stage);
  if (plan.buffers[b].kind != Buffer::Kind::ScalarParam)
    return b;
  if (auto it = storedScalars.find(stage); it != storedScalars.end())
    return it->second;
  unsigned m = addValueBuffer(Buffer::Kind::Scratch,
                              "t_" + identifier(stage->name), *stage);
  Step step;
  step.name = "store_" + identifier(stage->name);
  step.summary = "store the argument " + stage->name + " into device memory";
  step.body = StoreScalarCall{b, m};
  step.writes.push_back(m);
  addStep(std::move(step));
  storedScalars[stage] = m;
  return m;
}

void lowerElementwise(Lowering &l, llvm::ArrayRef<const Stage *> members) {
  Plan &plan = l.plan;
  const ir::TensorType &domain = members.front()->type;
  ElementwiseKernel k;
  k.domain = extentsOf(domain);
  k.globalShape = domain.shape;
  Step step;
  // A fused gather is no member: what reads it reads its data through its
  // index.
  llvm::DenseMap<const Stage *, KernelInput> gathered;
  for (size_t i = 0; i < members.size(); ++i) {
    const Stage *s = members[i];
    if (s->kind == StageKind::Gather) {
      gathered[s] = gatheredInput(l, *s);
      continue;
    }
    ElementwiseKernel::Member m;
    m.name = s->name;
    m.identifier = identifier(s->name);
    m.body = s->body;
    for (const Stage *o : s->operands) {
      if (auto it = llvm::find(members.take_front(i), o);
          it != members.take_front(i).end() && !gathered.count(o)) {
        // Its place among the members (the fused gathers are none).
        const unsigned before =
            llvm::count_if(llvm::make_range(members.begin(), it),
                           [&](const Stage *x) { return !gathered.count(x); });
        m.operands.push_back({Source::Kind::Member, before});
        continue;
      }
      // A parameter whose block this kernel writes as a view: read there.
      auto view = l.viewOf.find(o);
      const bool readView =
          view != l.viewOf.end() && llvm::any_of(members, [&](const Stage *m) {
            return l.bufferOf.lookup(m) == view->second;
          });
      KernelInput in = gathered.count(o) ? gathered.lookup(o)
                       : readView
                           ? accessOf(l, view->second, domain, domain)
                           : accessOf(l, l.bufferOf.lookup(o), o->type, domain);
      const unsigned operand = m.operands.size();
      if (ir::readsBySegment(l.program, *s, operand)) {
        // One value per segment, read at each element's segment.
        in.table = l.tableOf(s->type.segments);
        in.flat = in.shifted = false;
        const unsigned table = plan.tables[*in.table].buffer;
        if (!llvm::is_contained(step.reads, table))
          step.reads.push_back(table);
      }
      auto found = llvm::find_if(
          k.inputs, [&](const KernelInput &x) { return sameAccess(x, in); });
      unsigned index = found - k.inputs.begin();
      if (found == k.inputs.end()) {
        k.inputs.push_back(in);
        if (plan.buffers[in.buffer].kind != Buffer::Kind::ScalarParam &&
            !llvm::is_contained(step.reads, in.buffer))
          step.reads.push_back(in.buffer);
        if (in.gather && !llvm::is_contained(step.reads, in.gather->index))
          step.reads.push_back(in.gather->index);
      }
      m.operands.push_back({Source::Kind::Input, index});
    }
    if (!l.inRegisters.lookup(s)) {
      m.output = l.bufferOf.lookup(s);
      step.writes.push_back(*m.output);
    }
    k.needsGlobalIndex |= bodyHasDropout(s->body);
    k.members.push_back(std::move(m));
  }
  // An input read by segment is read per element wherever it is.
  k.flat = llvm::all_of(k.inputs, [](const KernelInput &in) {
    return in.flat || in.shifted || in.isScalar() || in.table;
  });
  std::string first = identifier(members.front()->name);
  step.name = "k" + std::to_string(l.kernels) + "_" + first;
  if (members.size() > 1)
    step.name += "_to_" + identifier(members.back()->name);
  step.summary = "elementwise";
  for (const Stage *s : members)
    step.summary += " " + s->name;
  step.body = std::move(k);
  const unsigned index = l.addStep(std::move(step));
  for (const Stage *s : members)
    l.stepOf[s] = index;
}

void lowerStage(Lowering &l, const Stage &s) {
  Plan &plan = l.plan;
  auto kernelStep = [&](llvm::StringRef what, Step::Body body,
                        llvm::ArrayRef<unsigned> reads) {
    Step step;
    step.name = "k" + std::to_string(l.kernels) + "_" + identifier(s.name);
    step.summary = what.str() + " " + s.name;
    step.body = std::move(body);
    step.reads.assign(reads.begin(), reads.end());
    step.writes.push_back(l.bufferOf.lookup(&s));
    l.addStep(std::move(step));
  };
  switch (s.kind) {
  case StageKind::Param:
  case StageKind::Elementwise:
    return; // parameters have no step; elementwise units are kernels
  case StageKind::Reduction: {
    ReductionKernel r;
    r.input = l.inMemory(s.operands[0]);
    r.output = l.bufferOf.lookup(&s);
    r.kind = s.reduction;
    r.inType = s.operands[0]->type.dtype;
    const Extents in = plan.buffers[r.input].shape;
    if (!s.segments.empty()) {
      r.table = l.tableOf(s.segments);
      r.reduced = in;
      kernelStep(ir::reductionKindName(s.reduction), r,
                 {r.input, plan.tables[*r.table].buffer});
      return;
    }
    if (s.dim < 0) {
      r.reduced = in;
    } else {
      r.outer = slice(in, 0, s.dim);
      r.reduced = slice(in, s.dim, s.dim + 1);
      r.inner = slice(in, s.dim + 1, in.size());
    }
    kernelStep(ir::reductionKindName(s.reduction), r, {r.input});
    return;
  }
  case StageKind::LayerNorm:
  case StageKind::RmsNorm: {
    NormKernel k;
    k.layerNorm = s.kind == StageKind::LayerNorm;
    const Stage &x = *s.operands[0];
    k.x = l.inMemory(&x);
    k.output = l.bufferOf.lookup(&s);
    const Stage *gamma = s.operands[1];
    k.gamma = accessOf(l, l.inMemory(gamma), gamma->type, x.type);
    llvm::SmallVector<unsigned, 4> reads{k.x, k.gamma.buffer};
    if (k.layerNorm) {
      const Stage *beta = s.operands[2];
      k.beta = accessOf(l, l.inMemory(beta), beta->type, x.type);
      reads.push_back(k.beta->buffer);
    }
    k.eps = l.bufferOf.lookup(s.operands.back());
    if (plan.buffers[k.eps].kind != Buffer::Kind::ScalarParam)
      reads.push_back(k.eps);
    const Extents ex = plan.buffers[k.x].shape;
    k.rows = slice(ex, 0, ex.size() - 1);
    k.row = ex.back();
    kernelStep(k.layerNorm ? "layernorm" : "rmsnorm", k, reads);
    return;
  }
  case StageKind::Transpose: {
    TransposeKernel t;
    t.input = l.inMemory(s.operands[0]);
    t.output = l.bufferOf.lookup(&s);
    const Extents in = plan.buffers[t.input].shape;
    t.batch = slice(in, 0, s.dim);
    t.rows = in[s.dim];
    t.middle = slice(in, s.dim + 1, s.dim2);
    t.cols = in[s.dim2];
    t.inner = slice(in, s.dim2 + 1, in.size());
    kernelStep("transpose", t, {t.input});
    return;
  }
  case StageKind::Reshape: {
    // The same elements in the same order: a copy of the block.
    CopyCall c;
    c.input = l.inMemory(s.operands[0]);
    c.output = l.bufferOf.lookup(&s);
    c.count = plan.buffers[c.output].shape;
    kernelStep(s.type.rank() < s.operands[0]->type.rank() ? "flatten"
                                                          : "unflatten",
               c, {c.input});
    return;
  }
  case StageKind::TopK:
  case StageKind::CumSum:
  case StageKind::Gather:
  case StageKind::Scatter: {
    IndexKernel k;
    k.data = l.inMemory(s.operands[0]);
    k.output = l.bufferOf.lookup(&s);
    k.dtype = s.type.dtype;
    llvm::SmallVector<unsigned, 3> reads{k.data};
    const Extents data = plan.buffers[k.data].shape;
    const unsigned dim = s.dim;
    k.outer = slice(data, 0, dim);
    k.along = data[dim];
    k.inner = slice(data, dim + 1, data.size());
    k.taken = k.along;
    const char *what = "cumsum";
    if (s.kind == StageKind::TopK) {
      k.op = s.topkIndices ? IndexKernel::Op::TopKIndices
                           : IndexKernel::Op::TopKValues;
      k.dtype = s.operands[0]->type.dtype;
      k.taken = plan.buffers[k.output].shape[dim];
      what = s.topkIndices ? "topk indices" : "topk";
    } else if (s.kind != StageKind::CumSum) {
      k.op = s.kind == StageKind::Gather ? IndexKernel::Op::Gather
                                         : IndexKernel::Op::Scatter;
      k.index = l.inMemory(s.operands[1]);
      reads.push_back(k.index);
      const Buffer &index = plan.buffers[k.index];
      k.taken = index.shape[dim];
      k.indexInner = index.shape.size() == data.size();
      what = s.kind == StageKind::Gather ? "gather" : "scatter";
      if (s.kind == StageKind::Scatter) {
        k.source = l.inMemory(s.operands[2]);
        reads.push_back(k.source);
      }
    }
    kernelStep(what, k, reads);
    return;
  }
  case StageKind::MatMul:
    lowerMatMul(l, s);
    return;
  case StageKind::GroupedMatMul:
    lowerGroupedMatMul(l, s);
    return;
  case StageKind::AllToAllV:
    lowerAllToAllV(l, s);
    return;
  case StageKind::AllReduce:
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::Broadcast:
  case StageKind::Reduce:
  case StageKind::SendRecv:
  case StageKind::AllToAll:
    lowerCollective(l, s);
    return;
  }
}

} // namespace coconet::lower
