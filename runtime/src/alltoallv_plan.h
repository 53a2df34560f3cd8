//===- alltoallv_plan.h - the rows of a dropless all-to-all -----*- C++ -*-===//
//
// Private to the runtime; header-only, shared by the CPU target's
// Mesh::allToAllV (cpu/alltoallv.cpp) and the CUDA target's AllToAllV
// (cuda/alltoallv.cpp), so that both move exactly the same rows.
//
// Every member of the axis contributes a record of int32 words: its
// `groups` counts, then its inRows and its outRows (each an int64 in two
// words, as memcpy lays it out). Once every member has every record (an
// allgather), every member computes the whole P x P table below from them
// with int64 arithmetic, so a sender and its receiver always agree on how
// many rows go between them (the rows that exist at the sender and fit at
// the receiver; the receiver zeroes the others).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_ALLTOALLV_PLAN_H
#define COCONET_RUNTIME_SRC_ALLTOALLV_PLAN_H

#include "coconet/status.h"
#include "coconet/types.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace coconet::rt::detail {

/// The words of one member's record after its counts: inRows, outRows.
constexpr int64_t kAllToAllVExtraWords = 4;

/// Checks what every member can check alone, before any message (so that
/// every member refuses a bad call alike when the arguments agree), and
/// gives the bytes of one row. `what` names the call.
inline Status checkAllToAllV(const char *what, const void *in, int64_t inRows,
                             const int32_t *counts, int64_t groups,
                             const void *out, int64_t outRows,
                             const int32_t * /*outCounts: may be null*/,
                             int64_t rowElems, DType dtype, int64_t members,
                             int64_t *rowBytes) {
  auto invalid = [what](const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         std::string(what) + ": " + why);
  };
  if (inRows < 0 || outRows < 0 || rowElems < 0)
    return invalid("negative inRows, outRows or rowElems (" +
                   std::to_string(inRows) + ", " + std::to_string(outRows) +
                   ", " + std::to_string(rowElems) + ")");
  if (groups <= 0)
    return invalid("groups must be positive, not " + std::to_string(groups));
  if (groups % members != 0)
    return invalid(std::to_string(groups) +
                   " groups do not divide among the axis's " +
                   std::to_string(members) + " members");
  if (groups > INT_MAX - kAllToAllVExtraWords)
    return invalid(std::to_string(groups) + " groups are too many");
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (size == 0)
    return invalid("unknown element type");
  if (rowElems > INT64_MAX / size)
    return invalid("a row of " + std::to_string(rowElems) + " elements of " +
                   dtypeName(dtype) + " overflows a 64-bit byte count");
  *rowBytes = rowElems * size;
  for (int64_t rows : {inRows, outRows})
    if (*rowBytes > 0 && rows > INT64_MAX / *rowBytes)
      return invalid(std::to_string(rows) + " rows of " +
                     std::to_string(*rowBytes) +
                     " bytes overflow a 64-bit byte count");
  if (counts == nullptr)
    return invalid("null counts");
  if ((in == nullptr && inRows * *rowBytes > 0) ||
      (out == nullptr && outRows * *rowBytes > 0))
    return invalid("a null buffer for a nonempty in or out");
  return Status::success();
}

/// Checks an overlap's part: 0 <= part < parts, and parts divides the
/// groups each member receives.
inline Status checkAllToAllVPart(const char *what, int64_t groups,
                                 int64_t members, int64_t part, int64_t parts) {
  if (parts < 1 || part < 0 || part >= parts)
    return Status::error(StatusCode::InvalidArgument,
                         std::string(what) + ": part " + std::to_string(part) +
                             " of " + std::to_string(parts));
  if (members < 1 || (groups / members) % parts != 0)
    return Status::error(
        StatusCode::InvalidArgument,
        std::string(what) + ": " + std::to_string(parts) +
            " parts do not divide the " +
            std::to_string(groups / std::max<int64_t>(members, 1)) +
            " groups each member receives");
  return Status::success();
}

/// Writes the words of this member's record after its counts: its inRows
/// and outRows (kAllToAllVExtraWords words at `extra`).
inline void writeAllToAllVExtra(int64_t inRows, int64_t outRows,
                                int32_t *extra) {
  std::memcpy(extra, &inRows, sizeof inRows);
  std::memcpy(extra + 2, &outRows, sizeof outRows);
}

/// The table of a dropless all-to-all among `members`, each with `groups`
/// counts (G = groups / members of them per receiver). Entry [p * P + q]
/// is about what sender p sends to receiver q.
struct AllToAllVPlan {
  int64_t members = 1, groups = 0, perMember = 0;
  /// The row of p's `in` where its block for q starts (S).
  std::vector<int64_t> sendStart;
  /// The row of q's `out` where p's block starts (D).
  std::vector<int64_t> recvStart;
  /// The rows moved from p to q: of the block's rows that fit q's outRows,
  /// those that p's `in` holds.
  std::vector<int64_t> rows;
  /// Every member's outRows.
  std::vector<int64_t> outRows;

