//===- Geometry.cpp - sizes, strides and offsets of each step -------------===//
//
// Every step gets a small struct of int64 fields that the program object
// computes once, when it is created (the sizes and this rank's mesh
// coordinates are known then), and passes to the kernel by value: element
// counts, the domain's extents, the strides of inputs read through an
// access pattern, and the shifts between a block's offset and the domain's
// (a replicated operand read at a slice's offset).
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::codegen {

using namespace lower;

namespace {

using names::createSize;
std::string coordVar(unsigned axis) {
  return "cc_mesh->coord(" + std::to_string(axis) + ")";
}

class GeometryBuilder {
public:
  GeometryBuilder(const Plan &plan) : plan(plan), mesh(plan.mesh) {}

  void add(const std::string &name, std::string expr) {
    fields.push_back({name, std::move(expr)});
  }
  std::string count(llvm::ArrayRef<Extent> e) {
    return printCount(e, mesh, createSize);
  }
  std::string extent(const Extent &e) {
    return printExtent(e, mesh, createSize);
  }
  std::string offset(const Extent &e) {
    return printOffset(e, mesh, createSize, coordVar);
  }
  /// e<d> for the domain, if coordinates are needed.
  void domainExtents(const Extents &domain) {
    for (unsigned d = 0; d < domain.size(); ++d)
      add("e" + std::to_string(d), extent(domain[d]));
  }
  /// s<i>_<k> and d<i>_<k> of an input read over `domain`.
  void input(const KernelInput &in, unsigned i, const Extents &domain) {
    if (in.table) {
      // t<i>: its table's segment count (where the chunk starts begin).
      add("t" + std::to_string(i), extent(in.dims[0].extent));
      return;
    }
    if (in.flat || in.isScalar())
      return;
    if (in.shifted) {
      // o<i>: the constant the flat index is shifted by.
      const DimAccess &a = in.dims[0];
      Extents after;
      for (unsigned j = 1; j < in.dims.size(); ++j)
        after.push_back(in.dims[j].extent);
      std::string shift =
          a.operandAxes.empty()
              ? offset(domain[0])
              : "(" + offset(domain[0]) + " - (" + offset(a.extent) + "))";
      add("o" + std::to_string(i),
          unitStride(in, 0) ? shift : shift + " * (" + count(after) + ")");
      return;
    }
    const int along = in.gather ? static_cast<int>(in.gather->dim) : -1;
    strides(in.dims, "s", "d", i, domain, along);
    if (in.gather) {
      // A fused gather's index (x<i>_<k>, y<i>_<k>) and the data's extent
      // along its dimension (a<i>): a position outside reads 0.
      strides(in.gather->indexDims, "x", "y", i, domain, -1);
      add("a" + std::to_string(i), extent(in.dims[along].extent));
    }
  }
  /// <stride><i>_<k>: the row-major stride of dimension k of an operand
  /// read through `dims` (where not 1); <shift><i>_<k>: the difference of
  /// the domain's block offset and the operand's (where their axes differ),
  /// except along dimension `skip`.
  void strides(llvm::ArrayRef<DimAccess> dims, llvm::StringRef stride,
               llvm::StringRef shift, unsigned i, const Extents &domain,
               int skip) {
    for (unsigned k = 0; k < dims.size(); ++k) {
      const DimAccess &a = dims[k];
      if (a.zero)
        continue;
      Extents after;
      for (unsigned j = k + 1; j < dims.size(); ++j)
        after.push_back(dims[j].extent);
      std::string suffix = std::to_string(i) + "_" + std::to_string(k);
      if (!unitStride(dims, k))
        add(stride.str() + suffix, count(after));
      const Extent &dom = domain[a.domainDim];
      if (a.operandAxes != dom.axes && static_cast<int>(k) != skip)
        add(shift.str() + suffix,
            a.operandAxes.empty()
                ? offset(dom)
                : offset(dom) + " - (" + offset(a.extent) + ")");
    }
  }

  const Plan &plan;
  const ir::Mesh &mesh;
  std::vector<GeometryField> fields;
};

} // namespace

bool unitStride(llvm::ArrayRef<DimAccess> dims, unsigned dim) {
  for (unsigned j = dim + 1; j < dims.size(); ++j)
    if (!dims[j].extent.isOne())
      return false;
  return true;
}

bool unitStride(const KernelInput &in, unsigned dim) {
  return unitStride(in.dims, dim);
}

bool needsCoordinates(const ElementwiseKernel &k) {
  return k.needsGlobalIndex ||
         llvm::any_of(k.inputs, [](const KernelInput &in) {
           return !in.flat && !in.shifted && !in.isScalar() && !in.table;
         });
}

bool readsBySegment(const ElementwiseKernel &k) {
  return llvm::any_of(k.inputs, [](const KernelInput &in) { return in.table; });
}

std::vector<GeometryField> stepGeometry(const Plan &plan, const Step &step) {
  GeometryBuilder g(plan);
  std::visit(
      [&](const auto &body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, ElementwiseKernel>) {
          g.add("n", g.count(body.domain));
          if (needsCoordinates(body))
            g.domainExtents(body.domain);
          // segoff: the global index of the block's first element.
          if (readsBySegment(body))
            g.add("segoff", g.offset(body.domain[0]));
          if (body.needsGlobalIndex) {
            for (unsigned d = 0; d < body.domain.size(); ++d) {
              g.add("off" + std::to_string(d), g.offset(body.domain[d]));
              Extents after;
              for (unsigned j = d + 1; j < body.globalShape.size(); ++j)
                after.push_back({body.globalShape[j], {}});
              g.add("gs" + std::to_string(d), g.count(after));
            }
          }
          for (unsigned i = 0; i < body.inputs.size(); ++i)
            g.input(body.inputs[i], i, body.domain);
        } else if constexpr (std::is_same_v<T, ReductionKernel>) {
          if (body.table) {
            // The segments; the block's elements and its global offset.
            g.add("segments", g.count(plan.buffers[body.output].shape));
            g.add("reduced", g.count(body.reduced));
            g.add("segoff", g.offset(body.reduced[0]));
            return;
          }
          g.add("outer", g.count(body.outer));
          g.add("reduced", g.count(body.reduced));
          g.add("inner", g.count(body.inner));
        } else if constexpr (std::is_same_v<T, NormKernel>) {
          Extents domain = body.rows;
          domain.push_back(body.row);
          g.add("rows", g.count(body.rows));
          g.add("h", g.extent(body.row));
          g.domainExtents(domain);
          g.input(body.gamma, 0, domain);
          if (body.beta)
            g.input(*body.beta, 1, domain);
        } else if constexpr (std::is_same_v<T, TransposeKernel>) {
          g.add("batch", g.count(body.batch));
          g.add("rows", g.extent(body.rows));
          g.add("cols", g.extent(body.cols));
          if (!body.lastTwo()) {
            g.add("middle", g.count(body.middle));
            g.add("inner", g.count(body.inner));
          }
        } else if constexpr (std::is_same_v<T, IndexKernel>) {
          g.add("outer", g.count(body.outer));
          g.add("along", g.extent(body.along));
          g.add("taken", g.extent(body.taken));
          g.add("inner", g.count(body.inner));
        } else if constexpr (std::is_same_v<T, MatMulCall>) {
          g.add("batch", g.count(body.batch));
          g.add("m", g.extent(body.m));
          g.add("n", g.extent(body.n));
          g.add("k", g.extent(body.k));
          if (body.counts) {
            g.add("groups", g.extent(body.groups));
            g.add("local_groups", g.extent(body.localGroups));
          }
        } else if constexpr (std::is_same_v<T, CollectiveCall>) {
          g.add("count", g.count(body.count));
          g.add("out_count", g.count(body.outCount));
          if (body.kind == Collective::AllToAll)
            g.add("block_count", g.count(body.blockCount));
          if (body.kind == Collective::AllToAllV) {
            g.add("rows_in", g.extent(body.rowsIn));
            g.add("rows_out", g.extent(body.rowsOut));
            g.add("row", g.count(body.row));
            g.add("groups", g.extent(body.groups));
          }
        } else if constexpr (std::is_same_v<T, PackKernel>) {
          g.add("outer", g.count(body.outer));
          g.add("blocks", printAxisSize(body.axis, g.mesh, createSize));
          Extents chunk{body.chunk};
          chunk.append(body.inner.begin(), body.inner.end());
          g.add("chunk", g.count(chunk));
        } else if constexpr (std::is_same_v<T, CopyCall>) {
          g.add("count", g.count(body.count));
        }
      },
      step.body);
  return g.fields;
}

