//===- TopologyTest.cpp - TACCL's topology and sketch files ---------------===//
//
// TACCL's own example files (test/synth/taccl/, copied unchanged) read as
// they are, the topologies built from them counted link by link against
// TACCL's construction, and malformed files refused with the place of
// their mistake.
//
//===----------------------------------------------------------------------===//

#include "synth/Topology.h"

#include "SynthTestUtil.h"
#include "synth/Json.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>

using namespace coconet;
using namespace coconet::synth;
using namespace coconet::synth::test;

namespace {

/// Whether `diagnostics` say `what`; if not, they are shown with the
/// failure.
bool says(const std::string &diagnostics, const std::string &what) {
  if (diagnostics.find(what) != std::string::npos)
    return true;
  UNSCOPED_INFO("the diagnostics were:\n" << diagnostics);
  return false;
}

unsigned remoteLinks(const Topology &t) {
  unsigned n = 0;
  for (const Link &l : t.links)
    n += l.remote;
  return n;
}

} // namespace

TEST_CASE("node kinds are read case-insensitively", "[synth]") {
  CHECK(parseNodeKind("ndv2") == NodeKind::NDv2);
  CHECK(parseNodeKind("DGX2") == NodeKind::DGX2);
  CHECK(parseNodeKind("HubAndSpoke") == NodeKind::HubAndSpoke);
  CHECK(parseNodeKind("Custom") == NodeKind::Custom);
  CHECK(parseNodeKind("h100") == NodeKind::H100);
  CHECK_FALSE(parseNodeKind("DGX1"));
}

TEST_CASE("every TACCL example topology file is read as it is", "[synth]") {
  for (const char *f :
       {"topo-ndv2-1KB.json", "topo-ndv2-1MB.json", "topo-ndv2-32KB.json",
        "topo-dgx2-1KB.json", "topo-dgx2-1MB.json"}) {
    NodeKind kind =
        llvm::StringRef(f).contains("ndv2") ? NodeKind::NDv2 : NodeKind::DGX2;
    Read r = topology(kind, exampleText(std::string("topo/") + f));
    INFO(f << "\n" << r.diagnostics);
    CHECK(r.profile);
    CHECK(r.diagnostics.empty());
  }
  Read r = topology(NodeKind::NDv2, exampleText("topo/topo-ndv2-1MB.json"));
  REQUIRE(r.profile);
  CHECK(r.profile->name == "NDv2_1MB");
  CHECK(r.profile->gpusPerNode == 8);
  CHECK(r.profile->alpha == 0.3);
  CHECK(r.profile->betas == llvm::SmallVector<double, 2>{23, 46});
  CHECK(r.profile->remoteBeta == 105);
  CHECK(r.profile->remoteInvbw == 107);
}

TEST_CASE("every TACCL example sketch is read as it is", "[synth]") {
  for (const char *f :
       {"sk-dgx2-n1.json", "sk-ndv2-n1-cUp6.json", "sk1-dgx2-n1.json",
        "sk1-dgx2-n2.json", "sk1-ndv2-n1.json", "sk1-ndv2-n2.json",
        "sk1-ndv2-n4.json", "sk2-dgx2-n2.json", "sk2-ndv2-n2.json",
        "sk2-ndv2-n4.json", "sk3-ndv2-n2.json"}) {
    unsigned gpus = llvm::StringRef(f).contains("dgx2") ? 16 : 8;
    Read r = sketch(gpus, exampleText(std::string("sketch/") + f));
    INFO(f << "\n" << r.diagnostics);
    CHECK(r.sketch);
    CHECK(r.diagnostics.empty());
  }
  Read r = sketch(16, exampleText("sketch/sk1-dgx2-n2.json"));
  REQUIRE(r.sketch);
  CHECK(r.sketch->nodes == 2);
  CHECK(r.sketch->intra == Sketch::Intra::Switch);
  REQUIRE(r.sketch->switches.size() == 1);
  CHECK(r.sketch->switches[0].gpus.size() == 16);
  CHECK(r.sketch->internodeConn.size() == 8);
  CHECK(r.sketch->internodeConn.at(15) == llvm::SmallVector<unsigned, 4>{14});
  CHECK(r.sketch->senderFor.at(3) == llvm::SmallVector<unsigned, 16>{2, 3});
  CHECK(r.sketch->enforceOrdering);
  CHECK(r.sketch->symmetryOffsets.size() == 2);
  CHECK(r.sketch->inputChunkup == 2);
}

