//===- SketchAimsTest.cpp - a sketch's aims besides the makespan ----------===//
//
// What a sketch asks of an algorithm besides its makespan
// (docs/synth.md, "The sketch file"): "minmax" and "maxmin" balance what
// the links carry (a term of the routing MILP's objective, weighted as
// TACCL weighs it), and enforce_ordering sends a relay's own chunks over
// a link between nodes before the ones it relays. Each case is one where
// the makespan alone leaves the algorithm free to do otherwise, and the
// test shows that it would.
//
//===----------------------------------------------------------------------===//

#include "synth/Synthesize.h"

#include "SynthTestUtil.h"

#include <catch2/catch.hpp>

#include <map>

using namespace coconet;
using namespace coconet::synth;
using namespace coconet::synth::test;

namespace {

/// The time each link is busy over the whole algorithm (its cost times
/// the chunks it carries), the most and the least over links used.
std::pair<double, double> linkLoads(const Algorithm &a, const Topology &t) {
  std::map<std::pair<unsigned, unsigned>, double> busy;
  for (const Step &s : a.steps)
    for (const Transfer &x : s.transfers)
      busy[{x.src, x.dst}] += t.link(x.src, x.dst)->cost;
  double most = 0, least = 1e300;
  for (const auto &[link, b] : busy) {
    most = std::max(most, b);
    least = std::min(least, b);
  }
  return {most, least};
}

/// Links between nodes on which a relayed chunk goes before one its
/// source started with.
unsigned relayedFirst(const Algorithm &a, const Topology &t) {
  std::map<std::pair<unsigned, unsigned>, bool> relayedSeen;
  std::map<std::pair<unsigned, unsigned>, bool> bad;
  const unsigned R = a.ranks, k = a.chunksPerRank;
  for (const Step &s : a.steps)
    for (const Transfer &x : s.transfers) {
      if (!t.link(x.src, x.dst)->remote)
        continue;
      unsigned first = a.collective == Collective::AllToAll ? x.chunk / (R * k)
                                                            : x.chunk / k;
      if (first != x.src)
        relayedSeen[{x.src, x.dst}] = true;
      else if (relayedSeen[{x.src, x.dst}])
        bad[{x.src, x.dst}] = true;
    }
  return unsigned(bad.size());
}

} // namespace

TEST_CASE(
    "maxmin evens out the links at the same makespan, and minmax keeps it",
    "[synth]") {
  // TACCL's NDv2 node (hybrid cube-mesh, links of two costs), one chunk a
  // GPU: the least makespan (92 us) leaves each two-hop chunk a choice of
  // relay, and the makespan alone does not care which.
  Read t = topology(NodeKind::NDv2, exampleText("topo/topo-ndv2-1MB.json"));
  REQUIRE(t.profile);
  Read s = sketch(8, exampleText("sketch/sk1-ndv2-n1.json"));
  REQUIRE(s.sketch);
  Topology topo = buildTopology(NodeKind::NDv2, *t.profile, *s.sketch);

  Sketch plain = *s.sketch;
  Synthesis none = synthesizeChecked(Collective::AllGather, topo, plain);
  Sketch most = plain;
  most.intra = Sketch::Intra::MinMax;
  Synthesis minmax = synthesizeChecked(Collective::AllGather, topo, most);
  Sketch least = plain;
  least.intra = Sketch::Intra::MaxMin;
  Synthesis maxmin = synthesizeChecked(Collective::AllGather, topo, least);

  // The makespan is not traded for the balance.
  REQUIRE(none.routings[0].optimal);
  CHECK(none.routings[0].makespan == Approx(92));
  CHECK(minmax.routings[0].makespan == Approx(92));
  CHECK(maxmin.routings[0].makespan == Approx(92));
  auto [noneMost, noneLeast] = linkLoads(none.algorithm, topo);
  auto [mmMost, mmLeast] = linkLoads(minmax.algorithm, topo);
  auto [xmMost, xmLeast] = linkLoads(maxmin.algorithm, topo);
  // With the makespan alone, CBC's routing leaves a link with one 23 us
  // chunk; maxmin gives every link at least 46 us of the work.
  CHECK(noneLeast == Approx(23));
  CHECK(xmLeast == Approx(46));
  // The most a link carries is the makespan here (the makespan is bound
  // by a link's load, not by a path), so minmax cannot lower it.
  CHECK(noneMost == Approx(92));
  CHECK(mmMost == Approx(92));
  CHECK(xmMost == Approx(92));
  CHECK(mmLeast <= xmLeast);
}

TEST_CASE("enforce_ordering sends a relay's own chunks before relayed ones",
          "[synth]") {
  // Two nodes of two GPUs: 0 <-> 1 and 2 <-> 3 (1 us), and between nodes
  // only 1 -> 2 and 3 -> 0 (4 us), so GPU 0's chunks for the other node
  // are relayed by GPU 1. On 1 -> 2 the chunk 0 sends to 3 has the longest
  // way ahead of it, so the list schedule would send it between 1's own.
  Topology t;
  t.name = "two-by-two";
  t.gpusPerNode = 2;
  t.nodes = 2;
  t.links = {{0, 1, 0, 1, 1, false}, {1, 0, 0, 1, 1, false},
             {1, 2, 0, 4, 4, true},  {2, 3, 0, 1, 1, false},
             {3, 0, 0, 4, 4, true},  {3, 2, 0, 1, 1, false}};
  Sketch sk;
  sk.nodes = 2;
  sk.senderFor[1] = {0, 1};

  Synthesis free = synthesizeChecked(Collective::AllToAll, t, sk);
  CHECK(relayedFirst(free.algorithm, t) > 0);
  sk.enforceOrdering = true;
  Synthesis ordered = synthesizeChecked(Collective::AllToAll, t, sk);
  CHECK(relayedFirst(ordered.algorithm, t) == 0);
  // The same chunks over the same links, in another order.
  CHECK(ordered.routings[0].makespan == Approx(free.routings[0].makespan));
}
