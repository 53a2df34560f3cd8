//===- PlanPrinter.cpp - the text form of --emit=plan ---------------------===//
//
// Buffers, steps, results, seams and size checks, in plan order. Stable:
// every list is printed in the order the lowering built it.
//
//===----------------------------------------------------------------------===//

#include "lower/Plan.h"

#include "ir/AlgorithmTable.h"

#include "llvm/Support/raw_ostream.h"

namespace coconet::lower {

namespace {

std::string sizeName(llvm::StringRef name) { return name.str(); }

class Printer {
public:
  Printer(const Plan &plan, llvm::raw_ostream &os)
      : plan(plan), mesh(plan.mesh), tables(plan.tables), os(os) {}

  void print();

private:
  std::string shape(llvm::ArrayRef<Extent> extents) const {
    std::string out = "[";
    for (size_t i = 0; i < extents.size(); ++i)
      out += (i ? ", " : "") + printExtent(extents[i], mesh, sizeName);
    return out + "]";
  }
  std::string count(llvm::ArrayRef<Extent> extents) const {
    return printCount(extents, mesh, sizeName);
  }
  const std::string &name(unsigned buffer) const {
    return plan.buffers[buffer].name;
  }
  std::string axis(int a) const {
    return a < 0 ? std::string("all axes") : mesh.axes[a].name;
  }
  std::string input(const KernelInput &in, const Extents &domain) const;
  /// "[i0:P / P, at:N, i2:H]": how each dimension is read (`gathered`:
  /// at the index's position).
  std::string access(llvm::ArrayRef<DimAccess> dims, const Extents &domain,
                     int gathered) const;
  void printBuffer(const Buffer &b);
  void printStep(unsigned index, const Step &step);
  void printFusedKernel(const FusedCollective &f, const FusedKernelPlan &k);

