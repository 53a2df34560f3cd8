//===- results.cpp - writing and summarising results ----------------------===//
//
// writeResult gathers every rank's block to rank 0, which assembles the
// value as the simulator does (SimResult::assembled in
// compiler/sim/Output.cpp) and writes it as sim::writeResults writes it:
//   - a value replicated or sliced on every axis: the global tensor, where
//     rank 0's block wins over the other ranks' where they overlap;
//   - a value local on some axis: one global tensor per rank, stacked
//     ([ranks, global shape...]); entry r holds the blocks of the ranks in
//     r's local group, r's own winning;
//   - f16 as '<f2', bf16 as '<f4' (exact), bool as '|b1' (0 or 1).
// Where ranks hold copies of the same block, every copy must have the same
// bits as the one kept (checkReplicas), or writing fails.
//
//===----------------------------------------------------------------------===//

#include "driver_impl.h"

#include "coconet/npy.h"

#include "../element.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <system_error>

namespace coconet::rt::driver {

namespace {

using coconet::rt::detail::visitDType;

/// Copies `q`'s block (elements of `size` bytes) into entry `entry` of the
/// assembled bytes `out`.
void copyBlock(const TensorInfo &info, const Placement &p, const uint8_t *block,
               size_t size, int64_t entry, uint8_t *out) {
  const size_t rank = info.globalShape.size();
  const int64_t globalSize = detail::elementCount(info.globalShape);
  std::vector<int64_t> c(rank, 0);
  for (int64_t i = 0; i < p.elements(); ++i) {
    int64_t global = 0;
    for (size_t d = 0; d < rank; ++d)
      global = global * info.globalShape[d] + c[d] + p.offset[d];
    std::memcpy(out + static_cast<size_t>(entry * globalSize + global) * size,
                block + static_cast<size_t>(i) * size, size);
    for (size_t d = rank; d-- > 0;) {
      if (++c[d] < p.localShape[d])
        break;
      c[d] = 0;
    }
  }
}

/// The .npy type of a type whose .npy bytes are its storage's.
NpyType sameBytes(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return NpyType::F32;
  case DType::F64:
    return NpyType::F64;
  case DType::I32:
    return NpyType::I32;
  case DType::I64:
    return NpyType::I64;
  default:
    return NpyType::U64;
  }
}

/// The .npy type and bytes of assembled storage elements, converted as
/// sim::writeResults converts the simulator's values.
NpyType toNpy(DType dtype, std::vector<uint8_t> &&storage,
              std::vector<uint8_t> *bytes) {
  const size_t count = storage.size() / dtypeSize(dtype);
  auto put = [&](size_t i, const void *value, size_t size) {
    std::memcpy(bytes->data() + i * size, value, size);
  };
  switch (dtype) {
  case DType::F16:
    bytes->resize(count * 2);
    for (size_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, storage.data() + 2 * i, 2);
      // Through the simulator's double: NaNs come out quiet, as there.
      h = doubleToHalfBits(static_cast<double>(halfBitsToFloat(h)));
      put(i, &h, 2);
    }
    return NpyType::F16;
  case DType::BF16:
    bytes->resize(count * 4);
    for (size_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, storage.data() + 2 * i, 2);
      const float f = bfloat16BitsToFloat(h);
      put(i, &f, 4);
    }
    return NpyType::F32;
  case DType::Bool:
    bytes->resize(count);
    for (size_t i = 0; i < count; ++i)
      (*bytes)[i] = storage[i] != 0;
    return NpyType::Bool;
  case DType::F32:
  case DType::F64:
  case DType::I32:
  case DType::I64:
  case DType::U64:
    break;
  }
  *bytes = std::move(storage);
  return sameBytes(dtype);
}

} // namespace

namespace {

Status writeResultOrThrow(const TensorInfo &info, const Options &options,
                          const std::vector<int64_t> &axisSizes,
                          Transport &transport, const void *block);

} // namespace

uint64_t blockHash(const void *data, size_t bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const auto *p = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < bytes; ++i)
    h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

