//===- Baseline.cpp - the ring a synthesised algorithm is measured against
//-===//
//
// `coconetc synth --baseline=ring|tree` (docs/bench/synth.md): the
// algorithms NCCL runs, as data, timed with algorithmTime on the same
// costs as a synthesis.
//
// Ring: on a ring the topology has (a Hamiltonian cycle of its links,
// found by a depth-first search from rank 0 that tries peers in rank
// order). AllGather: in step j every rank passes on to the next the k
// chunks it received j steps ago; ReduceScatter: the same backwards,
// reducing; AllReduce: ReduceScatter then AllGather.
//
// Tree (AllReduce only, as NCCL): a chain through each node's GPUs and a
// double binary tree between the nodes' first GPUs; each tree reduces
// half the chunks up to its root and sends the sums back down, chunk after
// chunk.
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

/// Extends `path` to a Hamiltonian cycle of `adj` (R x R, [src][dst]), or
/// to a Hamiltonian path when `!cycle`, trying peers in rank order and
/// pruning where no cycle can close; false when `budget` steps run out
/// first.
bool extend(const std::vector<char> &adj, unsigned R,
            std::vector<unsigned> &path, std::vector<char> &used,
            unsigned &budget, bool cycle = true) {
  if (budget == 0)
    return false;
  --budget;
  if (path.size() == R)
    return !cycle || adj[size_t(path.back()) * R + path.front()];
  for (unsigned next = 0; next < R; ++next)
    if (!used[next] && adj[size_t(path.back()) * R + next]) {
      used[next] = 1;
      path.push_back(next);
      if ((path.size() == R || !cycle ||
           canClose(adj, R, next, path.front(), used)) &&
          extend(adj, R, path, used, budget, cycle))
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

/// The parent of node n in NCCL's binary tree over N nodes (node 0 the
/// root, with one child): n's lowest set bit b moves up one place, or is
/// cleared where that leaves the nodes; -1 for the root.
int btreeParent(unsigned n, unsigned N) {
  if (n == 0)
    return -1;
  unsigned b = n & (~n + 1);
  unsigned up = (n - b) | (b << 1);
  return int(up < N ? up : n - b);
}

/// The parent of node n in tree `which` (0 or 1) of the double binary
/// tree: tree 1 is tree 0 mirrored (N even) or shifted by one (N odd), so
/// that a leaf of one is inside the other.
int dtreeParent(unsigned which, unsigned n, unsigned N) {
  if (which == 0)
    return btreeParent(n, N);
  if (N % 2 == 0) {
    int p = btreeParent(N - 1 - n, N);
    return p < 0 ? -1 : int(N - 1 - unsigned(p));
  }
  int p = btreeParent((n + N - 1) % N, N);
  return p < 0 ? -1 : int((unsigned(p) + 1) % N);
}

} // namespace

std::optional<Algorithm> treeAllReduce(const Topology &topology,
                                       unsigned chunkup) {
  const unsigned G = topology.gpusPerNode, N = topology.nodes,
                 R = topology.ranks();
  if (R < 2 || chunkup == 0)
    return std::nullopt;
  // The chain: a path through node 0's GPUs from GPU 0, each step a link
  // present both ways (up for the sums, down for the results).
  std::vector<char> adj(size_t(G) * G, 0);
  for (const Link &l : topology.links)
    if (!l.remote && l.src < G && l.dst < G && topology.link(l.dst, l.src))
      adj[size_t(l.src) * G + l.dst] = 1;
  std::vector<unsigned> chain{0};
  std::vector<char> used(G, 0);
  used[0] = 1;
  unsigned budget = 1u << 16;
  if (G > 1 && !extend(adj, G, chain, used, budget, /*cycle=*/false))
    return std::nullopt;

  // Each tree's parent of every rank, and its root.
  struct Tree {
    std::vector<int> parent;
    unsigned root = 0;
  };
  Tree trees[2];
  for (unsigned w = 0; w < 2; ++w) {
    Tree &tr = trees[w];
    tr.parent.assign(R, -1);
    for (unsigned n = 0; n < N; ++n) {
      for (unsigned j = 1; j < G; ++j)
        tr.parent[n * G + chain[j]] = int(n * G + chain[j - 1]);
      int up = dtreeParent(w, n, N);
      unsigned head = n * G + chain[0];
      if (up < 0) {
        tr.root = head;
        continue;
      }
      unsigned upHead = unsigned(up) * G + chain[0];
      tr.parent[head] = int(upHead);
    }
    for (unsigned r = 0; r < R; ++r)
      if (tr.parent[r] >= 0 && (!topology.link(r, unsigned(tr.parent[r])) ||
                                !topology.link(unsigned(tr.parent[r]), r)))
        return std::nullopt;
  }

  // A rank's height (the longest way up to it from a leaf) and depth.
  struct Timed {
    unsigned slot, tree, phase;
    Transfer t;
  };
  std::vector<Timed> all;
  const unsigned C = R * chunkup;
  for (unsigned w = 0; w < 2; ++w) {
    const Tree &tr = trees[w];
    std::vector<unsigned> height(R, 0), depth(R, 0);
    // Parents are reached in at most R steps; R passes settle both.
    for (unsigned pass = 0; pass < R; ++pass)
      for (unsigned r = 0; r < R; ++r)
        if (tr.parent[r] >= 0) {
          unsigned p = unsigned(tr.parent[r]);
          height[p] = std::max(height[p], height[r] + 1);
          depth[r] = depth[p] + 1;
        }
    const unsigned H = height[tr.root];
    // Tree w reduces and broadcasts chunks [w C / 2, (w + 1) C / 2).
    for (unsigned c = w * C / 2, q = 0; c < (w + 1) * C / 2; ++c, ++q)
      for (unsigned r = 0; r < R; ++r) {
        if (tr.parent[r] < 0)
          continue;
        unsigned p = unsigned(tr.parent[r]);
        all.push_back({q + height[r], w, 0, {c, r, p, true}});
        all.push_back({q + H + depth[r], w, 1, {c, p, r, false}});
      }
  }
  llvm::stable_sort(all, [](const Timed &a, const Timed &b) {
    return std::tie(a.slot, a.tree, a.phase, a.t.chunk, a.t.src) <
           std::tie(b.slot, b.tree, b.phase, b.t.chunk, b.t.src);
  });

  // Steps: a new one wherever a transfer reads a copy the step writes, or
  // writes one it writes already.
  Algorithm alg;
  alg.collective = Collective::AllReduce;
  alg.ranks = R;
  alg.chunksPerRank = chunkup;
  alg.name = "tree-Allreduce-" + topology.name;
  Step step;
  llvm::DenseSet<std::pair<unsigned, unsigned>> written;
  for (const Timed &x : all) {
    const Transfer &t = x.t;
    if (written.count({t.chunk, t.src}) || written.count({t.chunk, t.dst})) {
      step.rounds = stepRounds(step, topology);
      alg.steps.push_back(std::move(step));
      step = Step();
      written.clear();
    }
    step.transfers.push_back(t);
    written.insert({t.chunk, t.dst});
  }
  if (!step.transfers.empty()) {
    step.rounds = stepRounds(step, topology);
    alg.steps.push_back(std::move(step));
  }
  return alg;
}

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
