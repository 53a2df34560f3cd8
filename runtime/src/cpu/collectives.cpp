//===- collectives.cpp - the CPU target's exact collectives ---------------===//
//
// Reducing collectives never let MPI combine values (MPI leaves the order
// and bracketing of a reduction unspecified): they move the members' blocks
// with MPI_Alltoall(v) or MPI_Gather and combine them locally with
// combineBlocks, in the members' order, as the simulator does.
//   allReduce      the count is split into P nearly equal pieces; member j
//                  receives every member's piece j (MPI_Alltoallv),
//                  combines it, and MPI_Allgatherv shares the pieces;
//   reduceScatter  member j receives every member's block j (MPI_Alltoall);
//   reduce         the root gathers all blocks (MPI_Gather);
//   allGather, broadcast, sendRecv, allToAll: MPI_Allgather (in place when
//                  the member's block already is), MPI_Bcast, MPI_Sendrecv,
//                  MPI_Alltoall.
// A group of one member moves its input to its output once, or not at all
// when they are the same memory (its bits as they are: a signalling NaN
// stays signalling, where combining would quiet it). Data moves as
// MPI_BYTE (f16 and bf16 have no MPI type). MPI's counts and displacements
// are ints: a collective whose messages would pass INT_MAX bytes runs in
// pieces, each a range of element positions (of every member's block) that
// fits, in order; the combine is per element, so the bits do not depend on
// the pieces. COCONET_MPI_PIECE_BYTES lowers the limit (tests use it to run
// many pieces on small data).
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"

#include "../mpi_error.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
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

/// The bytes of one element of `dtype`, after checking that `members`
/// blocks of `count` of them have a size in bytes.
Status elementBytes(const char *what, int64_t count, DType dtype,
                    int64_t members, int64_t *out) {
  if (count < 0)
    return invalid(what, "negative count " + std::to_string(count));
  *out = static_cast<int64_t>(dtypeSize(dtype));
  if (*out == 0)
    return invalid(what, "unknown element type");
  if (count > INT64_MAX / *out / members)
    return invalid(what, std::to_string(count) + " elements of " +
                             dtypeName(dtype) + " times " +
                             std::to_string(members) +
                             " members overflow a 64-bit byte count");
  return Status::success();
}

/// Elements of `size` bytes per piece so that `factor` pieces, plus
/// `slack` elements, fit the limit; at least 1.
int64_t pieceElements(int64_t size, int64_t factor, int64_t slack = 0) {
  return std::max<int64_t>(1, detail::mpiPieceBytes() / size / factor - slack);
}

/// `bytes` contiguous bytes repeated every `stride` bytes: one member's
/// part of a piece of a collective over blocks (MPI's displacements are
/// ints; a datatype's extent is not). Freed when it goes out of scope.
class Strided {
public:
  Strided(int64_t bytes, int64_t stride) {
    MPI_Datatype piece;
    ok_ = MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &piece) ==
          MPI_SUCCESS;
    ok_ =
        ok_ && MPI_Type_create_resized(piece, 0, stride, &type_) == MPI_SUCCESS;
    if (ok_)
      MPI_Type_free(&piece);
    ok_ = ok_ && MPI_Type_commit(&type_) == MPI_SUCCESS;
  }
  ~Strided() {
    if (type_ != MPI_DATATYPE_NULL)
      MPI_Type_free(&type_);
  }
  Strided(const Strided &) = delete;
  Strided &operator=(const Strided &) = delete;
  bool ok() const { return ok_; }
  MPI_Datatype type() const { return type_; }

private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool ok_ = false;
};

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
Status alone(const void *in, void *out, int64_t bytes) {
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
  int64_t size = 0;
  COCONET_RETURN_IF_ERROR(elementBytes(what, count, dtype, g.size, &size));
  if (g.size == 1)
    return alone(in, out, count * size);
  const int64_t p = g.size;
  // A piece's pieces reach each member: it receives p of them, each at
  // most piece / p + 1 elements.
  const int64_t piece = pieceElements(size, 1, p);
  std::vector<int> pieceBytes(p), pieceOffsets(p), recvBytes(p), recvOffsets(p);
  for (int64_t at = 0; at < count; at += piece) {
    const int64_t n = std::min(piece, count - at);
    const auto *from = static_cast<const uint8_t *>(in) + at * size;
    auto *to = static_cast<uint8_t *>(out) + at * size;
    // Part j: n / P elements, one more for the first n % P parts.
    const int64_t base = n / p, extra = n % p;
    for (int64_t j = 0; j < p; ++j) {
      pieceBytes[j] = static_cast<int>((base + (j < extra ? 1 : 0)) * size);
      pieceOffsets[j] =
          static_cast<int>((j * base + std::min(j, extra)) * size);
    }
    const int64_t mine = base + (g.position < extra ? 1 : 0);
    for (int64_t m = 0; m < p; ++m) {
      recvBytes[m] = static_cast<int>(mine * size);
      recvOffsets[m] = static_cast<int>(m * mine * size);
    }
    uint8_t *parts = scratch(0, static_cast<size_t>(mine * size * p));
    COCONET_MPI_CHECK(MPI_Alltoallv(
        from, pieceBytes.data(), pieceOffsets.data(), MPI_BYTE, parts,
        recvBytes.data(), recvOffsets.data(), MPI_BYTE, g.comm));
    uint8_t *combined = scratch(1, static_cast<size_t>(mine * size));
    combineBlocks(parts, p, combined, mine, dtype, op);
    COCONET_MPI_CHECK(MPI_Allgatherv(combined, static_cast<int>(mine * size),
                                     MPI_BYTE, to, pieceBytes.data(),
                                     pieceOffsets.data(), MPI_BYTE, g.comm));
  }
  return Status::success();
}

