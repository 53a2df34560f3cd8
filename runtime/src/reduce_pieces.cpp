//===- reduce_pieces.cpp - what one reduction step reduces ----------------===//

#include "coconet/reduce_pieces.h"

#include "coconet/reduce_order.h"

#include <algorithm>
#include <climits>
#include <new>
#include <string>

namespace coconet::rt {

namespace {

/// The most pieces (one result each) a step may have: the tables and
/// outputs of any tensor that fits in memory.
constexpr int64_t kMaxPieces = int64_t{1} << 40;

Status refuse(const char *what, const std::string &why) {
  return Status::error(StatusCode::InvalidArgument,
                       std::string(what) + ": " + why);
}

/// Room for `pieces` pieces, refused (not thrown) when memory has none.
Status allocate(ReductionPieces *p, int64_t pieces, const char *what,
                const char *noun) {
  try {
    p->begin.resize(static_cast<size_t>(pieces));
    p->length.resize(static_cast<size_t>(pieces));
    p->firstBlock.resize(static_cast<size_t>(pieces) + 1);
  } catch (const std::bad_alloc &) {
    return refuse(what, "no memory for " + std::to_string(pieces) + " " + noun +
                            "' reductions");
  }
  return Status::success();
}

/// The pieces' first blocks, once begin and length are set.
void countBlocks(ReductionPieces *p) {
  p->firstBlock[0] = 0;
  for (size_t s = 0; s < p->begin.size(); ++s)
    p->firstBlock[s + 1] =
        p->firstBlock[s] + reduce_order::blockCount(p->length[s]);
}

} // namespace

Status ReductionPieces::ofSegments(const int64_t *ends, int64_t segments,
                                   int64_t count, int64_t offset,
                                   const char *what, ReductionPieces *out) {
  if (count < 0 || offset < 0 || offset > INT64_MAX - count)
    return refuse(what, "a block of " + std::to_string(count) +
                            " elements at " + std::to_string(offset) +
                            " cannot be reduced");
  if (ends == nullptr ? segments != 1 : segments < 1 || segments > kMaxPieces)
    return refuse(what, std::to_string(segments) + " segments");
  ReductionPieces p;
  COCONET_RETURN_IF_ERROR(allocate(&p, segments, what, "segments"));
  int64_t previous = 0;
  for (int64_t s = 0; s < segments; ++s) {
    const int64_t first = ends == nullptr ? offset : previous;
    const int64_t last = ends == nullptr ? offset + count : ends[s];
    if (last < first)
      return refuse(what, "segment " + std::to_string(s) + " ends at " +
                              std::to_string(last) + ", before it starts");
    previous = last;
    const int64_t lo = std::max(first, offset) - offset,
                  hi = std::min(last, offset + count) - offset;
    p.begin[s] = lo;
    p.length[s] = hi > lo ? hi - lo : 0;
  }
  countBlocks(&p);
  *out = std::move(p);
  return Status::success();
}

Status ReductionPieces::along(int64_t outer, int64_t reduced, int64_t inner,
                              const char *what, ReductionPieces *out) {
  if (outer < 1 || reduced < 0 || inner < 1 || outer > kMaxPieces / inner ||
      (reduced > 0 && outer * inner > INT64_MAX / reduced))
    return refuse(what, "a block of [" + std::to_string(outer) + ", " +
                            std::to_string(reduced) + ", " +
                            std::to_string(inner) + "] cannot be reduced");
  ReductionPieces p;
  p.stride = inner;
  const int64_t outputs = outer * inner;
  COCONET_RETURN_IF_ERROR(allocate(&p, outputs, what, "outputs"));
  std::fill(p.length.begin(), p.length.end(), reduced);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      p.begin[o * inner + i] = o * reduced * inner + i;
  countBlocks(&p);
  *out = std::move(p);
  return Status::success();
}

} // namespace coconet::rt
