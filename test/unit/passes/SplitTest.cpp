//===- SplitTest.cpp - allreduce -> reducescatter + allgather -------------===//
//
// The split pass: the stages it creates (kinds, types, layouts, names), the
// readers, updates and results it moves, bitwise equality with the
// unscheduled program for every reduce operator, and each refusal.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

namespace {

const char *const kSgd = R"(program p(g: f32[N] local, w: f32[N] replicated,
          lr: f32) {
    gs = allreduce(sum, g);
    w1 = update(w, w - lr * gs);
}
schedule named for p {
    (rs, ag) = split(gs);
}
schedule unnamed for p {
    split(gs);
}
)";

} // namespace

TEST_CASE("split creates a reducescatter and an allgather", "[passes][split]") {
  Compiled c = compile(kSgd);
  Scheduled s = schedule(c, "named");
  CHECK_FALSE(s.has("gs"));

  const ir::Stage &rs = s.stage("rs");
  CHECK(rs.kind == StageKind::ReduceScatter);
  CHECK(rs.reduceOp == ir::ReduceOp::Sum);
  CHECK(rs.axis == 0);
  CHECK(rs.dim == 0);
  CHECK(s.type("rs") == "f32[N] sliced(0)");
  CHECK(s.operands("rs") == std::vector<std::string>{"g"});

  const ir::Stage &ag = s.stage("ag");
  CHECK(ag.kind == StageKind::AllGather);
  CHECK(ag.axis == 0);
  CHECK(s.type("ag") == "f32[N] replicated");
  CHECK(s.operands("ag") == std::vector<std::string>{"rs"});
  // In program order where the allreduce was, readers read the allgather.
  CHECK(rs.id == 3);
  CHECK(ag.id == 4);
  CHECK(s.operands("w1") == std::vector<std::string>{"w", "lr", "ag"});

  CHECK(s.ir() == R"(program p {
  %0 g : f32[N] local = param 0
  %1 w : f32[N] replicated = param 1
  %2 lr : f32 = param 2
  %3 rs : f32[N] sliced(0) = reducescatter(sum, %0, dim=0) over world
  %4 ag : f32[N] replicated = allgather(%3) over world
  %5 w1 : f32[N] replicated = elementwise sub(%1, mul(%2, %4)) -> update %1
  results %5 -> w
}
)");
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}));
}

TEST_CASE("split without names calls its stages s.rs and s.ag",
          "[passes][split]") {
  Compiled c = compile(kSgd);
  Scheduled s = schedule(c, "unnamed");
  CHECK(s.line("gs.rs") ==
        "%3 gs.rs : f32[N] sliced(0) = reducescatter(sum, %0, dim=0) over "
        "world");
  CHECK(s.line("gs.ag") ==
        "%4 gs.ag : f32[N] replicated = allgather(%3) over world");
  CHECK_FALSE(s.has("rs"));
  CHECK_FALSE(s.has("ag"));
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 12}}));
}

TEST_CASE("split moves an update and a returned value to the allgather",
          "[passes][split]") {
  Compiled c = compile(R"(program p(g: f32[N] local, h: f32[N] local,
          w: f32[N] replicated) {
    w1 = update(w, allreduce(avg, g));
    hs = allreduce(max, h);
    return hs;
}
schedule s for p {
    (a, b) = split(w1);
    (c, d) = split(hs);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.stage("b").updates == &s.stage("w"));
  CHECK(s.stage("a").updates == nullptr);
  CHECK(s.line("a") ==
        "%3 a : f32[N] sliced(0) = reducescatter(avg, %0, dim=0) over world");
  CHECK(s.line("d") == "%6 d : f32[N] replicated = allgather(%5) over world");
  REQUIRE(s.program->getResults().size() == 2);
  CHECK(s.program->getResults()[0] == &s.stage("b"));
  CHECK(s.program->getResults()[1] == &s.stage("d"));
  // The returned value keeps its name in the interface.
  CHECK(s.program->getResultName(0) == "w");
  CHECK(s.program->getResultName(1) == "hs");
  CHECK(hasLine(s.ir(), "  results %4 -> w, %6 as hs"));
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 12}}));
}

