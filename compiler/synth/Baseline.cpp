//===- Baseline.cpp - the ring a synthesised algorithm is measured against
//-===//
//
// `coconetc synth --baseline=ring` (docs/bench/synth.md): the ring
// algorithm NCCL runs, as data, on a ring the topology has (a Hamiltonian
// cycle of its links, found by a depth-first search from rank 0 that tries
// peers in rank order). AllGather: in step j every rank passes on to the
// next the k chunks it received j steps ago; ReduceScatter: the same
// backwards, reducing; AllReduce: ReduceScatter then AllGather. Timed
// with algorithmTime on the same costs as a synthesis.
//
//===----------------------------------------------------------------------===//

#include "synth/Synthesize.h"

#include "llvm/ADT/DenseSet.h"

namespace coconet::synth {

namespace {

/// Whether, from `at`, every unused rank and then the path's start can
/// still be reached through unused ranks (else no cycle completes).
bool canClose(const std::vector<char> &adj, unsigned R, unsigned at,
              unsigned start, const std::vector<char> &used) {
  std::vector<char> seen(R, 0);
  std::vector<unsigned> stack{at};
  seen[at] = 1;
  bool backToStart = false;
  while (!stack.empty()) {
    unsigned u = stack.back();
    stack.pop_back();
    for (unsigned v = 0; v < R; ++v) {
      if (!adj[size_t(u) * R + v])
        continue;
      if (v == start)
        backToStart = true;
      if (!used[v] && !seen[v]) {
        seen[v] = 1;
        stack.push_back(v);
      }
    }
  }
  for (unsigned v = 0; v < R; ++v)
    if (!used[v] && !seen[v])
      return false;
  return backToStart;
}

/// Extends `path` to a Hamiltonian cycle of `adj` (R x R, [src][dst]),
/// trying peers in rank order and pruning where no cycle can close; false
/// when `budget` steps run out first.
bool extend(const std::vector<char> &adj, unsigned R,
            std::vector<unsigned> &path, std::vector<char> &used,
            unsigned &budget) {
  if (budget == 0)
    return false;
  --budget;
  if (path.size() == R)
    return adj[size_t(path.back()) * R + path.front()];
  for (unsigned next = 0; next < R; ++next)
    if (!used[next] && adj[size_t(path.back()) * R + next]) {
      used[next] = 1;
      path.push_back(next);
      if ((path.size() == R || canClose(adj, R, next, path.front(), used)) &&
          extend(adj, R, path, used, budget))
        return true;
      path.pop_back();
      used[next] = 0;
    }
  return false;
}

/// Ring AllGather on a Hamiltonian cycle of `topology`'s links, if it has
/// one the search finds.
std::optional<Algorithm> ringAllGather(const Topology &topology,
                                       unsigned chunkup) {
  const unsigned R = topology.ranks();
  std::vector<unsigned> ring{0};
  std::vector<char> used(R, 0);
  used[0] = 1;
  std::vector<char> adj(size_t(R) * R, 0);
  for (const Link &l : topology.links)
    adj[size_t(l.src) * R + l.dst] = 1;
  unsigned budget = 1u << 16; // search steps before giving up
  if (R < 2 || !extend(adj, R, ring, used, budget))
    return std::nullopt;
  Algorithm ag;
  ag.collective = Collective::AllGather;
  ag.ranks = R;
  ag.chunksPerRank = chunkup;
  for (unsigned j = 0; j + 1 < R; ++j) {
    Step s;
    s.rounds = chunkup;
    for (unsigned i = 0; i < R; ++i) {
      unsigned owner = ring[(i + R - j) % R];
      for (unsigned c = 0; c < chunkup; ++c)
        s.transfers.push_back(
            {owner * chunkup + c, ring[i], ring[(i + 1) % R], false});
    }
    ag.steps.push_back(std::move(s));
  }
  return ag;
}

} // namespace

std::optional<Algorithm> ringAlgorithm(Collective collective,
                                       const Topology &topology,
                                       unsigned chunkup) {
  if (collective == Collective::AllToAll)
    return std::nullopt;
  std::optional<Algorithm> out;
  if (collective == Collective::AllGather) {
    out = ringAllGather(topology, chunkup);
  } else {
    // The reduce-scatter: a gather on the reversed links, backwards.
    std::optional<Algorithm> back =
        ringAllGather(reverseTopology(topology), chunkup);
    if (!back)
      return std::nullopt;
    out = reverseToReduceScatter(*back, topology);
    if (collective == Collective::AllReduce) {
      std::optional<Algorithm> ag = ringAllGather(topology, chunkup);
      if (!ag)
        return std::nullopt;
      out->collective = Collective::AllReduce;
      for (Step &s : ag->steps)
        out->steps.push_back(std::move(s));
    }
  }
  if (out)
    out->name =
        "ring-" + collectiveName(collective).str() + "-" + topology.name;
  return out;
}

} // namespace coconet::synth
