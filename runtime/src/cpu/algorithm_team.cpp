//===- algorithm_team.cpp - an algorithm table on a team's shared memory -===//
//
// cpu::runAlgorithmOnTeam (cpu/algorithm.h): the members of a team (one
// node, cpu/team.h) run a table through their shared window instead of
// MPI messages. Each member keeps its copy of every chunk it holds in its
// own part of the window; a step is
//
//   1. every member copies, for each transfer it is the destination of,
//      the source's copy of the chunk (in the source's part) into its own
//      private staging: every read sees the state before the step;
//   2. a barrier;
//   3. every member lands its arrivals in the step's order: a copy over
//      its own copy, or a reduction combining its own value (first) with
//      the arrival (coconet/combine.h, two members, rounded at once);
//   4. a barrier.
//
// A transfer whose source copy no transfer of the step writes, into a copy
// no transfer of the step reads, lands at once in step 1 (a copy straight
// from the source's part, a reduction combining the source's part into
// this member's): nothing else touches either copy in the step. A step
// whose transfers all land at once needs no second barrier.
//
// The same reads, the same combines in the same order as runAlgorithm over
// MPI: the same bits. Chunks larger than the window allows run in pieces:
// a table acts on each element of a chunk alone, so the same sub-range of
// every chunk is a run of its own.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/algorithm.h"
#include "coconet/cpu/team.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace coconet::rt::cpu {

using algorithm::Collective;
using algorithm::Table;
using algorithm::Transfer;

int64_t algorithmTeamPieceElements(const Table &t, const Team &team,
                                   int64_t chunkElements, DType dtype) {
  const uint64_t perElement = algorithm::numChunks(t) * dtypeSize(dtype);
  if (perElement == 0)
    return 0;
  return std::min<int64_t>(chunkElements,
                           static_cast<int64_t>(team.bytes() / perElement));
}

size_t algorithmTeamStagingBytes(const Table &t, int rank,
                                 int64_t pieceElements, DType dtype) {
  size_t most = 0;
  for (uint32_t s = 0; s < t.numSteps; ++s) {
    size_t n = 0;
    for (uint32_t x = t.stepBegin[s]; x < t.stepBegin[s + 1]; ++x)
      n += t.transfers[x].dst == static_cast<uint32_t>(rank);
    most = std::max(most, n);
  }
  return most * static_cast<size_t>(pieceElements) * dtypeSize(dtype);
}

void algorithmTeamDirect(const Table &t, uint32_t step,
                         std::vector<uint8_t> &direct,
                         std::vector<std::pair<uint32_t, uint32_t>> &scratch) {
  const Transfer *first = t.transfers + t.stepBegin[step];
  const Transfer *last = t.transfers + t.stepBegin[step + 1];
  const size_t n = static_cast<size_t>(last - first);
  // scratch[0, n): the copies the step writes; [n, 2n): those it reads.
  scratch.clear();
  for (const Transfer *x = first; x != last; ++x)
    scratch.push_back({x->dst, x->chunk});
  for (const Transfer *x = first; x != last; ++x)
    scratch.push_back({x->src, x->chunk});
  std::sort(scratch.begin(), scratch.begin() + n);
  std::sort(scratch.begin() + n, scratch.end());
  direct.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Transfer &x = first[i];
    direct[i] = !std::binary_search(scratch.begin(), scratch.begin() + n,
                                    std::make_pair(x.src, x.chunk)) &&
                !std::binary_search(scratch.begin() + n, scratch.end(),
                                    std::make_pair(x.dst, x.chunk));
  }
}

