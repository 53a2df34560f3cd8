//===- ShardTest.cpp - replicated parameters become sliced storage --------===//
//
// The shard pass: Adam's moments sharded after the reorder (the update's
// allgather removed, the slice written in place), a read-only parameter,
// equality with the unscheduled program (sharded parameters compared by
// gathering their slices), and every refusal.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

namespace {

const char *const kAdam = R"(program adam(g: f16[N] local, w: f32[N] replicated,
          m: f32[N] replicated, v: f32[N] replicated, lr: f32, beta1: f32,
          beta2: f32, eps: f32, step: i32) {
    gs   = allreduce(sum, g);
    g32  = f32(gs);
    m1   = update(m, beta1 * m + (1 - beta1) * g32);
    v1   = update(v, beta2 * v + (1 - beta2) * g32 * g32);
    mhat = m1 / (1 - pow(beta1, f32(step)));
    vhat = v1 / (1 - pow(beta2, f32(step)));
    w1   = update(w, w - lr * mhat / (sqrt(vhat) + eps));
}
schedule zero for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, mhat, vhat, w1);
    shard(m, v);
}
schedule weights_too for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, mhat, vhat, w1);
    shard(m, v);
    shard(w);
}
schedule before_reorder for adam {
    (rs, ag) = split(gs);
    shard(m);
}
schedule stage for adam {
    shard(g32);
}
schedule scalar for adam {
    shard(lr);
}
schedule local_grad for adam {
    shard(g);
}
schedule twice for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, mhat, vhat, w1);
    shard(m, v, m);
}
schedule partial_reorder for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1);
    shard(m, v);
}
)";

} // namespace

TEST_CASE("shard stores adam's moments sliced", "[passes][shard]") {
  Compiled c = compile(kAdam);
  Scheduled s = schedule(c, "zero");
  for (const char *name : {"m", "v"}) {
    INFO(name);
    const ir::Stage &p = s.stage(name);
    CHECK(p.isParam());
    CHECK(p.sharded);
    CHECK(s.type(name) == "f32[N] sliced(0)");
  }
  CHECK(s.line("m") == "%2 m : f32[N] sliced(0) = param 2 sharded");
  CHECK(s.line("v") == "%3 v : f32[N] sliced(0) = param 3 sharded");
  // The allgathers that rebuilt m and v are gone: the slices are written in
  // place.
  CHECK_FALSE(s.has("ag.m1"));
  CHECK_FALSE(s.has("ag.v1"));
  CHECK(s.stage("m1").updates == &s.stage("m"));
  CHECK(s.stage("v1").updates == &s.stage("v"));
  // w is not sharded: it is still gathered.
  CHECK_FALSE(s.stage("w").sharded);
  CHECK(s.type("w") == "f32[N] replicated");
  CHECK(s.stage("ag").updates == &s.stage("w"));
  CHECK(s.ir() == "program adam {\n"
                  "  %0 g : f16[N] local = param 0\n"
                  "  %1 w : f32[N] replicated = param 1\n"
                  "  %2 m : f32[N] sliced(0) = param 2 sharded\n"
                  "  %3 v : f32[N] sliced(0) = param 3 sharded\n"
                  "  %4 lr : f32 = param 4\n"
                  "  %5 beta1 : f32 = param 5\n"
                  "  %6 beta2 : f32 = param 6\n"
                  "  %7 eps : f32 = param 7\n"
                  "  %8 step : i32 = param 8\n"
                  "  %9 rs : f16[N] sliced(0) = reducescatter(sum, %0, dim=0) "
                  "over world\n"
                  "  %10 g32 : f32[N] sliced(0) = elementwise f32(%9)\n"
                  "  %11 m1 : f32[N] sliced(0) = elementwise add(mul(%5, %2), "
                  "mul(sub(1.0, %5), %10)) -> update %2\n"
                  "  %12 v1 : f32[N] sliced(0) = elementwise add(mul(%6, %3), "
                  "mul(mul(sub(1.0, %6), %10), %10)) -> update %3\n"
                  "  %13 mhat : f32[N] sliced(0) = elementwise div(%11, "
                  "sub(1.0, pow(%5, f32(%8))))\n"
                  "  %14 vhat : f32[N] sliced(0) = elementwise div(%12, "
                  "sub(1.0, pow(%6, f32(%8))))\n"
                  "  %15 w1 : f32[N] sliced(0) = elementwise sub(%1, "
                  "div(mul(%4, %13), add(sqrt(%14), %7)))\n"
                  "  %16 ag : f32[N] replicated = allgather(%15) over world -> "
                  "update %1\n"
                  "  results %16 -> w, %11 -> m, %12 -> v\n"
                  "}\n");
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}),
                    Agreement::Bitwise, {{"v", "0.001"}});
}

