//===- Schedule.cpp - routes into steps; reduce-scatters; the whole synthesis
//-===//
//
// Ordering (TACCL's stage 2): a list schedule of the routes' hops. A hop
// can start once its chunk has arrived at its source; each link and each
// switch port it passes is busy for the link's cost. Of the hops that can
// go, the one that can start first goes first; ties go to the hop with the
// longest way still ahead of its chunk, then to the MILP's arrival order.
// With the sketch's enforce_ordering, a hop that relays a chunk over a link
// between nodes waits until its source's own chunks have all gone over
// that link (TACCL imposes the same order in its routing MILP).
//
// Steps (stage 3): the hops in the order they start, cut wherever a hop
// sends a chunk its source receives in the step being built; a step's
// rounds are the most chunks one link or port carries in it.
//
// (TACCL's stage 3 is a second MILP that may also send chunks over a
// link together; the list schedule is its heuristic without that MILP:
// docs/synth.md, "Limits".)
//
//===----------------------------------------------------------------------===//

#include "synth/Synthesize.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <tuple>

namespace coconet::synth {

namespace {

/// The switch ports each link passes.
std::vector<std::vector<unsigned>> portsOfLinks(const Topology &t) {
  std::vector<std::vector<unsigned>> ports(t.links.size());
  for (unsigned li = 0; li < t.links.size(); ++li)
    for (unsigned s = 0; s < t.switches.size(); ++s)
      if (llvm::is_contained(t.switches[s].srcs, t.links[li].src) &&
          llvm::is_contained(t.switches[s].dsts, t.links[li].dst))
        ports[li].push_back(s);
  return ports;
}

} // namespace

unsigned stepRounds(const Step &step, const Topology &t) {
  std::map<std::pair<unsigned, unsigned>, unsigned> perLink;
  for (const Transfer &x : step.transfers)
    ++perLink[{x.src, x.dst}];
  unsigned rounds = 1;
  for (const auto &[link, n] : perLink)
    rounds = std::max(rounds, n);
  for (const Switch &sw : t.switches) {
    unsigned n = 0;
    for (const auto &[link, count] : perLink)
      if (llvm::is_contained(sw.srcs, link.first) &&
          llvm::is_contained(sw.dsts, link.second))
        n += count;
    rounds = std::max(rounds, n);
  }
  return rounds;
}

Algorithm scheduleRoutes(Collective collective, const Topology &topology,
                         unsigned chunkup, const std::vector<Route> &routes,
                         bool ownFirst, double &makespan) {
  const unsigned R = topology.ranks();
  Algorithm alg;
  alg.collective = collective;
  alg.ranks = R;
  alg.chunksPerRank = chunkup;

  struct Hop {
    unsigned chunk, link;
    int parent = -1;
    double order = 0; // the MILP's arrival at the source
    double ahead =
        0; // the longest way from here to a leaf, this hop's cost included
    double ready = 0, start = 0, finish = 0;
    bool done = false;
  };
  std::vector<Hop> hopList;
  for (unsigned c = 0; c < routes.size(); ++c) {
    const Route &r = routes[c];
    size_t base = hopList.size();
    for (unsigned k = 0; k < r.links.size(); ++k) {
      Hop h;
      h.chunk = c;
      h.link = r.links[k];
      hopList.push_back(h);
    }
    for (size_t i = base; i < hopList.size(); ++i) {
      unsigned src = topology.links[hopList[i].link].src;
      for (size_t j = base; j < hopList.size(); ++j)
        if (topology.links[hopList[j].link].dst == src) {
          hopList[i].parent = int(j);
          hopList[i].order = r.arrival[j - base];
        }
    }
    // The way ahead, leaves first (a route has at most R hops).
    for (unsigned pass = 0; pass < r.links.size(); ++pass)
      for (size_t i = base; i < hopList.size(); ++i) {
        double below = 0;
        unsigned dst = topology.links[hopList[i].link].dst;
        for (size_t j = base; j < hopList.size(); ++j)
          if (topology.links[hopList[j].link].src == dst)
            below = std::max(below, hopList[j].ahead);
        hopList[i].ahead = topology.links[hopList[i].link].cost + below;
      }
  }

  std::vector<std::vector<unsigned>> ports = portsOfLinks(topology);
  std::vector<double> linkFree(topology.links.size(), 0),
      portFree(topology.switches.size(), 0);
  std::vector<char> ready(hopList.size(), 0);
  for (size_t i = 0; i < hopList.size(); ++i)
    ready[i] = hopList[i].parent < 0;
  // enforce_ordering: per link between nodes, its source's own chunks not
  // yet placed on it.
  auto own = [&](const Hop &h) {
    unsigned first = collective == Collective::AllToAll
                         ? h.chunk / (R * chunkup)
                         : h.chunk / chunkup;
    return first == topology.links[h.link].src;
  };
  std::vector<unsigned> ownPending(topology.links.size(), 0);
  if (ownFirst)
    for (const Hop &h : hopList)
      if (topology.links[h.link].remote && own(h))
        ++ownPending[h.link];
  makespan = 0;
  for (size_t placed = 0; placed < hopList.size(); ++placed) {
    int best = -1;
    double bestStart = 0;
    for (size_t i = 0; i < hopList.size(); ++i) {
      if (!ready[i] || hopList[i].done)
        continue;
      const Hop &h = hopList[i];
      if (ownPending[h.link] > 0 && !own(h))
        continue; // relayed: after the source's own chunks
      double s = std::max(h.ready, linkFree[h.link]);
      for (unsigned p : ports[h.link])
        s = std::max(s, portFree[p]);
      if (best < 0) {
        best = int(i), bestStart = s;
        continue;
      }
      const Hop &b = hopList[best];
      if (std::make_tuple(s, -h.ahead, h.order, h.chunk, h.link) <
          std::make_tuple(bestStart, -b.ahead, b.order, b.chunk, b.link))
        best = int(i), bestStart = s;
    }
    Hop &h = hopList[best];
    h.done = true;
    if (ownPending[h.link] > 0 && own(h))
      --ownPending[h.link];
    h.start = bestStart;
    h.finish = bestStart + topology.links[h.link].cost;
    makespan = std::max(makespan, h.finish);
    linkFree[h.link] = h.finish;
    for (unsigned p : ports[h.link])
      portFree[p] = h.finish;
    for (size_t j = 0; j < hopList.size(); ++j)
      if (hopList[j].parent == best) {
        ready[j] = 1;
        hopList[j].ready = h.finish;
      }
  }

  // Steps.
  std::vector<unsigned> byStart(hopList.size());
  for (unsigned i = 0; i < byStart.size(); ++i)
    byStart[i] = i;
  llvm::stable_sort(byStart, [&](unsigned x, unsigned y) {
    const Hop &a = hopList[x], &b = hopList[y];
    return std::tie(a.start, a.finish, a.chunk, a.link) <
           std::tie(b.start, b.finish, b.chunk, b.link);
  });
  llvm::DenseSet<std::pair<unsigned, unsigned>> arrivesInStep;
  Step step;
  for (unsigned i : byStart) {
    const Hop &h = hopList[i];
    const Link &l = topology.links[h.link];
    if (arrivesInStep.count({h.chunk, l.src})) {
      step.rounds = stepRounds(step, topology);
      alg.steps.push_back(std::move(step));
      step = Step();
      arrivesInStep.clear();
    }
    step.transfers.push_back({h.chunk, l.src, l.dst, false});
    arrivesInStep.insert({h.chunk, l.dst});
  }
  if (!step.transfers.empty()) {
    step.rounds = stepRounds(step, topology);
    alg.steps.push_back(std::move(step));
  }
  return alg;
}

double algorithmTime(const Algorithm &alg, const Topology &topology) {
  std::vector<std::vector<unsigned>> ports = portsOfLinks(topology);
  llvm::DenseMap<std::pair<unsigned, unsigned>, unsigned> linkAt;
  for (unsigned i = 0; i < topology.links.size(); ++i)
    linkAt[{topology.links[i].src, topology.links[i].dst}] = i;
  std::vector<double> linkFree(topology.links.size(), 0),
      portFree(topology.switches.size(), 0);
  // When each rank's copy of each chunk is complete.
  llvm::DenseMap<std::pair<unsigned, unsigned>, double> ready;
  double end = 0;
  for (const Step &step : alg.steps)
    for (const Transfer &t : step.transfers) {
      auto it = linkAt.find({t.src, t.dst});
      if (it == linkAt.end())
        continue; // the verifier refuses it
      unsigned li = it->second;
      double start = std::max(ready.lookup({t.chunk, t.src}), linkFree[li]);
      for (unsigned p : ports[li])
        start = std::max(start, portFree[p]);
      double finish = start + topology.links[li].cost;
      linkFree[li] = finish;
      for (unsigned p : ports[li])
        portFree[p] = finish;
      double &r = ready[{t.chunk, t.dst}];
      r = std::max(r, finish);
      end = std::max(end, finish);
    }
  return end;
}

Topology reverseTopology(const Topology &topology) {
  Topology t = topology;
  for (Link &l : t.links)
    std::swap(l.src, l.dst);
  llvm::sort(t.links, [](const Link &a, const Link &b) {
    return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
  });
  for (Switch &s : t.switches)
    std::swap(s.srcs, s.dsts);
  return t;
}

Algorithm reverseToReduceScatter(const Algorithm &allGather,
                                 const Topology &topology) {
  Algorithm rs = allGather;
  rs.collective = Collective::ReduceScatter;
  rs.steps.clear();
  for (auto it = allGather.steps.rbegin(); it != allGather.steps.rend(); ++it) {
    // The k-th reduction into one copy goes in the k-th step of these.
    std::map<std::pair<unsigned, unsigned>, unsigned> into;
    std::vector<Step> parts;
    for (const Transfer &t : it->transfers) {
      unsigned k = into[{t.src, t.chunk}]++;
      if (k >= parts.size())
        parts.resize(k + 1);
      parts[k].transfers.push_back({t.chunk, t.dst, t.src, true});
    }
    for (Step &s : parts) {
      s.rounds = stepRounds(s, topology);
      rs.steps.push_back(std::move(s));
    }
  }
  return rs;
}

llvm::Expected<Synthesis> synthesize(Collective collective,
                                     const Topology &topology,
                                     const Sketch &sketch,
                                     const SynthOptions &options) {
  auto t0 = std::chrono::steady_clock::now();
  Synthesis out;
  const unsigned k = sketch.inputChunkup;
  auto forward = [&](Collective c, const Topology &t, bool reversed,
                     double &makespan) -> llvm::Expected<Algorithm> {
    RoutingReport report;
    auto routes = routeChunks(c, t, sketch, k, reversed, options, report);
    if (!routes)
      return routes.takeError();
    out.routings.push_back(report);
    // The order is a gather's; a reduce-scatter runs it backwards.
    return scheduleRoutes(c, t, k, *routes, sketch.enforceOrdering && !reversed,
                          makespan);
  };

  switch (collective) {
  case Collective::AllGather:
  case Collective::AllToAll: {
    auto alg = forward(collective, topology, false, out.time);
    if (!alg)
      return alg.takeError();
    out.algorithm = std::move(*alg);
    break;
  }
  case Collective::ReduceScatter:
  case Collective::AllReduce: {
    // Where every link has its reverse at the same cost, the gather's
    // routes turned around (TACCL's combine); else a gather routed on the
    // reversed links.
    Topology back = reverseTopology(topology);
    bool mirrored = back.links.size() == topology.links.size();
    for (size_t i = 0; mirrored && i < back.links.size(); ++i)
      mirrored = back.links[i].src == topology.links[i].src &&
                 back.links[i].dst == topology.links[i].dst &&
                 back.links[i].cost == topology.links[i].cost;
    double rsTime = 0;
    auto gather = mirrored
                      ? forward(Collective::AllGather, topology, false, rsTime)
                      : forward(Collective::AllGather, back, true, rsTime);
    if (!gather)
      return gather.takeError();
    out.algorithm = reverseToReduceScatter(*gather, topology);
    out.time = rsTime;
    if (collective == Collective::ReduceScatter)
      break;
    double agTime = rsTime;
    Algorithm ag;
    if (mirrored) {
      ag = std::move(*gather);
    } else {
      auto g = forward(Collective::AllGather, topology, false, agTime);
      if (!g)
        return g.takeError();
      ag = std::move(*g);
    }
    out.algorithm.collective = Collective::AllReduce;
    for (Step &s : ag.steps)
      out.algorithm.steps.push_back(std::move(s));
    out.time = rsTime + agTime;
    break;
  }
  }
  out.algorithm.name = collectiveName(collective).str() + "-" + topology.name;
  out.time = algorithmTime(out.algorithm, topology);
  if (std::optional<std::string> why = verifyAlgorithm(out.algorithm, topology))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "internal error: the synthesised algorithm fails its check: " + *why);
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return out;
}

} // namespace coconet::synth
