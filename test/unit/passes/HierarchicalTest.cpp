//===- HierarchicalTest.cpp - an allreduce over two axes, axis by axis ----===//
//
// hierarchical(s) by its effect, not by its printed IR: the point of the
// transformation is that only 1/I of the data crosses the outer axis (the
// network), the reducescatter and the allgather staying on the inner axis
// (within a node). So the bytes each axis carries, from the report's
// launches, and what a machine whose nodes hold the inner axis prices at
// each level: the same result would come from the axes swapped (the sum is
// an allreduce over both either way), but not the same bytes. And the
// results against the unscheduled program.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

#include "analysis/Report.h"
#include "tune/CostModel.h"
#include "tune/Machine.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

namespace {

const char *const kProgram = R"(
program p(mesh [node: M, gpu: G], g: f32[N] local) {
    gs = allreduce(sum, g);
    return gs;
}
schedule h for p {
    (rs, ar, ag) = hierarchical(gs);
}
)";

/// The bytes each rank sends over each mesh axis in one step (a collective
/// over every axis counts under "all").
std::map<std::string, double> sentPerAxis(const ir::Program &program,
                                          const ir::DimEnv &sizes) {
  std::map<std::string, double> out;
  for (const analysis::LaunchCost &l : analysis::analyzeLaunches(program)) {
    if (l.kind != analysis::LaunchCost::Kind::Collective)
      continue;
    REQUIRE(l.members.size() == 1);
    const ir::Stage *c = l.members.front();
    const std::string axis =
        c->axis < 0 ? "all" : program.mesh.axes[c->axis].name;
    std::optional<double> bytes = l.sent.evaluate(sizes);
    REQUIRE(bytes);
    out[axis] += *bytes;
  }
  return out;
}

} // namespace

TEST_CASE("hierarchical moves 1/I of the data over the outer axis",
          "[passes][hierarchical]") {
  Compiled c = compile(kProgram);
  Scheduled s = schedule(c, "h");
  // The reducescatter and the allgather are on the inner axis (gpu), the
  // allreduce of the blocks on the outer one (node).
  CHECK(s.stage("rs").kind == StageKind::ReduceScatter);
  CHECK(s.stage("ar").kind == StageKind::AllReduce);
  CHECK(s.stage("ag").kind == StageKind::AllGather);

  // Sizes where the axes differ, both ways round, so that inner and outer
  // swapped gives other bytes.
  for (auto [m, g] : {std::pair<int64_t, int64_t>{2, 4}, {4, 2}, {3, 8}}) {
    const int64_t n = 4096 * g;
    const ir::DimEnv sizes{{"M", m}, {"G", g}, {"N", n}};
    INFO("M=" << m << " G=" << g << " N=" << n);
    const double bytes = 4.0 * static_cast<double>(n);
    std::map<std::string, double> sent = sentPerAxis(*s.program, sizes);
    // Within a node: a reducescatter and an allgather of the whole tensor
    // over G members, each sending (G-1)/G of it.
    CHECK(sent["gpu"] == Approx(2 * bytes * static_cast<double>(g - 1) /
                                static_cast<double>(g)));
    // Across nodes: an allreduce of one block, 1/G of the tensor, over M
    // members: 2 (M-1)/M of it.
    CHECK(sent["node"] ==
          Approx(2 * (bytes / static_cast<double>(g)) *
                 static_cast<double>(m - 1) / static_cast<double>(m)));
    CHECK(sent.count("all") == 0);
    // The unscheduled allreduce sends 2 (P-1)/P of the tensor over all of
    // the mesh: hierarchical sends less across nodes than a flat allreduce
    // of the whole tensor would.
    std::map<std::string, double> flat = sentPerAxis(c.program(), sizes);
    const double p = static_cast<double>(m * g);
    CHECK(flat["all"] == Approx(2 * bytes * (p - 1) / p));
    CHECK(sent["node"] < flat["all"] / static_cast<double>(g) + 1);
  }
}

TEST_CASE("hierarchical: the cross-node allreduce is priced at the network "
          "level, on 1/G of the data",
          "[passes][hierarchical][tune]") {
  // A machine whose nodes hold G = 4 ranks: the inner axis is within a node.
  const char *const kMachine = R"(machine two-level
target cpu
ranks-per-node 4
kernel-launch 1 us
memory-bandwidth 1 GB/s
fused-collective shared
overlap concurrent
collective allreduce library node latency 1 us bandwidth 1 GB/s
collective reducescatter library node latency 1 us bandwidth 1 GB/s
collective allgather library node latency 1 us bandwidth 1 GB/s
collective allreduce library network latency 100 us bandwidth 0.1 GB/s
collective reducescatter library network latency 100 us bandwidth 0.1 GB/s
collective allgather library network latency 100 us bandwidth 0.1 GB/s
)";
  llvm::SourceMgr sm;
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  DiagnosticEngine diags(sm, os);
  std::optional<tune::Machine> machine = tune::parseMachine(
      llvm::MemoryBuffer::getMemBufferCopy(kMachine, "m.machine"), sm, diags);
  INFO(diagnostics);
  REQUIRE(machine);

  Compiled c = compile(kProgram);
  Scheduled s = schedule(c, "h");
  const ir::DimEnv sizes{{"M", 2}, {"G", 4}, {"N", 1 << 20}};
  auto planned = tune::planLaunches(*s.program);
  REQUIRE(static_cast<bool>(planned));
  auto step = tune::predictStep(*s.program, *planned, *machine, sizes);
  REQUIRE(static_cast<bool>(step));
  std::map<std::string, tune::Level> levels;
  std::map<std::string, int64_t> members;
  for (const tune::LaunchTime &l : step->launches)
    for (const tune::CollectiveTime &ct : l.collectives) {
      levels[ct.stage->name] = ct.level;
      members[ct.stage->name] = ct.members;
    }
  CHECK(levels["rs"] == tune::Level::Node);
  CHECK(members["rs"] == 4);
  CHECK(levels["ag"] == tune::Level::Node);
  CHECK(members["ag"] == 4);
  CHECK(levels["ar"] == tune::Level::Network);
  CHECK(members["ar"] == 2);
  // And it is cheaper than the flat allreduce, which crosses the network
  // with the whole tensor.
  auto flatPlanned = tune::planLaunches(c.program());
  REQUIRE(static_cast<bool>(flatPlanned));
  auto flat = tune::predictStep(c.program(), *flatPlanned, *machine, sizes);
  REQUIRE(static_cast<bool>(flat));
  CHECK(step->seconds < flat->seconds);
}

TEST_CASE("hierarchical equals the unscheduled allreduce on the simulator",
          "[passes][hierarchical]") {
  Compiled c = compile(kProgram);
  Scheduled s = schedule(c, "h");
  expectSameResults(c.program(), *s.program,
                    meshRanks("M", "G", {{2, 2}, {2, 3}, {3, 2}}, {{"N", 12}}),
                    Agreement::Reassociated);
}