  /// A count as the semantics read it: a negative count is 0.
  static int64_t count(int32_t c) { return c < 0 ? 0 : c; }

  /// From every member's record (`records`: members x (groups +
  /// kAllToAllVExtraWords) words, in member order).
  void compute(const int32_t *records, int64_t numMembers, int64_t numGroups) {
    members = numMembers;
    groups = numGroups;
    perMember = groups / members;
    const int64_t p2 = members * members,
                  stride = groups + kAllToAllVExtraWords;
    sendStart.assign(static_cast<size_t>(p2), 0);
    recvStart.assign(static_cast<size_t>(p2), 0);
    rows.assign(static_cast<size_t>(p2), 0);
    outRows.assign(static_cast<size_t>(members), 0);
    std::vector<int64_t> inRows(static_cast<size_t>(members), 0);
    // Lengths first (kept in `rows`), then sender starts.
    for (int64_t p = 0; p < members; ++p) {
      const int32_t *r = records + p * stride;
      std::memcpy(&inRows[static_cast<size_t>(p)], r + groups, sizeof(int64_t));
      std::memcpy(&outRows[static_cast<size_t>(p)], r + groups + 2,
                  sizeof(int64_t));
      int64_t start = 0;
      for (int64_t q = 0; q < members; ++q) {
        int64_t length = 0;
        for (int64_t g = 0; g < perMember; ++g)
          length += count(r[q * perMember + g]);
        sendStart[static_cast<size_t>(p * members + q)] = start;
        rows[static_cast<size_t>(p * members + q)] = length;
        start += length;
      }
    }
    for (int64_t q = 0; q < members; ++q) {
      int64_t at = 0;
      for (int64_t p = 0; p < members; ++p) {
        const size_t i = static_cast<size_t>(p * members + q);
        const int64_t length = rows[i];
        recvStart[i] = at;
        // Clipped at the receiver's outRows, then at the sender's inRows.
        int64_t n = std::min(length, outRows[static_cast<size_t>(q)] - at);
        n = std::min(n, inRows[static_cast<size_t>(p)] - sendStart[i]);
        rows[i] = std::max<int64_t>(n, 0);
        at += length;
      }
    }
  }

  size_t at(int64_t p, int64_t q) const {
    return static_cast<size_t>(p * members + q);
  }

  /// Part `part` of `parts` of the block p sends q (an overlap's part): of
  /// its G segments (q's groups), those g in [part G / parts, (part + 1) G /
  /// parts). Gives where its rows start in the block and how many of them
  /// move (the block's moved rows are its first rows[at(p, q)]); parts
  /// must divide G (checkAllToAllVPart).
  void partOf(const int32_t *records, int64_t p, int64_t q, int64_t part,
              int64_t parts, int64_t *offset, int64_t *length) const {
    const int32_t *r = records + p * (groups + kAllToAllVExtraWords);
    const int64_t per = perMember / parts, first = part * per;
    int64_t begin = 0;
    for (int64_t g = 0; g < first; ++g)
      begin += count(r[q * perMember + g]);
    int64_t end = begin;
    for (int64_t g = first; g < first + per; ++g)
      end += count(r[q * perMember + g]);
    const int64_t moved = rows[at(p, q)];
    *offset = begin;
    *length = std::max<int64_t>(std::min(end, moved) - begin, 0);
  }

  /// Receiver q's outCounts: entry p * G + g is p's count for q's group g.
  void outCounts(const int32_t *records, int64_t q, int32_t *out) const {
    const int64_t stride = groups + kAllToAllVExtraWords;
    for (int64_t p = 0; p < members; ++p)
      for (int64_t g = 0; g < perMember; ++g)
        out[p * perMember + g] = static_cast<int32_t>(
            count(records[p * stride + q * perMember + g]));
  }

  /// Receiver q's rows that nothing lands in: [begin, end) ranges in
  /// ascending order (the gaps between the blocks received, and the tail),
  /// handed to `zero`.
  template <typename Zero> void forEachGap(int64_t q, Zero &&zero) const {
    int64_t next = 0;
    for (int64_t p = 0; p < members; ++p) {
      const size_t i = at(p, q);
      if (rows[i] == 0)
        continue;
      if (recvStart[i] > next)
        zero(next, recvStart[i]);
      next = recvStart[i] + rows[i];
    }
    const int64_t end = outRows[static_cast<size_t>(q)];
    if (end > next)
      zero(next, end);
  }
};

} // namespace coconet::rt::detail

#endif // COCONET_RUNTIME_SRC_ALLTOALLV_PLAN_H
