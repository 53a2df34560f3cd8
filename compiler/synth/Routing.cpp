//===- Routing.cpp - which links each chunk travels: TACCL's routing MILP -===//
//
// For every chunk c and every link e it may use, a binary x[c,e] (c
// travels e) and for every rank v it may reach a time a[c,v] (c has
// arrived at v); T, the makespan, is minimised:
//
//   - a rank that must end with c receives it once: sum of x[c, e into v]
//     = 1; any other rank at most once;
//   - a rank forwards c only if it has it: x[c, u->v] <= sum x[c, e into u];
//   - a hop takes the link's cost: a[c,v] >= a[c,u] + cost(e) when
//     x[c,e] (big-M); every destination's a[c,t] <= T;
//   - a link carries one chunk at a time, and so does a switch port (an
//     NVSwitch port, a NIC): the costs of what it carries add up to at
//     most T; a rank sending c to several peers through one port sends
//     them one after another after c arrives;
//   - the sketch's symmetry: x and a equal at (c, e) and at their images;
//   - the sketch's secondary aim, weighted 0.01 against T as TACCL weighs
//     it: minmax/maxmin (the most or least any link carries; a switch's
//     uc-min/uc-max is a constant here, see secondaryAims).
//
// Each chunk may only use links on a fewest-hops path from its first
// rank to a rank that must receive it (TACCL's shortest-path sets, as
// links rather than ranks: no route is longer than it must be), and a
// link between nodes only from the chunk's own node and, where the sketch
// names a relay for the chunk's GPU, only from that relay.
//
//===----------------------------------------------------------------------===//

#include "synth/Json.h"
#include "synth/Milp.h"
#include "synth/Synthesize.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

namespace coconet::synth {

namespace {

constexpr unsigned kUnreached = std::numeric_limits<unsigned>::max();

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// Collective-specific chunk facts for AllGather and AllToAll.
struct Chunks {
  Collective collective;
  unsigned ranks, chunkup;

  unsigned count() const {
    return collective == Collective::AllToAll ? ranks * ranks * chunkup
                                              : ranks * chunkup;
  }
  unsigned first(unsigned c) const {
    return collective == Collective::AllToAll ? c / (ranks * chunkup)
                                              : c / chunkup;
  }
  /// The ranks that must end with chunk c (besides its first rank).
  std::vector<unsigned> destinations(unsigned c) const {
    std::vector<unsigned> out;
    if (collective == Collective::AllToAll) {
      unsigned d = (c / chunkup) % ranks;
      if (d != first(c))
        out.push_back(d);
      return out;
    }
    for (unsigned r = 0; r < ranks; ++r)
      if (r != first(c))
        out.push_back(r);
    return out;
  }
  /// The chunk that plays c's part when ranks are renamed by `perm`.
  unsigned image(unsigned c, const std::vector<unsigned> &perm) const {
    unsigned i = c % chunkup;
    if (collective == Collective::AllToAll) {
      unsigned s = c / (ranks * chunkup), d = (c / chunkup) % ranks;
      return (perm[s] * ranks + perm[d]) * chunkup + i;
    }
    return perm[c / chunkup] * chunkup + i;
  }
};

/// Breadth-first hop counts over the allowed links, from `start`
/// (forward) or to it (backward).
std::vector<unsigned> hops(const Topology &t,
                           const std::vector<unsigned> &allowed, unsigned start,
                           bool forward) {
  std::vector<unsigned> dist(t.ranks(), kUnreached);
  std::deque<unsigned> queue{start};
  dist[start] = 0;
  while (!queue.empty()) {
    unsigned r = queue.front();
    queue.pop_front();
    for (unsigned li : allowed) {
      const Link &l = t.links[li];
      unsigned from = forward ? l.src : l.dst, to = forward ? l.dst : l.src;
      if (from == r && dist[to] == kUnreached) {
        dist[to] = dist[r] + 1;
        queue.push_back(to);
      }
    }
  }
  return dist;
}

/// TACCL's weight of a sketch's secondary aim against the makespan (in
/// microseconds).
constexpr double kSecondaryWeight = 0.01;

/// The sketch's secondary aim, added to the objective T with TACCL's
/// weight: "minmax" (+) the most any link or switch port carries,
/// "maxmin" (-) the least any link or port a chunk may use carries. `load` and
/// `portLoad` hold what each link and port carries (negative costs). Returns
/// what CBC's bound on the objective is divided by to bound the least makespan.
double secondaryAims(Milp &milp, const Sketch &sketch,
                     const std::vector<std::vector<Milp::Term>> &load,
                     const std::vector<std::vector<Milp::Term>> &portLoad) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (sketch.intra) {
  case Sketch::Intra::None:
  case Sketch::Intra::Switch:
    // uc-min/uc-max would count the group's links in use, but every link
    // u -> v inside a node carries u's own chunk (AllGather) or the chunk
    // u sends v (AllToAll): v must receive it, and the direct link is its
    // only fewest-hops way. The count is a constant here (TACCL's routes
    // range over ranks, not links, and can go around).
    return 1;
  case Sketch::Intra::MinMax:
  case Sketch::Intra::MaxMin: {
    bool most = sketch.intra == Sketch::Intra::MinMax;
    // The most any link carries is at most T, so a routing of makespan T
    // has an objective of at most T (1 + w) with "minmax", at most T with
    // "maxmin": CBC's bound over (1 + w), or itself, bounds the least T.
    unsigned var =
        milp.addVar(0, inf, most ? kSecondaryWeight : -kSecondaryWeight, false);
    auto bind = [&](const std::vector<Milp::Term> &terms) {
      if (terms.empty())
        return;
      std::vector<Milp::Term> row = terms;
      row.push_back({var, 1});
      // most: var >= load; least: var <= load.
      if (most)
        milp.addRow(row, 0, inf);
      else
        milp.addRow(row, -inf, 0);
    };
    for (const auto &terms : load)
      bind(terms);
    for (const auto &terms : portLoad)
      bind(terms);
    return most ? 1 + kSecondaryWeight : 1;
  }
  }
  return 1;
}

} // namespace

