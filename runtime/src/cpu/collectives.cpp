//===- collectives.cpp - the CPU target's exact collectives ---------------===//
//
// Reducing collectives never let MPI combine values (MPI leaves the order
// and bracketing of a reduction unspecified): they move the members' blocks
// with MPI_Alltoall(v) or MPI_Gather and combine them locally with
// combineBlocks, in ascending member order, as the simulator does.
//   allReduce      the count is split into P nearly equal pieces; member j
//                  receives every member's piece j (MPI_Alltoallv),
//                  combines it, and MPI_Allgatherv shares the pieces;
//   reduceScatter  member j receives every member's block j (MPI_Alltoall);
//   reduce         the root gathers all blocks (MPI_Gather);
//   allGather, broadcast, sendRecv: MPI_Allgather (in place when the
//                  member's block already is), MPI_Bcast, MPI_Sendrecv.
// A group of one member moves its input to its output once, or not at all
// when they are the same memory (its bits as they are: a signalling NaN
// stays signalling, where combining would quiet it). Data moves as
// MPI_BYTE (f16 and bf16 have no MPI type); byte counts must fit in an int,
// which is checked.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace coconet::rt::cpu {

namespace {

/// The members of one collective, as this rank sees them.
struct Group {
  MPI_Comm comm = MPI_COMM_NULL;
  int64_t size = 1;
  int64_t position = 0;
};

Status invalid(const char *what, const std::string &why) {
  return Status::error(StatusCode::InvalidArgument,
                       std::string(what) + ": " + why);
}

/// The MPI byte count of `members` blocks of `count` elements of `dtype`.
Status byteCount(const char *what, int64_t count, DType dtype, int64_t members,
                 int *out) {
  if (count < 0)
    return invalid(what, "negative count " + std::to_string(count));
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (size == 0)
    return invalid(what, "unknown element type");
  if (count > INT_MAX / size / members)
    return invalid(what, std::to_string(count) + " elements of " +
                             dtypeName(dtype) + " times " +
                             std::to_string(members) +
                             " members exceed INT_MAX bytes, the largest "
                             "MPI count");
  *out = static_cast<int>(count * size * members);
  return Status::success();
}

Status checkOp(const char *what, DType dtype, ReduceOp op) {
  if (op == ReduceOp::Avg && !isFloat(dtype))
    return invalid(what, std::string("avg needs a float type, not ") +
                             dtypeName(dtype));
  return Status::success();
}

Status checkRoot(const char *what, int64_t root, const Group &g) {
  if (root < 0 || root >= g.size)
    return invalid(what, "root " + std::to_string(root) +
                             " is out of range; the group has " +
                             std::to_string(g.size) + " ranks");
  return Status::success();
}

/// A group of one member: its result is its input, moved at most once
/// (nothing when `in == out`), by every thread when the blocks are apart.
Status alone(const void *in, void *out, int bytes) {
  if (in == out || bytes <= 0)
    return Status::success();
  const auto *from = static_cast<const uint8_t *>(in);
  auto *to = static_cast<uint8_t *>(out);
  const int64_t n = bytes;
  if (from < to + n && to < from + n) { // overlapping: one ordered move
    std::memmove(to, from, static_cast<size_t>(n));
    return Status::success();
  }
  constexpr int64_t kPiece = int64_t(1) << 20;
  const int64_t pieces = (n + kPiece - 1) / kPiece;
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (int64_t i = 0; i < pieces; ++i)
    std::memcpy(to + i * kPiece, from + i * kPiece,
                static_cast<size_t>(std::min(kPiece, n - i * kPiece)));
  return Status::success();
}

/// The group of `axis` (-1: the world) without its communicator, which
/// only the Mesh can give.
Status groupOf(const Mesh &mesh, const char *what, int axis, Group *out) {
  if (axis < -1 || axis >= static_cast<int>(mesh.numAxes()))
    return invalid(what, "axis " + std::to_string(axis) +
                             " is not an axis of the " +
                             std::to_string(mesh.numAxes()) + "-axis mesh");
  const bool world = axis < 0;
  const unsigned a = static_cast<unsigned>(axis);
  out->size = world ? mesh.size() : mesh.axisSize(a);
  out->position = world ? mesh.rank() : mesh.coord(a);
  return Status::success();
}

} // namespace

Status Mesh::allReduce(const void *in, void *out, int64_t count, DType dtype,
                       ReduceOp op, int axis) {
  const char *what = "allReduce";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  COCONET_RETURN_IF_ERROR(checkOp(what, dtype, op));
  int total = 0;
  COCONET_RETURN_IF_ERROR(byteCount(what, count, dtype, 1, &total));
  if (g.size == 1)
    return alone(in, out, total);
  // Piece j: count / P elements, one more for the first count % P pieces.
  const int64_t p = g.size, base = count / p, extra = count % p;
  const int size = static_cast<int>(dtypeSize(dtype));
  std::vector<int> pieceBytes(p), pieceOffsets(p);
  for (int64_t j = 0; j < p; ++j) {
    pieceBytes[j] = static_cast<int>((base + (j < extra ? 1 : 0)) * size);
    pieceOffsets[j] = static_cast<int>((j * base + std::min(j, extra)) * size);
  }
  const int64_t mine = base + (g.position < extra ? 1 : 0);
  int mineBytes = 0;
  COCONET_RETURN_IF_ERROR(byteCount(what, mine, dtype, p, &mineBytes));
  std::vector<int> recvBytes(p, static_cast<int>(mine * size)), recvOffsets(p);
  for (int64_t m = 0; m < p; ++m)
    recvOffsets[m] = static_cast<int>(m * mine * size);
  uint8_t *pieces = scratch(0, static_cast<size_t>(mineBytes));
  COCONET_MPI_CHECK(MPI_Alltoallv(in, pieceBytes.data(), pieceOffsets.data(),
                                  MPI_BYTE, pieces, recvBytes.data(),
                                  recvOffsets.data(), MPI_BYTE, g.comm));
  uint8_t *combined = scratch(1, static_cast<size_t>(mine * size));
  combineBlocks(pieces, p, combined, mine, dtype, op);
  COCONET_MPI_CHECK(MPI_Allgatherv(combined, static_cast<int>(mine * size),
                                   MPI_BYTE, out, pieceBytes.data(),
                                   pieceOffsets.data(), MPI_BYTE, g.comm));
  return Status::success();
}