TEST_CASE("shard of the weights removes the last allgather",
          "[passes][shard]") {
  Compiled c = compile(kAdam);
  Scheduled s = schedule(c, "weights_too");
  CHECK(s.stage("w").sharded);
  CHECK(s.type("w") == "f32[N] sliced(0)");
  CHECK_FALSE(s.has("ag"));
  CHECK(s.stage("w1").updates == &s.stage("w"));
  CHECK(hasLine(s.ir(), "  results %15 -> w, %11 -> m, %12 -> v"));
  // The reducescatter is the only communication left.
  for (const auto &stage : s.program->getStages())
    if (ir::isCommunication(stage->kind))
      CHECK(stage->kind == StageKind::ReduceScatter);
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}),
                    Agreement::Bitwise, {{"v", "0.001"}});
}

TEST_CASE("shard of a parameter that is only read", "[passes][shard]") {
  Compiled c = compile(R"(program p(g: f32[B, H] local, scale: f32[B,
          H] replicated,
          bias: f32[H] replicated) {
    gs = allreduce(sum, g);
    y = gs * scale + bias;
    return y;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
    shard(scale);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.line("scale") == "%1 scale : f32[B, H] sliced(0) = param 1 sharded");
  CHECK(s.program->findUpdateOf(&s.stage("scale")) == nullptr);
  CHECK(s.type("y") == "f32[B, H] sliced(0)");
  expectSameResults(c.program(), *s.program, worldRanks({{"B", 12}, {"H", 2}}));
}

TEST_CASE("shard follows the reader's slicing on every axis",
          "[passes][shard]") {
  // The allreduce over tp is split along dimension 1 (dimension 0 is sliced
  // over dp), so the reader is sliced over both axes, and so is the
  // parameter.
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T],
          g: f32[B, H] sliced(0, dp) local(tp), s: f32[B, H] replicated) {
    gs = allreduce(sum, g, axis=tp);
    y = gs * s;
    return y;
}
schedule sh for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
    shard(s);
}
)");
  Scheduled s = schedule(c, "sh");
  CHECK(s.line("s") ==
        "%1 s : f32[B, H] sliced(0, dp) sliced(1, tp) = param 1 sharded");
  expectSameResults(c.program(), *s.program,
                    meshRanks("D", "T", {{1, 1}, {2, 2}, {1, 3}, {2, 4}},
                              {{"B", 4}, {"H", 24}}));
}

TEST_CASE("shard refuses a stage that is not a parameter",
          "[passes][shard][refusal]") {
  Compiled c = compile(kAdam);
  expectRefusal(c, "stage",
                c.at("shard(^g32)") +
                    ": error: cannot shard 'g32': it is an elementwise "
                    "stage, not a parameter [shard-not-param]");
}

TEST_CASE("shard refuses a scalar or a parameter that is not replicated",
          "[passes][shard][refusal]") {
  Compiled c = compile(kAdam);
  std::string d = expectRefusal(
      c, "scalar",
      c.at("shard(^lr)") +
          ": error: cannot shard 'lr': it is a scalar; only replicated "
          "tensor parameters can be sharded [shard-not-replicated-tensor]");
  CHECK(hasLine(d, c.at("^lr: f32") + ": note: 'lr' is defined here"));
  d = expectRefusal(c, "local_grad",
                    c.at("shard(^g)") +
                        ": error: cannot shard 'g': it is local; only "
                        "replicated tensor parameters can be sharded "
                        "[shard-not-replicated-tensor]");
  CHECK(hasLine(d, c.at("^g: f16[N] local") + ": note: 'g' is defined here"));

  Compiled sliced = compile(R"(program p(x: f32[N] sliced(0)) {
    y = x * 2.0;
    return y;
}
schedule s for p {
    shard(x);
}
)");
  expectRefusal(sliced, "s",
                sliced.at("shard(^x)") +
                    ": error: cannot shard 'x': it is sliced(0); only "
                    "replicated tensor parameters can be sharded "
                    "[shard-not-replicated-tensor]");
}

