//===- place.cpp - where a rank's block lies, as the simulator says -------===//
//
// Ranks are numbered row-major over the mesh axes (the first axis varies
// slowest). On an axis where a value is sliced along dimension d, the rank
// at coordinate i holds block i of d; a dimension sliced over several axes
// is split row-major over them, in mesh order (compiler/sim/Tensor.cpp).
//
//===----------------------------------------------------------------------===//

#include "driver_impl.h"

#include <cstdio>
#include <new>
#include <stdexcept>

namespace coconet::rt::driver {

namespace detail {

Status checkMesh(const TensorInfo &info, const std::vector<int64_t> &axisSizes,
                 const std::vector<int64_t> *coords) {
  auto invalid = [&](const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         "'" + info.name + "': " + why);
  };
  if (info.layout.size() != axisSizes.size())
    return invalid("the layout has " + std::to_string(info.layout.size()) +
                   " axes, the mesh " + std::to_string(axisSizes.size()));
  if (coords && coords->size() != axisSizes.size())
    return invalid("expected " + std::to_string(axisSizes.size()) +
                   " coordinates, got " + std::to_string(coords->size()));
  for (size_t a = 0; a < axisSizes.size(); ++a) {
    if (axisSizes[a] <= 0)
      return invalid("mesh axis " + std::to_string(a) + " has size " +
                     std::to_string(axisSizes[a]));
    if (coords && ((*coords)[a] < 0 || (*coords)[a] >= axisSizes[a]))
      return invalid("coordinate " + std::to_string((*coords)[a]) +
                     " is outside mesh axis " + std::to_string(a) + " of " +
                     std::to_string(axisSizes[a]) + " ranks");
    const AxisLayout &l = info.layout[a];
    if (l.state == AxisState::Sliced &&
        (l.dim < 0 || static_cast<size_t>(l.dim) >= info.globalShape.size()))
      return invalid("sliced along dimension " + std::to_string(l.dim) +
                     " of a rank-" + std::to_string(info.globalShape.size()) +
                     " value");
  }
  for (size_t d = 0; d < info.globalShape.size(); ++d)
    if (info.globalShape[d] < 0)
      return invalid("dimension " + std::to_string(d) + " has size " +
                     std::to_string(info.globalShape[d]));
  return Status::success();
}

int64_t numRanks(const std::vector<int64_t> &axisSizes) {
  int64_t n = 1;
  for (int64_t s : axisSizes)
    n *= s;
  return n;
}

std::vector<int64_t> coordsOf(const std::vector<int64_t> &axisSizes,
                              int64_t rank) {
  std::vector<int64_t> coords(axisSizes.size());
  for (size_t a = axisSizes.size(); a-- > 0;) {
    coords[a] = rank % axisSizes[a];
    rank /= axisSizes[a];
  }
  return coords;
}

int64_t rankOf(const std::vector<int64_t> &axisSizes,
               const std::vector<int64_t> &coords) {
  int64_t rank = 0;
  for (size_t a = 0; a < axisSizes.size(); ++a)
    rank = rank * axisSizes[a] + coords[a];
  return rank;
}

int64_t localGroup(const TensorInfo &info,
                   const std::vector<int64_t> &axisSizes,
                   const std::vector<int64_t> &coords) {
  int64_t group = 0;
  for (size_t a = 0; a < info.layout.size(); ++a)
    if (info.layout[a].state == AxisState::Local)
      group = group * axisSizes[a] + coords[a];
  return group;
}

bool isLocalAnywhere(const TensorInfo &info) {
  for (const AxisLayout &l : info.layout)
    if (l.state == AxisState::Local)
      return true;
  return false;
}

std::vector<int64_t> assembledShape(const TensorInfo &info,
                                    const std::vector<int64_t> &axisSizes) {
  std::vector<int64_t> shape;
  if (isLocalAnywhere(info))
    shape.push_back(numRanks(axisSizes));
  shape.insert(shape.end(), info.globalShape.begin(), info.globalShape.end());
  return shape;
}

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

} // namespace detail

int64_t Placement::elements() const { return detail::elementCount(localShape); }

