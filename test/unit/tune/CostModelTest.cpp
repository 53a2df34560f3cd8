//===- CostModelTest.cpp - machine files and predicted times --------------===//
//
// The machine file parser (values and units, each refusal with its line),
// the algorithm formulas against hand-computed steps and volumes, and
// predicted step times of small scheduled programs against sums worked out
// by hand from the report's byte counts.
//
//===----------------------------------------------------------------------===//

#include "../analysis/AnalysisTestUtil.h"

#include "analysis/Report.h"
#include "ir/AlgorithmTable.h"
#include "tune/CostModel.h"
#include "tune/Machine.h"
#include "tune/Tuner.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#ifdef COCONET_HAVE_RT_CPU
#include "coconet/cpu/runtime.h"
#endif

#include <catch2/catch.hpp>

#include <cmath>

#include <string>

using namespace coconet;
using namespace coconet::tune;
using test::schedule;

namespace {

struct Parsed {
  std::optional<Machine> machine;
  std::string diagnostics;
};

Parsed parseText(llvm::StringRef text) {
  Parsed p;
  llvm::SourceMgr sm;
  llvm::raw_string_ostream os(p.diagnostics);
  DiagnosticEngine diags(sm, os);
  p.machine = parseMachine(
      llvm::MemoryBuffer::getMemBufferCopy(text, "m.machine"), sm, diags);
  return p;
}

/// Round numbers, so that every expected time below is a short sum.
const char *const kMachine = R"(# a test machine
machine test
target cpu
ranks-per-node 4
threads-per-rank 2
kernel-launch 1 us
memory-bandwidth 1 GB/s           # 1 byte per ns
matmul f32 2 GFLOP/s
fused-collective shared
overlap concurrent
collective allreduce library node latency 10 us bandwidth 0.5 GB/s
collective allreduce library node f16 latency 10 us bandwidth 0.25 GB/s
collective allreduce tree node latency 1 us bandwidth 250 MB/s
collective allreduce ring network latency 100 us bandwidth 100 MB/s
collective reducescatter library node latency 10 us bandwidth 0.5 GB/s
collective allgather library node latency 10 us bandwidth 0.5 GB/s
collective allgather library network latency 100 us bandwidth 100 MB/s
collective reducescatter direct node latency 2 us bandwidth 1 GB/s
collective allgather direct node latency 2 us bandwidth 1 GB/s
)";

/// The test machine with `lines` added (each ending in a newline).
Machine testMachine(llvm::StringRef lines = "") {
  Parsed p = parseText(std::string(kMachine) + lines.str());
  INFO(p.diagnostics);
  REQUIRE(p.machine);
  return *p.machine;
}

/// The machine file printMachine() writes for `m`, without a header.
std::string printed(const Machine &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printMachine(m, "", os);
  return text;
}

/// The step of `program` as its plan runs it.
StepLaunches planned(const ir::Program &program) {
  auto launches = planLaunches(program);
  if (!launches)
    FAIL(llvm::toString(launches.takeError()));
  return std::move(*launches);
}

StepTime predict(const ir::Program &program, const ir::DimEnv &sizes,
                 const Machine &machine, bool staging = false) {
  auto t = predictStep(program, planned(program), machine, sizes, staging);
  if (!t)
    FAIL(llvm::toString(t.takeError()));
  return *t;
}

} // namespace

TEST_CASE("a machine file's values in base units", "[tune]") {
  Machine m = testMachine();
  CHECK(m.name == "test");
  CHECK(m.target == "cpu");
  CHECK(m.ranksPerNode == 4);
  CHECK(m.threadsPerRank == 2);
  CHECK(m.kernelLaunch == Approx(1e-6));
  CHECK(m.memoryBandwidth == Approx(1e9));
  CHECK(m.matmulRate.at(ir::DType::F32) == Approx(2e9));
  CHECK_FALSE(m.fusedOverlaps);
  CHECK(m.overlapConcurrent);
  const LinkCost *tree =
      m.find(Collective::AllReduce, Algorithm::Tree, Level::Node);
  REQUIRE(tree);
  CHECK(tree->latency == Approx(1e-6));
  CHECK(tree->bandwidth == Approx(2.5e8));
  CHECK_FALSE(m.find(Collective::AllReduce, Algorithm::Tree, Level::Network));
  // A line for one element type: that type's (bf16 takes f16's), the
  // untyped line for the others.
  const LinkCost *untyped =
      m.find(Collective::AllReduce, Algorithm::Library, Level::Node);
  const LinkCost *half = m.find(Collective::AllReduce, Algorithm::Library,
                                Level::Node, ir::DType::F16);
  REQUIRE(untyped);
  REQUIRE(half);
  CHECK(untyped->bandwidth == Approx(5e8));
  CHECK(half->bandwidth == Approx(2.5e8));
  CHECK(m.find(Collective::AllReduce, Algorithm::Library, Level::Node,
               ir::DType::BF16) == half);
  CHECK(m.find(Collective::AllReduce, Algorithm::Library, Level::Node,
               ir::DType::F32) == untyped);
  CHECK(m.find(Collective::AllReduce, Algorithm::Tree, Level::Node,
               ir::DType::F16) == tree);
}

TEST_CASE("a printed machine reads back as the same machine", "[tune]") {
  Machine m = testMachine();
  std::string text;
  llvm::raw_string_ostream os(text);
  printMachine(m, "measured by a test\non two lines", os);
  CHECK(llvm::StringRef(text).starts_with("# measured by a test\n# on two "));
  Parsed again = parseText(text);
  INFO(again.diagnostics << text);
  REQUIRE(again.machine);
  std::string second;
  llvm::raw_string_ostream os2(second);
  printMachine(*again.machine, "measured by a test\non two lines", os2);
  CHECK(second == text);
}

TEST_CASE("a bad or missing machine value is refused with its line", "[tune]") {
  struct Case {
    const char *line;
    const char *message;
  };
  const Case cases[] = {
      {"memory-bandwidth 10 us", "m.machine:7:21: error: 'memory-bandwidth' "
                                 "needs a bandwidth"},
      {"memory-bandwidth -3 GB/s", "m.machine:7:18: error: "
                                   "'memory-bandwidth' needs a number > 0"},
      {"memory-bandwidth 0 GB/s", "needs a number > 0"},
      {"memory-bandwidth", "m.machine:7:17: error: 'memory-bandwidth' needs "
                           "a bandwidth (B/s"},
      {"memory-bandwidth 3 GB/s extra", "m.machine:7:25: error: unexpected "
                                        "'extra' after the value of "
                                        "'memory-bandwidth'"},
      {"kernel-launch 2 us", "m.machine:7:1: error: 'kernel-launch' is given "
                             "twice"},
      {"memory-bandwith 3 GB/s", "error: unknown machine key "
                                 "'memory-bandwith'"},
      {"matmul i32 3 GFLOP/s", "'matmul' needs an element type"},
      {"threads-per-rank 0", "'threads-per-rank' needs a positive integer"},
      {"collective allreduce ring node latency 1 us bandwidth 1 us",
       "'collective allreduce ring node' needs a bandwidth"},
      {"collective allreduce spiral node latency 1 us bandwidth 1 GB/s",
       "'collective' needs an algorithm (library, ring, tree, oneshot, "
       "twoshot, direct); got 'spiral'"},
      {"collective allreduce ring node bandwidth 1 GB/s",
       "needs an element type (f16, bf16, f32, f64, i32, i64, u64, bool) or "
       "its latency per step (latency); got 'bandwidth'"},
      {"collective allreduce ring node f12 latency 1 us bandwidth 1 GB/s",
       "m.machine:7:32: error: 'collective allreduce ring node' needs an "
       "element type"},
      {"collective allreduce ring node f16 bandwidth 1 GB/s",
       "'collective allreduce ring node f16' needs its latency per step "
       "(latency); got 'bandwidth'"},
      {"collective allreduce ring node f16 latency 1 us bandwidth 1 GB/s x",
       "m.machine:7:66: error: 'collective allreduce ring node f16' needs the "
       "end of the line or its bandwidth beyond the cache (beyond-cache); got "
       "'x'"},
  };
  const std::string base = "machine x\ntarget cpu\nranks-per-node 1\n"
                           "kernel-launch 1 us\nfused-collective shared\n"
                           "overlap concurrent\n";
  for (const Case &c : cases) {
    std::string text = base + c.line + "\n";
    if (!llvm::StringRef(c.line).starts_with("memory-bandwidth"))
      text += "memory-bandwidth 1 GB/s\n";
    Parsed p = parseText(text);
    INFO(c.line << "\n" << p.diagnostics);
    CHECK_FALSE(p.machine);
    CHECK(llvm::StringRef(p.diagnostics).contains(c.message));
  }
  // Without a required key: said at the start of the file, naming it.
  Parsed p = parseText("machine x\ntarget tpu\n");
  CHECK(llvm::StringRef(p.diagnostics)
            .contains("m.machine:2:8: error: 'target' needs a target (cpu, "
                      "cuda); got 'tpu'"));
  CHECK_FALSE(p.machine);
  CHECK(llvm::StringRef(p.diagnostics)
            .contains("m.machine:1:1: error: the machine file does not give "
                      "'ranks-per-node'"));
  CHECK(llvm::StringRef(p.diagnostics).contains("'overlap'"));
}