Status Mesh::reduceScatter(const void *in, void *out, int64_t countPerRank,
                           DType dtype, ReduceOp op, int axis) {
  const char *what = "reduceScatter";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  COCONET_RETURN_IF_ERROR(checkOp(what, dtype, op));
  int64_t size = 0;
  COCONET_RETURN_IF_ERROR(
      elementBytes(what, countPerRank, dtype, g.size, &size));
  if (g.size == 1)
    return alone(in, out, countPerRank * size);
  // Piece [at, at + n) of every member's block j goes to member j.
  const int64_t piece = pieceElements(size, g.size);
  for (int64_t at = 0; at < countPerRank; at += piece) {
    const int64_t n = std::min(piece, countPerRank - at);
    const int bytes = static_cast<int>(n * size);
    uint8_t *blocks = scratch(0, static_cast<size_t>(n * size * g.size));
    const auto *from = static_cast<const uint8_t *>(in) + at * size;
    if (n == countPerRank) {
      COCONET_MPI_CHECK(
          MPI_Alltoall(from, bytes, MPI_BYTE, blocks, bytes, MPI_BYTE, g.comm));
    } else {
      Strided part(n * size, countPerRank * size);
      if (!part.ok())
        return invalid(what, "cannot make an MPI datatype for a piece");
      COCONET_MPI_CHECK(
          MPI_Alltoall(from, 1, part.type(), blocks, bytes, MPI_BYTE, g.comm));
    }
    combineBlocks(blocks, g.size, static_cast<uint8_t *>(out) + at * size, n,
                  dtype, op);
  }
  return Status::success();
}

Status Mesh::allGather(const void *in, void *out, int64_t countPerRank,
                       DType dtype, int axis) {
  const char *what = "allGather";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  int64_t size = 0;
  COCONET_RETURN_IF_ERROR(
      elementBytes(what, countPerRank, dtype, g.size, &size));
  if (g.size == 1)
    return alone(in, out, countPerRank * size);
  // A member whose block is already in place in `out` sends it from there.
  const int64_t block = countPerRank * size;
  const bool inPlace =
      in == static_cast<const uint8_t *>(out) + g.position * block;
  // Piece [at, at + n) of every member's block.
  const int64_t piece = pieceElements(size, g.size);
  for (int64_t at = 0; at < countPerRank; at += piece) {
    const int64_t n = std::min(piece, countPerRank - at);
    const int bytes = static_cast<int>(n * size);
    const void *send =
        inPlace ? MPI_IN_PLACE : static_cast<const uint8_t *>(in) + at * size;
    auto *to = static_cast<uint8_t *>(out) + at * size;
    if (n == countPerRank) {
      COCONET_MPI_CHECK(
          MPI_Allgather(send, bytes, MPI_BYTE, to, bytes, MPI_BYTE, g.comm));
    } else {
      Strided part(n * size, block);
      if (!part.ok())
        return invalid(what, "cannot make an MPI datatype for a piece");
      COCONET_MPI_CHECK(
          MPI_Allgather(send, bytes, MPI_BYTE, to, 1, part.type(), g.comm));
    }
  }
  return Status::success();
}

Status Mesh::allToAll(const void *in, void *out, int64_t countPerRank,
                      DType dtype, int axis) {
  return allToAll(in, out, countPerRank, dtype, axis, countPerRank);
}