TEST_CASE("NDv2 on two nodes: the cube-mesh twice and two NIC links",
          "[synth]") {
  Topology t = build(NodeKind::NDv2, "topo/topo-ndv2-1MB.json",
                     "sketch/sk1-ndv2-n2.json");
  CHECK(t.ranks() == 16);
  // 4 links a GPU, both ways: 32 a node; GPU 0 of each node sends to GPU 1
  // of the other (internode_conn {"0": [1]}).
  CHECK(t.links.size() == 2 * 32 + 2);
  CHECK(remoteLinks(t) == 2);
  REQUIRE(t.link(0, 9));
  REQUIRE(t.link(8, 1));
  CHECK_FALSE(t.link(9, 0));
  // A double-NVLink pair (0-1) costs the first invbw, a single one (0-2)
  // the second; a cube-mesh has no link 0-5.
  REQUIRE(t.link(0, 1));
  CHECK(t.link(0, 1)->cost == 23);
  REQUIRE(t.link(2, 0));
  CHECK(t.link(2, 0)->cost == 46);
  CHECK_FALSE(t.link(0, 5));
  CHECK(t.link(8 + 6, 8 + 7)->cost == 23);
  // One sender, one receiver, one NIC: the beta as profiled.
  CHECK(t.link(0, 9)->cost == Approx(2.6 + 105));
}

TEST_CASE("DGX-2 on two nodes: the switch sketch and NIC sharing", "[synth]") {
  Topology t = build(NodeKind::DGX2, "topo/topo-dgx2-1MB.json",
                     "sketch/sk1-dgx2-n2.json");
  CHECK(t.ranks() == 32);
  CHECK(t.links.size() == 2 * 16 * 15 + 2 * 8);
  // Inside a node through the one switch: alpha + beta (TACCL rounds the
  // sum down to 8).
  CHECK(t.link(0, 5)->cost == Approx(8.3));
  // Odd GPUs send to the even one below them in the other node; 8 senders
  // over 8 NICs: no sharing.
  REQUIRE(t.link(1, 16));
  CHECK(t.link(1, 16)->cost == Approx(107.6));
  CHECK_FALSE(t.link(0, 16));
  // Each GPU's switch port, out and in, on both nodes.
  CHECK(t.switches.size() == 2 * 16 * 2);

  // direct-map: 16 senders on 8 NICs share them two to one.
  Topology d = build(NodeKind::DGX2, "topo/topo-dgx2-1KB.json",
                     "sketch/sk2-dgx2-n2.json");
  REQUIRE(d.link(3, 19));
  CHECK(d.link(3, 19)->beta == Approx(2 * 10.25));
}

TEST_CASE("a malformed topology file is refused where it is wrong", "[synth]") {
  // Syntax: LLVM's line and column.
  Read r = topology(NodeKind::NDv2, "{\n  \"name\": \"x\",\n  \"alpha\" 1\n}");
  CHECK_FALSE(r.profile);
  CHECK(
      says(r.diagnostics,
           "t.json:3:12: error: not valid JSON: Expected : after object key"));

  const char *good = R"({"name": "n", "gpus_per_node": 8, "alpha": 0.3,
 "node_betas_list": [23, 46], "node_invbws_list": [23, 46]})";
  CHECK(topology(NodeKind::NDv2, good).profile);

  // A key given twice, with the first as a note.
  r = topology(NodeKind::NDv2, R"({"name": "n", "alpha": 1, "alpha": 2,
 "node_betas_list": [23, 46], "node_invbws_list": [23, 46]})");
  CHECK_FALSE(r.profile);
  CHECK(says(r.diagnostics, "t.json:1:27: error: 'alpha' is given twice"));
  CHECK(says(r.diagnostics, "t.json:1:15: note: first given here"));

  // The same key spelled with an escape is the same key.
  r = topology(NodeKind::NDv2, R"({"name": "n", "alpha": 1, "\u0061lpha": 2,
 "node_betas_list": [23, 46], "node_invbws_list": [23, 46]})");
  CHECK(says(r.diagnostics, "t.json:1:27: error: 'alpha' is given twice"));

  // An unknown key, at the key.
  r = topology(NodeKind::NDv2, R"({"name": "n", "alpha": 1,
  "node_betas_list": [23, 46], "node_invbws_list": [23, 46], "links": []})");
  CHECK(says(r.diagnostics, "t.json:2:62: error: unknown key 'links' in the "
                            "topology file"));

  // A wrong value, at the value; NDv2 needs two betas.
  r = topology(NodeKind::NDv2, R"({"name": "n", "alpha": -1,
  "node_betas_list": [23], "node_invbws_list": [23, 46]})");
  CHECK(says(r.diagnostics, "t.json:1:24: error: 'alpha' needs a number from "
                            "0 to 3600000000; got -1"));
  CHECK(says(r.diagnostics, "t.json:2:22: error: 'node_betas_list' needs 2 "
                            "values for NDv2; it has 1"));

  // Missing: said at the object, with what the key is for.
  r = topology(NodeKind::DGX2, R"({"name": "n", "alpha": 1,
  "node_betas_list": [8]})");
  CHECK(says(r.diagnostics, "error: the topology file does not give "
                            "'node_invbws_list'"));

  // Nested past 64 levels: refused before the parser recurses.
  r = topology(NodeKind::DGX2, std::string(100, '[') + std::string(100, ']'));
  CHECK(says(r.diagnostics, "t.json:1:65: error: not valid JSON: arrays and "
                            "objects nested more than 64 deep"));
}

