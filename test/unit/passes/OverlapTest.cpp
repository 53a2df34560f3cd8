//===- OverlapTest.cpp - a matmul overlapped with its collective ----------===//
//
// The overlap pass: Megatron's second matmul overlapped with the fused
// reducescatter, the chunked dimension for each kind of collective (and
// after a later split), equality with the unscheduled program, the
// simulator's run-time check that the chunks divide evenly, and every
// refusal.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

namespace {

const char *const kMegatron = R"(program megatron_mlp(x: f16[B, H] replicated,
          w1: f16[H, 4*H] sliced(1), b1: f16[4*H] sliced(0),
          w2: f16[4*H, H] sliced(0), b2: f16[H] replicated,
          residual: f16[B, H] replicated, p: f32, seed: u64) {
    h   = gelu(matmul(x, w1) + b1);
    y   = matmul(h, w2);
    ys  = allreduce(sum, y);
    out = dropout(ys + b2, p, seed) + residual;
    return out;
}
schedule mm_rs_c_ag for megatron_mlp {
    (rs, ag) = split(ys);
    reorder(ag, out);
    fuse(rs, out, ag);
}
schedule overlapped for megatron_mlp {
    apply mm_rs_c_ag;
    overlap(y, rs) chunks 4;
}
schedule on_allreduce for megatron_mlp {
    overlap(y, ys) chunks 2;
}
)";

} // namespace

TEST_CASE("overlap of megatron's matmul with the fused reducescatter",
          "[passes][overlap]") {
  Compiled c = compile(kMegatron);
  Scheduled s = schedule(c, "overlapped");
  REQUIRE(s.program->overlaps.size() == 1);
  const ir::Overlap &o = s.program->overlaps[0];
  CHECK(o.producer == &s.stage("y"));
  CHECK(o.consumer == &s.stage("rs"));
  CHECK(o.chunks == 4);
  CHECK(o.dim == 0);
  CHECK(o.loc.Start.getPointer() ==
        c.schedule("overlapped").directives[1].loc.Start.getPointer());
  CHECK(hasLine(s.ir(), "  overlap %10 with %11: 4 chunks along dim 0"));
  // The kernel is untouched.
  REQUIRE(s.program->kernels.size() == 1);
  CHECK(hasLine(s.ir(), "  kernel k0 (fused collective): %11 %12 %13"));
  // 48 rows: 4 chunks of each rank's block for 1, 2, 3 and 4 ranks.
  expectSameResults(c.program(), *s.program,
                    worldRanks({{"B", 48}, {"H", 12}}));
}

TEST_CASE("overlap with an allreduce chunks dimension 0", "[passes][overlap]") {
  Compiled c = compile(kMegatron);
  Scheduled s = schedule(c, "on_allreduce");
  REQUIRE(s.program->overlaps.size() == 1);
  CHECK(s.program->overlaps[0].consumer->kind == StageKind::AllReduce);
  CHECK(s.program->overlaps[0].dim == 0);
  CHECK(hasLine(s.ir(), "  overlap %10 with %11: 2 chunks along dim 0"));
  expectSameResults(c.program(), *s.program, worldRanks({{"B", 12}, {"H", 3}}));
}

TEST_CASE("overlap with an allgather chunks the gathered dimension",
          "[passes][overlap]") {
  Compiled c = compile(R"(program p(x: f32[B, H] replicated, w: f32[H,
          N] sliced(1)) {
    y = matmul(x, w);
    yg = allgather(y);
    return yg;
}
schedule s for p {
    overlap(y, yg) chunks 2;
}
)");
  Scheduled s = schedule(c, "s");
  REQUIRE(s.program->overlaps.size() == 1);
  CHECK(s.program->overlaps[0].dim == 1);
  CHECK(hasLine(s.ir(), "  overlap %2 with %3: 2 chunks along dim 1"));
  expectSameResults(c.program(), *s.program,
                    worldRanks({{"B", 3}, {"H", 5}, {"N", 24}}));
}

