//===- Tensor.h - values and data placement of the simulator ----*- C++ -*-===//
//
// A Tensor is the block of an IR value that one simulated rank holds: its
// element type, its local shape and its elements in row-major order.
// Floating-point elements are kept as doubles that are exactly
// representable in the element type (every produced value is rounded);
// integers and bools are kept as 64-bit two's complement patterns.
//
// A Placement says where a rank's block lies in the global tensor: the
// local shape and the offset of the block along every dimension. It follows
// from the value's layout and the rank's coordinates on the mesh (see
// ir/Types.h). A dimension sliced over several axes is split row-major over
// them, in mesh order.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SIM_TENSOR_H
#define COCONET_SIM_TENSOR_H

#include "ir/ScalarEval.h"
#include "ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace coconet::sim {

using Coords = llvm::SmallVector<int64_t, 4>;

/// One element of any type (ir/ScalarEval.h).
using ir::Scalar;

class Tensor {
public:
  Tensor() = default;
  Tensor(ir::DType dtype, llvm::ArrayRef<int64_t> shape);

  ir::DType dtype() const { return type; }
  llvm::ArrayRef<int64_t> shape() const { return dims; }
  int64_t size() const { return count; }
  bool isFloat() const { return ir::isFloat(type); }

  /// Element i as a double (integers converted).
  double get(int64_t i) const;
  /// Element i of an integer or bool tensor, as a signed value.
  int64_t getInt(int64_t i) const;
  Scalar getScalar(int64_t i) const;
  /// Sets element i, rounding a float to the element type.
  void set(int64_t i, double value);
  void setScalar(int64_t i, Scalar value);

  /// Row-major linear index of `coords` in `shape`.
  static int64_t linearIndex(llvm::ArrayRef<int64_t> coords,
                             llvm::ArrayRef<int64_t> shape);
  /// The coordinates of linear index `index`.
  static void coordsOf(int64_t index, llvm::ArrayRef<int64_t> shape,
                       Coords &coords);
  /// Advances `coords`, an element of a block of `shape` at `offset` (its
  /// local coordinates plus `offset`), to the next element in row-major
  /// order: what coordsOf gives for the next index, plus `offset`, without
  /// a division. From the last element it wraps to the first.
  static void nextCoords(Coords &coords, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<int64_t> offset) {
    for (size_t d = shape.size(); d-- > 0;) {
      if (++coords[d] < offset[d] + shape[d])
        return;
      coords[d] = offset[d];
    }
  }

  bool operator==(const Tensor &o) const;

private:
  ir::DType type = ir::DType::F32;
  llvm::SmallVector<int64_t, 4> dims;
  int64_t count = 0;
  std::vector<double> floats;
  std::vector<uint64_t> ints;
};

/// The ranks of a mesh: sizes per axis, ranks numbered row-major over the
/// axes (the first axis varies slowest).
class RankGrid {
public:
  explicit RankGrid(llvm::ArrayRef<int64_t> axisSizes);
  unsigned numAxes() const { return sizes.size(); }
  int64_t numRanks() const { return total; }
  int64_t axisSize(unsigned axis) const { return sizes[axis]; }
  Coords coordsOf(int64_t rank) const;
  int64_t rankOf(llvm::ArrayRef<int64_t> coords) const;
  /// The ranks that differ from `rank` only along `axis` (-1: all ranks),
  /// in ascending order; `position` is `rank`'s index among them.
  llvm::SmallVector<int64_t, 8> group(int64_t rank, int axis,
                                      int64_t &position) const;

private:
  llvm::SmallVector<int64_t, 2> sizes;
  int64_t total = 1;
};

/// Where one rank's block of a value lies in the global tensor.
struct Placement {
  llvm::SmallVector<int64_t, 4> globalShape;
  llvm::SmallVector<int64_t, 4> localShape;
  llvm::SmallVector<int64_t, 4> offset;
};

/// The placement of a value of `globalShape` and `layout` on the rank at
/// `coords`. Fails when a sliced dimension does not divide evenly by the
/// number of ranks slicing it; the message names `what`.
llvm::Expected<Placement> place(llvm::ArrayRef<int64_t> globalShape,
                                const ir::Layout &layout, const ir::Mesh &mesh,
                                const RankGrid &grid,
                                llvm::ArrayRef<int64_t> coords,
                                llvm::StringRef what);

} // namespace coconet::sim

#endif // COCONET_SIM_TENSOR_H