std::string geometryType(const Step &step) {
  return "cc_" + step.name + "_geometry";
}
std::string geometryMember(const Step &step) { return "cc_" + step.name; }
std::string reducerMember(const Step &step) {
  return "cc_" + step.name + "_reducer";
}
std::string runtimeReductionKind(ir::ReductionKind kind) {
  switch (kind) {
  case ir::ReductionKind::Sum:
    return "coconet::rt::ReductionKind::Sum";
  case ir::ReductionKind::Max:
    return "coconet::rt::ReductionKind::Max";
  case ir::ReductionKind::Min:
    return "coconet::rt::ReductionKind::Min";
  case ir::ReductionKind::Norm:
    return "coconet::rt::ReductionKind::Norm";
  case ir::ReductionKind::SumSquares:
    return "coconet::rt::ReductionKind::SumSquares";
  }
  return "?";
}

void emitCoordinates(CodeWriter &w, llvm::ArrayRef<bool> used,
                     llvm::StringRef flat, llvm::StringRef geom) {
  const unsigned rank = used.size();
  // The lowest dimension needed: nothing below it is computed.
  int lowest = -1;
  for (unsigned d = 0; d < rank && lowest < 0; ++d)
    if (used[d])
      lowest = static_cast<int>(d);
  if (lowest < 0)
    return;
  if (rank == 1) {
    w.line("const int64_t cc_c0 = " + flat.str() + ";");
    return;
  }
  if (lowest == static_cast<int>(rank) - 1) {
    w.line("const int64_t cc_c" + std::to_string(rank - 1) + " = " +
           flat.str() + " % " + geom.str() + ".e" + std::to_string(rank - 1) +
           ";");
    return;
  }
  w.line("int64_t cc_rest = " + flat.str() + ";");
  for (unsigned d = rank; d-- > 1 && static_cast<int>(d) > lowest;) {
    std::string e = geom.str() + ".e" + std::to_string(d);
    if (used[d])
      w.line("const int64_t cc_c" + std::to_string(d) + " = cc_rest % " + e +
             ";");
    w.line("cc_rest /= " + e + ";");
  }
  if (lowest == 0)
    w.line("const int64_t cc_c0 = cc_rest;");
  else
    w.line("const int64_t cc_c" + std::to_string(lowest) + " = cc_rest % " +
           geom.str() + ".e" + std::to_string(lowest) + ";");
}