TEST_CASE("an algorithm file's steps and volume, by hand", "[tune]") {
  // 4 ranks, 2 chunks a rank: a chunk is 1000 / 8 = 125 bytes. Step 0:
  // rank 0 sends 3 chunks (the most of any rank, sent or received); an
  // empty step costs nothing; step 2: rank 3 receives 2 chunks, from two
  // ranks that send one each.
  coconet::ir::AlgorithmTable t;
  t.collective = coconet::ir::AlgorithmCollective::AllGather;
  t.ranks = 4;
  t.chunksPerRank = 2;
  t.steps = {
      {{0, 0, 1, false}, {1, 0, 2, false}, {0, 0, 3, false}, {2, 1, 2, false}},
      {},
      {{4, 2, 3, false}, {6, 1, 3, false}}};
  AlgorithmShape s = tableShape(t, 1000);
  CHECK(s.steps == 2);
  CHECK(s.volume == (3 + 2) * 125);
  // A ring allreduce as a table costs what the ring formula says: 2 (P-1)
  // steps, each member sending one block of n / P.
  coconet::ir::AlgorithmTable ring;
  ring.collective = coconet::ir::AlgorithmCollective::AllReduce;
  ring.ranks = 4;
  for (unsigned step = 0; step < 6; ++step) {
    auto &transfers = ring.steps.emplace_back();
    for (unsigned r = 0; r < 4; ++r)
      transfers.push_back({(r + 4 - step % 3) % 4, r, (r + 1) % 4, step < 3});
  }
  AlgorithmShape r = tableShape(ring, 1000);
  auto formula =
      algorithmShape(Collective::AllReduce, Algorithm::Ring, 4, 1000);
  REQUIRE(formula);
  CHECK(r.steps == formula->steps);
  CHECK(r.volume == formula->volume);
}

TEST_CASE("an algorithm file over two nodes, by hand", "[tune]") {
  // A ring over 4 ranks, 2 a node: 0 -> 1 and 2 -> 3 within a node, 1 -> 2
  // and 3 -> 0 across. Each rank sends one chunk and receives one, one of
  // them across: a step is the network's 10 us + 250 B / 100 MB/s =
  // 12.5 us (the node's 1 us + 0.25 us at the same time).
  coconet::ir::AlgorithmTable ring;
  ring.collective = coconet::ir::AlgorithmCollective::AllGather;
  ring.ranks = 4;
  for (unsigned step = 0; step < 3; ++step) {
    auto &transfers = ring.steps.emplace_back();
    for (unsigned r = 0; r < 4; ++r)
      transfers.push_back({(r + 4 - step) % 4, r, (r + 1) % 4, false});
  }
  LinkCost node, network;
  node.latency = 1e-6;
  node.bandwidth = 1e9;
  network.latency = 10e-6;
  network.bandwidth = 1e8;
  CHECK(tableSeconds(ring, 1000, 1, 2, node, network, 1) ==
        Approx(3 * 12.5e-6));
  // 4 ranks a node: one node, every step the node's 1.25 us.
  CHECK(tableSeconds(ring, 1000, 1, 4, node, network, 1) ==
        Approx(3 * 1.25e-6));
  // Members 2 world ranks apart (an axis whose next axis has 2 ranks), 2
  // ranks a node: every member on a node of its own, a step the network's
  // 12.5 us.
  CHECK(tableSeconds(ring, 1000, 2, 2, node, network, 1) ==
        Approx(3 * 12.5e-6));
}

TEST_CASE("algorithm steps and volumes, by hand", "[tune]") {
  // P = 4 members of 1000 bytes each.
  auto shape = [](Collective c, Algorithm a) {
    auto s = algorithmShape(c, a, 4, 1000);
    REQUIRE(s);
    return *s;
  };
  CHECK(shape(Collective::AllReduce, Algorithm::Ring).steps == 6);
  CHECK(shape(Collective::AllReduce, Algorithm::Ring).volume == 1500);
  CHECK(shape(Collective::AllReduce, Algorithm::Library).volume == 1500);
  CHECK(shape(Collective::AllReduce, Algorithm::Tree).steps == 4);
  CHECK(shape(Collective::AllReduce, Algorithm::Tree).volume == 2000);
  CHECK(shape(Collective::AllReduce, Algorithm::OneShot).steps == 1);
  CHECK(shape(Collective::AllReduce, Algorithm::OneShot).volume == 3000);
  CHECK(shape(Collective::AllReduce, Algorithm::TwoShot).steps == 2);
  CHECK(shape(Collective::AllReduce, Algorithm::TwoShot).volume == 1500);
  CHECK(shape(Collective::ReduceScatter, Algorithm::Ring).steps == 3);
  CHECK(shape(Collective::ReduceScatter, Algorithm::Ring).volume == 750);
  CHECK(shape(Collective::AllGather, Algorithm::Direct).steps == 1);
  CHECK(shape(Collective::AllGather, Algorithm::Direct).volume == 750);
  CHECK(shape(Collective::Broadcast, Algorithm::Tree).steps == 2);
  // An alltoall: P - 1 exchanges, each member's block but its own.
  CHECK(shape(Collective::AllToAll, Algorithm::Library).steps == 3);
  CHECK(shape(Collective::AllToAll, Algorithm::Library).volume == 750);
  // One shot: one barrier, every member reads its block of the others'.
  CHECK(shape(Collective::AllToAll, Algorithm::OneShot).steps == 1);
  CHECK(shape(Collective::AllToAll, Algorithm::OneShot).volume == 750);
  CHECK_FALSE(
      algorithmShape(Collective::AllToAll, Algorithm::TwoShot, 4, 1000));
  CHECK_FALSE(
      algorithmShape(Collective::ReduceScatter, Algorithm::Tree, 4, 1000));
  // 5 members: a tree has ceil(log2 5) = 3 levels.
  CHECK(algorithmShape(Collective::AllReduce, Algorithm::Tree, 5, 1)->steps ==
        6);
  // One member moves nothing.
  auto alone = algorithmShape(Collective::AllReduce, Algorithm::Ring, 1, 1000);
  CHECK(alone->steps == 0);
  CHECK(alone->volume == 0);
  CHECK(algorithmSeconds({1e-6, 1e9}, {3, 2000}) == Approx(3e-6 + 2e-6));
  // A line with a bandwidth beyond the cache: the volume's share the cache
  // holds at 1 GB/s, the rest at 0.25 GB/s (4 ns a byte).
  const LinkCost beyond{1e-6, 1e9, 0.25e9};
  CHECK(algorithmSeconds(beyond, {3, 2000}, 1) == Approx(3e-6 + 2e-6));
  CHECK(algorithmSeconds(beyond, {3, 2000}, 0.5) == Approx(3e-6 + 1e-6 + 4e-6));
  CHECK(algorithmSeconds(beyond, {3, 2000}, 0) == Approx(3e-6 + 8e-6));
  // Without one, the cache's share does not matter.
  CHECK(algorithmSeconds({1e-6, 1e9}, {3, 2000}, 0) == Approx(3e-6 + 2e-6));
}

