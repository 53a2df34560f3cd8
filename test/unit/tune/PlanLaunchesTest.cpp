//===- PlanLaunchesTest.cpp - the tuner prices what the plan runs ---------===//
//
// tune::planLaunches: the launches of a step as the lowered plan runs them
// (a refused fused collective in sequence, a refused overlap whole, the
// copies and packs the lowering adds), and on every enumerated schedule of
// every sample a launch for every stage, in an order the values allow.
//
//===----------------------------------------------------------------------===//

#include "../analysis/AnalysisTestUtil.h"

#include "analysis/Report.h"
#include "diag/Diagnostic.h"
#include "lower/Lower.h"
#include "lower/Plan.h"
#include "sema/Sema.h"
#include "tune/CostModel.h"
#include "tune/Machine.h"
#include "tune/PlanLaunches.h"
#include "tune/ScheduleSpace.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace coconet;
using analysis::LaunchCost;
using test::schedule;

namespace {

tune::StepLaunches planned(const ir::Program &program) {
  auto launches = tune::planLaunches(program);
  if (!launches)
    FAIL(llvm::toString(launches.takeError()));
  return std::move(*launches);
}

std::vector<LaunchCost::Kind> kinds(const tune::StepLaunches &s) {
  std::vector<LaunchCost::Kind> out;
  for (const LaunchCost &l : s.launches)
    out.push_back(l.kind);
  return out;
}

using K = LaunchCost::Kind;

} // namespace

TEST_CASE("a fused collective the lowering refuses is priced in sequence",
          "[tune]") {
  // The allgather writes w, which the reducescatter reads: the plan runs
  // the three in sequence (lower/Fusion.cpp, Access), and so must the
  // price. The IR alone says one fused kernel.
  auto refused = schedule(R"(program p(w: f32[N] replicated) {
    ws = allreduce(sum, w);
    w1 = update(w, ws * 0.5);
}
schedule s for p {
    (rs, ag) = split(ws);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
)",
                          "s");
  CHECK(analysis::analyzeLaunches(*refused->program).size() == 1);
  CHECK(kinds(planned(*refused->program)) ==
        std::vector<K>{K::Collective, K::Kernel, K::Collective});

  // One the lowering takes stays one launch.
  auto taken = schedule(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
)",
                        "s");
  CHECK(kinds(planned(*taken->program)) == std::vector<K>{K::FusedCollective});
  // Asked for in sequence (coconetc --sequential), it is three.
  auto sequential = tune::planLaunches(*taken->program, /*sequential=*/true);
  REQUIRE(static_cast<bool>(sequential));
  CHECK(kinds(*sequential) ==
        std::vector<K>{K::Collective, K::Kernel, K::Collective});
}

TEST_CASE("an overlap the lowering refuses is priced whole", "[tune]") {
  const char *const kSource = R"(program p(h: f32[B, F] local, w2: f32[F, H]) {
    y = matmul(h, w2);
    r = reducescatter(sum, y);
    z = y * 2.0;
    return r, z;
}
schedule s for p {
    overlap(y, r) chunks 2;
}
)";
  // y is also read by z: its parts cannot be stored in the reducescatter's
  // order (lower/Chunks.cpp, Memory).
  auto s = schedule(kSource, "s");
  tune::StepLaunches l = planned(*s->program);
  CHECK(l.overlapInParts == std::vector<bool>{false});
  llvm::SourceMgr sm;
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  DiagnosticEngine diags(sm, os);
  auto machine = tune::parseMachine(
      llvm::MemoryBuffer::getMemBufferCopy(
          "machine t\ntarget cpu\nranks-per-node 2\nthreads-per-rank 1\n"
          "kernel-launch 1 us\nmemory-bandwidth 1 GB/s\n"
          "fused-collective shared\n"
          "matmul f32 1 GFLOP/s\noverlap concurrent\n"
          "collective reducescatter library node latency 1 us "
          "bandwidth 1 GB/s\n",
          "t.machine"),
      sm, diags);
  INFO(diagnostics);
  REQUIRE(machine);
  const ir::DimEnv sizes{{"B", 64}, {"F", 64}, {"H", 64}, {"P", 2}};
  auto t = tune::predictStep(*s->program, l, *machine, sizes);
  REQUIRE(static_cast<bool>(t));
  for (const tune::LaunchTime &launch : t->launches)
    CHECK(launch.overlapWith == -1);
  double sum = 0;
  for (const tune::LaunchTime &launch : t->launches)
    sum += launch.seconds;
  CHECK(t->seconds == Approx(sum));
}

