//===- mesh_shape.h - the shape of a process mesh ---------------*- C++ -*-===//
//
// What every target's Mesh knows before it makes a communicator: the axis
// sizes (their product is the number of ranks), this rank's coordinates
// (ranks are numbered row-major over the axes, the first axis varying
// slowest, as in the simulator and the drivers), and how the world splits
// into one communicator per axis (color = the row-major index of the
// coordinates on the other axes, key = the coordinate on the axis, so that
// rank i of an axis communicator is the member at coordinate i).
// cpu::Mesh and cuda::Mesh are MeshShapes.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_MESH_SHAPE_H
#define COCONET_RUNTIME_MESH_SHAPE_H

#include "coconet/status.h"

#include <cstdint>
#include <vector>

namespace coconet::rt {

class MeshShape {
public:
  unsigned numAxes() const { return static_cast<unsigned>(sizes_.size()); }
  int64_t axisSize(unsigned axis) const { return sizes_[axis]; }
  /// This rank's coordinate along `axis`.
  int64_t coord(unsigned axis) const { return coords_[axis]; }
  /// This rank in the world, and the world's size.
  int rank() const { return rank_; }
  int size() const { return size_; }

protected:
  /// Checks `axisSizes` (each positive, their product `worldSize`) and
  /// computes rank `rank`'s coordinates.
  Status initShape(const std::vector<int64_t> &axisSizes, int worldSize,
                   int rank);
  /// The split of the world into `axis`'s communicators: this rank's color
  /// and key.
  int splitColor(unsigned axis) const;
  int splitKey(unsigned axis) const { return static_cast<int>(coords_[axis]); }

private:
  std::vector<int64_t> sizes_;
  std::vector<int64_t> coords_;
  int rank_ = 0;
  int size_ = 1;
};

} // namespace coconet::rt

#endif // COCONET_RUNTIME_MESH_SHAPE_H