TEST_CASE("a custom node's matrices are checked", "[synth]") {
  const char *custom = R"({"name": "tri", "gpus_per_node": 3, "alpha": 1,
 "links":  [[0, 1, 1], [1, 0, 0], [1, 1, 0]],
 "betas":  [[0, 2, 2], [2, 0, 0], [2, 2, 0]],
 "invbws": [[0, 3, 4], [3, 0, 0], [3, 3, 0]]})";
  Read r = topology(NodeKind::Custom, custom);
  INFO(r.diagnostics);
  REQUIRE(r.profile);
  Read s = sketch(3, R"({"nnodes": 1, "intranode_sketch": {"strategy":
 "none"}, "symmetry_offsets": [], "hyperparameters": {"input_chunkup": 1}})");
  INFO(s.diagnostics);
  REQUIRE(s.sketch);
  Topology t = buildTopology(NodeKind::Custom, *r.profile, *s.sketch);
  // [dst][src]: 1 -> 0, 2 -> 0, 0 -> 1, 0 -> 2, 1 -> 2.
  CHECK(t.links.size() == 5);
  REQUIRE(t.link(2, 0));
  CHECK(t.link(2, 0)->cost == 4);
  CHECK_FALSE(t.link(2, 1));

  r = topology(NodeKind::Custom, R"({"name": "tri", "gpus_per_node": 2,
 "alpha": 1, "links": [[1, 1], [1, 0]], "betas": [[0, 1], [1, 0]],
 "invbws": [[0, 1], [1]]})");
  CHECK_FALSE(r.profile);
  CHECK(says(r.diagnostics, "t.json:2:25: error: links[0][0] must be 0"));
  CHECK(says(r.diagnostics, "t.json:3:21: error: row 1 of 'invbws' needs 2 "
                            "entries; it has 1"));
}

TEST_CASE("a malformed sketch is refused where it is wrong", "[synth]") {
  auto diag = [](unsigned gpus, const char *text) {
    Read r = sketch(gpus, text);
    CHECK_FALSE(r.sketch);
    return r.diagnostics;
  };
  // Two nodes and no links between them.
  CHECK(says(diag(8, R"({"nnodes": 2, "intranode_sketch": {"strategy": "none"},
 "symmetry_offsets": [], "hyperparameters": {"input_chunkup": 1}})"),
             "s.json:1:1: error: the sketch file does not give "
             "'internode_sketch'"));
  // A sender that is not a GPU of the node (the key, located).
  CHECK(says(diag(8, R"({"nnodes": 2, "intranode_sketch": {"strategy": "none"},
 "internode_sketch": {"strategy": "relay", "internode_conn": {"9": [1]}},
 "symmetry_offsets": [], "hyperparameters": {"input_chunkup": 1}})"),
             "s.json:2:63: error: 'internode_conn' needs keys that are "
             "whole numbers from 0 to 7; got \"9\""));
  // Senders with different numbers of receivers.
  CHECK(says(diag(8, R"({"nnodes": 2, "intranode_sketch": {"strategy": "none"},
 "internode_sketch": {"strategy": "relay",
   "internode_conn": {"0": [1], "2": [3, 4]}},
 "symmetry_offsets": [], "hyperparameters": {"input_chunkup": 1}})"),
             "every sender of 'internode_conn' needs the same number "
             "of receivers"));
  // Overlapping switches that are not the same.
  CHECK(says(diag(4, R"({"nnodes": 1, "intranode_sketch": {"strategy": "switch",
   "switches": [[0, 1, 2], [2, 3]], "switch_hyperedge_strategy":
   ["uc-min", "uc-max"]},
 "symmetry_offsets": [], "hyperparameters": {"input_chunkup": 1}})"),
             "s.json:2:28: error: switch 1 shares GPU 2 with an "
             "earlier switch"));
  // A symmetry whose size does not divide the ranks.
  CHECK(says(diag(8, R"({"nnodes": 1, "intranode_sketch": {"strategy": "none"},
 "symmetry_offsets": [[2, 6]], "hyperparameters": {"input_chunkup": 1}})"),
             "s.json:2:23: error: symmetry [2, 6]: the size must "
             "divide the 8 ranks"));
  // input_chunkup out of range, a strategy TACCL does not have.
  std::string d = diag(8, R"({"nnodes": 1, "intranode_sketch": {"strategy":
 "ring"}, "symmetry_offsets": [], "hyperparameters": {"input_chunkup": 0}})");
  CHECK(says(d, "s.json:2:2: error: unknown intranode strategy \"ring\""));
  CHECK(says(d, "'input_chunkup' needs a whole number from 1 to 64; got 0"));
}
