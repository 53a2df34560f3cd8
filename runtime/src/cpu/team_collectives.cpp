//===- team_collectives.cpp - collectives on a team's window --------------===//
//
// Each collective runs in pieces of element positions that fit the window
// (one piece when it all fits), with a layout of the window fixed for the
// whole call (from the largest piece), in this member's part:
//
//   allReduce one-shot  [0, piece) the input
//   allReduce two-shot  [0, piece) the input, then the member's reduced
//                       block (at most ceil(piece / P) elements)
//   reduceScatter       P blocks of piece positions: block j of the input
//   allGather           [0, piece) the input block
//
// Between the barriers of a piece the combine is combineMembers (member
// order, OpenMP over tiles; combine.cpp) reading the peers' parts where
// they are, and copies are shared by OpenMP's threads in chunks. A member
// may overwrite its part only when no peer can still read it: a barrier
// after every read of the inputs, and, for two-shot, the next piece's first
// barrier (or the last one) after the reads of the reduced blocks.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/team_collectives.h"

#include "coconet/cpu/runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace coconet::rt::cpu {

namespace {

Status invalid(const char *what, const std::string &why) {
  return Status::error(StatusCode::InvalidArgument,
                       std::string(what) + ": " + why);
}

/// The bytes of one element of `dtype`, after checking that `members`
/// blocks of `count` of them have a size in bytes (collectives.cpp's check).
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

Status checkOp(const char *what, DType dtype, ReduceOp op) {
  if (op == ReduceOp::Avg && !isFloat(dtype))
    return invalid(what, std::string("avg needs a float type, not ") +
                             dtypeName(dtype));
  return Status::success();
}

Status checkAlgorithm(const char *what, TeamAlgorithm algorithm) {
  if (algorithm != TeamAlgorithm::OneShot &&
      algorithm != TeamAlgorithm::TwoShot)
    return invalid(what, "unknown algorithm " +
                             std::to_string(static_cast<int>(algorithm)));
  return Status::success();
}

/// Block j of `n` elements split among `p` members, as Mesh::allReduce
/// splits them: n / p elements, one more for the first n % p blocks.
struct Split {
  int64_t base, extra;
  Split(int64_t n, int64_t p) : base(n / p), extra(n % p) {}
  int64_t offset(int64_t j) const { return j * base + std::min(j, extra); }
  int64_t length(int64_t j) const { return base + (j < extra ? 1 : 0); }
};

/// What runs in pieces: an allreduce's algorithm, or another collective.
/// (An alltoall's piece holds every block's positions, as a
/// reducescatter's does.)
enum class Kind { OneShot, TwoShot, ReduceScatter, AllGather };

/// The window bytes a piece of `n` positions needs (the count's elements
/// for allReduce, positions of every block for the others); monotone in n.
/// Callers keep n * size * p within 64 bits.
int64_t pieceBytes(Kind kind, int64_t n, int64_t size, int64_t p) {
  switch (kind) {
  case Kind::OneShot:
  case Kind::AllGather:
    return n * size;
  case Kind::TwoShot:
    return (n + (n + p - 1) / p) * size;
  case Kind::ReduceScatter:
    return n * size * p;
  }
  return 0;
}

/// The most positions a piece may have (at most `total`): the largest n
/// whose bytes fit the window; an error when not even one fits.
Status pieceOf(const char *what, const Team &team, Kind kind, int64_t total,
               int64_t size, int64_t *out) {
  const int64_t window = static_cast<int64_t>(
      std::min<size_t>(team.bytes(), static_cast<size_t>(INT64_MAX / 4)));
  const int64_t p = team.size();
  // Every kind needs at least n * size bytes (reduceScatter p times that):
  // the search stays below that, where no byte count overflows.
  int64_t lo = 0,
          hi = std::min(total,
                        window / size / (kind == Kind::ReduceScatter ? p : 1));
  while (lo < hi) {
    const int64_t mid = hi - (hi - lo) / 2;
    if (pieceBytes(kind, mid, size, p) <= window)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == 0 && total > 0)
    return invalid(what, "the team's window of " + std::to_string(window) +
                             " bytes holds no element; it needs at least " +
                             std::to_string(pieceBytes(kind, 1, size, p)));
  *out = lo;
  return Status::success();
}

bool overlaps(const void *a, int64_t aBytes, const void *b, int64_t bBytes) {
  const auto x = reinterpret_cast<uintptr_t>(a);
  const auto y = reinterpret_cast<uintptr_t>(b);
  return aBytes > 0 && bBytes > 0 && x < y + static_cast<uintptr_t>(bBytes) &&
         y < x + static_cast<uintptr_t>(aBytes);
}

/// Whether [p, p + bytes) meets any member's part of the window.
bool inWindow(const Team &team, const void *p, int64_t bytes) {
  for (int m = 0; m < team.size(); ++m)
    if (overlaps(p, bytes, team.part(m), static_cast<int64_t>(team.bytes())))
      return true;
  return false;
}

/// Checks the buffers: `out` outside the window; `in` outside it, or
/// exactly this member's part when the collective runs in one piece (then
/// `*inPlace`: its copy is skipped).
Status checkBuffers(const char *what, const Team &team, const void *in,
                    int64_t inBytes, const void *out, int64_t outBytes,
                    bool onePiece, bool *inPlace) {
  if (in == nullptr || out == nullptr)
    return invalid(what, "a null buffer");
  if (inWindow(team, out, outBytes))
    return invalid(what, "the output lies in the team's window (peers read "
                         "the window while members write their outputs)");
  *inPlace = in == team.local();
  if (*inPlace && !onePiece)
    return invalid(what, "the input is this member's part of the window, but "
                         "the collective does not fit the window's " +
                             std::to_string(team.bytes()) +
                             " bytes in one piece");
  if (!*inPlace && inWindow(team, in, inBytes))
    return invalid(what, "the input lies in the team's window but not at the "
                         "start of this member's part");
  return Status::success();
}

/// One copy of a step: `bytes` from `from` to `to`.
struct Copy {
  uint8_t *to;
  const uint8_t *from;
  int64_t bytes;
};

/// Makes the copies, in chunks that OpenMP's threads share (several
/// threads move memory faster than one); on the calling thread alone when
/// they are no more than a chunk in all, which a parallel region's start
/// (and its threads' spinning after it) would only slow.
void copyAll(const std::vector<Copy> &copies) {
  constexpr int64_t kChunk = int64_t(1) << 17;
  int64_t total = 0;
  for (const Copy &c : copies)
    total += c.bytes;
  if (total <= kChunk) {
    for (const Copy &c : copies)
      if (c.bytes > 0)
        std::memcpy(c.to, c.from, static_cast<size_t>(c.bytes));
    return;
  }
  std::vector<int64_t> firstChunk(copies.size() + 1, 0);
  for (size_t i = 0; i < copies.size(); ++i)
    firstChunk[i + 1] =
        firstChunk[i] +
        (std::max<int64_t>(copies[i].bytes, 0) + kChunk - 1) / kChunk;
  const int64_t chunks = firstChunk.back();
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    // The copy whose chunks hold c.
    const size_t i = static_cast<size_t>(
        std::upper_bound(firstChunk.begin(), firstChunk.end(), c) -
        firstChunk.begin() - 1);
    const int64_t at = (c - firstChunk[i]) * kChunk;
    std::memcpy(copies[i].to + at, copies[i].from + at,
                static_cast<size_t>(std::min(kChunk, copies[i].bytes - at)));
  }
}

