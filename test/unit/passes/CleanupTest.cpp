//===- CleanupTest.cpp - constant folding, CSE and dead stages ------------===//
//
// The cleanup passes, each alone (through a PassManager of one pass) and
// as the pipeline scheduleProgram appends: what they fold, merge and
// remove, what they must leave alone (dropout, results, updates, kernel
// members, overlapped stages, parameters), and that the values do not
// change.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

namespace {

/// A clone of the first program of `c` after one cleanup pass.
std::unique_ptr<ir::Program> runOne(const Compiled &c,
                                    std::unique_ptr<passes::Pass> pass) {
  std::unique_ptr<ir::Program> p = c.program().clone();
  passes::PassManager pm(testOptions(false));
  pm.addPass(std::move(pass));
  std::string text;
  llvm::raw_string_ostream os(text);
  DiagnosticEngine diags(*c.sourceMgr, os);
  bool ok = succeeded(pm.run(*p, diags));
  INFO(text);
  CHECK(ok);
  CHECK(text.empty());
  CHECK(ir::verifyProgram(*p) == "");
  return p;
}

} // namespace

TEST_CASE("constant folding evaluates constant parts of bodies",
          "[passes][cleanup]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated, h: f16[N] replicated,
          k: i32[N] replicated) {
    a = x * sqrt(4.0) + exp(0.0);
    b = h + f16(0.1) * f16(3);
    c = k * max(2, 3) + i32(2.7);
    d = x * 2.0;
    return a, b, c, d;
}
)");
  auto p = runOne(c, passes::createConstantFoldingPass());
  CHECK(stageLine(*p, "a") ==
        "%3 a : f32[N] replicated = elementwise add(mul(%0, 2.0), 1.0)");
  // f16 constants are computed in f16, as the unfolded nodes would be:
  // f16(0.1) * 3 rounds to 0.2998046875, not to f16(0.3).
  CHECK(stageLine(*p, "b") ==
        "%4 b : f16[N] replicated = elementwise add(%1, 0.2998046875:f16)");
  CHECK(stageLine(*p, "c") ==
        "%5 c : i32[N] replicated = elementwise add(mul(%2, 3), 2)");
  // Nothing to fold.
  CHECK(stageLine(*p, "d") == stageLine(c.program(), "d"));
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("constant folding folds integer and comparison constants exactly",
          "[passes][cleanup]") {
  Compiled c = compile(R"(program p(k: i64[N] replicated, u: u64[N] replicated,
          f: f32[N] replicated) {
    a = k + i64(9007199254740993) * i64(1);
    b = u + u64(0) - u64(1);
    e = select(f32(1) < f32(2), f, -f);
    q = k + i64(7) / i64(0) + abs(i64(-3));
    return a, b, e, q;
}
)");
  auto p = runOne(c, passes::createConstantFoldingPass());
  // 2^53 + 1 survives the fold (it is not a double).
  CHECK(stageLine(*p, "a") == "%3 a : i64[N] replicated = elementwise add(%0, "
                              "9007199254740993:i64)");
  CHECK(stageLine(*p, "e") ==
        "%5 e : f32[N] replicated = elementwise select(true, %2, neg(%2))");
  // Integer division by zero folds to 0, as the simulator computes it.
  CHECK(stageLine(*p, "q") ==
        "%6 q : i64[N] replicated = elementwise add(add(%0, 0:i64), 3:i64)");
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("constant folding never folds dropout", "[passes][cleanup]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    d = dropout(f32(1) + f32(1), 0.5, 7);
    y = x * d;
    return y, d;
}
)");
  auto p = runOne(c, passes::createConstantFoldingPass());
  // Its operand folds; the dropout of constants stays.
  CHECK(stageLine(*p, "d") == "%1 d : f32 = elementwise dropout(2.0, 0.5, "
                              "7:u64)");
  expectSameResults(c.program(), *p, worldRanks({{"N", 16}}));
}

TEST_CASE("CSE computes equal stages once", "[passes][cleanup]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated, g: f32[N] local) {
    a = x * 2.0;
    b = x * 2.0;
    s1 = allreduce(sum, g);
    s2 = allreduce(sum, g);
    s3 = allreduce(max, g);
    y = a + b + s1 + s2 + s3;
    return y;
}
)");
  auto p = runOne(c, passes::createCommonSubexpressionEliminationPass());
  CHECK(p->findStage("b") == nullptr);
  CHECK(p->findStage("s2") == nullptr);
  // Another reduce operator is another value.
  CHECK(p->findStage("s3") != nullptr);
  CHECK(stageLine(*p, "y") == "%5 y : f32[N] replicated = elementwise "
                              "add(add(add(add(%2, %2), %3), %3), %4)");
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("CSE merges chains of duplicates, after a merge as well",
          "[passes][cleanup]") {
  // b duplicates a; d reads b, so once it reads a, d duplicates c; and so
  // on down the chain: the duplicates go in one walk, whose readers read
  // the survivors.
  Compiled c = compile(R"(program p(x: f32[N] replicated, g: f32[N] local) {
    a = allreduce(sum, g);
    b = allreduce(sum, g);
    c = sum(a, 0);
    d = sum(b, 0);
    e = allreduce(max, c * 1.0);
    f = allreduce(max, d * 1.0);
    y = x + e + f;
    return y;
}
)");
  auto p = runOne(c, passes::createCommonSubexpressionEliminationPass());
  for (const char *gone : {"b", "d", "f", "f.1"})
    CHECK(p->findStage(gone) == nullptr);
  CHECK(p->findStage("e") != nullptr);
  CHECK(stageLine(*p, "y") ==
        "%6 y : f32[N] replicated = elementwise add(add(%0, %5), %5)");
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("CSE distinguishes types, attributes and axes", "[passes][cleanup]") {
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T], g: f32[N, M] local,
          x: f32[N, M] replicated) {
    a = allreduce(sum, g, axis=dp);
    b = allreduce(sum, g, axis=tp);
    c = sum(x, 0);
    d = sum(x, 1);
    e = f64(x);
    f = f16(x);
    return a, b, c, d, e, f;
}
)");
  std::string before = printIR(c.program());
  auto p = runOne(c, passes::createCommonSubexpressionEliminationPass());
  CHECK(printIR(*p) == before);
}

