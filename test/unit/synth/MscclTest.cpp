//===- MscclTest.cpp - MSCCL programs run on symbols ----------------------===//
//
// No MSCCL runtime runs here, so the exported programs are run by a small
// interpreter of their meaning (msccl.h's step types): every thread block
// steps in order; a step waits for the step it names (depid, deps); a
// send puts its slot's contents on the connection to its peer, a receive
// takes the oldest from its peer's (one order at both ends); a
// receive-reduce-copy adds them to its own slot, counting each rank's
// contribution once; a copy copies within a rank. Blocks are picked in a seeded
// random order, many times, so a missing dependency (a slot overwritten before
// it was sent, a chunk sent before it arrived) shows as a wrong result; a
// program that cannot finish is a deadlock. At the end every rank must hold
// what its collective promises.
//
//===----------------------------------------------------------------------===//

#include "synth/Msccl.h"
#include "synth/Synthesize.h"

#include "SynthTestUtil.h"

#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>

using namespace coconet::synth;
using namespace coconet::synth::test;

namespace {

struct Content {
  unsigned chunk = 0;
  std::set<unsigned> from;
  bool operator==(const Content &o) const {
    return chunk == o.chunk && from == o.from;
  }
};

using Slots = std::map<std::pair<char, int>, Content>;

/// Runs `gpus` once with blocks picked by `seed`; returns what went wrong
/// or "".
std::string interpret(const Algorithm &alg, const std::vector<MscclGpu> &gpus,
                      unsigned seed) {
  const unsigned R = alg.ranks, k = alg.chunksPerRank;
  std::vector<Slots> mem(R);
  for (unsigned r = 0; r < R; ++r)
    switch (alg.collective) {
    case Collective::AllGather:
      for (unsigned j = 0; j < k; ++j)
        mem[r][{'o', int(r * k + j)}] = {r * k + j, {r}};
      break;
    case Collective::AllReduce:
    case Collective::ReduceScatter:
      for (unsigned c = 0; c < R * k; ++c)
        mem[r][{'i', int(c)}] = {c, {r}};
      break;
    case Collective::AllToAll:
      for (unsigned d = 0; d < R; ++d)
        for (unsigned j = 0; j < k; ++j)
          mem[r][{'i', int(d * k + j)}] = {(r * R + d) * k + j, {r}};
      break;
    }
  std::map<std::pair<unsigned, unsigned>, std::deque<Content>> wire;
  std::vector<std::vector<size_t>> pc(R);
  for (unsigned r = 0; r < R; ++r)
    pc[r].assign(gpus[r].tbs.size(), 0);
  std::mt19937 rng(seed);
  for (;;) {
    std::vector<std::pair<unsigned, unsigned>> ready;
    bool left = false;
    for (unsigned r = 0; r < R; ++r)
      for (unsigned t = 0; t < gpus[r].tbs.size(); ++t) {
        const MscclThreadBlock &tb = gpus[r].tbs[t];
        if (pc[r][t] == tb.steps.size())
          continue;
        left = true;
        const MscclStep &st = tb.steps[pc[r][t]];
        if (st.depTb >= 0 && pc[r][st.depTb] <= size_t(st.depStep))
          continue;
        if ((st.type == MscclStep::Recv ||
             st.type == MscclStep::RecvReduceCopy) &&
            wire[{unsigned(tb.recv), r}].empty())
          continue;
        ready.push_back({r, t});
      }
    if (!left)
      break;
    if (ready.empty())
      return "deadlock: no thread block can take a step";
    auto [r, t] = ready[rng() % ready.size()];
    const MscclThreadBlock &tb = gpus[r].tbs[t];
    const MscclStep &st = tb.steps[pc[r][t]++];
    std::string where = "gpu " + std::to_string(r) + " tb " +
                        std::to_string(t) + " step " +
                        std::to_string(pc[r][t] - 1);
    switch (st.type) {
    case MscclStep::Nop:
      break;
    case MscclStep::Copy: {
      auto it = mem[r].find({st.srcBuf, st.srcOff});
      if (it == mem[r].end())
        return where + ": copies a slot it does not hold";
      mem[r][{st.dstBuf, st.dstOff}] = it->second;
      break;
    }
    case MscclStep::Send: {
      auto it = mem[r].find({st.srcBuf, st.srcOff});
      if (it == mem[r].end())
        return where + ": sends a slot it does not hold";
      wire[{r, unsigned(tb.send)}].push_back(it->second);
      break;
    }
    case MscclStep::Recv:
    case MscclStep::RecvReduceCopy: {
      auto &q = wire[{unsigned(tb.recv), r}];
      Content in = q.front();
      q.pop_front();
      if (st.type == MscclStep::RecvReduceCopy) {
        auto it = mem[r].find({st.srcBuf, st.srcOff});
        if (it == mem[r].end() || it->second.chunk != in.chunk)
          return where + ": reduces into another chunk";
        for (unsigned f : it->second.from)
          if (!in.from.insert(f).second)
            return where + ": counts rank " + std::to_string(f) + " twice";
      }
      mem[r][{st.dstBuf, st.dstOff}] = in;
      break;
    }
    }
  }
  std::set<unsigned> all;
  for (unsigned r = 0; r < R; ++r)
    all.insert(r);
  auto expect = [&](unsigned r, char buf, unsigned off, Content want) {
    auto it = mem[r].find({buf, int(off)});
    if (it == mem[r].end() || !(it->second == want))
      return "gpu " + std::to_string(r) + " ends without chunk " +
             std::to_string(want.chunk) + " complete at " + buf +
             std::to_string(off);
    return std::string();
  };
  for (unsigned r = 0; r < R; ++r)
    for (unsigned c = 0; c < alg.chunks(); ++c) {
      std::string why;
      switch (alg.collective) {
      case Collective::AllGather:
        why = expect(r, 'o', c, {c, {c / k}});
        break;
      case Collective::AllReduce:
        why = expect(r, 'i', c, {c, all});
        break;
      case Collective::ReduceScatter:
        if (c / k == r)
          why = expect(r, 'i', c, {c, all});
        break;
      case Collective::AllToAll: {
        unsigned s = c / (R * k), d = (c / k) % R;
        if (d == r)
          why = expect(r, 'o', s * k + c % k, {c, {s}});
        break;
      }
      }
      if (!why.empty())
        return why;
    }
  return "";
}

Algorithm synth(Collective c, const Topology &t, unsigned chunkup) {
  Sketch sk;
  sk.inputChunkup = chunkup;
  llvm::Expected<Synthesis> s = synthesize(c, t, sk, SynthOptions());
  if (!s)
    FAIL(llvm::toString(s.takeError()));
  return s->algorithm;
}

} // namespace