Status writeResult(const TensorInfo &info, const Options &options,
                   const std::vector<int64_t> &axisSizes, Transport &transport,
                   const void *block) {
  // The assembled value and its .npy bytes are rank 0's alone (the MPI
  // gather makes its own room before any rank sends): memory that cannot
  // be had is an error, not an exception.
  try {
    return writeResultOrThrow(info, options, axisSizes, transport, block);
  } catch (const std::bad_alloc &) {
  } catch (const std::length_error &) {
  }
  return Status::error(StatusCode::InvalidArgument,
                       "cannot allocate the memory to assemble '" + info.name +
                           "' on rank 0 for writing it");
}

namespace {

/// The assembled form keeps one copy of a block that several ranks hold
/// (rank 0's where it holds it): every other copy must be the same bits,
/// or a rank's result is wrong where no comparison would see it. Each rank
/// sends a hash of its block to rank 0, which compares the ranks that hold
/// the same block (the same offsets and local group).
Status checkReplicas(const TensorInfo &info,
                     const std::vector<Placement> &placements,
                     Transport &transport, const void *block,
                     size_t blockBytes) {
  const uint64_t mine = blockHash(block, blockBytes);
  std::vector<uint8_t> all;
  COCONET_RETURN_IF_ERROR(transport.gather(&mine, sizeof mine, &all));
  if (transport.rank() != 0)
    return Status::success();
  const size_t ranks = placements.size();
  if (all.size() != ranks * sizeof mine)
    return Status::error(StatusCode::Internal,
                         "checking the copies of '" + info.name +
                             "': gathered " + std::to_string(all.size()) +
                             " bytes, expected " +
                             std::to_string(ranks * sizeof mine));
  auto hashOf = [&](size_t q) {
    uint64_t h;
    std::memcpy(&h, all.data() + q * sizeof h, sizeof h);
    return h;
  };
  for (size_t q = 1; q < ranks; ++q)
    for (size_t p = 0; p < q; ++p) {
      if (placements[p].offset != placements[q].offset ||
          placements[p].localGroup != placements[q].localGroup)
        continue;
      if (hashOf(p) != hashOf(q)) {
        std::string at;
        for (int64_t o : placements[q].offset)
          at += (at.empty() ? "" : ", ") + std::to_string(o);
        return Status::error(StatusCode::Internal,
                             "the copies of '" + info.name + "' differ: rank " +
                                 std::to_string(q) + "'s block at [" + at +
                                 "] is not rank " + std::to_string(p) +
                                 "'s, which holds the same block");
      }
      break;
    }
  return Status::success();
}

Status writeResultOrThrow(const TensorInfo &info, const Options &options,
                          const std::vector<int64_t> &axisSizes,
                          Transport &transport, const void *block) {
  if (options.outputDir.empty())
    return Status::success();
  COCONET_RETURN_IF_ERROR(detail::checkMesh(info, axisSizes, nullptr));
  const int64_t ranks = detail::numRanks(axisSizes);
  if (transport.size() != ranks)
    return Status::error(StatusCode::InvalidArgument,
                         "writing '" + info.name + "': the mesh has " +
                             std::to_string(ranks) + " ranks, the transport " +
                             std::to_string(transport.size()));
  std::vector<Placement> placements(static_cast<size_t>(ranks));
  for (int64_t r = 0; r < ranks; ++r)
    COCONET_RETURN_IF_ERROR(
        place(info, axisSizes, detail::coordsOf(axisSizes, r), &placements[r]));
  const size_t size = dtypeSize(info.dtype);
  const size_t blockBytes =
      static_cast<size_t>(placements[transport.rank()].elements()) * size;
  COCONET_RETURN_IF_ERROR(
      checkReplicas(info, placements, transport, block, blockBytes));
  const std::vector<int64_t> shape = detail::assembledShape(info, axisSizes);
  const std::string path =
      (std::filesystem::path(options.outputDir) / (info.name + ".npy"))
          .string();
  auto createDirectory = [&] {
    std::error_code ec;
    std::filesystem::create_directories(options.outputDir, ec);
    if (ec)
      return Status::error(StatusCode::IoError, "cannot create directory '" +
                                                    options.outputDir +
                                                    "': " + ec.message());
    return Status::success();
  };
  // A value replicated on every axis is rank 0's block (the assembled
  // form keeps rank 0's copy): written from where it is, with no gather
  // and no copy where the .npy bytes are the storage's (a 2 GiB result
  // once took four times its size on rank 0).
  bool replicated = true;
  for (const AxisLayout &l : info.layout)
    replicated &= l.state == AxisState::Replicated;
  if (replicated) {
    if (transport.rank() != 0)
      return Status::success();
    COCONET_RETURN_IF_ERROR(createDirectory());
    const auto *data = static_cast<const uint8_t *>(block);
    switch (info.dtype) {
    case DType::F32:
    case DType::F64:
    case DType::I32:
    case DType::I64:
    case DType::U64:
      return writeNpyFile(path, sameBytes(info.dtype), shape, data, blockBytes);
    default: {
      std::vector<uint8_t> bytes;
      const NpyType type = toNpy(
          info.dtype, std::vector<uint8_t>(data, data + blockBytes), &bytes);
      return writeNpyFile(path, type, shape, bytes.data(), bytes.size());
    }
    }
  }
  std::vector<uint8_t> all;
  COCONET_RETURN_IF_ERROR(transport.gather(block, blockBytes, &all));
  if (transport.rank() != 0)
    return Status::success();
  if (all.size() != blockBytes * static_cast<size_t>(ranks))
    return Status::error(StatusCode::Internal,
                         "writing '" + info.name + "': gathered " +
                             std::to_string(all.size()) + " bytes, expected " +
                             std::to_string(blockBytes * ranks));

  std::vector<uint8_t> assembled(
      static_cast<size_t>(detail::elementCount(shape)) * size, 0);
  auto blockOf = [&](int64_t q) { return all.data() + q * blockBytes; };
  if (!detail::isLocalAnywhere(info)) {
    for (int64_t q = ranks; q-- > 0;)
      copyBlock(info, placements[q], blockOf(q), size, 0, assembled.data());
  } else {
    std::vector<int64_t> groups(static_cast<size_t>(ranks));
    for (int64_t q = 0; q < ranks; ++q)
      groups[q] =
          detail::localGroup(info, axisSizes, detail::coordsOf(axisSizes, q));
    for (int64_t r = 0; r < ranks; ++r) {
      for (int64_t q = ranks; q-- > 0;)
        if (groups[q] == groups[r])
          copyBlock(info, placements[q], blockOf(q), size, r, assembled.data());
      copyBlock(info, placements[r], blockOf(r), size, r, assembled.data());
    }
  }

  std::vector<uint8_t>().swap(all); // freed before the conversion
  COCONET_RETURN_IF_ERROR(createDirectory());
  std::vector<uint8_t> bytes;
  const NpyType type = toNpy(info.dtype, std::move(assembled), &bytes);
  return writeNpyFile(path, type, shape, bytes.data(), bytes.size());
}

} // namespace