/// Positions [at, at + n) of each of the `p` blocks of `in` (`block` bytes
/// apart) into this member's part `mine`, block j's at j * piece elements:
/// a reducescatter's or an alltoall's piece copied in.
void blocksIntoPart(uint8_t *mine, const void *in, int64_t p, int64_t block,
                    int64_t piece, int64_t at, int64_t n, int64_t size,
                    std::vector<Copy> &copies) {
  copies.clear();
  for (int64_t j = 0; j < p; ++j)
    copies.push_back({mine + j * piece * size,
                      static_cast<const uint8_t *>(in) + j * block + at * size,
                      n * size});
  copyAll(copies);
}

/// A team of one member: its input, moved at most once (nothing when
/// `in == out`); collectives.cpp's alone().
Status alone(const void *in, void *out, int64_t bytes) {
  if (in == out || bytes <= 0)
    return Status::success();
  if (overlaps(in, bytes, out, bytes)) {
    std::memmove(out, in, static_cast<size_t>(bytes));
    return Status::success();
  }
  copyAll(
      {{static_cast<uint8_t *>(out), static_cast<const uint8_t *>(in), bytes}});
  return Status::success();
}

/// The bytes of `count` elements of `size` bytes times `members`, or
/// SIZE_MAX when that overflows.
size_t saturated(int64_t count, int64_t size, int64_t members, Kind kind) {
  if (count > INT64_MAX / 2 / size / members)
    return SIZE_MAX;
  return static_cast<size_t>(pieceBytes(kind, count, size, members));
}

