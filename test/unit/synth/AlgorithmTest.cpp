//===- AlgorithmTest.cpp - the algorithm verifier -------------------------===//
//
// Rings on a ring of 4 ranks, written out by hand, verified; then each
// broken the way a synthesis or a hand edit could break it, and refused
// with its reason: a chunk missing, sent twice, a step out of order, a
// link over its capacity, a link the topology lacks, a reduction short of
// a contribution or counting one twice.
//
//===----------------------------------------------------------------------===//

#include "synth/Algorithm.h"

#include "SynthTestUtil.h"

#include <catch2/catch.hpp>

#include <string>

using namespace coconet::synth;
using coconet::synth::test::ringAllGather;

namespace {

/// Ranks 0 -> 1 -> 2 -> 3 -> 0, one way, and a switch port on rank 0's
/// sends.
Topology ring4() {
  Topology t;
  t.name = "ring4";
  t.gpusPerNode = 4;
  for (unsigned r = 0; r < 4; ++r)
    t.links.push_back({r, (r + 1) % 4, 0, 1, 1, false});
  return t;
}

/// Ring ReduceScatter: in step j rank r adds its copy of chunk
/// (r - j - 1) mod 4 into rank r + 1's; chunk c ends complete on rank c.
Algorithm ringReduceScatter() {
  Algorithm a;
  a.name = "ring";
  a.collective = Collective::ReduceScatter;
  a.ranks = 4;
  for (unsigned j = 0; j < 3; ++j) {
    Step s;
    for (unsigned r = 0; r < 4; ++r)
      s.transfers.push_back({(r + 8 - j - 1) % 4, r, (r + 1) % 4, true});
    a.steps.push_back(s);
  }
  return a;
}

/// AllReduce: the ReduceScatter, then the AllGather of the results.
Algorithm ringAllReduce() {
  Algorithm a = ringReduceScatter();
  a.collective = Collective::AllReduce;
  for (const Step &s : ringAllGather().steps)
    a.steps.push_back(s);
  return a;
}

std::string verdict(const Algorithm &a, const Topology &t) {
  std::optional<std::string> why = verifyAlgorithm(a, t);
  return why ? *why : "ok";
}

} // namespace

TEST_CASE("rings written by hand are verified", "[synth]") {
  CHECK(verdict(ringAllGather(), ring4()) == "ok");
  CHECK(verdict(ringReduceScatter(), ring4()) == "ok");
  CHECK(verdict(ringAllReduce(), ring4()) == "ok");
  // AllToAll on two ranks joined both ways: each sends its chunk for the
  // other, and keeps its own.
  Topology two;
  two.gpusPerNode = 2;
  two.links = {{0, 1, 0, 1, 1, false}, {1, 0, 0, 1, 1, false}};
  Algorithm a2a;
  a2a.collective = Collective::AllToAll;
  a2a.ranks = 2;
  a2a.steps.push_back({1, {{1, 0, 1, false}, {2, 1, 0, false}}});
  CHECK(verdict(a2a, two) == "ok");
  a2a.steps[0].transfers.pop_back();
  CHECK(verdict(a2a, two) == "rank 0 ends without chunk 2 (Alltoall)");
}

TEST_CASE("a broken algorithm is refused with its reason", "[synth]") {
  Topology t = ring4();

  Algorithm missing = ringAllGather();
  missing.steps[2].transfers.pop_back(); // rank 3 no longer passes chunk 1
  CHECK(verdict(missing, t) == "rank 0 ends without chunk 1 (Allgather)");

  Algorithm twice = ringAllGather();
  twice.steps.push_back({1, {{3, 3, 0, false}}});
  CHECK(verdict(twice, t) ==
        "step 3: chunk 3 from rank 3 to rank 0: rank 0 already has it");

  Algorithm swapped = ringAllGather();
  std::swap(swapped.steps[0], swapped.steps[1]);
  CHECK(verdict(swapped, t) ==
        "step 0: chunk 3 from rank 0 to rank 1: rank 0 does not have the "
        "chunk yet");

  Algorithm crowded = ringAllGather();
  // Rank 0 passes chunk 0 and, a step early, chunk 3 in step 0.
  crowded.steps[0].transfers.push_back({0, 0, 1, false});
  CHECK(verdict(crowded, t).find("a second transfer into rank 1's chunk 0") !=
        std::string::npos);
  Algorithm capacity;
  capacity.collective = Collective::AllGather;
  capacity.ranks = 4;
  capacity.chunksPerRank = 2; // rank 0 holds chunks 0 and 1
  capacity.steps.push_back({1, {{0, 0, 1, false}, {1, 0, 1, false}}});
  CHECK(verdict(capacity, t) ==
        "step 0: chunk 1 from rank 0 to rank 1: the link from rank 0 to rank "
        "1 carries 2 chunks in a step of 1 round");
  capacity.steps[0].rounds = 2;
  CHECK(verdict(capacity, t).find("ends without") != std::string::npos);
  // A switch port shared by rank 0's and rank 1's sends.
  Topology port = t;
  port.switches.push_back({"port", {0, 1}, {1, 2}, 1});
  Algorithm ag = ringAllGather();
  CHECK(verdict(ag, port) ==
        "step 0: switch port port carries 2 chunks in a step of 1 round");

  Algorithm nolink = ringAllGather();
  nolink.steps[0].transfers[0] = {0, 0, 2, false};
  CHECK(verdict(nolink, t) == "step 0: chunk 0 from rank 0 to rank 2: the "
                              "topology has no link from rank 0 to rank 2");

  Algorithm shortRs = ringReduceScatter();
  shortRs.steps[1].transfers.erase(shortRs.steps[1].transfers.begin());
  // Rank 0's step-1 addition of chunk 2 into rank 1 is gone: rank 1's
  // chunk 2 is passed on without rank 0's and rank 3's contributions.
  CHECK(verdict(shortRs, t) ==
        "rank 2's chunk 2 lacks the contributions of ranks {0, 3}");

  Algorithm doubled = ringReduceScatter();
  doubled.steps.push_back({1, {{0, 0, 1, true}}});
  CHECK(verdict(doubled, t) ==
        "step 3: chunk 0 from rank 0 to rank 1: the reduction counts the "
        "contribution of rank 1 twice");

  Algorithm gatherReduce = ringAllGather();
  gatherReduce.steps[0].transfers[0].reduce = true;
  CHECK(verdict(gatherReduce, t) == "step 0: chunk 0 from rank 0 to rank 1: "
                                    "a reduction in an Allgather");

  // A copy of a partial over another partial loses contributions.
  Algorithm lossy = ringReduceScatter();
  lossy.steps[0].transfers[0].reduce = false;
  CHECK(verdict(lossy, t) ==
        "step 0: chunk 3 from rank 0 to rank 1: the copy overwrites the "
        "contribution of rank 1, which the sender's copy does not hold");

  Algorithm wrongRanks = ringAllGather();
  wrongRanks.ranks = 8;
  CHECK(verdict(wrongRanks, t) ==
        "the algorithm is for 8 ranks; the topology has 4");
}