TEST_CASE("overlap follows a later split to the scattered dimension",
          "[passes][overlap]") {
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T],
          x: f32[B, K] sliced(0, dp) sliced(1, tp), w: f32[K, H] sliced(0,
          tp)) {
    y = matmul(x, w);
    ys = allreduce(sum, y, axis=tp);
    return ys;
}
schedule late_split for p {
    overlap(y, ys) chunks 2;
    (rs, ag) = split(ys);
}
schedule early_split for p {
    (rs, ag) = split(ys);
    overlap(y, rs) chunks 2;
}
)");
  Scheduled late = schedule(c, "late_split");
  Scheduled early = schedule(c, "early_split");
  REQUIRE(late.program->overlaps.size() == 1);
  CHECK(late.program->overlaps[0].consumer == &late.stage("rs"));
  CHECK(late.stage("rs").dim == 1);
  CHECK(late.program->overlaps[0].dim == 1);
  // Both orders give the same program.
  CHECK(late.ir() == early.ir());
  CHECK(hasLine(late.ir(), "  overlap %2 with %3: 2 chunks along dim 1"));
  // Dimension 0 (2 rows per dp rank) need not divide into the chunks.
  expectSameResults(c.program(), *late.program,
                    meshRanks("D", "T", {{1, 1}, {1, 2}, {2, 2}},
                              {{"B", 4}, {"K", 4}, {"H", 8}}));
}

TEST_CASE("the simulator checks that the chunks divide evenly",
          "[passes][overlap]") {
  Compiled c = compile(kMegatron);
  Scheduled s = schedule(c, "overlapped");
  sim::SimOptions options;
  options.sizes = {{"P", 4}, {"B", 8}, {"H", 4}};
  auto r = sim::simulate(*s.program, options);
  REQUIRE_FALSE(static_cast<bool>(r));
  std::string error = llvm::toString(r.takeError());
  CHECK(error == "'y' is overlapped with 'rs' in 4 chunks along dimension 0, "
                 "of which each rank computes 8: that must be a multiple of "
                 "16 (4 chunks for each of the 4 blocks the reducescatter "
                 "hands out); choose sizes that divide evenly");
  // The unscheduled program runs with these sizes.
  auto plain = sim::simulate(c.program(), options);
  bool plainRan = static_cast<bool>(plain);
  CHECK(plainRan);
  if (!plainRan)
    llvm::consumeError(plain.takeError());
  // 16 rows are enough for 4 ranks.
  options.sizes["B"] = 16;
  auto enough = sim::simulate(*s.program, options);
  bool enoughRan = static_cast<bool>(enough);
  CHECK(enoughRan);
  if (!enoughRan)
    llvm::consumeError(enough.takeError());
}

TEST_CASE("overlap leaves a symbolic size to the simulator",
          "[passes][overlap]") {
  // 4*H rows in 8 chunks: not refused at compile time, since H may be even.
  Compiled c = compile(R"(program p(x: f32[4*H, K] sliced(1), w: f32[K,
          N] sliced(0)) {
    y = matmul(x, w);
    ys = allreduce(sum, y);
    return ys;
}
schedule s for p {
    overlap(y, ys) chunks 8;
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.program->overlaps.size() == 1);
  expectSameResults(c.program(), *s.program,
                    worldRanks({{"H", 2}, {"K", 12}, {"N", 3}}));
  sim::SimOptions options;
  options.sizes = {{"P", 2}, {"H", 3}, {"K", 4}, {"N", 3}};
  auto r = sim::simulate(*s.program, options);
  REQUIRE_FALSE(static_cast<bool>(r));
  CHECK(llvm::toString(r.takeError()) ==
        "'y' is overlapped with 'ys' in 8 chunks along dimension 0, of which "
        "each rank computes 12: that must be a multiple of 8 (8 chunks); "
        "choose sizes that divide evenly");
}

TEST_CASE("overlap refuses a producer that is not a matmul",
          "[passes][overlap][refusal]") {
  Compiled c = compile(R"(program p(x: f32[B, H] sliced(1), w: f32[H,
          H] sliced(0)) {
    y = matmul(x, w);
    z = 2.0 * y;
    zs = allreduce(sum, z);
    return zs;
}
schedule s for p {
    overlap(z, zs) chunks 2;
}
)");
  std::string d = expectRefusal(
      c, "s",
      c.at("overlap(^z, zs)") +
          ": error: cannot overlap 'z': it is an elementwise stage; the "
          "producer must be a matmul or a grouped matmul (or an alltoall or "
          "alltoallv one reads) [overlap-producer]");
  CHECK(hasLine(d, c.at("^z = 2.0 * y;") + ": note: 'z' is defined here"));
}

