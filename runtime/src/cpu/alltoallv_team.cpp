//===- alltoallv_team.cpp - the dropless all-to-all on shared memory ------===//
//
// Mesh::allToAllV with Algorithm::OneShot (a schedule's
// `algorithm(rows, oneshot)`): on the axis's team (cpu/team.h: the members
// on one node sharing a window), every member writes its record (counts,
// inRows, outRows) at the head of its part of the window; after a barrier
// each reads every member's record and computes the same table
// (../alltoallv_plan.h) as the library path; then the rows move in pieces
// as large as the rest of the window allows: every member copies its next
// rows into its part, and after a barrier each copies, from every
// member's part, the rows of that piece addressed to it, where the table
// puts them. The same rows in the same places as MPI_Alltoallv: the same
// bits. Where no team can be made, or the window cannot hold a record and
// a row, the library path runs instead.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"
#include "coconet/cpu/team.h"

#include "../alltoallv_plan.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace coconet::rt::cpu {

Status Mesh::allToAllV(const void *in, int64_t inRows, const int32_t *counts,
                       int64_t groups, void *out, int64_t outRows,
                       int32_t *outCounts, int64_t rowElems, DType dtype,
                       int axis, Algorithm algorithm) {
  auto library = [&] {
    return allToAllV(in, inRows, counts, groups, out, outRows, outCounts,
                     rowElems, dtype, axis);
  };
  if (algorithm == Algorithm::Library || axis < -1 ||
      axis >= static_cast<int>(numAxes()))
    return library();
  Team *t = nullptr;
  COCONET_RETURN_IF_ERROR(team(axis, &t));
  if (!t)
    return library();
  const int64_t members = t->size(), me = t->rank();
  int64_t rowBytes = 0;
  COCONET_RETURN_IF_ERROR(detail::checkAllToAllV(
      "allToAllV", in, inRows, counts, groups, out, outRows, outCounts,
      rowElems, dtype, members, &rowBytes));
  // The head of each part: a record, padded to a cache line.
  const int64_t stride = groups + detail::kAllToAllVExtraWords;
  const int64_t head =
      (stride * static_cast<int64_t>(sizeof(int32_t)) + 63) / 64 * 64;
  const int64_t window = static_cast<int64_t>(t->bytes());
  if (head + std::max<int64_t>(rowBytes, 1) > window)
    return library(); // the same decision on every member
  const int64_t piece =
      rowBytes > 0 ? (window - head) / rowBytes : int64_t{1} << 62;

  auto *mine = static_cast<uint8_t *>(t->local());
  auto *record = reinterpret_cast<int32_t *>(mine);
  std::memcpy(record, counts, static_cast<size_t>(groups) * sizeof(int32_t));
  detail::writeAllToAllVExtra(inRows, outRows, record + groups);
  t->barrier(); // every record is in its part
  std::vector<int32_t> records(static_cast<size_t>(stride * members));
  for (int64_t p = 0; p < members; ++p)
    std::memcpy(records.data() + p * stride, t->part(static_cast<int>(p)),
                static_cast<size_t>(stride) * sizeof(int32_t));
  detail::AllToAllVPlan plan;
  plan.compute(records.data(), members, groups);
  // The last row any member sends: as many pieces on every member.
  int64_t end = 0;
  for (int64_t p = 0; p < members; ++p)
    for (int64_t q = 0; q < members; ++q)
      end = std::max(end,
                     plan.sendStart[plan.at(p, q)] + plan.rows[plan.at(p, q)]);
  if (rowBytes == 0)
    end = 0;
  const auto *from = static_cast<const uint8_t *>(in);
  auto *to = static_cast<uint8_t *>(out);
  for (int64_t at = 0; at < end; at += piece) {
    const int64_t n = std::min(piece, inRows - at);
    if (n > 0)
      std::memcpy(mine + head, from + at * rowBytes,
                  static_cast<size_t>(n * rowBytes));
    t->barrier(); // every member's piece is in its part
    for (int64_t p = 0; p < members; ++p) {
      const size_t i = plan.at(p, me);
      const int64_t lo = std::max(at, plan.sendStart[i]);
      const int64_t hi = std::min(at + piece, plan.sendStart[i] + plan.rows[i]);
      if (lo >= hi)
        continue;
      const auto *part =
          static_cast<const uint8_t *>(t->part(static_cast<int>(p))) + head;
      std::memcpy(to + (plan.recvStart[i] + lo - plan.sendStart[i]) * rowBytes,
                  part + (lo - at) * rowBytes,
                  static_cast<size_t>((hi - lo) * rowBytes));
    }
    t->barrier(); // nobody reads this piece any more
  }
  if (end == 0)
    t->barrier(); // nobody reads the records any more
  if (rowBytes > 0)
    plan.forEachGap(me, [&](int64_t begin, int64_t stop) {
      std::memset(to + begin * rowBytes, 0,
                  static_cast<size_t>((stop - begin) * rowBytes));
    });
  if (outCounts)
    plan.outCounts(records.data(), me, outCounts);
  return Status::success();
}

} // namespace coconet::rt::cpu