llvm::SmallVector<bool, 4> usedCoordinates(const ElementwiseKernel &k) {
  llvm::SmallVector<bool, 4> used(k.domain.size(), k.needsGlobalIndex);
  for (const KernelInput &in : k.inputs)
    usedBy(in, used);
  return used;
}

void usedBy(const KernelInput &in, llvm::MutableArrayRef<bool> used) {
  if (in.flat || in.shifted || in.isScalar() || in.table)
    return;
  for (unsigned d = 0; d < in.dims.size(); ++d)
    if (!in.dims[d].zero && !(in.gather && in.gather->dim == d))
      used[in.dims[d].domainDim] = true;
  if (in.gather)
    for (const DimAccess &a : in.gather->indexDims)
      if (!a.zero)
        used[a.domainDim] = true;
}

namespace {

/// The index into an operand read through `dims` at the domain's
/// coordinates cc_c<d> (dimension `replaced` at `by` instead).
std::string accessIndex(llvm::ArrayRef<DimAccess> dims, llvm::StringRef stride,
                        llvm::StringRef shift, unsigned i,
                        const Extents &domain, llvm::StringRef geom,
                        int replaced, llvm::StringRef by) {
  std::string out;
  for (unsigned j = 0; j < dims.size(); ++j) {
    const DimAccess &a = dims[j];
    if (a.zero)
      continue;
    std::string suffix = std::to_string(i) + "_" + std::to_string(j);
    std::string coord = "cc_c" + std::to_string(a.domainDim);
    if (static_cast<int>(j) == replaced)
      coord = by.str();
    else if (a.operandAxes != domain[a.domainDim].axes)
      coord =
          "(" + coord + " + " + geom.str() + "." + shift.str() + suffix + ")";
    out += (out.empty() ? "" : " + ") + coord;
    if (!unitStride(dims, j))
      out += " * " + geom.str() + "." + stride.str() + suffix;
  }
  return out.empty() ? "0" : out;
}

} // namespace

std::string gatherPosition(const KernelInput &in, unsigned i,
                           const Extents &domain, llvm::StringRef geom) {
  return accessIndex(in.gather->indexDims, "x", "y", i, domain, geom, -1, "");
}

std::string gatherVar(unsigned i) { return "cc_p" + std::to_string(i); }

std::string inputIndex(const ElementwiseKernel *k, const KernelInput &in,
                       unsigned i, const Extents &domain, llvm::StringRef flat,
                       llvm::StringRef geom) {
  (void)k;
  if (in.isScalar())
    return "0";
  if (in.flat)
    return flat.str();
  if (in.shifted)
    return flat.str() + " + " + geom.str() + ".o" + std::to_string(i);
  return accessIndex(in.dims, "s", "d", i, domain, geom,
                     in.gather ? static_cast<int>(in.gather->dim) : -1,
                     gatherVar(i));
}

std::string globalIndexExpr(unsigned rank, llvm::StringRef geom) {
  std::string out;
  for (unsigned d = 0; d < rank; ++d) {
    std::string s = std::to_string(d);
    out += (out.empty() ? "" : " + ") + std::string("(cc_c") + s + " + " +
           geom.str() + ".off" + s + ") * " + geom.str() + ".gs" + s;
  }
  return out.empty() ? "0" : out;
}

} // namespace coconet::codegen