/// What every collective here works out before its pieces: the element
/// size; then, with no elements, nothing to do, and for a member alone its
/// input moved to its output (`ready` false: the collective is done);
/// else the piece of `count` its part holds at a time and whether the
/// input already is that part. `inCount`, `outCount`: the buffers'
/// elements.
struct Pieces {
  int64_t size = 0, piece = 0;
  bool inPlace = false, ready = false;
};
Status startPieces(const char *what, const Team &team, Kind kind, int64_t count,
                   DType dtype, const void *in, int64_t inCount, void *out,
                   int64_t outCount, Pieces *pieces) {
  COCONET_RETURN_IF_ERROR(
      elementBytes(what, count, dtype, team.size(), &pieces->size));
  if (count == 0)
    return Status::success();
  if (team.size() == 1)
    return alone(in, out, count * pieces->size);
  COCONET_RETURN_IF_ERROR(
      pieceOf(what, team, kind, count, pieces->size, &pieces->piece));
  COCONET_RETURN_IF_ERROR(checkBuffers(
      what, team, in, inCount * pieces->size, out, outCount * pieces->size,
      pieces->piece == count, &pieces->inPlace));
  pieces->ready = true;
  return Status::success();
}

} // namespace

const char *teamAlgorithmName(TeamAlgorithm algorithm) {
  switch (algorithm) {
  case TeamAlgorithm::OneShot:
    return "one-shot";
  case TeamAlgorithm::TwoShot:
    return "two-shot";
  }
  return "unknown";
}

size_t teamAllReduceWindowBytes(TeamAlgorithm algorithm, int64_t count,
                                DType dtype, int64_t members) {
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (count < 0 || members < 1 || size == 0 ||
      (algorithm != TeamAlgorithm::OneShot &&
       algorithm != TeamAlgorithm::TwoShot))
    return 0;
  return saturated(count, size, members,
                   algorithm == TeamAlgorithm::OneShot ? Kind::OneShot
                                                       : Kind::TwoShot);
}

size_t teamReduceScatterWindowBytes(int64_t countPerRank, DType dtype,
                                    int64_t members) {
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (countPerRank < 0 || members < 1 || size == 0)
    return 0;
  return saturated(countPerRank, size, members, Kind::ReduceScatter);
}

size_t teamAllToAllWindowBytes(int64_t countPerRank, DType dtype,
                               int64_t members) {
  return teamReduceScatterWindowBytes(countPerRank, dtype, members);
}

size_t teamAllGatherWindowBytes(int64_t countPerRank, DType dtype) {
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (countPerRank < 0 || size == 0)
    return 0;
  return saturated(countPerRank, size, 1, Kind::AllGather);
}