TEST_CASE("overlap refuses a consumer that is not a collective",
          "[passes][overlap][refusal]") {
  Compiled c = compile(R"(program p(x: f32[B, H] sliced(1), w: f32[H,
          H] sliced(0)) {
    y = matmul(x, w);
    z = 2.0 * y;
    zs = allreduce(sum, z);
    yb = broadcast(y, 0);
    return zs, yb;
}
schedule elementwise for p {
    overlap(y, z) chunks 2;
}
schedule bcast for p {
    overlap(y, yb) chunks 2;
}
)");
  std::string d = expectRefusal(
      c, "elementwise",
      c.at("overlap(y, ^z)") +
          ": error: cannot overlap with 'z': it is an elementwise stage; the "
          "consumer must be an allreduce, reducescatter, allgather or alltoall "
          "[overlap-consumer]");
  CHECK(hasLine(d, c.at("^z = 2.0 * y;") + ": note: 'z' is defined here"));
  expectRefusal(c, "bcast",
                c.at("overlap(y, ^yb)") +
                    ": error: cannot overlap with 'yb': it is a broadcast; "
                    "the consumer must be an allreduce, reducescatter, "
                    "allgather or alltoall [overlap-consumer]");
}

TEST_CASE("overlap refuses a consumer that does not read the producer",
          "[passes][overlap][refusal]") {
  Compiled c = compile(R"(program p(x: f32[B, H] sliced(1), w: f32[H,
          H] sliced(0)) {
    y = matmul(x, w);
    z = 2.0 * y;
    zs = allreduce(sum, z);
    return zs;
}
schedule s for p {
    overlap(y, zs) chunks 2;
}
)");
  expectRefusal(c, "s",
                c.at("overlap(y, ^zs)") +
                    ": error: cannot overlap 'y' with 'zs': 'zs' does not "
                    "read 'y' [overlap-not-consumer]");
}

TEST_CASE("overlap refuses a producer that is already overlapped",
          "[passes][overlap][refusal]") {
  Compiled c = compile(R"(program p(x: f32[B, H] sliced(1), w: f32[H,
          H] sliced(0)) {
    y = matmul(x, w);
    ys = allreduce(sum, y);
    yr = reducescatter(sum, y);
    return ys, yr;
}
schedule same for p {
    overlap(y, ys) chunks 2;
    overlap(y, ys) chunks 4;
}
schedule other for p {
    overlap(y, ys) chunks 2;
    overlap(y, yr) chunks 2;
}
)");
  Refused r = refuse(c, "same");
  CHECK(r.directive == 1);
  CHECK(hasLine(r.after, "  overlap %2 with %3: 2 chunks along dim 0"));
  expectRefusal(c, "same",
                c.at("overlap(^y, ys) chunks 4") +
                    ": error: 'y' is already overlapped with 'ys' "
                    "[overlap-twice]");
  expectRefusal(c, "other",
                c.at("overlap(^y, yr)") +
                    ": error: 'y' is already overlapped with 'ys' "
                    "[overlap-twice]");
}

TEST_CASE("overlap refuses a constant size the chunks do not divide",
          "[passes][overlap][refusal]") {
  Compiled c = compile(R"(program p(x: f32[6, H] sliced(1), w: f32[H,
          H] sliced(0)) {
    y = matmul(x, w);
    ys = allreduce(sum, y);
    return ys;
}
schedule s for p {
    overlap(y, ys) chunks 4;
}
schedule fine for p {
    overlap(y, ys) chunks 3;
}
)");
  expectRefusal(c, "s",
                c.at("overlap(y, ys) chunks 4") +
                    ": error: cannot overlap 'y' in 4 chunks: dimension 0 "
                    "of 'y' has size 6, which is not a multiple of 4 "
                    "[overlap-indivisible]");
  Scheduled s = schedule(c, "fine");
  CHECK(s.program->overlaps.size() == 1);
  expectSameResults(c.program(), *s.program, worldRanks({{"H", 12}}));
}