const char *const kSgd = R"(
program sgd(g: f32[N] local, w: f32[N] replicated, lr: f32) {
    gs = allreduce(sum, g);
    w1 = update(w, w - lr * gs);
}
schedule fused for sgd {
    (rs, ag) = split(gs);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
)";

TEST_CASE("sgd: an allreduce and a kernel, by hand", "[tune]") {
  auto s = schedule(kSgd);
  Machine m = testMachine();
  // N = 1000 f32 on P = 2 (node level: 2 <= 4 ranks per node).
  StepTime t = predict(*s->program, {{"N", 1000}, {"P", 2}}, m);
  REQUIRE(t.launches.size() == 2);
  // allreduce: library 10 us * 2 steps + 4000 B / 0.5 GB/s = 20 + 8 us;
  // tree: 1 us * 2 + 2 * 4000 B / 0.25 GB/s = 2 + 32 us. Library wins.
  REQUIRE(t.launches[0].collectives.size() == 1);
  const CollectiveTime &ar = t.launches[0].collectives[0];
  CHECK(ar.algorithm == Algorithm::Library);
  CHECK(ar.level == Level::Node);
  CHECK(ar.members == 2);
  CHECK(ar.seconds == Approx(28e-6));
  CHECK(ar.alternatives == "tree 34 us");
  CHECK(t.launches[0].seconds == Approx(28e-6));
  // kernel: reads gs, w (4000 B each) and lr (4 B), writes w: 12004 B at
  // 1 GB/s + 1 us launch.
  CHECK(t.launches[1].memorySeconds == Approx(12004e-9));
  CHECK(t.launches[1].seconds == Approx(1e-6 + 12004e-9));
  CHECK(t.seconds == Approx(28e-6 + 1e-6 + 12004e-9));
}

TEST_CASE("a step priced past the largest double has no price", "[tune]") {
  // The parser holds every field to its range (fail-machine-values.test);
  // a machine made in code is not, and neither are sizes: a total that
  // overflows is an error, not an infinite time that ties every schedule.
  auto s = schedule(kSgd);
  Machine m = testMachine();
  // The kernel's 12004 bytes at 1e-306 B/s.
  m.memoryBandwidth = 1e-306;
  auto launches = planned(*s->program);
  auto t = predictStep(*s->program, launches, m, {{"N", 1000}, {"P", 2}});
  REQUIRE_FALSE(static_cast<bool>(t));
  CHECK(llvm::toString(t.takeError()) ==
        "machine 'test' (m.machine) prices this step at more seconds than a "
        "double holds: the sizes are too large for a prediction");
  // A launch of 1e308 s is still a price.
  m.memoryBandwidth = 1e9;
  m.kernelLaunch = 1e308;
  auto one = predictStep(*s->program, launches, m, {{"N", 1000}, {"P", 2}});
  REQUIRE(static_cast<bool>(one));
  CHECK(one->seconds == Approx(1e308));
}

TEST_CASE("a machine's name and path are printed escaped and cut", "[tune]") {
  Machine m = testMachine();
  m.name = "a\x1b]0;x\x07"
           "b\xff";
  CHECK(m.shownName() == "a<U+001B>]0;x<U+0007>b<FF>");
  m.name = std::string(1000000, 'n');
  CHECK(m.shownName() == std::string(61, 'n') + "...");
  m.path = std::string(1000, '/');
  CHECK(m.shownPath().size() == 256);
}

TEST_CASE("a collective of 2-byte elements takes its type's line", "[tune]") {
  // N = 1000 f16 (2000 B) on P = 2. The f16 library line: 10 us * 2 steps +
  // 2000 B / 0.25 GB/s = 28 us (the untyped line would say 24 us); tree has
  // no f16 line and takes the untyped one: 1 us * 2 + 2 * 2000 B / 0.25
  // GB/s = 18 us, the cheaper of NCCL's own, so it is what runs. bf16
  // elements take f16's line.
  for (const char *type : {"f16", "bf16"}) {
    const std::string source = "program sgd(g: " + std::string(type) +
                               "[N] local, w: f32[N] replicated, lr: f32) {\n"
                               "    gs = allreduce(sum, g);\n"
                               "    w1 = update(w, w - lr * f32(gs));\n}\n";
    auto s = schedule(source);
    StepTime t = predict(*s->program, {{"N", 1000}, {"P", 2}}, testMachine());
    REQUIRE(t.launches.at(0).collectives.size() == 1);
    const CollectiveTime &ar = t.launches[0].collectives[0];
    INFO(type);
    CHECK(ar.algorithm == Algorithm::Tree);
    CHECK(ar.seconds == Approx(18e-6));
    CHECK(ar.alternatives == "library 28 us");
  }
}

TEST_CASE("the level follows the ranks per node", "[tune]") {
  auto s = schedule(kSgd);
  Machine m = testMachine();
  // 8 ranks > 4 per node: the network level, where only a ring is priced:
  // 100 us * 14 steps + 2 * 7/8 * 4000 B / 100 MB/s = 1400 + 70 us.
  StepTime t = predict(*s->program, {{"N", 1000}, {"P", 8}}, m);
  const CollectiveTime &ar = t.launches[0].collectives[0];
  CHECK(ar.level == Level::Network);
  CHECK(ar.algorithm == Algorithm::Ring);
  CHECK(ar.seconds == Approx(1470e-6));
}

TEST_CASE("a fused collective: its memory and its direct transfers add up "
          "on a shared-memory machine",
          "[tune]") {
  auto s = schedule(kSgd, "fused");
  Machine m = testMachine();
  StepTime t = predict(*s->program, {{"N", 1000}, {"P", 2}}, m);
  REQUIRE(t.launches.size() == 1);
  const LaunchTime &k = t.launches[0];
  REQUIRE(k.collectives.size() == 2);
  // rs: direct 2 us + 2000 B / 1 GB/s; ag the same.
  CHECK(k.collectives[0].algorithm == Algorithm::Direct);
  CHECK(k.collectives[0].seconds == Approx(2e-6 + 2e-6));
  // Memory from the report: read g whole, w's block and lr: 4*N + 4*N/P +
  // 4 = 6004, write w gathered: 4*N = 4000: 10004 B = 10.004 us (zero
  // copy: the driver's symmetric memory).
  analysis::LaunchCost cost = analysis::analyzeLaunches(*s->program)[0];
  const ir::DimEnv at{{"N", 1000}, {"P", 2}};
  double read = *cost.read.evaluate(at);
  double write = *cost.write.evaluate(at);
  double staging = *cost.staging.evaluate(at);
  CHECK(read == 6004);
  CHECK(write == 4000);
  CHECK(k.memorySeconds == Approx(10004e-9));
  // launch + latencies (fixed) + memory + transfers (shared: added).
  CHECK(k.fixed == Approx(1e-6 + 2e-6 + 2e-6));
  CHECK(k.seconds == Approx(1e-6 + 4e-6 + 10004e-9 + 4e-6));
  // With the staging copies: g in (2 * 4*N), w out and in (4 * 4*N).
  CHECK(staging == 24000);
  StepTime st = predict(*s->program, at, m, /*staging=*/true);
  CHECK(st.launches[0].memorySeconds == Approx(34004e-9));
  // Overlapped (a GPU): the larger of memory and transfers.
  m.fusedOverlaps = true;
  StepTime g = predict(*s->program, at, m);
  CHECK(g.launches[0].seconds == Approx(1e-6 + 4e-6 + 10004e-9));
}