TEST_CASE("CSE leaves results, updates, kernels and overlaps alone",
          "[passes][cleanup]") {
  Compiled c = compile(R"(program p(x: f32[B, K] sliced(1), w: f32[K,
          H] sliced(0),
          v: f32[B, H] replicated) {
    a = matmul(x, w);
    b = matmul(x, w);
    as = allreduce(sum, a);
    bs = allreduce(sum, b);
    c = as * 2.0;
    d = as * 2.0;
    e = bs * 2.0;
    v1 = update(v, bs * 2.0);
    return c, d, e;
}
schedule s for p {
    overlap(a, as) chunks 2;
    fuse(e);
}
)");
  Scheduled s = schedule(c, "s", /*cleanup=*/true);
  // a/as are overlapped, c and d are results, e is fused, v1 is an update:
  // nothing can be merged, and nothing is dead.
  for (const char *name : {"a", "b", "as", "bs", "c", "d", "e", "v1"})
    CHECK(s.has(name));
  expectSameResults(c.program(), *s.program,
                    worldRanks({{"B", 8}, {"K", 12}, {"H", 3}}));
}

TEST_CASE("dead stage elimination removes dead chains", "[passes][cleanup]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated,
          unused: f32[N] replicated,
          g: f32[N] local) {
    t = exp(x);
    t2 = t + 1.0;
    t3 = allreduce(sum, g);
    y = x * 2.0;
    return y;
}
)");
  auto p = runOne(c, passes::createDeadStageEliminationPass());
  CHECK(printIR(*p) == R"(program p {
  %0 x : f32[N] replicated = param 0
  %1 unused : f32[N] replicated = param 1
  %2 g : f32[N] local = param 2
  %3 y : f32[N] replicated = elementwise mul(%0, 2.0)
  results %3
}
)");
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("dead stage elimination counts an operand read twice twice",
          "[passes][cleanup]") {
  // t is read twice by the dead u and once by the live y: it stays; s is
  // read twice by the dead u only: it goes with u.
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    t = exp(x);
    s = sum(t, 0);
    u = allreduce(sum, s * s + s);
    y = t + t;
    return y;
}
)");
  auto p = runOne(c, passes::createDeadStageEliminationPass());
  CHECK(p->findStage("t") != nullptr);
  CHECK(p->findStage("s") == nullptr);
  CHECK(p->findStage("u") == nullptr);
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("dead stage elimination keeps updates", "[passes][cleanup]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated,
          w: f32[N] replicated) {
    w1 = update(w, w * 0.5);
    dead = w1 + x;
}
)");
  auto p = runOne(c, passes::createDeadStageEliminationPass());
  CHECK(p->findStage("w1") != nullptr);
  CHECK(p->findStage("dead") == nullptr);
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("the cleanup pipeline runs after the schedule", "[passes][cleanup]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    a = gs * (f32(1) + f32(1));
    b = gs * (f32(1) + f32(1));
    w1 = update(w, w - a - b);
    dead = exp(w);
}
schedule s for p {
    (rs, ag) = split(gs);
}
)");
  Scheduled with = schedule(c, "s", /*cleanup=*/true);
  Scheduled without = schedule(c, "s", /*cleanup=*/false);
  CHECK(without.has("b"));
  CHECK(without.has("dead"));
  CHECK(with.ir() == R"(program p {
  %0 g : f32[N] local = param 0
  %1 w : f32[N] replicated = param 1
  %2 rs : f32[N] sliced(0) = reducescatter(sum, %0, dim=0) over world
  %3 ag : f32[N] replicated = allgather(%2) over world
  %4 a : f32[N] replicated = elementwise mul(%3, 2.0)
  %5 w1 : f32[N] replicated = elementwise sub(sub(%1, %4), %4) -> update %1
  results %5 -> w
}
)");
  expectSameResults(c.program(), *with.program, worldRanks({{"N", 12}}));

  // Without a schedule, scheduleProgram applies only the cleanups.
  Scheduled plain = schedule(c, "", /*cleanup=*/true);
  CHECK_FALSE(plain.has("dead"));
  CHECK(plain.has("gs"));
  expectSameResults(c.program(), *plain.program, worldRanks({{"N", 12}}));
}

TEST_CASE("dead stage elimination drops dead kernel members",
          "[passes][cleanup]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    a = x * 2.0;
    b = a + 1.0;
    dead = relu(b);
    return b;
}
schedule s for p {
    fuse(a, b, dead);
}
)");
  Scheduled s = schedule(c, "s", /*cleanup=*/true);
  CHECK_FALSE(s.has("dead"));
  REQUIRE(s.program->kernels.size() == 1);
  CHECK(s.program->kernels[0].stages.size() == 2);
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 8}}));
}