Status teamAllReduce(Team &team, TeamAlgorithm algorithm, const void *in,
                     void *out, int64_t count, DType dtype, ReduceOp op) {
  const char *what = "teamAllReduce";
  const int64_t p = team.size();
  COCONET_RETURN_IF_ERROR(checkAlgorithm(what, algorithm));
  COCONET_RETURN_IF_ERROR(checkOp(what, dtype, op));
  const bool oneShot = algorithm == TeamAlgorithm::OneShot;
  Pieces pieces;
  COCONET_RETURN_IF_ERROR(
      startPieces(what, team, oneShot ? Kind::OneShot : Kind::TwoShot, count,
                  dtype, in, count, out, count, &pieces));
  if (!pieces.ready)
    return Status::success();
  const int64_t size = pieces.size, piece = pieces.piece;
  const bool inPlace = pieces.inPlace;

  const int me = team.rank();
  auto *mine = static_cast<uint8_t *>(team.local());
  std::vector<const void *> from(static_cast<size_t>(p));
  std::vector<Copy> copies;
  const int64_t reduced = piece * size; // the reduced block's offset
  for (int64_t at = 0; at < count; at += piece) {
    const int64_t n = std::min(piece, count - at);
    const auto *src = static_cast<const uint8_t *>(in) + at * size;
    auto *dst = static_cast<uint8_t *>(out) + at * size;
    if (!inPlace)
      copyAll({{mine, src, n * size}});
    team.barrier(); // every member's piece is in its part
    if (oneShot) {
      for (int m = 0; m < p; ++m)
        from[static_cast<size_t>(m)] = team.part(m);
      combineMembers(from.data(), p, dst, n, dtype, op);
      team.barrier(); // nobody reads the inputs any more
      continue;
    }
    // Two-shot: this member's block of every member's piece, reduced into
    // its part, then every member's reduced block copied out.
    const Split split(n, p);
    for (int m = 0; m < p; ++m)
      from[static_cast<size_t>(m)] =
          static_cast<const uint8_t *>(team.part(m)) + split.offset(me) * size;
    combineMembers(from.data(), p, mine + reduced, split.length(me), dtype, op);
    // Every reduced block is in place, and nobody reads the inputs any
    // more: the next piece's copy may overwrite them.
    team.barrier();
    copies.clear();
    for (int m = 0; m < p; ++m)
      copies.push_back({dst + split.offset(m) * size,
                        static_cast<const uint8_t *>(team.part(m)) + reduced,
                        split.length(m) * size});
    copyAll(copies);
    // (The next piece's first barrier comes before its combine overwrites
    // a reduced block: no barrier here but after the last piece.)
  }
  if (!oneShot)
    team.barrier(); // nobody reads the reduced blocks any more
  return Status::success();
}

Status teamReduceScatter(Team &team, const void *in, void *out,
                         int64_t countPerRank, DType dtype, ReduceOp op) {
  const char *what = "teamReduceScatter";
  const int64_t p = team.size();
  COCONET_RETURN_IF_ERROR(checkOp(what, dtype, op));
  Pieces pieces;
  COCONET_RETURN_IF_ERROR(startPieces(what, team, Kind::ReduceScatter,
                                      countPerRank, dtype, in, countPerRank * p,
                                      out, countPerRank, &pieces));
  if (!pieces.ready)
    return Status::success();
  const int64_t size = pieces.size, piece = pieces.piece;
  const int64_t block = countPerRank * size;
  const bool inPlace = pieces.inPlace;

  const int me = team.rank();
  auto *mine = static_cast<uint8_t *>(team.local());
  std::vector<const void *> from(static_cast<size_t>(p));
  std::vector<Copy> copies;
  // Positions [at, at + n) of every block j, at j * piece in the part (in
  // place: the input itself, one piece, piece == countPerRank).
  for (int64_t at = 0; at < countPerRank; at += piece) {
    const int64_t n = std::min(piece, countPerRank - at);
    if (!inPlace)
      blocksIntoPart(mine, in, p, block, piece, at, n, size, copies);
    team.barrier(); // every member's piece is in its part
    for (int m = 0; m < p; ++m)
      from[static_cast<size_t>(m)] =
          static_cast<const uint8_t *>(team.part(m)) + me * piece * size;
    combineMembers(from.data(), p, static_cast<uint8_t *>(out) + at * size, n,
                   dtype, op);
    team.barrier(); // nobody reads the inputs any more
  }
  return Status::success();
}