TEST_CASE("split is bitwise exact for every reduce operator",
          "[passes][split]") {
  struct Case {
    const char *op;
    const char *dtype;
  };
  const Case cases[] = {
      {"sum", "f32"}, {"prod", "f32"}, {"max", "f32"},  {"min", "f32"},
      {"avg", "f32"}, {"sum", "f16"},  {"avg", "f16"},  {"prod", "bf16"},
      {"avg", "f64"}, {"sum", "i32"},  {"prod", "i64"}, {"max", "i32"},
      {"min", "u64"},
  };
  for (const Case &k : cases) {
    std::string op = k.op, dtype = k.dtype;
    INFO("allreduce(" << op << ") of " << dtype);
    Compiled c = compile("program p(g: " + dtype +
                         "[B, H] local) {\n"
                         "    gs = allreduce(" +
                         op +
                         ", g);\n"
                         "    y = gs * gs;\n"
                         "    return y, gs;\n"
                         "}\n"
                         "schedule s for p {\n"
                         "    (rs, ag) = split(gs);\n"
                         "}\n");
    Scheduled s = schedule(c, "s");
    CHECK(s.line("rs") == "%1 rs : " + dtype +
                              "[B, H] sliced(0) = reducescatter(" + op +
                              ", %0, dim=0) over world");
    CHECK(s.line("ag") ==
          "%2 ag : " + dtype + "[B, H] replicated = allgather(%1) over world");
    CHECK(s.program->reassociations.empty());
    expectSameResults(c.program(), *s.program,
                      worldRanks({{"B", 12}, {"H", 3}}));
  }
}

TEST_CASE("split of an allreduce of a replicated value", "[passes][split]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    xs = allreduce(sum, x);
    return xs;
}
schedule s for p {
    (rs, ag) = split(xs);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.type("rs") == "f32[N] sliced(0)");
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 12}}));
}

TEST_CASE("split scatters the first dimension no other axis slices",
          "[passes][split]") {
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T],
          g: f32[B, H] sliced(0, dp) local(tp)) {
    gs = allreduce(sum, g, axis=tp);
    y = gs + 1.0;
    return y;
}
schedule s for p {
    (rs, ag) = split(gs);
}
)");
  Scheduled s = schedule(c, "s");
  const ir::Stage &rs = s.stage("rs");
  CHECK(rs.dim == 1);
  CHECK(rs.axis == 1);
  CHECK(s.line("rs") == "%1 rs : f32[B, H] sliced(0, dp) sliced(1, tp) = "
                        "reducescatter(sum, %0, dim=1) over tp");
  CHECK(s.line("ag") == "%2 ag : f32[B, H] sliced(0, dp) replicated(tp) = "
                        "allgather(%1) over tp");
  expectSameResults(
      c.program(), *s.program,
      meshRanks("D", "T",
                {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {1, 3}, {3, 2}, {2, 4}},
                {{"B", 12}, {"H", 24}}));
}

TEST_CASE("split of an allreduce over one axis of a two-axis mesh",
          "[passes][split]") {
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T], g: f32[N] local) {
    gs = allreduce(sum, g, axis=dp);
    return gs;
}
schedule s for p {
    (rs, ag) = split(gs);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.line("rs") == "%1 rs : f32[N] sliced(0, dp) local(tp) = "
                        "reducescatter(sum, %0, dim=0) over dp");
  CHECK(s.line("ag") ==
        "%2 ag : f32[N] replicated(dp) local(tp) = allgather(%1) over dp");
  expectSameResults(
      c.program(), *s.program,
      meshRanks("D", "T", {{1, 1}, {2, 1}, {3, 2}, {4, 2}}, {{"N", 24}}));
}

TEST_CASE("split refuses a stage that is not an allreduce",
          "[passes][split][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    x = 2.0 * g;
    xs = reducescatter(sum, x);
    return xs;
}
schedule elementwise for p {
    split(x);
}
schedule param for p {
    split(w);
}
schedule scatter for p {
    (a, b) = split(xs);
}
)");
  std::string d = expectRefusal(
      c, "elementwise",
      c.at("split(^x)") +
          ": error: cannot split 'x': it is an elementwise stage, not an "
          "allreduce [split-not-all-reduce]");
  CHECK(hasLine(d, c.at("^x = 2.0 * g;") + ": note: 'x' is defined here"));
  expectRefusal(c, "param",
                c.at("split(^w)") +
                    ": error: cannot split 'w': it is a parameter, not an "
                    "allreduce [split-not-all-reduce]");
  expectRefusal(c, "scatter",
                c.at("split(^xs)") +
                    ": error: cannot split 'xs': it is a reducescatter, not "
                    "an allreduce [split-not-all-reduce]");
}

