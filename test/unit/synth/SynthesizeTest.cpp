//===- SynthesizeTest.cpp - routing MILP, schedule and algorithm files ----===//
//
// Synthesis on topologies small enough to work out by hand: the makespan
// the MILP finds is the one a person finds (so a misread cost shows), the
// algorithm passes the verifier, symmetric sketches give symmetric
// routes, the reduce-scatter is the gather run backwards, and an
// algorithm file reads back as it was written.
//
//===----------------------------------------------------------------------===//

#include "synth/Synthesize.h"

#include "SynthTestUtil.h"
#include "synth/AlgorithmFile.h"

#include "diag/Diagnostic.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace coconet;
using namespace coconet::synth;
using namespace coconet::synth::test;

TEST_CASE("an AllGather on a complete graph is one step of direct sends",
          "[synth]") {
  Topology t = complete(4, 5);
  Synthesis s = synthesizeChecked(Collective::AllGather, t, Sketch());
  REQUIRE(s.routings.size() == 1);
  CHECK(s.routings[0].optimal);
  CHECK(s.routings[0].makespan == Approx(5));
  CHECK(s.time == Approx(5));
  REQUIRE(s.algorithm.steps.size() == 1);
  CHECK(s.algorithm.steps[0].transfers.size() == 12);
}

TEST_CASE("the MILP's makespan is the one worked out by hand, costs and all",
          "[synth]") {
  // A ring of 4: each chunk goes one way to each neighbour and on to the
  // opposite rank: 2 hops. Links from even ranks cost 3, from odd 7; a
  // chunk of an even rank reaches the opposite rank in 3 + 7 = 10 either
  // way, and every link carries two chunks (its own rank's and a relayed
  // one): at least 3 + 3 or 7 + 7 = 14.
  Topology t = ring(4, 3, 7);
  Synthesis s = synthesizeChecked(Collective::AllGather, t, Sketch());
  CHECK(s.routings[0].optimal);
  CHECK(s.routings[0].makespan == Approx(14));
  // The list schedule cannot beat the bound; here it meets it.
  CHECK(s.time == Approx(14));
  // Costs read the other way round give the same bound, so a swap of two
  // links' costs cannot hide: make one link dearer and the makespan moves.
  t.links[0].cost = 20; // 0 -> 1
  Synthesis dear = synthesizeChecked(Collective::AllGather, t, Sketch());
  CHECK(dear.routings[0].makespan > 14);
}

TEST_CASE("a symmetric sketch gives every rank the routes of its image",
          "[synth]") {
  Topology t = ring(6, 4, 4);
  Sketch sk;
  sk.symmetryOffsets.push_back({1, 6});
  Synthesis s = synthesizeChecked(Collective::AllGather, t, sk);
  // Each step's transfers, rotated by one rank, are a step's transfers.
  std::set<std::tuple<unsigned, unsigned, unsigned, size_t>> all;
  for (size_t i = 0; i < s.algorithm.steps.size(); ++i)
    for (const Transfer &x : s.algorithm.steps[i].transfers)
      all.insert({x.chunk, x.src, x.dst, i});
  for (const auto &[c, src, dst, step] : all)
    CHECK(all.count({(c + 1) % 6, (src + 1) % 6, (dst + 1) % 6, step}));
}

TEST_CASE("a symmetry the topology does not have is refused", "[synth]") {
  Topology t = ring(4, 3, 3);
  t.links.erase(t.links.begin()); // 0 -> 1 gone
  Sketch sk;
  sk.symmetryOffsets.push_back({1, 4});
  llvm::Expected<Synthesis> s =
      synthesize(Collective::AllGather, t, sk, SynthOptions());
  REQUIRE_FALSE(bool(s));
  CHECK_THAT(llvm::toString(s.takeError()),
             Catch::Contains("which the topology does not have"));
}

TEST_CASE("AllToAll, ReduceScatter and AllReduce pass the verifier",
          "[synth]") {
  Topology t = ring(4, 2, 2);
  Sketch sk;
  sk.inputChunkup = 2;
  for (Collective c : {Collective::AllToAll, Collective::ReduceScatter,
                       Collective::AllReduce}) {
    Synthesis s = synthesizeChecked(c, t, sk);
    CHECK(s.algorithm.collective == c);
    CHECK(s.algorithm.chunksPerRank == 2);
  }
}

TEST_CASE("a ReduceScatter is the AllGather backwards, every copy a "
          "reduction",
          "[synth]") {
  Topology t = complete(3, 1);
  Synthesis ag = synthesizeChecked(Collective::AllGather, t, Sketch());
  Synthesis rs = synthesizeChecked(Collective::ReduceScatter, t, Sketch());
  size_t agTransfers = 0, rsTransfers = 0;
  for (const Step &s : ag.algorithm.steps)
    agTransfers += s.transfers.size();
  for (const Step &s : rs.algorithm.steps) {
    rsTransfers += s.transfers.size();
    for (const Transfer &x : s.transfers)
      CHECK(x.reduce);
  }
  CHECK(agTransfers == rsTransfers);
  // Two reductions into one copy never share a step.
  for (const Step &s : rs.algorithm.steps) {
    std::set<std::pair<unsigned, unsigned>> into;
    for (const Transfer &x : s.transfers)
      CHECK(into.insert({x.dst, x.chunk}).second);
  }
}

TEST_CASE("a rank no allowed path reaches is named", "[synth]") {
  Topology t = complete(3, 1);
  // Nothing into rank 2.
  llvm::erase_if(t.links, [](const Link &l) { return l.dst == 2; });
  llvm::Expected<Synthesis> s =
      synthesize(Collective::AllGather, t, Sketch(), SynthOptions());
  REQUIRE_FALSE(bool(s));
  CHECK_THAT(llvm::toString(s.takeError()),
             Catch::Contains("rank 2 cannot receive chunk 0 of rank 0"));
}