namespace {

/// "f32[4, 8]": the type with the extents of the sizes given.
std::string typeText(const TensorInfo &info) {
  std::string out = std::string(dtypeName(info.dtype)) + "[";
  for (size_t d = 0; d < info.globalShape.size(); ++d)
    out += (d ? ", " : "") + std::to_string(info.globalShape[d]);
  return out + "]";
}

/// "68719476736 bytes (64.0 GiB)".
std::string bytesText(size_t bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  return std::to_string(bytes) + " bytes (" + text + ")";
}

} // namespace

Status allocateBlock(const TensorInfo &info, const Placement &placement,
                     HostBytes *host) {
  const int64_t elements = placement.elements();
  const size_t bytes =
      static_cast<size_t>(elements) * dtypeSize(info.dtype); // place checked
  try {
    host->assign(bytes, 0);
  } catch (const std::bad_alloc &) {
    return cannotAllocate(info, elements, bytes, "host memory");
  } catch (const std::length_error &) {
    return cannotAllocate(info, elements, bytes, "host memory");
  }
  return Status::success();
}

Status cannotAllocate(const TensorInfo &info, int64_t elements, size_t bytes,
                      const char *memory) {
  return Status::error(StatusCode::InvalidArgument,
                       "cannot allocate '" + info.name + "' (" +
                           typeText(info) + "): its block of " +
                           std::to_string(elements) + " elements is " +
                           bytesText(bytes) + " of " + memory);
}

Status place(const TensorInfo &info, const std::vector<int64_t> &axisSizes,
             const std::vector<int64_t> &coords, Placement *out) {
  COCONET_RETURN_IF_ERROR(detail::checkMesh(info, axisSizes, &coords));
  // Every count below fits once the global tensor's bytes do.
  int64_t global = 1;
  bool fits = true;
  for (int64_t extent : info.globalShape)
    fits = fits && !__builtin_mul_overflow(global, extent, &global);
  const auto size = static_cast<int64_t>(dtypeSize(info.dtype));
  if (!fits || global > INT64_MAX / size)
    return Status::error(StatusCode::InvalidArgument,
                         "'" + info.name + "' (" + typeText(info) +
                             ") is more than 2^63 - 1 bytes: choose smaller "
                             "sizes");
  Placement p;
  p.localShape = info.globalShape;
  p.offset.assign(info.globalShape.size(), 0);
  for (size_t d = 0; d < info.globalShape.size(); ++d) {
    int64_t blocks = 1, block = 0;
    std::string axes;
    for (size_t a = 0; a < info.layout.size(); ++a) {
      if (info.layout[a].state != AxisState::Sliced ||
          info.layout[a].dim != static_cast<int>(d))
        continue;
      blocks *= axisSizes[a];
      block = block * axisSizes[a] + coords[a];
      axes += (axes.empty() ? "" : " and ") + std::to_string(a);
    }
    if (blocks == 1)
      continue;
    if (info.globalShape[d] % blocks != 0)
      return Status::error(
          StatusCode::InvalidArgument,
          "dimension " + std::to_string(d) + " of '" + info.name +
              "' has size " + std::to_string(info.globalShape[d]) +
              ", which is not divisible by the " + std::to_string(blocks) +
              " ranks of mesh axis " + axes +
              " that slice it; choose sizes that divide evenly");
    p.localShape[d] = info.globalShape[d] / blocks;
    p.offset[d] = block * p.localShape[d];
  }
  p.localGroup = detail::localGroup(info, axisSizes, coords);
  *out = std::move(p);
  return Status::success();
}

std::vector<int64_t> coordinatesOf(const std::vector<int64_t> &axisSizes,
                                   int rank) {
  std::vector<int64_t> coords(axisSizes.size());
  int64_t r = rank;
  for (size_t a = axisSizes.size(); a-- > 0;) {
    coords[a] = r % axisSizes[a];
    r /= axisSizes[a];
  }
  return coords;
}

Status HostBlock::makeHost(TensorInfo tensor,
                           const std::vector<int64_t> &axisSizes,
                           const std::vector<int64_t> &coords,
                           void *symmetric) {
  info = std::move(tensor);
  bound = symmetric;
  COCONET_RETURN_IF_ERROR(place(info, axisSizes, coords, &placement));
  return allocateBlock(info, placement, &host);
}

} // namespace coconet::rt::driver
