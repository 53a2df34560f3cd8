//===- DotTest.cpp - the Graphviz drawing of a scheduled program ----------===//

#include "AnalysisTestUtil.h"

#include "emit/Dot.h"

#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>

using namespace coconet;
using test::schedule;

namespace {

std::string dot(const ir::Program &program, llvm::StringRef title) {
  std::string text;
  llvm::raw_string_ostream os(text);
  emit::printDot(program, title, os);
  return text;
}

const char *const kSgd = R"(
program sgd(g: f16[N] local, w: f32[N] replicated, lr: f32) {
    gs = allreduce(sum, g);
    w1 = update(w, w - lr * f32(gs));
}
schedule fused for sgd {
    (rs, ag) = split(gs);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
schedule sharded for sgd {
    (rs, ag) = split(gs);
    reorder(ag, w1);
    shard(w);
    fuse(rs, w1);
}
)";

} // namespace

TEST_CASE("dot titles escape quotes and backslashes", "[emit][dot]") {
  auto s = schedule(kSgd);
  std::string text = dot(*s->program, "say \"hi\" \\ there");
  CHECK_THAT(text,
             Catch::StartsWith("digraph \"say \\\"hi\\\" \\\\ there\" {\n"));
  CHECK_THAT(text, Catch::Contains("  label=\"say \\\"hi\\\" \\\\ there\";\n"));
  CHECK_THAT(text, Catch::EndsWith("}\n"));
}

TEST_CASE("dot draws kernels as clusters and marks results", "[emit][dot]") {
  auto s = schedule(kSgd, "fused");
  std::string text = dot(*s->program, "sgd");
  CHECK_THAT(text,
             Catch::Contains("subgraph cluster_k0 {\n"
                             "    label=\"kernel k0 (fused collective)\";"));
  // Parameters are ellipses, communication hexagons, computation boxes.
  CHECK_THAT(text, Catch::Contains("s0 [label=\"g\\nparam 0\\nf16[N] local\", "
                                   "shape=ellipse"));
  CHECK_THAT(text, Catch::Contains("[label=\"rs\\nreducescatter(sum, dim=0) "
                                   "over world\\nf16[N] sliced(0)\", "
                                   "shape=hexagon"));
  CHECK_THAT(text, Catch::Contains("\\nelementwise\\n"));
  CHECK_THAT(text, Catch::Contains("shape=box"));
  // The edges follow the operands, each once.
  CHECK_THAT(text, Catch::Contains("  s0 -> s"));
  // The interface result, written into w.
  CHECK_THAT(text, Catch::Contains("-> update w\", shape=hexagon, "
                                   "fillcolor=\"#fdd0a2\", peripheries=2];"));
}

TEST_CASE("dot marks sharded parameters", "[emit][dot]") {
  auto s = schedule(kSgd, "sharded");
  std::string text = dot(*s->program, "sgd");
  CHECK_THAT(text, Catch::Contains("s1 [label=\"w\\nparam 1\\nf32[N] "
                                   "sliced(0)\\nsharded\", shape=ellipse, "
                                   "fillcolor=\"#fff2b2\", "
                                   "style=\"filled,bold\"];"));
  CHECK_THAT(text, Catch::Contains("\\n-> update w\", shape=box"));
  CHECK_THAT(text, !Catch::Contains("allgather"));
}