const char *const kMlp = R"(
program mlp(x: f32[B, H] sliced(1), w: f32[H, H] sliced(0)) {
    y  = matmul(x, w);
    ys = allreduce(sum, y);
    return ys;
}
schedule parts for mlp {
    overlap(y, ys) chunks 4;
}
)";

TEST_CASE("an overlap in K parts: the fill, the drain and the larger part",
          "[tune]") {
  Machine m = testMachine();
  ir::DimEnv sizes{{"B", 100}, {"H", 100}, {"P", 2}};
  auto plain = schedule(kMlp);
  StepTime p = predict(*plain->program, sizes, m);
  REQUIRE(p.launches.size() == 2);
  // matmul: 2 * 100 * 100 * 50 FLOP at 2 GFLOP/s = 500 us; memory: read
  // 100*50 (x's block... the report's count) is far less.
  const LaunchTime &mm = p.launches[0];
  CHECK(mm.computeSeconds == Approx(500e-6));
  CHECK(mm.seconds == Approx(1e-6 + 500e-6));
  // allreduce of 40000 B on 2: library 20 us + 40000 / 0.5 GB/s = 100 us.
  const LaunchTime &ar = p.launches[1];
  CHECK(ar.seconds == Approx(100e-6));
  CHECK(ar.fixed == Approx(20e-6));
  CHECK(p.seconds == Approx(601e-6));

  auto parts = schedule(kMlp, "parts");
  StepTime o = predict(*parts->program, sizes, m);
  // Parts: matmul 1 + 500/4 = 126 us, allreduce 20 + 80/4 = 40 us;
  // concurrent: 126 + 40 + 3 * 126 = 544 us.
  CHECK(o.launches[0].overlapWith == 1);
  CHECK(o.launches[0].chunks == 4);
  CHECK(o.launches[0].overlapped == Approx(544e-6));
  CHECK(o.launches[1].overlapped == 0);
  CHECK(o.seconds == Approx(544e-6));
  // Alternating (the cores take turns): 4 * (126 + 40) = 664 us, slower
  // than no overlap, which the tuner must then see.
  m.overlapConcurrent = false;
  StepTime a = predict(*parts->program, sizes, m);
  CHECK(a.seconds == Approx(664e-6));
}

TEST_CASE("a matmul packs its right-hand operand once a block of rows: "
          "each part of its rows its own blocks, once in all for parts that "
          "are batches",
          "[tune]") {
  const Machine m = testMachine("matmul-pack 10 ns\n");
  CHECK(m.matmulPack == Approx(10e-9));
  const std::string text = printed(m);
  CHECK(llvm::StringRef(text).contains("matmul-pack 1e-08 s\n"));
  ir::DimEnv sizes{{"B", 100}, {"H", 100}, {"P", 2}};

  // w: [H, H] sliced(0): a rank's block is 50 x 100 = 5000 elements.
  auto plain = schedule(kMlp);
  auto launches = analysis::analyzeLaunches(*plain->program);
  REQUIRE(launches[0].kind == analysis::LaunchCost::Kind::Matmul);
  CHECK(launches[0].packed.str() == "H^2/P");
  CHECK(launches[0].matmulRows.str() == "B");
  CHECK(launches[0].matmulCols.str() == "H");
  CHECK(launches[0].matmulBatch.str() == "1");
  CHECK_FALSE(launches[0].batched);
  StepTime t = predict(*plain->program, sizes, m);
  // 100 rows on 2 threads: one block of rows, halved twice for two tasks a
  // thread (1 column block), blocks of 32 rows: 4 blocks, each packing all
  // of w: 4 * 5000 elements at 10 ns = 200 us beside the 500 us of FLOPs
  // and the launch.
  CHECK(t.launches[0].packOnce == Approx(50e-6));
  CHECK(t.launches[0].packSeconds == Approx(200e-6));
  CHECK(t.launches[0].seconds == Approx(1e-6 + 200e-6 + 500e-6));
  // In 4 parts of 25 rows each part is halved twice too (blocks of 8
  // rows): 4 blocks, 200 us a part; 1 + 200 + 500/4 = 326 us a part; the
  // allreduce 40 us a part; concurrent: 326 + 40 + 3 * 326 = 1344 us.
  auto parts = schedule(kMlp, "parts");
  StepTime o = predict(*parts->program, sizes, m);
  CHECK(o.launches[0].overlapped == Approx(1344e-6));

  // Consumed by a reducescatter over 2 members, a part is a piece of each
  // member's rows: a call of 2 batches sharing w. One thread a rank, w
  // [500, 1000] (3 column blocks), 1600 rows: the whole call 3 blocks of
  // rows (at most 768 each), 3 * 5 ms of packing; a quarter of the rows
  // (400) 1 block, 5 ms; a piece of 200 rows of each of the 2 members' 2
  // batches of 1 block each, 10 ms.
  Machine one = m;
  one.threadsPerRank = 1;
  const ir::DimEnv big{{"B", 1600}, {"H", 1000}, {"P", 2}};
  CHECK(predict(*plain->program, big, one).launches[0].packSeconds ==
        Approx(15e-3));
  auto rows = predict(*parts->program, big, one);
  auto scattered = schedule(std::string(kMlp) + R"(
schedule scattered for mlp {
    (rs, ag) = split(ys);
    overlap(y, rs) chunks 4;
}
)",
                            "scattered");
  auto pieces = predict(*scattered->program, big, one);
  // A part's matmul: 1 us + its packing + 2 * 1600 * 1000 * 500 / 4 FLOP at
  // 2 GFLOP/s (200 ms); the collective's part is far shorter, so the pair
  // is 4 matmul parts and one collective part (concurrent).
  auto pair = [](const StepTime &s, double matmulPart) {
    const LaunchTime &c = s.launches[1];
    return 4 * matmulPart + c.fixed + (c.seconds - c.fixed) / 4;
  };
  CHECK(rows.launches[0].overlapped ==
        Approx(pair(rows, 1e-6 + 5e-3 + 200e-3)));
  CHECK(pieces.launches[0].overlapped ==
        Approx(pair(pieces, 1e-6 + 10e-3 + 200e-3)));

  // A batched matmul [E, C, H] x [E, H, F] (E sliced): the parts of an
  // alltoall's overlap are batches, and each packs its own: the packing is
  // part of the compute that the parts share out.
  auto moe = schedule(R"(
program moe(x: f32[E, C, H] sliced(0), w: f32[E, H, F] sliced(0)) {
    y = matmul(x, w);
    return y;
}
)");
  auto batched = analysis::analyzeLaunches(*moe->program);
  REQUIRE(batched[0].kind == analysis::LaunchCost::Kind::Matmul);
  CHECK(batched[0].packed.str() == "E*F*H/P");
  CHECK(batched[0].batched);
  StepTime b = predict(
      *moe->program, {{"E", 4}, {"C", 10}, {"H", 10}, {"F", 10}, {"P", 2}}, m);
  // 2 * 10 * 10 * 10 FLOP a batch, 2 batches: 4000 FLOP at 2 GFLOP/s = 2
  // us; 2 batches are 2 tasks for 2 threads, so each batch's 10 rows are
  // halved (2 blocks, of 8 and 2 rows): 2 * 200 elements packed at 10 ns =
  // 4 us; the launch 1 us; none fixed but the launch.
  CHECK(b.launches[0].matmulBatch == 2);
  CHECK(b.launches[0].matmulRows == 10);
  CHECK(b.launches[0].computeSeconds == Approx(2e-6));
  CHECK(b.launches[0].packSeconds == Approx(4e-6));
  CHECK(b.launches[0].fixed == Approx(1e-6));
  CHECK(b.launches[0].seconds == Approx(7e-6));
  // Without the line (a GPU's file): no packing.
  CHECK(
      predict(*plain->program, sizes, testMachine()).launches[0].packSeconds ==
      0);
}

