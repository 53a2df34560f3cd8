//===- Tensor.cpp - values and data placement of the simulator ------------===//

#include "sim/Tensor.h"

#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <cmath>

namespace coconet::sim {

using ir::DType;

Tensor::Tensor(DType dtype, llvm::ArrayRef<int64_t> shape)
    : type(dtype), dims(shape.begin(), shape.end()) {
  count = 1;
  for (int64_t d : shape)
    count *= d;
  if (ir::isFloat(dtype))
    floats.assign(count, 0.0);
  else
    ints.assign(count, 0);
}

double Tensor::get(int64_t i) const {
  if (isFloat())
    return floats[i];
  if (type == DType::U64)
    return static_cast<double>(ints[i]);
  return static_cast<double>(static_cast<int64_t>(ints[i]));
}

int64_t Tensor::getInt(int64_t i) const {
  assert(!isFloat() && "getInt of a float tensor");
  return static_cast<int64_t>(ints[i]);
}

Scalar Tensor::getScalar(int64_t i) const {
  Scalar s;
  if (isFloat())
    s.f = floats[i];
  else
    s.i = ints[i];
  return s;
}

void Tensor::set(int64_t i, double value) {
  if (isFloat()) {
    floats[i] = ir::roundTo(type, value);
    return;
  }
  // Integers from doubles: truncate toward zero (only used by inputs and
  // reductions whose values are exact).
  if (type == DType::U64)
    ints[i] = value <= 0 ? 0 : static_cast<uint64_t>(value);
  else
    ints[i] =
        ir::wrapTo(type, static_cast<uint64_t>(static_cast<int64_t>(value)));
}

void Tensor::setScalar(int64_t i, Scalar value) {
  if (isFloat())
    floats[i] = ir::roundTo(type, value.f);
  else
    ints[i] = ir::wrapTo(type, value.i);
}

int64_t Tensor::linearIndex(llvm::ArrayRef<int64_t> coords,
                            llvm::ArrayRef<int64_t> shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    index = index * shape[d] + coords[d];
  return index;
}

void Tensor::coordsOf(int64_t index, llvm::ArrayRef<int64_t> shape,
                      Coords &coords) {
  coords.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
}

bool Tensor::operator==(const Tensor &o) const {
  if (type != o.type || dims != o.dims)
    return false;
  if (!isFloat())
    return ints == o.ints;
  // Bitwise equality of the stored values (NaN equals NaN, -0 != +0).
  for (int64_t i = 0; i < count; ++i) {
    double a = floats[i], b = o.floats[i];
    if (std::isnan(a) && std::isnan(b))
      continue;
    if (a != b || std::signbit(a) != std::signbit(b))
      return false;
  }
  return true;
}

RankGrid::RankGrid(llvm::ArrayRef<int64_t> axisSizes)
    : sizes(axisSizes.begin(), axisSizes.end()) {
  for (int64_t s : sizes)
    total *= s;
}

Coords RankGrid::coordsOf(int64_t rank) const {
  Coords c;
  Tensor::coordsOf(rank, sizes, c);
  return c;
}

int64_t RankGrid::rankOf(llvm::ArrayRef<int64_t> coords) const {
  return Tensor::linearIndex(coords, sizes);
}

llvm::SmallVector<int64_t, 8> RankGrid::group(int64_t rank, int axis,
                                              int64_t &position) const {
  llvm::SmallVector<int64_t, 8> members;
  if (axis < 0) {
    for (int64_t r = 0; r < total; ++r)
      members.push_back(r);
    position = rank;
    return members;
  }
  Coords c = coordsOf(rank);
  position = c[axis];
  for (int64_t i = 0; i < sizes[axis]; ++i) {
    c[axis] = i;
    members.push_back(rankOf(c));
  }
  return members;
}

llvm::Expected<Placement> place(llvm::ArrayRef<int64_t> globalShape,
                                const ir::Layout &layout, const ir::Mesh &mesh,
                                const RankGrid &grid,
                                llvm::ArrayRef<int64_t> coords,
                                llvm::StringRef what) {
  Placement p;
  p.globalShape.assign(globalShape.begin(), globalShape.end());
  p.localShape = p.globalShape;
  p.offset.assign(globalShape.size(), 0);
  for (size_t d = 0; d < globalShape.size(); ++d) {
    int64_t blocks = 1, block = 0;
    std::string axes;
    for (unsigned a = 0; a < layout.size(); ++a) {
      if (layout[a].state != ir::AxisState::Sliced ||
          layout[a].dim != static_cast<int>(d))
        continue;
      blocks *= grid.axisSize(a);
      block = block * grid.axisSize(a) + coords[a];
      axes += (axes.empty() ? "'" : "' and '") + mesh.axes[a].name;
    }
    if (blocks == 1)
      continue;
    if (globalShape[d] % blocks != 0)
      return llvm::createStringError(
          llvm::formatv("dimension {0} of '{1}' has size {2}, which is not "
                        "divisible by the {3} ranks of axis {4}' that slice "
                        "it; choose sizes that divide evenly",
                        d, what, globalShape[d], blocks, axes)
              .str());
    p.localShape[d] = globalShape[d] / blocks;
    p.offset[d] = block * p.localShape[d];
  }
  return p;
}

} // namespace coconet::sim