Status runAlgorithmOnTeam(const Table &t, Team &team, const void *in, void *out,
                          int64_t chunkElements, DType dtype, ReduceOp op,
                          void *staging) {
  COCONET_RETURN_IF_ERROR(
      algorithm::check(t, team.size(), "runAlgorithmOnTeam"));
  COCONET_RETURN_IF_ERROR(
      algorithm::checkRun(t, chunkElements, dtype, op, "runAlgorithmOnTeam"));
  if (chunkElements == 0)
    return Status::success();
  const int64_t piece =
      algorithmTeamPieceElements(t, team, chunkElements, dtype);
  if (piece <= 0)
    return Status::error(StatusCode::InvalidArgument,
                         "runAlgorithmOnTeam: the team's window has not room "
                         "for one element of every chunk");
  const uint32_t me = static_cast<uint32_t>(team.rank());
  const uint64_t R = t.ranks, k = t.chunksPerRank;
  const size_t element = dtypeSize(dtype);
  const size_t chunkBytes = static_cast<size_t>(chunkElements) * element;
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  char *arrived = static_cast<char *>(staging);
  // Working room kept between calls (a step's collective allocates only at
  // its first run).
  static thread_local std::vector<uint8_t> direct;
  static thread_local std::vector<std::pair<uint32_t, uint32_t>> pairs;

  for (int64_t at = 0; at < chunkElements; at += piece) {
    const int64_t n = std::min(piece, chunkElements - at);
    const size_t bytes = static_cast<size_t>(n) * element;
    const size_t offset = static_cast<size_t>(at) * element;
    // Member m's copy of chunk c: slot c of its part.
    auto slot = [&](int m, uint64_t c) {
      return static_cast<char *>(team.part(m)) + c * bytes;
    };
    // What this member holds first.
    switch (t.collective) {
    case Collective::AllGather:
      for (uint64_t i = 0; i < k; ++i)
        std::memcpy(slot(me, me * k + i), src + i * chunkBytes + offset, bytes);
      break;
    case Collective::ReduceScatter:
    case Collective::AllReduce:
      for (uint64_t c = 0; c < R * k; ++c)
        std::memcpy(slot(me, c), src + c * chunkBytes + offset, bytes);
      break;
    case Collective::AllToAll:
      for (uint64_t d = 0; d < R; ++d)
        for (uint64_t i = 0; i < k; ++i)
          std::memcpy(slot(me, (me * R + d) * k + i),
                      src + (d * k + i) * chunkBytes + offset, bytes);
      break;
    }
    team.barrier();
    for (uint32_t s = 0; s < t.numSteps; ++s) {
      const Transfer *first = t.transfers + t.stepBegin[s];
      const Transfer *last = t.transfers + t.stepBegin[s + 1];
      if (first == last)
        continue; // an empty step moves nothing
      // Which transfers land at once (every member works this out alike,
      // so all take the same barriers).
      algorithmTeamDirect(t, s, direct, pairs);
      bool staged = false;
      size_t j = 0;
      for (const Transfer *x = first; x != last; ++x) {
        const bool now = direct[static_cast<size_t>(x - first)] != 0;
        staged = staged || !now;
        if (x->dst != me)
          continue;
        const char *from = slot(static_cast<int>(x->src), x->chunk);
        char *mine = slot(me, x->chunk);
        if (now)
          landTransfer(x->reduce, mine, from, n, dtype, op);
        else
          std::memcpy(arrived + (j++) * bytes, from, bytes);
      }
      if (staged) {
        team.barrier();
        j = 0;
        for (const Transfer *x = first; x != last; ++x) {
          if (x->dst != me || direct[static_cast<size_t>(x - first)])
            continue;
          landTransfer(x->reduce, slot(me, x->chunk), arrived + (j++) * bytes,
                       n, dtype, op);
        }
      }
      team.barrier();
    }
    // What this member's output holds.
    switch (t.collective) {
    case Collective::AllGather:
    case Collective::AllReduce:
      for (uint64_t c = 0; c < R * k; ++c)
        std::memcpy(dst + c * chunkBytes + offset, slot(me, c), bytes);
      break;
    case Collective::ReduceScatter:
      for (uint64_t i = 0; i < k; ++i)
        std::memcpy(dst + i * chunkBytes + offset, slot(me, me * k + i), bytes);
      break;
    case Collective::AllToAll:
      for (uint64_t s = 0; s < R; ++s)
        for (uint64_t i = 0; i < k; ++i)
          std::memcpy(dst + (s * k + i) * chunkBytes + offset,
                      slot(me, (s * R + me) * k + i), bytes);
      break;
    }
  }
  return Status::success();
}

} // namespace coconet::rt::cpu
