//===- alltoallv.cpp - the CPU target's dropless all-to-all ---------------===//
//
// Mesh::allToAllV (cpu/runtime.h): every member's record (its counts, its
// inRows and outRows) goes to every member (MPI_Allgather), every member
// computes the whole table of rows (../alltoallv_plan.h), and the rows
// move as whole rows (MPI_Alltoallv over a contiguous datatype of one
// row: MPI's counts and displacements are ints, of rows here); a member's
// rows for itself are copied locally. The receiver then zeroes the rows
// of `out` that nothing landed in. Mesh::allToAllVPart moves one part of
// every block (an overlap's: the segments of some of each receiver's
// groups), the gaps and the counts with part 0.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"

#include "../alltoallv_plan.h"
#include "../mpi_error.h"

#include <climits>
#include <cstring>
#include <string>
#include <vector>

namespace coconet::rt::cpu {

namespace {

Status invalid(const char *what, const std::string &why) {
  return Status::error(StatusCode::InvalidArgument,
                       std::string(what) + ": " + why);
}

/// One row of `bytes` bytes as an MPI datatype, committed; freed when it
/// goes out of scope.
class RowType {
public:
  explicit RowType(int bytes) {
    rc_ = MPI_Type_contiguous(bytes, MPI_BYTE, &type_);
    if (rc_ == MPI_SUCCESS)
      rc_ = MPI_Type_commit(&type_);
  }
  ~RowType() {
    if (type_ != MPI_DATATYPE_NULL)
      MPI_Type_free(&type_);
  }
  RowType(const RowType &) = delete;
  RowType &operator=(const RowType &) = delete;
  int rc() const { return rc_; }
  MPI_Datatype type() const { return type_; }

private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int rc_ = MPI_SUCCESS;
};

} // namespace

Status Mesh::allToAllV(const void *in, int64_t inRows, const int32_t *counts,
                       int64_t groups, void *out, int64_t outRows,
                       int32_t *outCounts, int64_t rowElems, DType dtype,
                       int axis) {
  return allToAllVPart(in, inRows, counts, groups, out, outRows, outCounts,
                       rowElems, dtype, axis, 0, 1);
}

Status Mesh::allToAllVPart(const void *in, int64_t inRows,
                           const int32_t *counts, int64_t groups, void *out,
                           int64_t outRows, int32_t *outCounts,
                           int64_t rowElems, DType dtype, int axis,
                           int64_t part, int64_t parts) {
  const char *what = parts == 1 ? "allToAllV" : "allToAllVPart";
  if (axis < -1 || axis >= static_cast<int>(numAxes()))
    return invalid(what, "axis " + std::to_string(axis) +
                             " is not an axis of the " +
                             std::to_string(numAxes()) + "-axis mesh");
  const unsigned a = static_cast<unsigned>(axis);
  const int64_t members = axis < 0 ? size() : axisSize(a);
  const int64_t me = axis < 0 ? rank() : coord(a);
  int64_t rowBytes = 0;
  COCONET_RETURN_IF_ERROR(
      detail::checkAllToAllV(what, in, inRows, counts, groups, out, outRows,
                             outCounts, rowElems, dtype, members, &rowBytes));
  COCONET_RETURN_IF_ERROR(
      detail::checkAllToAllVPart(what, groups, members, part, parts));
  if (members > 1 && rowBytes > INT_MAX)
    return invalid(what, "a row of " + std::to_string(rowBytes) +
                             " bytes is larger than an MPI message");

  // Every member's record, in member order.
  const int64_t stride = groups + detail::kAllToAllVExtraWords;
  std::vector<int32_t> records(static_cast<size_t>(stride * (members + 1)));
  int32_t *mine = records.data() + stride * members;
  std::memcpy(mine, counts, static_cast<size_t>(groups) * sizeof(int32_t));
  detail::writeAllToAllVExtra(inRows, outRows, mine + groups);
  if (members == 1) {
    std::memcpy(records.data(), mine,
                static_cast<size_t>(stride) * sizeof(int32_t));
  } else {
    COCONET_MPI_CHECK(MPI_Allgather(mine, static_cast<int>(stride), MPI_INT32_T,
                                    records.data(), static_cast<int>(stride),
                                    MPI_INT32_T, axisComm(axis)));
  }
  detail::AllToAllVPlan plan;
  plan.compute(records.data(), members, groups);
  // This part of block p -> q: its first row in the block, and its rows.
  auto partOf = [&](int64_t p, int64_t q, int64_t *offset, int64_t *length) {
    plan.partOf(records.data(), p, q, part, parts, offset, length);
  };

  const auto *from = static_cast<const uint8_t *>(in);
  auto *to = static_cast<uint8_t *>(out);
  if (rowBytes > 0) {
    // MPI's counts and displacements (in rows) are ints. Every member
    // checks the whole table, so all refuse alike.
    if (members > 1)
      for (int64_t p = 0; p < members; ++p)
        for (int64_t q = 0; q < members; ++q) {
          const size_t i = plan.at(p, q);
          if (plan.rows[i] > 0 &&
              (plan.rows[i] > INT_MAX || plan.sendStart[i] > INT_MAX ||
               plan.recvStart[i] > INT_MAX))
            return invalid(what, "more than INT_MAX rows (MPI's limit) "
                                 "between members " +
                                     std::to_string(p) + " and " +
                                     std::to_string(q));
        }
    // This member's own rows, locally.
    const size_t self = plan.at(me, me);
    int64_t offset = 0, length = 0;
    partOf(me, me, &offset, &length);
    if (length > 0)
      std::memmove(to + (plan.recvStart[self] + offset) * rowBytes,
                   from + (plan.sendStart[self] + offset) * rowBytes,
                   static_cast<size_t>(length * rowBytes));
    if (members > 1) {
      const size_t n = static_cast<size_t>(members);
      std::vector<int> sendCounts(n, 0), sendOffsets(n, 0), recvCounts(n, 0),
          recvOffsets(n, 0);
      for (int64_t peer = 0; peer < members; ++peer) {
        if (peer == me)
          continue;
        const size_t s = plan.at(me, peer), r = plan.at(peer, me);
        const size_t j = static_cast<size_t>(peer);
        partOf(me, peer, &offset, &length);
        if (length > 0) {
          sendCounts[j] = static_cast<int>(length);
          sendOffsets[j] = static_cast<int>(plan.sendStart[s] + offset);
        }
        partOf(peer, me, &offset, &length);
        if (length > 0) {
          recvCounts[j] = static_cast<int>(length);
          recvOffsets[j] = static_cast<int>(plan.recvStart[r] + offset);
        }
      }
      RowType row(static_cast<int>(rowBytes));
      COCONET_MPI_CHECK(row.rc());
      COCONET_MPI_CHECK(MPI_Alltoallv(
          in, sendCounts.data(), sendOffsets.data(), row.type(), out,
          recvCounts.data(), recvOffsets.data(), row.type(), axisComm(axis)));
    }
    // What nothing landed in: the gaps (rows past a sender's inRows) and
    // the tail (once, with the first part).
    if (part == 0)
      plan.forEachGap(me, [&](int64_t begin, int64_t end) {
        std::memset(to + begin * rowBytes, 0,
                    static_cast<size_t>((end - begin) * rowBytes));
      });
  }
  if (outCounts && part == 0)
    plan.outCounts(records.data(), me, outCounts);
  return Status::success();
}

} // namespace coconet::rt::cpu