TEST_CASE("a batched matmul beside an alltoall in parts: one call per "
          "member's rows, each packing its batches once a block of rows",
          "[tune]") {
  // lower/Chunks.cpp: the combine's parts (matmul, then alltoall) and the
  // dispatch's (alltoall, then matmul) are batches; each part is a call
  // per member's rows, C / P of them, each packing the part's batches.
  Machine m = testMachine("matmul-pack 10 ns\n"
                          "collective alltoall library node latency 10 us "
                          "bandwidth 0.5 GB/s\n");
  m.threadsPerRank = 1;
  const char *const kMoe = R"(
program moe(x: f32[E, C, H] sliced(1), w1: f32[E, H, F] sliced(0),
            w2: f32[E, F, H] sliced(0)) {
    d = alltoall(x, dim=0);
    u = matmul(d, w1);
    o = matmul(u, w2);
    y = alltoall(o, dim=1);
    return y;
}
schedule combine for moe {
    overlap(o, y) chunks 4;
}
schedule dispatch for moe {
    overlap(d, u) chunks 2;
}
)";
  // A rank's 4 experts of 16 rows: each matmul 2 * 4 * 16 * 10 * 100 FLOP
  // at 2 GFLOP/s = 64 us, B 4 * 10 * 100 elements at 10 ns = 40 us packed
  // once (4 batches are tasks enough for one thread), above the memory's
  // time: 1 + 64 + 40 = 105 us.
  const ir::DimEnv sizes{{"E", 8}, {"C", 16}, {"H", 10}, {"F", 100}, {"P", 2}};
  // The plan unpacks d after its alltoall along dimension 1 and packs o
  // before y's (launches 2 and 5: a rank's block, 4 experts of 16 x 10
  // f32, 2560 bytes, read and written: 1 + 5.12 us).
  auto plain = schedule(kMoe);
  StepTime t = predict(*plain->program, sizes, m);
  REQUIRE(t.launches.size() == 6);
  for (unsigned i : {1u, 4u})
    CHECK(t.launches[i].seconds == Approx(1e-6 + 5.12e-6));
  for (unsigned i : {2u, 3u}) {
    CHECK(t.launches[i].packSeconds == Approx(40e-6));
    CHECK(t.launches[i].seconds == Approx(105e-6));
  }
  // Concurrent parts, the matmul's the larger: the first part of one, the
  // last of the other, and K - 1 more of the matmul's.
  auto pair = [](const LaunchTime &coll, double matmulPart, double k) {
    return k * matmulPart + coll.fixed + (coll.seconds - coll.fixed) / k;
  };

  // Combine in 4 parts: 1 expert of 8 rows for each of the 2 members, a
  // call each; one task, but 8 rows are one micro-tile, not halved (16
  // would be): 2 packings of the part's B (1000 elements, 10 us), 20 us a
  // part against its quarter of 40 us. A part: 1 + 64 / 4 + 20 = 37 us.
  // The parts write o packed themselves: no pack launch.
  auto combine = schedule(kMoe, "combine");
  StepTime c = predict(*combine->program, sizes, m);
  REQUIRE(c.launches.size() == 5);
  REQUIRE(c.launches[3].overlapWith == 4);
  CHECK(c.launches[3].overlapped ==
        Approx(pair(c.launches[4], 1e-6 + 16e-6 + 20e-6, 4)));

  // Dispatch in 2 parts: 2 experts of 8 rows from each of the 2 members,
  // a call each, 2 tasks: one block each, 2 packings of the part's B (2000
  // elements, 20 us), 40 us a part against its half of 40 us. A part:
  // 1 + 64 / 2 + 40 = 73 us.
  // The parts read d where it arrived: no unpack launch.
  auto dispatch = schedule(kMoe, "dispatch");
  StepTime d = predict(*dispatch->program, sizes, m);
  REQUIRE(d.launches.size() == 5);
  REQUIRE(d.launches[0].overlapWith == 1);
  CHECK(d.launches[0].overlapped ==
        Approx(pair(d.launches[0], 1e-6 + 32e-6 + 40e-6, 2)));

  // On one rank (P = 1) a dispatch part is one call of its 4 experts of 16
  // rows, packing them once: the packing is shared out, 1 + 128 / 2 + 80 /
  // 2 = 105 us a part.
  const ir::DimEnv one{{"E", 8}, {"C", 16}, {"H", 10}, {"F", 100}, {"P", 1}};
  StepTime single = predict(*dispatch->program, one, m);
  CHECK(single.launches[0].overlapped ==
        Approx(pair(single.launches[0], 1e-6 + 64e-6 + 40e-6, 2)));
}

TEST_CASE("matmulRowBlocks: the CPU target's blocks of rows, by hand and "
          "as the runtime cuts them",
          "[tune]") {
  // One column block (at most 480 columns), one thread: 1 row block of up
  // to 768 rows, halved while there are fewer than 2 tasks.
  CHECK(matmulRowBlocks(1, 100, 100, 1) == 2);  // 2 blocks of 56
  CHECK(matmulRowBlocks(1, 768, 100, 1) == 2);  // 2 blocks of 384
  CHECK(matmulRowBlocks(1, 1600, 100, 1) == 3); // 3 blocks of 536
  // 2 column blocks already make 2 tasks for 1 thread.
  CHECK(matmulRowBlocks(1, 512, 512, 1) == 1);
  CHECK(matmulRowBlocks(1, 1024, 512, 1) == 2);
  // 2 threads want 4 tasks: 2 column blocks, 2 row blocks.
  CHECK(matmulRowBlocks(1, 512, 512, 2) == 2);
  // Batches are tasks too.
  CHECK(matmulRowBlocks(2, 128, 512, 1) == 1);
  CHECK(matmulRowBlocks(4, 64, 100, 2) == 1);
  // A few rows: blocks of a whole micro-tile (8 rows) at least.
  CHECK(matmulRowBlocks(1, 8, 100, 4) == 1);
  CHECK(matmulRowBlocks(1, 24, 100, 4) == 3);
#ifdef COCONET_HAVE_RT_CPU
  // The runtime's own split (runtime/src/cpu/matmul.cpp), over shapes whose
  // blocks are whole micro-tiles of 4 or 8 rows (the runtime's tile is 8
  // rows with AVX-512, 4 without).
  for (int64_t batch : {1, 2, 3, 8})
    for (int64_t rows : {64, 128, 192, 256, 512, 768, 1024, 1536, 4096})
      for (int64_t cols : {64, 256, 480, 512, 1000, 2048})
        for (int64_t threads : {1, 2, 4}) {
          INFO(batch << " x " << rows << " x " << cols << " on " << threads);
          CHECK(matmulRowBlocks(batch, rows, cols, threads) ==
                rt::cpu::matmulRowBlocks(batch, rows, cols, threads));
        }
#endif
}

