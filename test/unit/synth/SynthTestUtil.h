//===- SynthTestUtil.h - topologies and algorithms the synth tests share --===//
//
// Small topologies whose algorithms can be worked out by hand, the ring
// AllGather written out, and TACCL's example files read, for
// test/unit/synth/.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_SYNTH_SYNTHTESTUTIL_H
#define COCONET_TEST_UNIT_SYNTH_SYNTHTESTUTIL_H

#include "synth/Algorithm.h"
#include "synth/Synthesize.h"
#include "synth/Topology.h"

#include "diag/Diagnostic.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <tuple>

namespace coconet::synth::test {

/// Every rank linked to every other, each link `cost` a chunk.
inline Topology complete(unsigned ranks, double cost) {
  Topology t;
  t.name = "complete";
  t.gpusPerNode = ranks;
  for (unsigned s = 0; s < ranks; ++s)
    for (unsigned d = 0; d < ranks; ++d)
      if (s != d)
        t.links.push_back({s, d, 0, cost, cost, false});
  return t;
}

/// A bidirectional ring; links from even ranks cost `even`, from odd
/// ranks `odd`.
inline Topology ring(unsigned ranks, double even = 1, double odd = 1) {
  Topology t;
  t.name = "ring";
  t.gpusPerNode = ranks;
  for (unsigned r = 0; r < ranks; ++r) {
    double c = r % 2 ? odd : even;
    t.links.push_back({r, (r + 1) % ranks, 0, c, c, false});
    t.links.push_back({r, (r + ranks - 1) % ranks, 0, c, c, false});
  }
  llvm::sort(t.links, [](const Link &a, const Link &b) {
    return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
  });
  return t;
}

/// Ring AllGather on 4 ranks one way round: in step j rank r passes on
/// chunk (r - j) mod 4 to rank r + 1.
inline Algorithm ringAllGather() {
  Algorithm a;
  a.name = "ring";
  a.collective = Collective::AllGather;
  a.ranks = 4;
  for (unsigned j = 0; j < 3; ++j) {
    Step s;
    for (unsigned r = 0; r < 4; ++r)
      s.transfers.push_back({(r + 4 - j) % 4, r, (r + 1) % 4, false});
    a.steps.push_back(s);
  }
  return a;
}

/// A synthesis that must succeed (30 s limit) and pass the verifier.
inline Synthesis synthesizeChecked(Collective c, const Topology &t,
                                   const Sketch &sk) {
  SynthOptions o;
  o.seconds = 30;
  llvm::Expected<Synthesis> s = synthesize(c, t, sk, o);
  if (!s) {
    FAIL(llvm::toString(s.takeError()));
  }
  REQUIRE_FALSE(verifyAlgorithm(s->algorithm, t).has_value());
  return std::move(*s);
}

/// A file of test/synth/taccl/ (TACCL's examples, unchanged).
inline std::string exampleText(llvm::StringRef rel) {
  std::string path =
      std::string(COCONET_SOURCE_DIR) + "/test/synth/taccl/" + rel.str();
  auto buf = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buf);
  return (*buf)->getBuffer().str();
}

/// What reading a topology or sketch file gave, and what it reported.
struct Read {
  std::optional<NodeProfile> profile;
  std::optional<Sketch> sketch;
  std::string diagnostics;
};

inline Read topology(NodeKind kind, llvm::StringRef text) {
  Read r;
  llvm::SourceMgr sm;
  llvm::raw_string_ostream os(r.diagnostics);
  DiagnosticEngine diags(sm, os);
  r.profile = parseTopologyFile(
      kind, llvm::MemoryBuffer::getMemBufferCopy(text, "t.json"), sm, diags);
  return r;
}

inline Read sketch(unsigned gpus, llvm::StringRef text) {
  Read r;
  llvm::SourceMgr sm;
  llvm::raw_string_ostream os(r.diagnostics);
  DiagnosticEngine diags(sm, os);
  r.sketch = parseSketchFile(
      gpus, llvm::MemoryBuffer::getMemBufferCopy(text, "s.json"), sm, diags);
  return r;
}

inline Topology build(NodeKind kind, llvm::StringRef topo, llvm::StringRef sk) {
  Read t = topology(kind, exampleText(topo));
  INFO(t.diagnostics);
  REQUIRE(t.profile);
  Read s = sketch(t.profile->gpusPerNode, exampleText(sk));
  INFO(s.diagnostics);
  REQUIRE(s.sketch);
  return buildTopology(kind, *t.profile, *s.sketch);
}

} // namespace coconet::synth::test

#endif // COCONET_TEST_UNIT_SYNTH_SYNTHTESTUTIL_H