  const Plan &plan;
  const ir::Mesh &mesh;
  const std::vector<Plan::Table> &tables;
  llvm::raw_ostream &os;
};

/// The decisions of a fused collective's one kernel (FusedKernelPlan).
void Printer::printFusedKernel(const FusedCollective &f,
                               const FusedKernelPlan &k) {
  const ElementwiseKernel &body = k.kernel();
  os << "    kernel: ";
  if (k.madeStep)
    os << "its own, passing " << name(body.inputs.front().buffer) << " through";
  else
    os << "step " << *f.kernel;
  if (k.ranged)
    os << ", in parts";
  if (k.reducedInput)
    os << "; in" << *k.reducedInput << " combined from every member";
  if (k.gatherReduced)
    os << "; the reduced value into every member";
  if (k.gatheredMember) {
    const ElementwiseKernel::Member &m = body.members[*k.gatheredMember];
    os << "; " << m.name << " into every member";
    if (k.selfInView)
      os << ", its own block through the view " << name(*m.output);
    else if (k.storeGatheredLocally)
      os << " and into " << name(*m.output);
  }
  os << '\n';
}

std::string Printer::input(const KernelInput &in, const Extents &domain) const {
  std::string out = name(in.buffer);
  if (in.table)
    return out + " by segment of " + tables[*in.table].name;
  if (in.isScalar())
    return out + " scalar";
  if (in.flat)
    return out + " flat";
  if (in.shifted)
    out += " shifted";
  out += " " + access(in.dims, domain, in.gather ? int(in.gather->dim) : -1);
  // A fused gather: the data at the positions its index holds.
  if (in.gather)
    out += " at " + name(in.gather->index) + " " +
           access(in.gather->indexDims, domain, -1);
  return out;
}

std::string Printer::access(llvm::ArrayRef<DimAccess> dims,
                            const Extents &domain, int gathered) const {
  std::string out = "[";
  for (size_t d = 0; d < dims.size(); ++d) {
    const DimAccess &a = dims[d];
    out += d ? ", " : "";
    if (a.zero) {
      out += "0";
      continue;
    }
    if (static_cast<int>(d) == gathered) {
      out += "at:" + printExtent(a.extent, mesh, sizeName);
      continue;
    }
    out += "i" + std::to_string(a.domainDim);
    if (a.operandAxes != domain[a.domainDim].axes)
      out += "+shift";
    out += ":" + printExtent(a.extent, mesh, sizeName);
  }
  return out + "]";
}

void Printer::printBuffer(const Buffer &b) {
  os << "    " << b.name << " : " << ir::dtypeName(b.dtype);
  if (b.kind != Buffer::Kind::ScalarParam && b.kind != Buffer::Kind::Table)
    os << shape(b.shape);
  switch (b.kind) {
  case Buffer::Kind::Param:
    os << " param " << b.paramIndex;
    if (b.sharded)
      os << " sharded";
    if (b.written)
      os << " written";
    break;
  case Buffer::Kind::ScalarParam:
    os << " scalar param " << b.paramIndex;
    break;
  case Buffer::Kind::Output:
    os << " output " << b.result;
    break;
  case Buffer::Kind::Scratch:
    os << " scratch slot " << *b.slot;
    if (b.loneInput)
      os << ", or " << name(*b.loneInput) << " when "
         << printAxisSize(b.loneAxis, mesh,
                          [](llvm::StringRef s) { return s.str(); })
         << " is 1";
    break;
  case Buffer::Kind::View:
    os << " view of " << name(b.base) << ", block along "
       << mesh.axes[b.viewAxis].name;
    break;
  case Buffer::Kind::Table:
    os << " segment table " << tables[b.table].name << " over "
       << tables[b.table].length.str();
    break;
  }
  if (b.team)
    os << ", symmetric on " << mesh.axes[*b.team].name;
  os << '\n';
}

void Printer::printStep(unsigned index, const Step &step) {
  os << "    " << index << " " << step.name << ": ";
  std::visit(
      [&](const auto &body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, ElementwiseKernel>) {
          os << "elementwise over " << shape(body.domain)
             << (body.flat ? " flat" : "")
             << (body.needsGlobalIndex ? " global-index" : "") << '\n';
          for (size_t i = 0; i < body.inputs.size(); ++i)
            os << "        in" << i << " " << input(body.inputs[i], body.domain)
               << '\n';
          for (const auto &m : body.members) {
            os << "        " << m.name << "(";
            for (size_t i = 0; i < m.operands.size(); ++i) {
              const Source &src = m.operands[i];
              os << (i ? ", " : "")
                 << (src.kind == Source::Kind::Input
                         ? "in" + std::to_string(src.index)
                         : body.members[src.index].name);
            }
            os << ") -> "
               << (!m.output ? std::string("registers") : name(*m.output))
               << '\n';
          }
        } else if constexpr (std::is_same_v<T, ReductionKernel>) {
          os << ir::reductionKindName(body.kind) << " " << name(body.input)
             << " -> " << name(body.output);
          if (body.table)
            os << ": per segment of " << tables[*body.table].name << " over "
               << shape(body.reduced) << '\n';
          else
            os << ": outer " << shape(body.outer) << " reduced "
               << shape(body.reduced) << " inner " << shape(body.inner) << '\n';
        } else if constexpr (std::is_same_v<T, NormKernel>) {
          Extents xDomain = body.rows;
          xDomain.push_back(body.row);
          os << (body.layerNorm ? "layernorm " : "rmsnorm ") << name(body.x)
             << " -> " << name(body.output) << ": rows " << shape(body.rows)
             << " of " << printExtent(body.row, mesh, sizeName) << "; gamma "
             << input(body.gamma, xDomain);
          if (body.beta)
            os << "; beta " << input(*body.beta, xDomain);
          os << "; eps " << name(body.eps) << '\n';
        } else if constexpr (std::is_same_v<T, TransposeKernel>) {
          os << "transpose " << name(body.input) << " -> " << name(body.output)
             << ": batch " << shape(body.batch) << " rows "
             << printExtent(body.rows, mesh, sizeName) << " cols "
             << printExtent(body.cols, mesh, sizeName);
          if (!body.lastTwo())
            os << " middle " << shape(body.middle) << " inner "
               << shape(body.inner);
          os << '\n';
        } else if constexpr (std::is_same_v<T, IndexKernel>) {
          os << indexOpName(body.op) << " " << name(body.data) << " -> "
             << name(body.output) << ": outer " << shape(body.outer)
             << " along " << printExtent(body.along, mesh, sizeName)
             << " taken " << printExtent(body.taken, mesh, sizeName)
             << " inner " << shape(body.inner);
          if (body.op == IndexKernel::Op::Gather ||
              body.op == IndexKernel::Op::Scatter)
            os << "; index " << name(body.index)
               << (body.indexInner ? "" : " per line");
          if (body.op == IndexKernel::Op::Scatter)
            os << "; source " << name(body.source);
          os << '\n';
        } else if constexpr (std::is_same_v<T, MatMulCall>) {
          os << "matmul " << name(body.c) << " = " << name(body.a) << " x "
             << name(body.b) << ": batch " << shape(body.batch) << " M "
             << printExtent(body.m, mesh, sizeName) << " N "
             << printExtent(body.n, mesh, sizeName) << " K "
             << printExtent(body.k, mesh, sizeName)
             << (body.batchedB ? " batched B" : "");
          if (body.counts)
            os << " in " << printExtent(body.groups, mesh, sizeName)
               << " groups of " << name(*body.counts) << ", B per "
               << printExtent(body.localGroups, mesh, sizeName);
          os << '\n';
        } else if constexpr (std::is_same_v<T, CollectiveCall>) {
          os << collectiveName(body.kind);
          if (body.kind == Collective::AllReduce ||
              body.kind == Collective::ReduceScatter ||
              body.kind == Collective::Reduce)
            os << "(" << ir::reduceOpName(body.op) << ")";
          if (body.kind == Collective::Broadcast ||
              body.kind == Collective::Reduce)
            os << " root " << body.root;
          if (body.kind == Collective::SendRecv)
            os << " offset " << body.offset;
          if (body.kind == Collective::AllToAllV)
            os << " by " << name(body.counts) << " ("
               << printExtent(body.groups, mesh, sizeName) << " per member)";
          os << " over " << axis(body.axis) << " " << name(body.input) << " "
             << count(body.count) << " -> " << name(body.output) << " "
             << count(body.outCount)
             << (body.table ? ", the algorithm in '" + body.table->file +
                                  "' (" + body.table->name + ": " +
                                  std::to_string(body.table->steps.size()) +
                                  (body.table->steps.size() == 1 ? " step, "
                                                                 : " steps, ") +
                                  std::to_string(body.table->chunksPerRank) +
                                  (body.table->chunksPerRank == 1 ? " chunk"
                                                                  : " chunks") +
                                  " a rank)"
                 : body.algorithm != ir::CollectiveAlgorithm::Auto
                     ? ", " +
                           ir::collectiveAlgorithmName(body.algorithm).str() +
                           " (the schedule's algorithm)"
                     : std::string())
             << (step.groupWithNext ? " (grouped with next)" : "") << '\n';
        } else if constexpr (std::is_same_v<T, PackKernel>) {
          os << (body.unpack ? "unpack " : "pack ") << name(body.input)
             << " -> " << name(body.output) << ": outer " << shape(body.outer)
             << " blocks " << axis(body.axis) << " chunk "
             << printExtent(body.chunk, mesh, sizeName) << " inner "
             << shape(body.inner) << '\n';
        } else if constexpr (std::is_same_v<T, CopyCall>) {
          os << "copy " << name(body.input) << " -> " << name(body.output)
             << " " << count(body.count) << '\n';
        } else if constexpr (std::is_same_v<T, StoreScalarCall>) {
          os << "store " << name(body.input) << " -> " << name(body.output)
             << '\n';
        }
      },
      step.body);
}

void Printer::print() {
  os << "plan " << plan.name << ": program " << plan.programName;
  if (!plan.schedule.empty())
    os << ", schedule " << plan.schedule;
  os << "\n  mesh";
  for (const auto &a : mesh.axes)
    os << " " << a.name << ":" << a.size;
  os << "\n  sizes";
  for (const std::string &s : plan.sizeNames)
    os << " " << s;
  os << "\n  buffers (" << plan.numSlots << " scratch slots)\n";
  for (const Buffer &b : plan.buffers)
    printBuffer(b);
  os << "  steps\n";
  for (unsigned i = 0; i < plan.steps.size(); ++i)
    printStep(i, plan.steps[i]);
  os << "  results\n";
  for (const Plan::Result &r : plan.results)
    os << "    " << r.name << " in " << name(r.buffer) << '\n';
  for (const FusedCollective &f : plan.fusedCollectives) {
    os << "  fused collective: steps";
    for (unsigned s : f.steps)
      os << " " << s;
    if (!f.fused()) {
      os << " in sequence: " << f.sequential->detail << '\n';
      continue;
    }
    os << ": one kernel over the team of " << mesh.axes[f.axis].name << ", "
       << count(f.domain) << " elements";
    if (f.storeReduced)
      os << ", stores the reduced value";
    if (f.storeGathered)
      os << ", stores the gathered block";
    os << "; else in sequence\n";
    if (f.oneKernel)
      printFusedKernel(f, *f.oneKernel);
  }
  for (const OverlapGroup &o : plan.overlaps) {
    os << "  overlap: step " << o.producer << " with step " << o.consumer
       << ", " << o.chunks << " chunks along dim " << o.dim;
    if (!o.inChunks()) {
      os << ", in sequence: " << o.sequential->detail << '\n';
      continue;
    }
    os << ": per chunk steps";
    for (unsigned s : o.perChunk)
      os << " " << s;
    if (o.after)
      os << ", then step " << *o.after;
    const auto *consumer =
        std::get_if<CollectiveCall>(&plan.steps[o.consumer].body);
    if (o.dropless) {
      os << "; parts of each member's experts";
      if (o.first)
        os << ", step " << *o.first << " first";
    } else if (o.dispatch) {
      os << "; batches read from "
         << name(std::get<CollectiveCall>(plan.steps[o.producer].body).output)
         << " where they arrive";
      if (o.packStep)
        os << ", step " << *o.packStep << " not run";
    } else if (consumer && consumer->kind == Collective::AllToAll) {
      os << "; batches into " << name(o.partsInto)
         << " in the alltoall's order";
      if (o.packStep)
        os << ", step " << *o.packStep << " not run";
    } else if (o.batches) {
      os << "; parts of the batches";
    } else if (o.blockAxis) {
      os << "; " << name(std::get<MatMulCall>(plan.steps[o.producer].body).c)
         << " chunk-major over " << mesh.axes[*o.blockAxis].name;
    }
    os << '\n';
  }
  for (const Plan::Requirement &r : plan.requirements) {
    os << "  require: ";
    for (size_t i = 0; i < r.pieces.size(); ++i)
      os << r.pieces[i]
         << (i < r.buffers.size() ? "<" + plan.buffers[r.buffers[i]].name + ">"
                                  : "");
    os << '\n';
  }
  for (const SizeCheck &c : plan.checks) {
    if (c.atLeast) {
      os << "  check: " << printExtent({c.global, {}}, mesh, sizeName)
         << " at least " << c.atLeast << " (" << c.what << ")\n";
      continue;
    }
    std::string axes;
    for (unsigned a : c.axes)
      axes += (axes.empty() ? "" : " * ") + mesh.axes[a].size;
    if (c.factor != 1)
      axes += (axes.empty() ? "" : " * ") + std::to_string(c.factor);
    os << "  check: " << printExtent({c.global, {}}, mesh, sizeName)
       << " divisible by " << axes << " (" << c.what << ")\n";
  }
}

} // namespace

void printPlan(const Plan &plan, llvm::raw_ostream &os) {
  Printer(plan, os).print();
}

} // namespace coconet::lower