TEST_CASE("what the machine does not price is an error that says so",
          "[tune]") {
  Machine m = testMachine();
  m.matmulRate.clear();
  auto s = schedule(kMlp);
  auto launches = planned(*s->program);
  auto t =
      predictStep(*s->program, launches, m, {{"B", 8}, {"H", 8}, {"P", 2}});
  REQUIRE_FALSE(static_cast<bool>(t));
  CHECK(llvm::StringRef(llvm::toString(t.takeError()))
            .contains("has no matmul rate for f32; add a line 'matmul f32"));
  auto unbound = predictStep(*s->program, launches, testMachine(), {{"P", 2}});
  REQUIRE_FALSE(static_cast<bool>(unbound));
  CHECK(llvm::StringRef(llvm::toString(unbound.takeError()))
            .contains("has a size that is not bound"));
}

TEST_CASE("a collective of one member costs its copy, priced or not",
          "[tune]") {
  // gs's input is a value, not a parameter: the lowering gives gs a
  // buffer of its own, and one member copies into it.
  auto s = schedule(R"(
program sgd(g: f32[N] local, w: f32[N] replicated, lr: f32) {
    h  = g * 0.5;
    gs = allreduce(sum, h);
    w1 = update(w, w - lr * gs);
}
)");
  Machine m = testMachine();
  m.collectives.clear();
  StepTime t = predict(*s->program, {{"N", 1000}, {"P", 1}}, m);
  REQUIRE(t.launches.size() == 3);
  REQUIRE(t.launches[1].collectives.size() == 1);
  CHECK(t.launches[1].collectives[0].seconds == 0);
  CHECK(t.launches[1].collectives[0].alternatives ==
        "one member: nothing moves");
  // The collective copies its 4000 B input to its output: 8 us at 1 GB/s.
  CHECK(t.launches[1].seconds == Approx(8000e-9));
}

TEST_CASE("a collective of one member whose output is its parameter input "
          "costs nothing",
          "[tune]") {
  // The lowering makes gs g itself on one rank (Buffer::loneInput): no
  // copy, and the kernel reads g.
  auto s = schedule(kSgd);
  Machine m = testMachine();
  StepTime one = predict(*s->program, {{"N", 1000}, {"P", 1}}, m);
  REQUIRE(one.launches.size() == 2);
  REQUIRE(one.launches[0].collectives.size() == 1);
  CHECK(one.launches[0].collectives[0].alternatives ==
        "one member: its output is g itself");
  CHECK(one.launches[0].seconds == 0);
  CHECK(one.seconds == Approx(1e-6 + 12004e-9));
  // The footprint: g and w (and lr), not gs besides.
  CHECK(one.footprint == 8004);
  // On two ranks it moves its bytes as ever.
  StepTime two = predict(*s->program, {{"N", 1000}, {"P", 2}}, m);
  CHECK(two.launches[0].seconds == Approx(28e-6));
  CHECK(two.footprint == 12004);
}

TEST_CASE("the CUDA target's one-shot allreduce pays the copy into the "
          "team's memory",
          "[tune]") {
  std::string text = kMachine;
  text.replace(text.find("target cpu"), 10, "target cuda");
  text += "collective allreduce oneshot node latency 1 us bandwidth 1 GB/s\n";
  Parsed p = parseText(text);
  INFO(p.diagnostics);
  REQUIRE(p.machine);
  const ir::DimEnv sizes = {{"N", 1000}, {"P", 2}};
  // One-shot on 2 ranks: 1 us * 1 step + (2 - 1) * 4000 B / 1 GB/s = 5 us,
  // and the copy of the 4000-byte input into symmetric memory, read and
  // written at 1 GB/s: 8 us. 13 us, cheaper than the library's 28 us.
  auto s = schedule(std::string(kSgd) +
                        "schedule one for sgd { algorithm(gs, oneshot); }\n",
                    "one");
  StepTime t = predict(*s->program, sizes, *p.machine);
  const CollectiveTime &ar = t.launches[0].collectives[0];
  CHECK(ar.algorithm == Algorithm::OneShot);
  CHECK(ar.seconds == Approx(13e-6));
  CHECK(ar.alternatives == "library 28 us, tree 34 us");
  // The same on the CPU target: no copy (its teams read the input where
  // MPI's ranks put it).
  Machine cpu = testMachine();
  cpu.collectives = p.machine->collectives;
  StepTime c = predict(*s->program, sizes, cpu);
  CHECK(c.launches[0].collectives[0].seconds == Approx(5e-6));
}

TEST_CASE("ordered sums, random draws and math library calls add compute "
          "time, shared by threads as far as the sums go",
          "[tune]") {
  auto s = schedule(R"(
program c(x: f32[N] replicated, y: f32[B, H] replicated, g: f32[H] replicated,
          b: f32[H] replicated, p: f32, seed: u64) {
    n = norm(x);
    l = layernorm(y, g, b, 0.00001);
    d = dropout(x, p, seed);
    e = exp(x) + gelu(x) + sqrt(x) + exp(p);
    return n, l, d, e;
}
)");
  const Machine m =
      testMachine("ordered-sum 2 ns\nrandom-draw 4 ns\nlibm-call 3 ns\n");
  CHECK(m.orderedSum == Approx(2e-9));
  CHECK(m.randomDraw == Approx(4e-9));
  CHECK(m.libmCall == Approx(3e-9));
  StepTime t = predict(*s->program, {{"N", 1000}, {"B", 3}, {"H", 100}}, m);
  // (launch 1 is the layer norm's epsilon, a scalar kernel.)
  REQUIRE(t.launches.size() == 5);
  // norm: one sum of 1000 elements on one of the 2 threads: 2 us; its
  // 4004 bytes take 4.004 us at 1 byte per ns, the larger.
  CHECK(t.launches[0].computeSeconds == Approx(2e-6));
  CHECK(t.launches[0].seconds == Approx(1e-6 + 4004e-9));
  // layernorm: 2 sums (mean, variance) of each of 3 rows of 100: 600
  // elements, the 6 sums shared by 2 threads: 600 * 2 ns / 2.
  CHECK(t.launches[2].computeSeconds == Approx(600e-9));
  // dropout: 1000 draws of 4 ns over 2 threads: 2 us, below its 8012
  // bytes' 8.012 us.
  CHECK(t.launches[3].computeSeconds == Approx(2e-6));
  CHECK(t.launches[3].seconds == Approx(1e-6 + 8012e-9));
  // exp and gelu (not sqrt, an instruction, nor exp(p), made once before
  // the loop): 2000 calls of 3 ns over 2 threads: 3 us.
  CHECK(t.launches[4].computeSeconds == Approx(3e-6));
  // On 1 thread the draws take 4 us, the norm's sum still 2 us.
  Machine one = m;
  one.threadsPerRank = 1;
  StepTime t1 = predict(*s->program, {{"N", 1000}, {"B", 3}, {"H", 100}}, one);
  CHECK(t1.launches[0].computeSeconds == Approx(2e-6));
  CHECK(t1.launches[2].computeSeconds == Approx(1200e-9));
  CHECK(t1.launches[3].computeSeconds == Approx(4e-6));
  CHECK(t1.launches[4].computeSeconds == Approx(6e-6));
  // Without the lines: no compute time (a GPU's machine file).
  StepTime none =
      predict(*s->program, {{"N", 1000}, {"B", 3}, {"H", 100}}, testMachine());
  for (const LaunchTime &l : none.launches)
    CHECK(l.computeSeconds == 0);
}