TEST_CASE("the copies and packs the lowering adds are priced as kernels",
          "[tune]") {
  // w_old reads the old w after w1 is computed: w1 goes to its own output
  // and is copied into w after the last step (4 * N bytes read and
  // written).
  auto copied = schedule(R"(program p(w: f32[N] replicated,
          g: f32[N] replicated) {
    w1 = update(w, w + g);
    w_old = w;
    return w_old, w1;
}
)");
  tune::StepLaunches l = planned(*copied->program);
  REQUIRE(l.launches.size() == 3);
  CHECK(l.added == 1);
  const LaunchCost &copy = l.launches[2];
  CHECK(copy.kind == K::Kernel);
  CHECK(copy.members.empty());
  CHECK(copy.description == "copy_w (the lowering's): copy out_w1 into w");
  CHECK(copy.read.str() == "4*N");
  CHECK(copy.write.str() == "4*N");
  CHECK(copy.fresh.str() == "4*N");

  // A reducescatter along dimension 1 packs its input first; the pack is a
  // launch before the collective, of a rank's block (sliced over P).
  auto packed = schedule(R"(program p(y: f32[B, H] local) {
    r = reducescatter(sum, y, dim=1);
    return r;
}
)");
  tune::StepLaunches p = planned(*packed->program);
  REQUIRE(p.launches.size() == 2);
  CHECK(p.launches[0].description.find("pack dimension 1") !=
        std::string::npos);
  CHECK(p.launches[0].read.str() == "4*B*H");
  CHECK(p.launches[1].kind == K::Collective);
}

TEST_CASE("every enumerated schedule of every sample is priced as its plan "
          "runs: every stage once, after what it reads",
          "[tune]") {
  std::vector<std::string> samples;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(COCONET_SOURCE_DIR "/samples", ec),
       end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".coco"))
      samples.push_back(llvm::sys::path::filename(it->path()).str());
  REQUIRE_FALSE(ec);
  llvm::sort(samples);
  REQUIRE(samples.size() >= 6);
  size_t schedules = 0, added = 0;
  for (const std::string &sample : samples) {
    INFO(sample);
    llvm::SourceMgr sourceMgr;
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    DiagnosticEngine diags(sourceMgr, os);
    sema::SemaOptions options;
    options.stdlibDir = COCONET_SOURCE_DIR "/stdlib";
    auto module = sema::compileFile(
        sourceMgr, diags, COCONET_SOURCE_DIR "/samples/" + sample, options);
    INFO(diagnostics);
    REQUIRE(module);
    for (const auto &program : module->programs) {
      tune::SpaceOptions space;
      space.shardAll = true;
      tune::SpaceStats stats;
      for (const tune::Candidate &c :
           tune::enumerateSchedules(*module, *program, space, stats)) {
        INFO(program->name << ": " << c.summary);
        tune::StepLaunches l = planned(*c.program);
        ++schedules;
        added += l.added;
        // Every stage in exactly one launch; the lowering's own have none.
        llvm::DenseMap<const ir::Stage *, unsigned> launchOf;
        unsigned fromStages = 0;
        for (unsigned i = 0; i < l.launches.size(); ++i) {
          fromStages += !l.launches[i].members.empty();
          for (const ir::Stage *m : l.launches[i].members)
            CHECK(launchOf.try_emplace(m, i).second);
        }
        const std::vector<LaunchCost> ir =
            analysis::analyzeLaunches(*c.program, /*sequential=*/true);
        size_t stages = 0;
        for (const LaunchCost &x : ir)
          stages += x.members.size();
        CHECK(launchOf.size() == stages);
        CHECK(fromStages + l.added == l.launches.size());
        // A member's operands are computed in its launch or before.
        for (const auto &[stage, i] : launchOf)
          for (const ir::Stage *o : stage->operands)
            if (auto it = launchOf.find(o); it != launchOf.end())
              CHECK(it->second <= i);
      }
    }
  }
  CHECK(schedules > 200);
  // The samples exercise the lowering's additions (the MoE layer's packs
  // and unpacks around its alltoalls along dimension 1).
  CHECK(added > 10);
}
