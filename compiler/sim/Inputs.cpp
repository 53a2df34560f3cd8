//===- Inputs.cpp - the simulator's parameters ----------------------------===//

#include "sim/Inputs.h"

#include "support/Npy.h"
#include "support/Philox.h"

#include "coconet/values.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace coconet::sim {

using ir::DType;

int64_t localGroup(const ir::Layout &layout, const RankGrid &grid,
                   llvm::ArrayRef<int64_t> coords) {
  int64_t group = 0;
  for (unsigned a = 0; a < layout.size(); ++a)
    if (layout[a].state == ir::AxisState::Local)
      group = group * grid.axisSize(a) + coords[a];
  return group;
}

/// The runtime's type for an IR type (the same enumerators in the same
/// order).
static rt::DType runtimeType(DType dtype) {
  static_assert(static_cast<int>(rt::DType::Bool) ==
                    static_cast<int>(DType::Bool),
                "rt::DType mirrors ir::DType");
  return static_cast<rt::DType>(dtype);
}

Tensor generateInput(const ir::Stage &param,
                     llvm::ArrayRef<int64_t> globalShape, uint64_t seed,
                     int64_t group, InputKind kind) {
  const DType dtype = param.type.dtype;
  Tensor t(dtype, globalShape);
  const uint64_t stream = (static_cast<uint64_t>(param.paramIndex) << 32) |
                          static_cast<uint64_t>(group);
  const bool scalar = param.type.isScalar();
  for (int64_t i = 0; i < t.size(); ++i) {
    double u = support::uniformInput(seed, stream, i);
    Scalar s;
    if (dtype == DType::Bool) {
      s.i = u >= 0;
    } else if (ir::isFloat(dtype) && scalar) {
      s.f = 0.05 + 0.45 * (u + 1);
    } else if (ir::isFloat(dtype)) {
      s.f = kind == InputKind::Wide
                ? rt::wideInputValue(runtimeType(dtype), u,
                                     support::uniformInputBits(seed, stream, i))
                : u;
    } else if (dtype == DType::U64 && scalar) {
      s.i = support::uniformInputBits(seed, stream, i);
    } else {
      s.i = static_cast<uint64_t>(scalar ? 1 + std::floor((u + 1) * 4)
                                         : std::floor((u + 1) * 8));
    }
    t.setScalar(i, s);
  }
  return t;
}

llvm::Expected<Tensor> parseScalar(const ir::Stage &param,
                                   llvm::StringRef text) {
  // The rule generated drivers apply too (coconet/values.h).
  rt::ElementValue v;
  rt::Status st =
      rt::parseSetValue(param.name, runtimeType(param.type.dtype), text, &v);
  if (!st.ok())
    return llvm::createStringError(st.message());
  Tensor t(param.type.dtype, {});
  Scalar s;
  s.f = v.f;
  s.i = v.i;
  t.setScalar(0, s);
  return t;
}

/// A shape as .npy headers (Python tuples) write it: "(3,)", "(2, 4)".
static std::string npyShapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

llvm::Expected<Tensor> readInputFile(const ir::Stage &param,
                                     llvm::ArrayRef<int64_t> assembledShape,
                                     llvm::StringRef path) {
  auto array = support::readNpyFile(path);
  if (!array)
    return array.takeError();
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        (path + ": input '" + param.name + "': " + why).str());
  };
  if (llvm::ArrayRef<int64_t>(array->shape) != assembledShape)
    return fail("expected shape " + npyShapeText(assembledShape) +
                ", the file has " + npyShapeText(array->shape));
  const DType dtype = param.type.dtype;
  if (!support::npyKindMatches(array->type, runtimeType(dtype)))
    return fail("a " + ir::dtypeName(dtype) +
                " parameter cannot be read from '" +
                support::npyDescr(array->type) + "' data");
  // Converted only where exact (coconet/values.h, as generated drivers).
  Tensor t(dtype, assembledShape);
  for (int64_t i = 0; i < t.size(); ++i) {
    auto v = support::npyElementValue(*array, i, runtimeType(dtype));
    if (!v)
      return fail(llvm::toString(v.takeError()));
    Scalar s;
    s.f = v->f;
    s.i = v->i;
    t.setScalar(i, s);
  }
  return t;
}

Tensor extractBlock(const Tensor &global, const Placement &placement) {
  Tensor block(global.dtype(), placement.localShape);
  Coords c;
  for (int64_t i = 0; i < block.size(); ++i) {
    Tensor::coordsOf(i, placement.localShape, c);
    for (size_t d = 0; d < c.size(); ++d)
      c[d] += placement.offset[d];
    block.setScalar(i,
                    global.getScalar(Tensor::linearIndex(c, global.shape())));
  }
  return block;
}

} // namespace coconet::sim