TEST_CASE("every collective's MSCCL program does what the algorithm does, "
          "in any order its dependencies allow",
          "[synth][msccl]") {
  for (Collective c : {Collective::AllGather, Collective::AllToAll,
                       Collective::ReduceScatter, Collective::AllReduce})
    for (unsigned n : {3u, 5u})
      for (unsigned k : {1u, 2u}) {
        Algorithm alg = synth(c, ring(n), k);
        std::vector<MscclGpu> gpus = lowerToMsccl(alg);
        INFO(collectiveName(c).str() << " on a ring of " << n << ", k " << k);
        for (unsigned seed = 1; seed <= 40; ++seed)
          REQUIRE(interpret(alg, gpus, seed) == "");
      }
}

TEST_CASE("a hand-written ring's MSCCL program", "[synth][msccl]") {
  // AllGather on a one-way ring of 4: step j, rank r passes chunk r - j.
  Algorithm a = ringAllGather();
  std::vector<MscclGpu> gpus = lowerToMsccl(a);
  REQUIRE(gpus.size() == 4);
  // A send block to the next rank and a receive block from the previous.
  REQUIRE(gpus[0].tbs.size() == 2);
  CHECK(gpus[0].tbs[0].send == 1);
  CHECK(gpus[0].tbs[1].recv == 3);
  // Rank 0 sends chunk 3 after it arrives (the receive block's step 0).
  const MscclStep &second = gpus[0].tbs[0].steps[1];
  CHECK(second.type == MscclStep::Send);
  CHECK(second.srcOff == 3);
  CHECK(second.depTb == 1);
  CHECK(second.depStep == 0);
  CHECK(gpus[0].tbs[1].steps[0].hasDep);
  for (unsigned seed = 1; seed <= 20; ++seed)
    CHECK(interpret(a, gpus, seed) == "");

  std::string xml;
  llvm::raw_string_ostream os(xml);
  writeMscclXml(a, gpus, os);
  CHECK_THAT(xml, Catch::StartsWith(
                      "<algo name=\"ring\" proto=\"Simple\" nchannels=\"1\" "
                      "nchunksperloop=\"4\" ngpus=\"4\" coll=\"allgather\" "
                      "inplace=\"1\" outofplace=\"0\""));
  CHECK_THAT(
      xml, Catch::Contains("<step s=\"1\" type=\"s\" srcbuf=\"o\" srcoff=\"3\" "
                           "dstbuf=\"o\" dstoff=\"3\" cnt=\"1\" depid=\"1\" "
                           "deps=\"0\" hasdep=\"0\"/>"));
}

TEST_CASE("a receive waits for the sends of its slot", "[synth][msccl]") {
  // AllReduce on 3 ranks, every pair linked. Step 0: each chunk j goes
  // from rank j to j + 1 and from j + 2 to j, both reduced: rank j sends
  // its own copy of chunk j while it receives into it. Step 1: j + 1
  // adds its copy into j + 2's, which then holds every contribution and
  // sends it to the other two (step 2).
  Topology t = complete(3, 1);
  Algorithm a;
  a.name = "war";
  a.collective = Collective::AllReduce;
  a.ranks = 3;
  a.steps.resize(3);
  a.steps[0].rounds = 2;
  for (unsigned j = 0; j < 3; ++j) {
    a.steps[0].transfers.push_back({j, j, (j + 1) % 3, true});
    a.steps[0].transfers.push_back({j, (j + 2) % 3, j, true});
    a.steps[1].transfers.push_back({j, (j + 1) % 3, (j + 2) % 3, true});
    a.steps[2].transfers.push_back({j, (j + 2) % 3, j, false});
    a.steps[2].transfers.push_back({j, (j + 2) % 3, (j + 1) % 3, false});
  }
  REQUIRE_FALSE(verifyAlgorithm(a, t).has_value());
  std::vector<MscclGpu> gpus = lowerToMsccl(a);
  for (unsigned seed = 1; seed <= 40; ++seed)
    REQUIRE(interpret(a, gpus, seed) == "");
}