void printSummary(const TensorInfo &info, const Transport &transport,
                  const Placement &placement, const void *block) {
  if (transport.rank() != 0)
    return;
  double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
  int64_t nans = 0;
  visitDType(info.dtype, [&](auto traits) {
    using Traits = decltype(traits);
    const auto *values = static_cast<const typename Traits::Storage *>(block);
    for (int64_t i = 0; i < placement.elements(); ++i) {
      double v;
      if constexpr (Traits::kFloat)
        v = Traits::load(values[i]);
      else if constexpr (Traits::kUnsigned)
        v = static_cast<double>(Traits::load(values[i]));
      else
        v = static_cast<double>(static_cast<int64_t>(Traits::load(values[i])));
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      sum += v;
      sq += v * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  });
  auto shapeText = [](const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  };
  std::printf("  %s : %s%s  block %s of rank 0\n", info.name.c_str(),
              dtypeName(info.dtype), shapeText(info.globalShape).c_str(),
              shapeText(placement.localShape).c_str());
  std::printf("    sum %.9g  min %.9g  max %.9g  l2 %.9g", sum, lo, hi,
              std::sqrt(sq));
  if (nans)
    std::printf("  nan %lld", static_cast<long long>(nans));
  std::printf("\n");
  std::fflush(stdout);
}

} // namespace coconet::rt::driver