TEST_CASE("split refuses an allreduce of a scalar",
          "[passes][split][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local) {
    total = allreduce(sum, sum(g));
    return total;
}
schedule s for p {
    split(total);
}
)");
  expectRefusal(c, "s",
                c.at("split(^total)") +
                    ": error: cannot split 'total': it is a scalar, and a "
                    "reducescatter needs a dimension to scatter; split an "
                    "allreduce of a tensor [split-scalar]");
}

TEST_CASE("split refuses an allreduce over every axis of a two-axis mesh",
          "[passes][split][refusal]") {
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T], g: f32[N] local) {
    gs = allreduce(sum, g);
    return gs;
}
schedule s for p {
    (rs, ag) = split(gs);
}
)");
  expectRefusal(c, "s",
                c.at("split(^gs)") +
                    ": error: cannot split 'gs': it reduces over every axis "
                    "of the mesh; split an allreduce over one axis, or make "
                    "this one hierarchical (a two-axis mesh) "
                    "[split-all-axes]");
}

TEST_CASE("split refuses when every dimension is sliced over another axis",
          "[passes][split][refusal]") {
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T],
          g: f32[N] sliced(0, dp) local(tp)) {
    gs = allreduce(sum, g, axis=tp);
    return gs;
}
schedule s for p {
    (rs, ag) = split(gs);
}
)");
  expectRefusal(c, "s",
                c.at("split(^gs)") +
                    ": error: cannot split 'gs': every dimension of its "
                    "input is already sliced over another axis "
                    "[split-no-free-dim]");
}

TEST_CASE("split refuses an allreduce that is already fused",
          "[passes][split][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
}
schedule s for p {
    fuse(gs, w1);
    split(gs);
}
)");
  Refused r = refuse(c, "s");
  CHECK(r.directive == 1);
  expectRefusal(c, "s",
                c.at("split(^gs)") +
                    ": error: cannot split 'gs': it is already fused into a "
                    "kernel; split before fusing [split-fused]");
}

TEST_CASE("a split allreduce is gone for later directives",
          "[passes][split][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local) {
    gs = allreduce(sum, g);
    return gs;
}
schedule s for p {
    split(gs);
    split(gs);
}
)");
  Refused r = refuse(c, "s");
  CHECK(r.directive == 1);
  expectRefusal(c, "s",
                c.at("split(gs);\n    split(^gs)") +
                    ": error: 'gs' is no longer a stage of 'p' at this point "
                    "of the schedule: an earlier transformation replaced it "
                    "[schedule-stage-gone]");
}

TEST_CASE("split refuses to move an overlap to a dimension the chunks do not "
          "divide",
          "[passes][split][refusal]") {
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T],
          x: f32[B, K] sliced(0, dp) sliced(1, tp), w: f32[K, 6] sliced(0, tp)) {
    y = matmul(x, w);
    ys = allreduce(sum, y, axis=tp);
    return ys;
}
schedule fits for p {
    overlap(y, ys) chunks 3;
    (rs, ag) = split(ys);
}
schedule late for p {
    overlap(y, ys) chunks 4;
    (rs, ag) = split(ys);
}
)");
  std::string d = expectRefusal(
      c, "late",
      c.at("split(^ys)") +
          ": error: cannot split 'ys': it is overlapped with 'y' in 4 chunks, "
          "and the reducescatter would chunk dimension 1 of 'y', whose size 6 "
          "is not a multiple of 4 [split-overlap-indivisible]");
  CHECK(hasLine(d, c.at("^overlap(y, ys) chunks 4") +
                       ": note: the overlap is declared here"));
  Scheduled s = schedule(c, "fits");
  REQUIRE(s.program->overlaps.size() == 1);
  CHECK(s.program->overlaps[0].consumer == &s.stage("rs"));
  CHECK(s.program->overlaps[0].dim == 1);
}