Status Mesh::allToAll(const void *in, void *out, int64_t countPerRank,
                      DType dtype, int axis, int64_t stride) {
  const char *what = "allToAll";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  int64_t size = 0;
  COCONET_RETURN_IF_ERROR(
      elementBytes(what, countPerRank, dtype, g.size, &size));
  if (stride < countPerRank)
    return invalid(what, "blocks of " + std::to_string(countPerRank) +
                             " elements cannot be " + std::to_string(stride) +
                             " apart");
  COCONET_RETURN_IF_ERROR(elementBytes(what, stride, dtype, g.size, &size));
  if (g.size == 1)
    return alone(in, out, countPerRank * size);
  // Piece [at, at + n) of every block, sent and received in place.
  const int64_t block = stride * size;
  const int64_t piece = pieceElements(size, g.size);
  for (int64_t at = 0; at < countPerRank; at += piece) {
    const int64_t n = std::min(piece, countPerRank - at);
    const auto *from = static_cast<const uint8_t *>(in) + at * size;
    auto *to = static_cast<uint8_t *>(out) + at * size;
    if (n == stride) {
      const int bytes = static_cast<int>(block);
      COCONET_MPI_CHECK(
          MPI_Alltoall(from, bytes, MPI_BYTE, to, bytes, MPI_BYTE, g.comm));
    } else {
      Strided part(n * size, block);
      if (!part.ok())
        return invalid(what, "cannot make an MPI datatype for a piece");
      COCONET_MPI_CHECK(
          MPI_Alltoall(from, 1, part.type(), to, 1, part.type(), g.comm));
    }
  }
  return Status::success();
}

Status Mesh::broadcast(const void *in, void *out, int64_t count, DType dtype,
                       int64_t root, int axis) {
  const char *what = "broadcast";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  COCONET_RETURN_IF_ERROR(checkRoot(what, root, g));
  int64_t size = 0;
  COCONET_RETURN_IF_ERROR(elementBytes(what, count, dtype, g.size, &size));
  if (g.position == root && in != out && count > 0)
    std::memmove(out, in, static_cast<size_t>(count * size));
  const int64_t piece = pieceElements(size, 1);
  for (int64_t at = 0; at < count; at += piece) {
    const int64_t n = std::min(piece, count - at);
    COCONET_MPI_CHECK(MPI_Bcast(static_cast<uint8_t *>(out) + at * size,
                                static_cast<int>(n * size), MPI_BYTE,
                                static_cast<int>(root), g.comm));
  }
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
  int64_t size = 0;
  COCONET_RETURN_IF_ERROR(elementBytes(what, count, dtype, g.size, &size));
  if (g.size == 1)
    return alone(in, out, count * size);
  const bool isRoot = g.position == root;
  const int64_t piece = pieceElements(size, g.size);
  for (int64_t at = 0; at < count; at += piece) {
    const int64_t n = std::min(piece, count - at);
    const int bytes = static_cast<int>(n * size);
    uint8_t *blocks =
        scratch(0, isRoot ? static_cast<size_t>(n * size * g.size) : 0);
    COCONET_MPI_CHECK(MPI_Gather(static_cast<const uint8_t *>(in) + at * size,
                                 bytes, MPI_BYTE, blocks, bytes, MPI_BYTE,
                                 static_cast<int>(root), g.comm));
    if (isRoot)
      combineBlocks(blocks, g.size, static_cast<uint8_t *>(out) + at * size, n,
                    dtype, op);
  }
  if (!isRoot && count > 0)
    std::memset(out, 0, static_cast<size_t>(count * size));
  return Status::success();
}

Status Mesh::sendRecv(const void *in, void *out, int64_t count, DType dtype,
                      int64_t offset, int axis) {
  const char *what = "sendRecv";
  Group g;
  COCONET_RETURN_IF_ERROR(groupOf(*this, what, axis, &g));
  g.comm = axisComm(axis);
  int64_t size = 0;
  COCONET_RETURN_IF_ERROR(elementBytes(what, count, dtype, g.size, &size));
  // Member c sends to c + offset and receives from c - offset.
  int to = MPI_PROC_NULL, from = MPI_PROC_NULL;
  if (offset > -g.size && offset < g.size) {
    if (g.position + offset >= 0 && g.position + offset < g.size)
      to = static_cast<int>(g.position + offset);
    if (g.position - offset >= 0 && g.position - offset < g.size)
      from = static_cast<int>(g.position - offset);
  }
  const int64_t piece = pieceElements(size, 1);
  for (int64_t at = 0; at < count; at += piece) {
    const int bytes = static_cast<int>(std::min(piece, count - at) * size);
    COCONET_MPI_CHECK(
        MPI_Sendrecv(static_cast<const uint8_t *>(in) + at * size, bytes,
                     MPI_BYTE, to, 0, static_cast<uint8_t *>(out) + at * size,
                     bytes, MPI_BYTE, from, 0, g.comm, MPI_STATUS_IGNORE));
  }
  if (from == MPI_PROC_NULL && count > 0)
    std::memset(out, 0, static_cast<size_t>(count * size));
  return Status::success();
}

} // namespace coconet::rt::cpu
