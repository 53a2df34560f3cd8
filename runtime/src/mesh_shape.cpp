//===- mesh_shape.cpp - the shape of a process mesh -----------------------===//

#include "coconet/mesh_shape.h"

#include <string>

namespace coconet::rt {

Status MeshShape::initShape(const std::vector<int64_t> &axisSizes,
                            int worldSize, int rank) {
  int64_t product = 1;
  for (int64_t s : axisSizes) {
    if (s <= 0)
      return Status::error(StatusCode::InvalidArgument,
                           "a mesh axis has size " + std::to_string(s));
    // Each factor is at most worldSize, so the product cannot overflow
    // before it exceeds worldSize.
    if (s > worldSize || product * s > worldSize)
      return Status::error(StatusCode::InvalidArgument,
                           "the mesh needs more ranks than the world's " +
                               std::to_string(worldSize) +
                               " (an axis of size " + std::to_string(s) + ")");
    product *= s;
  }
  if (product != worldSize)
    return Status::error(StatusCode::InvalidArgument,
                         "the mesh has " + std::to_string(product) +
                             " ranks, the world " + std::to_string(worldSize));
  sizes_ = axisSizes;
  rank_ = rank;
  size_ = worldSize;
  coords_.assign(axisSizes.size(), 0);
  int64_t rest = rank;
  for (size_t a = axisSizes.size(); a-- > 0;) {
    coords_[a] = rest % axisSizes[a];
    rest /= axisSizes[a];
  }
  return Status::success();
}

int MeshShape::splitColor(unsigned axis) const {
  int64_t color = 0;
  for (size_t a = 0; a < sizes_.size(); ++a)
    if (a != axis)
      color = color * sizes_[a] + coords_[a];
  return static_cast<int>(color);
}

} // namespace coconet::rt