Status teamAllToAll(Team &team, const void *in, void *out, int64_t countPerRank,
                    DType dtype) {
  const char *what = "teamAllToAll";
  const int64_t p = team.size();
  Pieces pieces;
  COCONET_RETURN_IF_ERROR(startPieces(what, team, Kind::ReduceScatter,
                                      countPerRank, dtype, in, countPerRank * p,
                                      out, countPerRank * p, &pieces));
  if (!pieces.ready)
    return Status::success();
  const int64_t size = pieces.size, piece = pieces.piece;
  const int64_t block = countPerRank * size;
  const bool inPlace = pieces.inPlace;

  const int me = team.rank();
  auto *mine = static_cast<uint8_t *>(team.local());
  auto *to = static_cast<uint8_t *>(out);
  std::vector<Copy> copies;
  // Positions [at, at + n) of every block j, at j * piece in the part (in
  // place: the input itself, one piece, piece == countPerRank); member m's
  // block `me` goes to block m of the output.
  for (int64_t at = 0; at < countPerRank; at += piece) {
    const int64_t n = std::min(piece, countPerRank - at);
    if (!inPlace)
      blocksIntoPart(mine, in, p, block, piece, at, n, size, copies);
    team.barrier(); // every member's piece is in its part
    copies.clear();
    for (int m = 0; m < p; ++m)
      copies.push_back(
          {to + m * block + at * size,
           static_cast<const uint8_t *>(team.part(m)) + me * piece * size,
           n * size});
    copyAll(copies);
    team.barrier(); // nobody reads the inputs any more
  }
  return Status::success();
}

Status teamAllGather(Team &team, const void *in, void *out,
                     int64_t countPerRank, DType dtype) {
  const char *what = "teamAllGather";
  const int64_t p = team.size();
  Pieces pieces;
  COCONET_RETURN_IF_ERROR(startPieces(what, team, Kind::AllGather, countPerRank,
                                      dtype, in, countPerRank, out,
                                      countPerRank * p, &pieces));
  if (!pieces.ready)
    return Status::success();
  const int64_t size = pieces.size, piece = pieces.piece;
  const int64_t block = countPerRank * size;
  const bool inPlace = pieces.inPlace;

  const int me = team.rank();
  auto *mine = static_cast<uint8_t *>(team.local());
  auto *to = static_cast<uint8_t *>(out);
  // This member's own block goes from `in` straight to `out` (nothing when
  // it is there already), not through the window.
  const bool inOut = in == to + me * block;
  std::vector<Copy> copies;
  for (int64_t at = 0; at < countPerRank; at += piece) {
    const int64_t n = std::min(piece, countPerRank - at);
    const auto *src = static_cast<const uint8_t *>(in) + at * size;
    if (!inPlace)
      copyAll({{mine, src, n * size}});
    team.barrier(); // every member's piece is in its part
    copies.clear();
    for (int m = 0; m < p; ++m) {
      if (m == me && inOut)
        continue;
      copies.push_back(
          {to + m * block + at * size,
           m == me ? src : static_cast<const uint8_t *>(team.part(m)),
           n * size});
    }
    copyAll(copies);
    team.barrier(); // nobody reads the pieces any more
  }
  return Status::success();
}

} // namespace coconet::rt::cpu