TEST_CASE("roundings to f16 and bf16 are counted where the body computes in "
          "float and rounds, and priced per thread",
          "[tune]") {
  auto s = schedule(R"(
program r(a: f16[N] replicated, b: f16[N] replicated, x: f32[N] replicated,
          c: bf16[N] replicated, q: f16) {
    h = (a + b) * (q + q);
    k = max(-a, select(a > b, a, b));
    y = f16(x);
    z = x * 2.0;
    w = c + c;
    return h, k, y, z, w;
}
)");
  const ir::DimEnv sizes{{"N", 1000}};
  auto launches = analysis::analyzeLaunches(*s->program);
  auto rounded = [&](size_t i) { return *launches[i].rounded.evaluate(sizes); };
  REQUIRE(launches.size() == 5);
  // (a + b) * (q + q): the add and the multiply; q + q is made once,
  // before the loop.
  CHECK(rounded(0) == 2000);
  // max(-a, select(...)): the max only (negation is exact; a comparison
  // and a select of rounded values round nothing).
  CHECK(rounded(1) == 1000);
  // f16(x): one; x * 2.0 in f32: none; c + c in bf16: one.
  CHECK(rounded(2) == 1000);
  CHECK(launches[3].rounded.isZero());
  CHECK(rounded(4) == 1000);

  const Machine machine = testMachine("rounding 0.5 ns\n");
  CHECK(machine.rounding == Approx(0.5e-9));
  const std::string text = printed(machine);
  CHECK(llvm::StringRef(text).contains("rounding 5e-10 s\n"));
  // 2000 roundings of 0.5 ns on 2 threads: 0.5 us of compute, under the
  // memory's 6 us (6002 bytes at 1 byte per ns).
  StepTime t = predict(*s->program, sizes, machine);
  CHECK(t.launches[0].computeSeconds == Approx(0.5e-6));
  CHECK(t.launches[0].seconds == Approx(1e-6 + 6002e-9));
  Machine one = machine;
  one.threadsPerRank = 1;
  one.rounding = 5e-9;
  StepTime t1 = predict(*s->program, sizes, one);
  // On 1 thread at 5 ns: 10 us, more than the memory's: the launch's time.
  CHECK(t1.launches[0].computeSeconds == Approx(10e-6));
  CHECK(t1.launches[0].seconds == Approx(1e-6 + 10e-6));
  // Without the line (a GPU's file): none.
  CHECK(predict(*s->program, sizes, testMachine()).launches[0].computeSeconds ==
        0);
}

TEST_CASE("write-allocate and cache lines: values, refusals, round trip",
          "[tune]") {
  const Machine machine =
      testMachine("write-allocate yes\ncache 32 MiB bandwidth 100 GB/s\n");
  CHECK(machine.writeAllocate);
  CHECK(machine.cacheSize == Approx(32.0 * 1024 * 1024));
  CHECK(machine.cacheBandwidth == Approx(1e11));
  CHECK_FALSE(testMachine().writeAllocate);
  CHECK(testMachine().cacheSize == 0);
  const std::string text = printed(machine);
  CHECK(llvm::StringRef(text).contains("write-allocate yes\n"));
  Parsed again = parseText(text);
  REQUIRE(again.machine);
  CHECK(again.machine->writeAllocate);
  CHECK(again.machine->cacheSize == Approx(machine.cacheSize));
  CHECK(again.machine->cacheBandwidth == Approx(1e11));

  struct Case {
    const char *line;
    const char *message;
  };
  const Case cases[] = {
      {"write-allocate maybe",
       "m.machine:20:16: error: 'write-allocate' needs whether a store reads "
       "the line it misses (yes, no); got 'maybe'"},
      {"cache 32 GB/s bandwidth 1 GB/s",
       "m.machine:20:10: error: 'cache' needs a size (B, KB, MB, GB, KiB, "
       "MiB, GiB)"},
      {"cache 32 MiB 100 GB/s",
       "m.machine:20:14: error: 'cache' needs its bandwidth (bandwidth); got "
       "'100'"},
      {"cache 0 MiB bandwidth 1 GB/s", "'cache' needs a number > 0"},
      {"cache 32 MiB bandwidth 1 GiB", "'cache' needs a bandwidth"},
      {"cache 32 MiB bandwidth", "'cache' needs a bandwidth"},
  };
  for (const Case &c : cases) {
    Parsed bad = parseText(std::string(kMachine) + c.line + "\n");
    INFO(c.line << "\n" << bad.diagnostics);
    CHECK_FALSE(bad.machine);
    CHECK(llvm::StringRef(bad.diagnostics).contains(c.message));
  }
}

TEST_CASE("allocating stores: a new result's bytes cross twice, an update's "
          "once",
          "[tune]") {
  auto f = schedule(R"(
program fresh(x: f32[N] replicated, y: f32[N] replicated) {
    z = y * 0.5 + x;
    return z;
}
)");
  auto u = schedule(R"(
program inplace(x: f32[N] replicated, y: f32[N] replicated) {
    z = update(y, y * 0.5 + x);
}
)");
  const Machine machine = testMachine("write-allocate yes\n");
  const ir::DimEnv sizes = {{"N", 1000}};
  const ir::Program *fresh = f->program.get();
  const ir::Program *inplace = u->program.get();
  // fresh: reads x, y (8000 B), writes z (4000 B), which it did not read:
  // 4000 B more with allocating stores. 1 byte per ns, 1 us launch.
  auto launches = analysis::analyzeLaunches(*fresh);
  REQUIRE(launches.size() == 1);
  CHECK(launches[0].fresh.evaluate(sizes) == 4000);
  CHECK(predict(*fresh, sizes, machine).seconds == Approx(1e-6 + 16e-6));
  CHECK(predict(*fresh, sizes, testMachine()).seconds == Approx(1e-6 + 12e-6));
  // inplace: writes y, which it reads: 12000 B either way.
  auto updates = analysis::analyzeLaunches(*inplace);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].fresh.evaluate(sizes) == 0);
  CHECK(predict(*inplace, sizes, machine).seconds == Approx(1e-6 + 12e-6));
}

TEST_CASE("the cache holds a step's buffers that fit, on all of a node's "
          "ranks, and the share of them it can of larger ones",
          "[tune]") {
  auto s = schedule(kSgd);
  // N = 1000 on P = 2: the step touches g (4000 B, the allreduce reads
  // it), gs (4000 B, written by it, read by the kernel), w (4000 B, read
  // and updated in place) and lr (4 B): 12004 B a rank, 24008 B for the 2
  // ranks of a node.
  const ir::DimEnv sizes = {{"N", 1000}, {"P", 2}};
  const std::string base = std::string(kMachine) + "write-allocate yes\n";
  Parsed fits = parseText(base + "cache 30 KB bandwidth 4 GB/s\n");
  Parsed spills = parseText(base + "cache 20 KB bandwidth 4 GB/s\n");
  REQUIRE(fits.machine);
  REQUIRE(spills.machine);
  StepTime in = predict(*s->program, sizes, *fits.machine);
  CHECK(in.footprint == Approx(12004));
  CHECK(in.cacheHits == 1);
  // The kernel's 12004 B at 4 bytes per ns.
  REQUIRE(in.launches.size() == 2);
  CHECK(in.launches[1].memorySeconds == Approx(12004e-9 / 4));
  // 12004 B alone would fit 20 KB; the node's 2 ranks' 24008 B do not: the
  // cache holds 20000 / 24008 of them, the rest comes from memory at 1
  // byte per ns.
  StepTime out = predict(*s->program, sizes, *spills.machine);
  CHECK(out.footprint == Approx(12004));
  const double h = 20000.0 / 24008;
  CHECK(out.cacheHits == Approx(h));
  CHECK(out.launches[1].memorySeconds == Approx(12004e-9 * (h / 4 + (1 - h))));
  // On one rank (P = 1) the step's 12004 B fit 20 KB.
  StepTime one = predict(*s->program, {{"N", 1000}, {"P", 1}}, *spills.machine);
  CHECK(one.cacheHits == 1);
  // The fused reducescatter + update + allgather: g (4000 B: both members'
  // blocks of it are read), w (read a block, 2000 B, and all 4000 B of it
  // written by the allgather in place) and lr: 8004 B, not the 6004 B of
  // w's block alone.
  auto fused = schedule(kSgd, "fused");
  StepTime f = predict(*fused->program, sizes, *spills.machine);
  CHECK(f.footprint == Approx(8004));
  CHECK(f.cacheHits == 1);
}