llvm::Expected<std::vector<Route>>
routeChunks(Collective collective, const Topology &topology,
            const Sketch &sketch, unsigned chunkup, bool reversed,
            const SynthOptions &options, RoutingReport &report) {
  const unsigned R = topology.ranks(), G = topology.gpusPerNode;
  Chunks chunks{collective, R, chunkup};
  const unsigned C = chunks.count();
  llvm::DenseMap<std::pair<unsigned, unsigned>, unsigned> linkAt;
  double maxCost = 0;
  for (unsigned i = 0; i < topology.links.size(); ++i) {
    linkAt[{topology.links[i].src, topology.links[i].dst}] = i;
    maxCost = std::max(maxCost, topology.links[i].cost);
  }

  // The symmetry's generators, checked against the topology.
  std::vector<std::vector<unsigned>> perms;
  for (auto [offset, size] : sketch.symmetryOffsets) {
    if (size == 0 || R % size != 0 || offset >= size)
      return fail("the sketch's symmetry [" + llvm::Twine(offset) + ", " +
                  llvm::Twine(size) + "] does not rotate groups of the " +
                  llvm::Twine(R) + " ranks (the size must divide them and " +
                  "exceed the offset)");
    std::vector<unsigned> perm(R);
    for (unsigned r = 0; r < R; ++r)
      perm[r] = (r % size + offset) % size + (r / size) * size;
    for (const Link &l : topology.links)
      if (!linkAt.count({perm[l.src], perm[l.dst]}))
        return fail("the sketch's symmetry [" + llvm::Twine(offset) + ", " +
                    llvm::Twine(size) + "] maps the link " +
                    llvm::Twine(l.src) + " -> " + llvm::Twine(l.dst) + " to " +
                    llvm::Twine(perm[l.src]) + " -> " +
                    llvm::Twine(perm[l.dst]) +
                    ", which the topology does not have");
    perms.push_back(std::move(perm));
  }

  // Which relay a GPU's chunks leave their node through (none: any).
  std::map<unsigned, std::vector<unsigned>> relaysOf;
  for (const auto &[sender, gpus] : sketch.senderFor)
    for (unsigned g : gpus)
      relaysOf[g].push_back(sender);

  // Each chunk's candidate links: allowed, and on a fewest-hops path.
  std::vector<std::vector<unsigned>> cand(C);
  for (unsigned c = 0; c < C; ++c) {
    unsigned p = chunks.first(c);
    std::vector<unsigned> allowed;
    for (unsigned li = 0; li < topology.links.size(); ++li) {
      const Link &l = topology.links[li];
      if (l.remote) {
        if (l.src / G != p / G)
          continue; // a chunk crosses between nodes from its own node only
        auto relays = relaysOf.find(p % G);
        unsigned relay = (reversed ? l.dst : l.src) % G;
        if (relays != relaysOf.end() &&
            !llvm::is_contained(relays->second, relay))
          continue;
      }
      allowed.push_back(li);
    }
    std::vector<unsigned> from = hops(topology, allowed, p, true);
    std::vector<char> use(topology.links.size(), 0);
    for (unsigned t : chunks.destinations(c)) {
      if (from[t] == kUnreached)
        return fail("rank " + llvm::Twine(t) + " cannot receive chunk " +
                    llvm::Twine(c) + " of rank " + llvm::Twine(p) +
                    ": the sketch allows no path to it");
      std::vector<unsigned> to = hops(topology, allowed, t, false);
      for (unsigned li : allowed) {
        const Link &l = topology.links[li];
        if (from[l.src] != kUnreached && to[l.dst] != kUnreached &&
            from[l.src] + 1 + to[l.dst] == from[t])
          use[li] = 1;
      }
    }
    for (unsigned li = 0; li < use.size(); ++li)
      if (use[li])
        cand[c].push_back(li);
  }

  // The program.
  Milp milp;
  double bigM = maxCost;
  for (unsigned c = 0; c < C; ++c)
    bigM += maxCost * double(cand[c].size());
  const unsigned T = milp.addVar(0, bigM, 1, false);
  // x[c][k]: chunk c travels cand[c][k]; a[c][rank] (kUnreached: none).
  std::vector<std::vector<unsigned>> x(C);
  std::vector<llvm::DenseMap<unsigned, unsigned>> a(C);
  for (unsigned c = 0; c < C; ++c) {
    for (unsigned li : cand[c]) {
      x[c].push_back(milp.binary());
      unsigned v = topology.links[li].dst;
      if (!a[c].count(v))
        a[c][v] = milp.addVar(0, bigM, 0, false);
    }
  }
  auto xOf = [&](unsigned c, unsigned li) -> std::optional<unsigned> {
    auto it = llvm::find(cand[c], li);
    if (it == cand[c].end())
      return std::nullopt;
    return x[c][it - cand[c].begin()];
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (unsigned c = 0; c < C; ++c) {
    unsigned p = chunks.first(c);
    std::vector<unsigned> dests = chunks.destinations(c);
    std::map<unsigned, std::vector<Milp::Term>> into;
    for (unsigned k = 0; k < cand[c].size(); ++k)
      into[topology.links[cand[c][k]].dst].push_back({x[c][k], 1});
    for (auto &[v, terms] : into) {
      bool dest = llvm::is_contained(dests, v);
      milp.addRow(terms, dest ? 1 : 0, 1);
      if (dest)
        milp.addRow({{T, 1}, {a[c][v], -1}}, 0, inf);
    }
    for (unsigned k = 0; k < cand[c].size(); ++k) {
      const Link &l = topology.links[cand[c][k]];
      // Forward only what has arrived.
      if (l.src != p) {
        std::vector<Milp::Term> terms{{x[c][k], 1}};
        for (const Milp::Term &in : into[l.src])
          terms.push_back({in.first, -1});
        milp.addRow(terms, -inf, 0);
      }
      // a[v] >= a[u] + cost - M (1 - x).
      std::vector<Milp::Term> terms{{a[c][l.dst], 1}, {x[c][k], -bigM}};
      if (l.src != p)
        terms.push_back({a[c][l.src], -1});
      milp.addRow(terms, l.cost - bigM, inf);
    }
  }
  // Links and switch ports: what they carry, one chunk after another.
  std::vector<std::vector<Milp::Term>> load(topology.links.size());
  for (unsigned c = 0; c < C; ++c)
    for (unsigned k = 0; k < cand[c].size(); ++k)
      load[cand[c][k]].push_back({x[c][k], -topology.links[cand[c][k]].cost});
  for (const auto &terms : load)
    if (!terms.empty()) {
      std::vector<Milp::Term> row = terms;
      row.push_back({T, 1});
      milp.addRow(row, 0, inf);
    }
  // What each switch port carries (negative costs, as `load`).
  std::vector<std::vector<Milp::Term>> portLoad;
  for (const Switch &sw : topology.switches) {
    std::vector<Milp::Term> terms{{T, 1}};
    for (unsigned c = 0; c < C; ++c) {
      std::vector<Milp::Term> fromOne;
      for (unsigned k = 0; k < cand[c].size(); ++k) {
        const Link &l = topology.links[cand[c][k]];
        if (llvm::is_contained(sw.srcs, l.src) &&
            llvm::is_contained(sw.dsts, l.dst)) {
          terms.push_back({x[c][k], -l.cost});
          fromOne.push_back({x[c][k], -l.cost});
        }
      }
      // An out port sends chunk c to its peers one after another, after
      // c arrives.
      if (sw.srcs.size() == 1 && fromOne.size() > 1) {
        unsigned u = sw.srcs[0];
        fromOne.push_back({T, 1});
        if (u != chunks.first(c)) {
          if (!a[c].count(u))
            continue;
          fromOne.push_back({a[c][u], -1});
        }
        milp.addRow(fromOne, 0, inf);
      }
    }
    if (terms.size() > 1) {
      milp.addRow(terms, 0, inf);
      portLoad.push_back(
          std::vector<Milp::Term>(terms.begin() + 1, terms.end()));
    }
  }
  double boundScale = secondaryAims(milp, sketch, load, portLoad);
  // The symmetry.
  for (const std::vector<unsigned> &perm : perms)
    for (unsigned c = 0; c < C; ++c) {
      unsigned ci = chunks.image(c, perm);
      for (unsigned k = 0; k < cand[c].size(); ++k) {
        const Link &l = topology.links[cand[c][k]];
        std::optional<unsigned> other =
            xOf(ci, linkAt.lookup({perm[l.src], perm[l.dst]}));
        if (!other)
          milp.fix(x[c][k], 0);
        else if (*other != x[c][k])
          milp.addRow({{x[c][k], 1}, {*other, -1}}, 0, 0);
      }
      for (auto [v, var] : a[c]) {
        auto it = a[ci].find(perm[v]);
        if (it != a[ci].end() && it->second != var)
          milp.addRow({{var, 1}, {it->second, -1}}, 0, 0);
      }
    }

  report.vars = milp.vars();
  report.binaries = milp.integers();
  report.rows = milp.rows();
  if (options.progress)
    *options.progress << "coconetc synth: routing " << C
                      << " chunks: " << report.vars << " variables ("
                      << report.binaries << " binary), " << report.rows
                      << " constraints; time limit "
                      << numberText(options.seconds) << " s\n";
  Milp::Options mo;
  mo.seconds = options.seconds;
  mo.log = options.solverLog;
  Milp::Result res = milp.solve(mo);
  report.seconds = res.seconds;
  switch (res.status) {
  case Milp::Result::Infeasible:
    return fail("no routing satisfies the sketch (its links, relays and "
                "symmetry)");
  case Milp::Result::NoSolution:
    return fail("the routing MILP found no solution in its time limit of " +
                numberText(options.seconds) + " s (--time-limit)");
  case Milp::Result::Optimal:
  case Milp::Result::LimitReached:
    break;
  }
  report.optimal = res.status == Milp::Result::Optimal;
  report.makespan = res.values[T];
  report.bound = res.bound / boundScale;
  if (options.progress)
    *options.progress << "coconetc synth: routed in "
                      << llvm::format("%.2f", res.seconds) << " s: makespan "
                      << llvm::format("%.6g", report.makespan) << " us ("
                      << (report.optimal
                              ? std::string("optimal")
                              : "the best found in the time limit; bound " +
                                    std::to_string(report.bound) + " us")
                      << ")\n";

  std::vector<Route> routes(C);
  for (unsigned c = 0; c < C; ++c)
    for (unsigned k = 0; k < cand[c].size(); ++k)
      if (res.values[x[c][k]] > 0.5) {
        routes[c].links.push_back(cand[c][k]);
        routes[c].arrival.push_back(
            res.values[a[c][topology.links[cand[c][k]].dst]]);
      }
  return routes;
}

} // namespace coconet::synth