Status Mesh::reduceScatter(const void *in, void *out, int64_t countPerRank,
                           DType dtype, ReduceOp op, int axis) {
  const char *what = "reduceScatter";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  COCONET_RETURN_IF_ERROR(checkOp(what, dtype, op));
  int blockBytes = 0, allBytes = 0;
  COCONET_RETURN_IF_ERROR(byteCount(what, countPerRank, dtype, 1, &blockBytes));
  COCONET_RETURN_IF_ERROR(
      byteCount(what, countPerRank, dtype, g.size, &allBytes));
  if (g.size == 1)
    return alone(in, out, blockBytes);
  uint8_t *blocks = scratch(0, static_cast<size_t>(allBytes));
  COCONET_MPI_CHECK(MPI_Alltoall(in, blockBytes, MPI_BYTE, blocks, blockBytes,
                                 MPI_BYTE, g.comm));
  combineBlocks(blocks, g.size, out, countPerRank, dtype, op);
  return Status::success();
}

Status Mesh::allGather(const void *in, void *out, int64_t countPerRank,
                       DType dtype, int axis) {
  const char *what = "allGather";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  int blockBytes = 0, allBytes = 0;
  COCONET_RETURN_IF_ERROR(byteCount(what, countPerRank, dtype, 1, &blockBytes));
  COCONET_RETURN_IF_ERROR(
      byteCount(what, countPerRank, dtype, g.size, &allBytes));
  if (g.size == 1)
    return alone(in, out, blockBytes);
  // A member whose block is already in place in `out` sends it from there.
  const void *send =
      in == static_cast<const uint8_t *>(out) + g.position * blockBytes
          ? MPI_IN_PLACE
          : in;
  COCONET_MPI_CHECK(MPI_Allgather(send, blockBytes, MPI_BYTE, out, blockBytes,
                                  MPI_BYTE, g.comm));
  return Status::success();
}

Status Mesh::broadcast(const void *in, void *out, int64_t count, DType dtype,
                       int64_t root, int axis) {
  const char *what = "broadcast";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  COCONET_RETURN_IF_ERROR(checkRoot(what, root, g));
  int bytes = 0;
  COCONET_RETURN_IF_ERROR(byteCount(what, count, dtype, 1, &bytes));
  if (g.position == root && in != out && bytes > 0)
    std::memmove(out, in, static_cast<size_t>(bytes));
  COCONET_MPI_CHECK(
      MPI_Bcast(out, bytes, MPI_BYTE, static_cast<int>(root), g.comm));
  return Status::success();
}

Status Mesh::reduce(const void *in, void *out, int64_t count, DType dtype,
                    ReduceOp op, int64_t root, int axis) {
  const char *what = "reduce";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  COCONET_RETURN_IF_ERROR(checkOp(what, dtype, op));
  COCONET_RETURN_IF_ERROR(checkRoot(what, root, g));
  int bytes = 0, allBytes = 0;
  COCONET_RETURN_IF_ERROR(byteCount(what, count, dtype, 1, &bytes));
  COCONET_RETURN_IF_ERROR(byteCount(what, count, dtype, g.size, &allBytes));
  if (g.size == 1)
    return alone(in, out, bytes);
  const bool isRoot = g.position == root;
  uint8_t *blocks = scratch(0, isRoot ? static_cast<size_t>(allBytes) : 0);
  COCONET_MPI_CHECK(MPI_Gather(in, bytes, MPI_BYTE, blocks, bytes, MPI_BYTE,
                               static_cast<int>(root), g.comm));
  if (isRoot)
    combineBlocks(blocks, g.size, out, count, dtype, op);
  else if (bytes > 0)
    std::memset(out, 0, static_cast<size_t>(bytes));
  return Status::success();
}

Status Mesh::sendRecv(const void *in, void *out, int64_t count, DType dtype,
                      int64_t offset, int axis) {
  const char *what = "sendRecv";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  int bytes = 0;
  COCONET_RETURN_IF_ERROR(byteCount(what, count, dtype, 1, &bytes));
  // Member c sends to c + offset and receives from c - offset.
  int to = MPI_PROC_NULL, from = MPI_PROC_NULL;
  if (offset > -g.size && offset < g.size) {
    if (g.position + offset >= 0 && g.position + offset < g.size)
      to = static_cast<int>(g.position + offset);
    if (g.position - offset >= 0 && g.position - offset < g.size)
      from = static_cast<int>(g.position - offset);
  }
  COCONET_MPI_CHECK(MPI_Sendrecv(in, bytes, MPI_BYTE, to, 0, out, bytes,
                                 MPI_BYTE, from, 0, g.comm, MPI_STATUS_IGNORE));
  if (from == MPI_PROC_NULL && bytes > 0)
    std::memset(out, 0, static_cast<size_t>(bytes));
  return Status::success();
}

} // namespace coconet::rt::cpu
