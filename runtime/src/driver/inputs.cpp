//===- inputs.cpp - filling a rank's block of a parameter -----------------===//
//
// Exactly as the simulator fills it (compiler/sim/Inputs.cpp and
// Simulator.cpp): a --set value in every element, else the rank's block of
// a .npy file in assembled form, else generated from the seed. Values are
// stored as the simulator stores them: a float rounded once from double,
// an integer wrapped to its width, a bool as 0 or 1.
//
//===----------------------------------------------------------------------===//

#include "driver_impl.h"

#include "coconet/npy.h"
#include "coconet/values.h"

#include "../element.h"

#include <cmath>
#include <cstring>
#include <memory>

namespace coconet::rt::driver {

namespace {

using coconet::rt::detail::visitDType;

/// One value as the simulator holds it.
struct Scalar {
  double f = 0;
  uint64_t i = 0;
};

/// Stores `s` as element i of `block`.
void storeScalar(DType dtype, void *block, int64_t i, Scalar s) {
  visitDType(dtype, [&](auto traits) {
    using Traits = decltype(traits);
    auto *out = static_cast<typename Traits::Storage *>(block);
    if constexpr (Traits::kFloat)
      out[i] = Traits::store(s.f);
    else
      out[i] = Traits::store(s.i);
  });
}

/// Parses a --set value by the rule of coconet/values.h (the simulator's).
Status parseValue(const TensorInfo &info, const std::string &text,
                  Scalar *out) {
  ElementValue v;
  COCONET_RETURN_IF_ERROR(parseSetValue(info.name, info.dtype, text, &v));
  out->f = v.f;
  out->i = v.i;
  return Status::success();
}

/// Calls f(localIndex, globalIndex) for every element of the block, where
/// globalIndex is the row-major index in the global shape.
template <typename F>
void forEachElement(const TensorInfo &info, const Placement &placement, F f) {
  const size_t rank = info.globalShape.size();
  const int64_t n = placement.elements();
  // Local coordinates. (A std::vector here set off GCC 12's
  // -Wfree-nonheap-object, a false positive, once inlined at -O2.)
  std::unique_ptr<int64_t[]> c(new int64_t[rank + 1]());
  for (int64_t i = 0; i < n; ++i) {
    int64_t global = 0;
    for (size_t d = 0; d < rank; ++d)
      global = global * info.globalShape[d] + c[d] + placement.offset[d];
    f(i, global);
    for (size_t d = rank; d-- > 0;) {
      if (++c[d] < placement.localShape[d])
        break;
      c[d] = 0;
    }
  }
}

/// The generated value of global element `index` (sim::generateInput).
Scalar generated(const TensorInfo &info, InputKind kind, uint64_t seed,
                 uint64_t stream, uint64_t index) {
  const double u = uniformInput(seed, stream, index);
  const bool scalar = info.globalShape.empty();
  Scalar s;
  if (info.dtype == DType::Bool)
    s.i = u >= 0;
  else if (isFloat(info.dtype) && scalar)
    s.f = 0.05 + 0.45 * (u + 1);
  else if (isFloat(info.dtype))
    s.f = kind == InputKind::Wide
              ? wideInputValue(info.dtype, u,
                               uniformInputBits(seed, stream, index))
              : u;
  else if (info.dtype == DType::U64 && scalar)
    s.i = uniformInputBits(seed, stream, index);
  else
    s.i = static_cast<uint64_t>(scalar ? 1 + std::floor((u + 1) * 4)
                                       : std::floor((u + 1) * 8));
  return s;
}

/// Element `index` of a .npy array converted as sim::readInputFile does
/// (fillFromFile has checked that every element is exact).
Scalar fromFile(const NpyArray &array, int64_t index) {
  Scalar s;
  if (array.type == NpyType::F16 || array.type == NpyType::F32 ||
      array.type == NpyType::F64)
    s.f = array.getAsDouble(index);
  else
    s.i = static_cast<uint64_t>(array.getAsInt(index));
  return s;
}

/// Whether entries q and r of a stacked array agree on the block at
/// `placement` (NaN equals NaN, -0 differs from +0, as sim::Tensor ==).
bool sameBlock(const TensorInfo &info, const NpyArray &array,
               const Placement &placement, int64_t q, int64_t r) {
  const int64_t n = detail::elementCount(info.globalShape);
  bool same = true;
  forEachElement(info, placement, [&](int64_t, int64_t global) {
    if (!same)
      return;
    Scalar a = fromFile(array, q * n + global);
    Scalar b = fromFile(array, r * n + global);
    // Compare the stored values, as the simulator compares its blocks.
    uint64_t x = 0, y = 0;
    storeScalar(info.dtype, &x, 0, a);
    storeScalar(info.dtype, &y, 0, b);
    if (x == y)
      return;
    if (isFloat(info.dtype)) {
      // Widen both stored values: NaN payloads do not matter.
      visitDType(info.dtype, [&](auto traits) {
        using Traits = decltype(traits);
        if constexpr (Traits::kFloat) {
          typename Traits::Storage tx, ty;
          std::memcpy(&tx, &x, sizeof tx);
          std::memcpy(&ty, &y, sizeof ty);
          const double dx = Traits::load(tx), dy = Traits::load(ty);
          if (std::isnan(dx) && std::isnan(dy))
            return;
        }
        same = false;
      });
      return;
    }
    same = false;
  });
  return same;
}

Status fillFromFile(const TensorInfo &info, const std::string &path,
                    const std::vector<int64_t> &axisSizes,
                    const std::vector<int64_t> &coords,
                    const Placement &placement, void *block) {
  NpyArray array;
  COCONET_RETURN_IF_ERROR(readNpyFile(path, &array));
  auto fail = [&](const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         path + ": input '" + info.name + "': " + why);
  };
  const std::vector<int64_t> shape = detail::assembledShape(info, axisSizes);
  if (array.shape != shape)
    return fail("expected shape " + detail::shapeTuple(shape) +
                ", the file has " + detail::shapeTuple(array.shape));
  if (!npyKindMatches(array.type, info.dtype))
    return fail(std::string("a ") + dtypeName(info.dtype) +
                " parameter cannot be read from '" + npyDescr(array.type) +
                "' data");
  // Every element converts exactly, or the file is refused (every rank
  // checks the whole file, so that all of them give the same error).
  for (int64_t i = 0, n = array.numElements(); i < n; ++i) {
    ElementValue v;
    if (Status st = npyElementValue(array, i, info.dtype, &v); !st.ok())
      return fail(st.message());
  }