TEST_CASE("shard refuses a parameter that a stage reads whole",
          "[passes][shard][refusal]") {
  Compiled c = compile(kAdam);
  // Without reorder, m1 computes the whole replicated tensor.
  std::string d = expectRefusal(
      c, "before_reorder",
      c.at("shard(^m)") +
          ": error: cannot shard 'm': stage 'm1' reads all of it ('m1' is "
          "replicated); every use must read only this rank's slice, e.g. "
          "after reordering an allgather past 'm1' [shard-full-use]");
  CHECK(hasLine(d, c.at("^m1   = update") + ": note: 'm1' is defined here"));

  Compiled r = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    y = gs * w;
    wn = norm(w);
    return y, wn;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
    shard(w);
}
)");
  expectRefusal(r, "s",
                r.at("shard(^w)") +
                    ": error: cannot shard 'w': stage 'wn' reads all of it "
                    "('wn' is a reduction (norm), which needs the whole "
                    "tensor); every use must read only this rank's slice, "
                    "e.g. after reordering an allgather past 'wn' "
                    "[shard-full-use]");

  Compiled b = compile(R"(program p(g: f32[B, H] local,
          bias: f32[H] replicated) {
    gs = allreduce(sum, g);
    y = gs + bias;
    return y;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
    shard(bias);
}
)");
  expectRefusal(b, "s",
                b.at("shard(^bias)") +
                    ": error: cannot shard 'bias': stage 'y' reads all of it "
                    "('y' broadcasts 'bias' along its sliced dimension); "
                    "every use must read only this rank's slice, e.g. after "
                    "reordering an allgather past 'y' [shard-full-use]");
}

TEST_CASE("shard refuses a parameter read with different slicings",
          "[passes][shard][refusal]") {
  Compiled c = compile(R"(program p(q: f32[N, N] replicated, a: f32[N,
          N] sliced(0),
          b: f32[N, N] sliced(1)) {
    x = a + q;
    y = b * q;
    return x, y;
}
schedule s for p {
    shard(q);
}
)");
  expectRefusal(c, "s",
                c.at("shard(^q)") +
                    ": error: cannot shard 'q': stage 'x' reads it "
                    "sliced(0), but stage 'y' reads it sliced(1) "
                    "[shard-mixed-slices]");
}

TEST_CASE("shard refuses a parameter whose update computes the whole tensor",
          "[passes][shard][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, h: f32[N] local,
          w: f32[N] replicated) {
    gs = allreduce(sum, g);
    y = w * gs;
    w1 = update(w, allreduce(sum, h));
    return y;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
    shard(w);
}
)");
  std::string d = expectRefusal(
      c, "s",
      c.at("shard(^w)") +
          ": error: cannot shard 'w': its update 'w1' computes the full "
          "tensor; reorder the allgather past 'w1' first [shard-update-full]");
  CHECK(hasLine(d, c.at("^w1 = update") + ": note: 'w1' is defined here"));
}

TEST_CASE("shard refuses a parameter nothing reads",
          "[passes][shard][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, gs);
}
schedule s for p {
    shard(w);
}
)");
  expectRefusal(c, "s",
                c.at("shard(^w)") +
                    ": error: cannot shard 'w': no stage reads it, so there "
                    "is no slice to keep [shard-unused]");
}

TEST_CASE("shard refuses a parameter listed twice",
          "[passes][shard][refusal]") {
  Compiled c = compile(kAdam);
  expectRefusal(c, "twice",
                c.at("shard(m, v, ^m)") +
                    ": error: 'm' is listed twice [listed-twice]");
}

TEST_CASE("shard refuses an update that gathers a stage updating another "
          "parameter",
          "[passes][shard][refusal]") {
  Compiled c = compile(R"(program p(x: f32[N] sliced(0), a: f32[N] sliced(0),
          w: f32[N] replicated) {
    y = x * 2.0;
    a1 = update(a, y);
    w1 = update(w, allgather(a1));
    q = w * x;
    return q;
}
schedule s for p {
    shard(w);
}
)");
  std::string d = expectRefusal(
      c, "s",
      c.at("shard(^w)") +
          ": error: cannot shard 'w': its update gathers 'a1', which already "
          "updates 'a'; a stage can be written into one parameter only "
          "[shard-update-shared]");
  CHECK(hasLine(d, c.at("^a1 = update") + ": note: 'a1' is defined here"));
}

TEST_CASE("shard refuses an update that gathers a parameter",
          "[passes][shard][refusal]") {
  Compiled c = compile(R"(program p(x: f32[N] sliced(0), w: f32[N] replicated) {
    w1 = update(w, allgather(x));
    q = w * x;
    return q;
}
schedule s for p {
    shard(w);
}
)");
  expectRefusal(c, "s",
                c.at("shard(^w)") +
                    ": error: cannot shard 'w': its update gathers 'x', which "
                    "is a parameter; a stage can be written into one "
                    "parameter only [shard-update-shared]");
}

TEST_CASE("shard names the other reader of its update's allgather",
          "[passes][shard][refusal]") {
  Compiled c = compile(kAdam);
  // Reordering only part of the chain leaves mhat reading the gathered m1.
  std::string d = expectRefusal(
      c, "partial_reorder",
      c.at("shard(^m, v)") +
          ": error: cannot shard 'm': its update, the allgather 'ag.m1', is "
          "also read by 'mhat', which needs the full tensor; reorder "
          "'ag.m1' past 'mhat' too [shard-update-read]");
  CHECK(hasLine(d, c.at("^mhat = m1") + ": note: 'mhat' is defined here"));
}