TEST_CASE("a collective line's bandwidth beyond the cache: the step's share "
          "the cache holds at one, the rest at the other",
          "[tune]") {
  // kMachine's library allreduce line with 0.1 GB/s beyond the cache.
  std::string text = std::string(kMachine) + "cache 20 KB bandwidth 4 GB/s\n";
  const std::string plain =
      "collective allreduce library node latency 10 us bandwidth 0.5 GB/s\n";
  const size_t at = text.find(plain);
  REQUIRE(at != std::string::npos);
  text.replace(at, plain.size(),
               "collective allreduce library node latency 10 us bandwidth "
               "0.5 GB/s beyond-cache 0.1 GB/s\n");
  Parsed p = parseText(text);
  INFO(p.diagnostics);
  REQUIRE(p.machine);
  const LinkCost *line =
      p.machine->find(Collective::AllReduce, Algorithm::Library, Level::Node);
  REQUIRE(line);
  CHECK(line->bandwidth == Approx(0.5e9));
  CHECK(line->beyondCache == Approx(0.1e9));
  // Printed and read back, the same line.
  const std::string again = printed(*p.machine);
  CHECK(llvm::StringRef(again).contains(
      "collective allreduce library node latency 1e-05 s bandwidth 5e+08 B/s "
      "beyond-cache 1e+08 B/s\n"));
  Parsed back = parseText(again);
  REQUIRE(back.machine);
  CHECK(
      back.machine->find(Collective::AllReduce, Algorithm::Library, Level::Node)
          ->beyondCache == Approx(0.1e9));
  // sgd on 2 ranks, N = 1000: the step's buffers 12004 B a rank, 24008 B
  // on the node; the cache holds h = 20000 / 24008 of them. The allreduce:
  // 2 steps of 10 us and 4000 B, h of them at 2 ns a byte, the rest at 10.
  auto s = schedule(kSgd);
  StepTime t = predict(*s->program, {{"N", 1000}, {"P", 2}}, *p.machine);
  const double h = 20000.0 / 24008;
  REQUIRE(t.launches.at(0).collectives.size() == 1);
  CHECK(t.launches[0].collectives[0].seconds ==
        Approx(20e-6 + 4000 * (h * 2e-9 + (1 - h) * 10e-9)));

  struct Case {
    const char *line;
    const char *message;
  };
  const Case cases[] = {
      {"collective allgather oneshot node latency 1 us bandwidth 1 GB/s "
       "beyond 1 GB/s",
       "m.machine:20:65: error: 'collective allgather oneshot node' needs "
       "the end of the line or its bandwidth beyond the cache "
       "(beyond-cache); got 'beyond'"},
      {"collective allgather oneshot node latency 1 us bandwidth 1 GB/s "
       "beyond-cache",
       "'collective allgather oneshot node' needs a bandwidth"},
      {"collective allgather oneshot node latency 1 us bandwidth 1 GB/s "
       "beyond-cache 1 us",
       "'collective allgather oneshot node' needs a bandwidth"},
      {"collective allgather oneshot node latency 1 us bandwidth 1 GB/s "
       "beyond-cache 0 GB/s",
       "'collective allgather oneshot node' needs a number > 0"},
      {"collective allgather oneshot node latency 1 us bandwidth 1 GB/s "
       "beyond-cache 1 GB/s x",
       "unexpected 'x' after the value of 'collective allgather oneshot "
       "node'"},
  };
  for (const Case &c : cases) {
    Parsed bad = parseText(std::string(kMachine) + c.line + "\n");
    INFO(c.line << "\n" << bad.diagnostics);
    CHECK_FALSE(bad.machine);
    CHECK(llvm::StringRef(bad.diagnostics).contains(c.message));
  }
}

TEST_CASE("allocating stores count only where the cache misses", "[tune]") {
  // A new result of 4000 B (reads 8000 B): with the cache holding 1/2 of
  // the step's 12000 B, 6000 B miss: 12000 B * (0.5 / 4 + 0.5 / 1) ns plus
  // the missed half of the 4000 B written fresh, read first: 2000 B at 1
  // byte per ns.
  auto f = schedule(R"(
program fresh(x: f32[N] replicated, y: f32[N] replicated) {
    z = y * 0.5 + x;
    return z;
}
)");
  const Machine machine =
      testMachine("write-allocate yes\ncache 6 KB bandwidth 4 GB/s\n");
  StepTime t = predict(*f->program, {{"N", 1000}}, machine);
  CHECK(t.cacheHits == Approx(0.5));
  CHECK(t.launches.at(0).memorySeconds ==
        Approx(12000e-9 * (0.5 / 4 + 0.5) + 2000e-9));
}

TEST_CASE("the tuner names an algorithm only where it is priced at least 2% "
          "faster than what runs",
          "[tune]") {
  // 2 ranks, 4000 bytes: the library's allreduce 2 * 10 us + 4000 B / 0.5
  // GB/s = 28 us runs (the tree's 34 us is dearer); a one-shot of 1 us a
  // byte-free step plus 4000 B / 1 GB/s is 1% cheaper at 23.72 us, 3% at
  // 23.16 us.
  struct Case {
    const char *latency;
    double seconds;
    bool named;
  };
  for (const Case &k :
       {Case{"23.72", 27.72e-6, false}, Case{"23.16", 27.16e-6, true}}) {
    INFO("one-shot latency " << k.latency << " us");
    const Machine m =
        testMachine(std::string("collective allreduce oneshot node latency ") +
                    k.latency + " us bandwidth 1 GB/s\n");
    auto s = schedule(kSgd);
    StepTime t = predict(*s->program, {{"N", 1000}, {"P", 2}}, m);
    const CollectiveTime &ar = t.launches.at(0).collectives.at(0);
    REQUIRE(ar.algorithm == Algorithm::Library);
    CHECK(ar.seconds == Approx(28e-6));
    REQUIRE(ar.cheapest == Algorithm::OneShot);
    CHECK(ar.cheapestSeconds == Approx(k.seconds));
    Candidate c;
    c.program = s->program->clone();
    c.summary = "(unscheduled)";
    CHECK(chooseAlgorithms(c, t, m) == k.named);
    CHECK(c.summary == (k.named ? "algorithm(gs, oneshot)" : "(unscheduled)"));
    CHECK(c.directives.size() == (k.named ? 1u : 0u));
  }
}

TEST_CASE("the machine's collectives are the IR's communication stages",
          "[tune]") {
  // tune::Collective comes from ir/StageKinds.def: every communication
  // stage has one, of its printed name; no other stage has one.
  unsigned collectives = 0;
  const ir::StageKind kinds[] = {
#define STAGE(Name, Printed, Description) ir::StageKind::Name,
#include "ir/StageKinds.def"
  };
  for (ir::StageKind k : kinds) {
    INFO(ir::stageKindName(k).str());
    std::optional<tune::Collective> c = tune::collectiveOf(k);
    CHECK(c.has_value() == ir::isCommunication(k));
    if (c) {
      ++collectives;
      CHECK(tune::collectiveName(*c) == ir::stageKindName(k));
    }
  }
  CHECK(collectives == 8);
}