  const bool stacked = detail::isLocalAnywhere(info);
  const int64_t rank = detail::rankOf(axisSizes, coords);
  const int64_t entry = stacked ? rank : 0;
  const int64_t n = detail::elementCount(info.globalShape);
  forEachElement(info, placement, [&](int64_t i, int64_t global) {
    storeScalar(info.dtype, block, i, fromFile(array, entry * n + global));
  });
  if (!stacked)
    return Status::success();

  // Ranks of one local group that hold the same block must agree (the
  // value is replicated between them); only a stacked file can break it.
  // Every rank checks every pair, in the simulator's order, so that all
  // ranks report the same error.
  const int64_t ranks = detail::numRanks(axisSizes);
  std::vector<Placement> placements(static_cast<size_t>(ranks));
  std::vector<int64_t> groups(static_cast<size_t>(ranks));
  for (int64_t r = 0; r < ranks; ++r) {
    const std::vector<int64_t> c = detail::coordsOf(axisSizes, r);
    COCONET_RETURN_IF_ERROR(place(info, axisSizes, c, &placements[r]));
    groups[r] = detail::localGroup(info, axisSizes, c);
  }
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t q = 0; q < r; ++q)
      if (groups[q] == groups[r] &&
          placements[q].offset == placements[r].offset &&
          !sameBlock(info, array, placements[r], q, r))
        return Status::error(
            StatusCode::InvalidArgument,
            "input '" + info.name + "': entries " + std::to_string(q) +
                " and " + std::to_string(r) +
                " must be equal: the parameter is not local on the axes "
                "where ranks " +
                std::to_string(q) + " and " + std::to_string(r) +
                " differ, so they hold the same block");
  return Status::success();
}

} // namespace

Status fillInput(const TensorInfo &info, const Options &options,
                 const std::vector<int64_t> &axisSizes,
                 const std::vector<int64_t> &coords, const Placement &placement,
                 void *block) {
  COCONET_RETURN_IF_ERROR(detail::checkMesh(info, axisSizes, &coords));
  if (placement.localShape.size() != info.globalShape.size() ||
      placement.offset.size() != info.globalShape.size())
    return Status::error(StatusCode::InvalidArgument,
                         "'" + info.name +
                             "': the placement does not match the shape");

  if (auto it = options.values.find(info.name); it != options.values.end()) {
    Scalar s;
    COCONET_RETURN_IF_ERROR(parseValue(info, it->second, &s));
    for (int64_t i = 0; i < placement.elements(); ++i)
      storeScalar(info.dtype, block, i, s);
    return Status::success();
  }
  if (auto it = options.inputs.find(info.name); it != options.inputs.end())
    return fillFromFile(info, it->second, axisSizes, coords, placement, block);

  const int64_t group = detail::localGroup(info, axisSizes, coords);
  const uint64_t stream = (static_cast<uint64_t>(info.paramIndex) << 32) |
                          static_cast<uint64_t>(group);
  forEachElement(info, placement, [&](int64_t i, int64_t global) {
    storeScalar(info.dtype, block, i,
                generated(info, options.inputKind, options.seed, stream,
                          static_cast<uint64_t>(global)));
  });
  return Status::success();
}

} // namespace coconet::rt::driver
