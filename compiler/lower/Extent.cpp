//===- Extent.cpp - local extents, counts and block offsets ---------------===//
//
// How the plan's symbolic sizes print in generated code. A target supplies
// the expressions that hold size values and this rank's coordinates.
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::lower {

namespace {

/// "4 * H", "N", "1".
std::string printDim(const ir::Dim &dim, SizeNamer sizeVar) {
  std::string out;
  if (dim.coefficient() != 1 || dim.symbols().empty())
    out = std::to_string(dim.coefficient());
  for (const std::string &s : dim.symbols())
    out += (out.empty() ? "" : " * ") + sizeVar(s);
  return out;
}

bool isProduct(const ir::Dim &dim) {
  return dim.symbols().size() + (dim.coefficient() != 1 ? 1 : 0) > 1;
}

/// The product of the sizes of `axes`: "P", "D * T".
std::string printAxes(llvm::ArrayRef<unsigned> axes, const ir::Mesh &mesh,
                      SizeNamer sizeVar) {
  std::string out;
  for (unsigned a : axes)
    out += (out.empty() ? "" : " * ") + sizeVar(mesh.axes[a].size);
  return out;
}

} // namespace

std::string printExtent(const Extent &e, const ir::Mesh &mesh,
                        SizeNamer sizeVar) {
  std::string dim = printDim(e.global, sizeVar);
  if (e.axes.empty())
    return dim;
  if (isProduct(e.global))
    dim = "(" + dim + ")";
  std::string div = printAxes(e.axes, mesh, sizeVar);
  if (e.axes.size() > 1)
    div = "(" + div + ")";
  return dim + " / " + div;
}

ElementCount elementCount(llvm::ArrayRef<Extent> extents) {
  ElementCount c;
  for (const Extent &e : extents) {
    if (__builtin_mul_overflow(c.coefficient, e.global.coefficient(),
                               &c.coefficient))
      c.coefficient = 0;
    c.symbols.append(e.global.symbols().begin(), e.global.symbols().end());
    c.axes.append(e.axes.begin(), e.axes.end());
  }
  llvm::sort(c.symbols);
  llvm::sort(c.axes);
  return c;
}

std::string printCount(llvm::ArrayRef<Extent> extents, const ir::Mesh &mesh,
                       SizeNamer sizeVar) {
  std::string out;
  for (const Extent &e : extents) {
    if (e.isOne())
      continue;
    std::string one = printExtent(e, mesh, sizeVar);
    bool compound = !e.axes.empty() || isProduct(e.global);
    if (compound && extents.size() > 1)
      one = "(" + one + ")";
    out += (out.empty() ? "" : " * ") + one;
  }
  return out.empty() ? "1" : out;
}

std::string printOffset(const Extent &e, const ir::Mesh &mesh,
                        SizeNamer sizeVar, CoordNamer coordVar) {
  if (e.axes.empty())
    return "0";
  // Mixed radix, outer axis first: ((c0 * S1) + c1) * S2 + c2 ...
  std::string block = coordVar(e.axes[0]);
  for (size_t i = 1; i < e.axes.size(); ++i)
    block = "(" + block + " * " + sizeVar(mesh.axes[e.axes[i]].size) + " + " +
            coordVar(e.axes[i]) + ")";
  return block + " * (" + printExtent(e, mesh, sizeVar) + ")";
}

std::string printAxisSize(int axis, const ir::Mesh &mesh, SizeNamer sizeVar) {
  if (axis >= 0)
    return sizeVar(mesh.axes[axis].size);
  llvm::SmallVector<unsigned, 2> all;
  for (unsigned a = 0; a < mesh.size(); ++a)
    all.push_back(a);
  std::string out = printAxes(all, mesh, sizeVar);
  return all.size() > 1 ? "(" + out + ")" : out;
}

Extents extentsOf(const ir::TensorType &type) {
  Extents out;
  for (unsigned d = 0; d < type.rank(); ++d)
    out.push_back(Extent{type.shape[d], type.layout.slicingAxes(d)});
  return out;
}

llvm::StringRef collectiveName(Collective kind) {
  switch (kind) {
#define STAGE(Name, Printed, Description)
#define COMMUNICATION_STAGE(Name, Printed, Description)                        \
  case Collective::Name:                                                       \
    return Printed;
#include "ir/StageKinds.def"
  }
  return "?";
}

llvm::StringRef indexOpName(IndexKernel::Op op) {
  switch (op) {
  case IndexKernel::Op::TopKValues:
    return "topk";
  case IndexKernel::Op::TopKIndices:
    return "topk-indices";
  case IndexKernel::Op::CumSum:
    return "cumsum";
  case IndexKernel::Op::Gather:
    return "gather";
  case IndexKernel::Op::Scatter:
    return "scatter";
  }
  return "?";
}

std::vector<std::string> Plan::allSizeNames() const {
  std::vector<std::string> out;
  for (const auto &a : mesh.axes)
    if (!llvm::is_contained(out, a.size))
      out.push_back(a.size);
  for (const std::string &s : sizeNames)
    if (!llvm::is_contained(out, s))
      out.push_back(s);
  return out;
}

llvm::SmallVector<unsigned, 4> Plan::outputs() const {
  llvm::SmallVector<unsigned, 4> out;
  for (const Result &r : results)
    if (buffers[r.buffer].kind == Buffer::Kind::Output)
      out.push_back(r.buffer);
  return out;
}

} // namespace coconet::lower