TEST_CASE("an algorithm file reads back as it was written", "[synth]") {
  Topology t = ring(4, 2, 3);
  Synthesis s = synthesizeChecked(Collective::AllReduce, t, Sketch());
  std::string text;
  llvm::raw_string_ostream os(text);
  writeAlgorithm(s.algorithm, t.name, s.time, os);
  llvm::SourceMgr sm;
  std::string errors;
  llvm::raw_string_ostream es(errors);
  DiagnosticEngine diags(sm, es);
  std::optional<Algorithm> back = parseAlgorithmFile(
      llvm::MemoryBuffer::getMemBufferCopy(text, "alg.json"), sm, diags);
  INFO(errors);
  REQUIRE(back);
  CHECK(back->name == s.algorithm.name);
  CHECK(back->collective == Collective::AllReduce);
  REQUIRE(back->steps.size() == s.algorithm.steps.size());
  for (size_t i = 0; i < back->steps.size(); ++i) {
    CHECK(back->steps[i].rounds == s.algorithm.steps[i].rounds);
    REQUIRE(back->steps[i].transfers.size() ==
            s.algorithm.steps[i].transfers.size());
    for (size_t j = 0; j < back->steps[i].transfers.size(); ++j) {
      const Transfer &a = back->steps[i].transfers[j],
                     &b = s.algorithm.steps[i].transfers[j];
      CHECK(std::tie(a.chunk, a.src, a.dst, a.reduce) ==
            std::tie(b.chunk, b.src, b.dst, b.reduce));
    }
  }
  CHECK(algorithmTime(*back, t) == Approx(s.time));
}

TEST_CASE("the ring baseline runs on a cycle of the links, or is refused",
          "[synth]") {
  // A ring of 5, each link 2 a chunk: 4 steps of one chunk a link.
  Topology t = ring(5, 2, 2);
  for (Collective c : {Collective::AllGather, Collective::ReduceScatter,
                       Collective::AllReduce}) {
    std::optional<Algorithm> r = ringAlgorithm(c, t, 1);
    REQUIRE(r);
    CHECK_FALSE(verifyAlgorithm(*r, t).has_value());
  }
  std::optional<Algorithm> ag = ringAlgorithm(Collective::AllGather, t, 1);
  CHECK(ag->steps.size() == 4);
  CHECK(algorithmTime(*ag, t) == Approx(8));
  // A star (rank 0 to and from each other) has no cycle through every rank.
  Topology star;
  star.gpusPerNode = 4;
  for (unsigned r = 1; r < 4; ++r) {
    star.links.push_back({0, r, 0, 1, 1, false});
    star.links.push_back({r, 0, 0, 1, 1, false});
  }
  CHECK_FALSE(ringAlgorithm(Collective::AllGather, star, 1));
  CHECK_FALSE(ringAlgorithm(Collective::AllToAll, t, 1));
}

TEST_CASE("the tree baseline chains a node and runs two trees between nodes",
          "[synth]") {
  // One node, a ring of 4 (1 a chunk): the chain 0-1-2-3. Four chunks go
  // up it one behind another (the last at rank 0 at 6) and back down (at
  // rank 3 at 9).
  Topology one = ring(4);
  std::optional<Algorithm> chain = treeAllReduce(one, 1);
  REQUIRE(chain);
  CHECK_FALSE(verifyAlgorithm(*chain, one).has_value());
  CHECK(algorithmTime(*chain, one) == Approx(9));

  // N nodes of 2 GPUs, GPU 0 of each linked both ways to GPU 0 of every
  // other: each tree reduces into its root, which sends nothing up; tree
  // 1's root is another node than tree 0's.
  for (unsigned N = 1; N <= 5; ++N) {
    Topology t;
    t.name = "nodes";
    t.gpusPerNode = 2;
    t.nodes = N;
    for (unsigned n = 0; n < N; ++n) {
      t.links.push_back({2 * n, 2 * n + 1, 0, 1, 1, false});
      t.links.push_back({2 * n + 1, 2 * n, 0, 1, 1, false});
      for (unsigned m = 0; m < N; ++m)
        if (m != n)
          t.links.push_back({2 * n, 2 * m, 0, 3, 3, true});
    }
    llvm::sort(t.links, [](const Link &a, const Link &b) {
      return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
    });
    INFO("nodes: " << N);
    std::optional<Algorithm> tree = treeAllReduce(t, 1);
    REQUIRE(tree);
    CHECK_FALSE(verifyAlgorithm(*tree, t).has_value());
    auto rootOf = [&](unsigned chunk) {
      std::set<unsigned> senders;
      for (const Step &s : tree->steps)
        for (const Transfer &x : s.transfers)
          if (x.chunk == chunk && x.reduce)
            senders.insert(x.src);
      std::vector<unsigned> roots;
      for (unsigned r = 0; r < t.ranks(); ++r)
        if (!senders.count(r))
          roots.push_back(r);
      REQUIRE(roots.size() == 1);
      return roots[0];
    };
    unsigned first = rootOf(0), second = rootOf(2 * N - 1);
    CHECK(first == 0);
    if (N > 1)
      CHECK(second != first);
  }
  // Without links between the nodes' GPU 0 there is no tree.
  Topology apart = ring(4);
  apart.gpusPerNode = 2;
  apart.nodes = 2;
  CHECK_FALSE(treeAllReduce(apart, 1));
}
