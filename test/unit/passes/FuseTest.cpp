//===- FuseTest.cpp - grouping stages into kernels ------------------------===//
//
// The fuse pass: elementwise kernels, fused collectives (a reducescatter or
// allreduce, elementwise stages, an allgather), growing an existing kernel,
// equality with the unscheduled program (fusion changes no values), and
// every refusal.
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
schedule ar_c for adam {
    fuse(g32, m1, v1, mhat, vhat, w1);
}
schedule rs_c_ag for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, mhat, vhat, w1);
    shard(m, v);
    fuse(g32, m1, v1, mhat, vhat, w1);
}
schedule fused_rs_c_ag for adam {
    apply rs_c_ag;
    fuse(rs, g32, m1, v1, mhat, vhat, w1, ag);
}
schedule grow_in_steps for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, mhat, vhat, w1);
    fuse(g32, m1);
    fuse(v1, vhat);
    fuse(g32, m1, v1, mhat, vhat, w1);
}
schedule allreduce_first for adam {
    fuse(gs, g32, m1, v1, mhat, vhat, w1);
}
)";

std::vector<std::string> kernelNames(const ir::Kernel &k) {
  std::vector<std::string> names;
  for (const ir::Stage *s : k.stages)
    names.push_back(s->name);
  return names;
}

} // namespace

TEST_CASE("fuse groups an elementwise chain into one kernel",
          "[passes][fuse]") {
  Compiled c = compile(kAdam);
  Scheduled s = schedule(c, "ar_c");
  REQUIRE(s.program->kernels.size() == 1);
  const ir::Kernel &k = s.program->kernels[0];
  CHECK(kernelNames(k) ==
        std::vector<std::string>{"g32", "m1", "v1", "mhat", "vhat", "w1"});
  CHECK_FALSE(k.isFusedCollective());
  CHECK(s.program->kernelOf(&s.stage("mhat")) == &k);
  CHECK(s.program->kernelOf(&s.stage("gs")) == nullptr);
  CHECK(hasLine(s.ir(), "  kernel k0 (elementwise): %10 %11 %12 %13 %14 %15"));
  // Fusion changes nothing else.
  std::string plain = printIR(c.program());
  std::string fused = s.ir();
  size_t at = fused.find("  kernel k0");
  REQUIRE(at != std::string::npos);
  CHECK(fused.substr(0, at) + "}\n" == plain);
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 12}}),
                    Agreement::Bitwise, {{"v", "0.001"}});
}

TEST_CASE("fuse makes a fused collective", "[passes][fuse]") {
  Compiled c = compile(kAdam);
  Scheduled s = schedule(c, "fused_rs_c_ag");
  // The kernel of rs_c_ag grew into the fused collective: one kernel.
  REQUIRE(s.program->kernels.size() == 1);
  const ir::Kernel &k = s.program->kernels[0];
  CHECK(kernelNames(k) == std::vector<std::string>{"rs", "g32", "m1", "v1",
                                                   "mhat", "vhat", "w1", "ag"});
  CHECK(k.isFusedCollective());
  CHECK(hasLine(s.ir(),
                "  kernel k0 (fused collective): %9 %10 %11 %12 %13 %14 %15 "
                "%16"));
  // The kernel records the directive that grew it last.
  CHECK(k.loc.Start.getPointer() ==
        c.schedule("fused_rs_c_ag").directives[1].loc.Start.getPointer());
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}),
                    Agreement::Bitwise, {{"v", "0.001"}});
}

TEST_CASE("fuse grows existing kernels that it contains whole",
          "[passes][fuse]") {
  Compiled c = compile(kAdam);
  Scheduled s = schedule(c, "grow_in_steps");
  REQUIRE(s.program->kernels.size() == 1);
  CHECK(kernelNames(s.program->kernels[0]) ==
        std::vector<std::string>{"g32", "m1", "v1", "mhat", "vhat", "w1"});
  CHECK(s.program->kernels[0].loc.Start.getPointer() ==
        c.schedule("grow_in_steps").directives[4].loc.Start.getPointer());
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 12}}),
                    Agreement::Bitwise, {{"v", "0.001"}});
}

TEST_CASE("fuse keeps kernels in program order", "[passes][fuse]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    a = x * 2.0;
    b = a + 1.0;
    t = sum(b);
    d = b * t;
    e = exp(d);
    return e;
}
schedule s for p {
    fuse(d, e);
    fuse(a, b);
}
)");
  Scheduled s = schedule(c, "s");
  REQUIRE(s.program->kernels.size() == 2);
  CHECK(kernelNames(s.program->kernels[0]) ==
        std::vector<std::string>{"a", "b"});
  CHECK(kernelNames(s.program->kernels[1]) ==
        std::vector<std::string>{"d", "e"});
  CHECK(hasLine(s.ir(), "  kernel k0 (elementwise): %1 %2"));
  CHECK(hasLine(s.ir(), "  kernel k1 (elementwise): %4 %5"));
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 8}}));
}

TEST_CASE("fuse starts a kernel with an allreduce", "[passes][fuse]") {
  Compiled c = compile(kAdam);
  Scheduled s = schedule(c, "allreduce_first");
  REQUIRE(s.program->kernels.size() == 1);
  const ir::Kernel &k = s.program->kernels[0];
  CHECK(k.stages.front()->kind == StageKind::AllReduce);
  CHECK(k.isFusedCollective());
  CHECK(hasLine(s.ir(),
                "  kernel k0 (fused collective): %9 %10 %11 %12 %13 %14 %15"));
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 12}}),
                    Agreement::Bitwise, {{"v", "0.001"}});
}

TEST_CASE("fuse of megatron's bias, dropout and residual around the split",
          "[passes][fuse]") {
  Compiled c = compile(R"(program megatron_mlp(x: f16[B, H] replicated,
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
)");
  Scheduled s = schedule(c, "mm_rs_c_ag");
  REQUIRE(s.program->kernels.size() == 1);
  CHECK(kernelNames(s.program->kernels[0]) ==
        std::vector<std::string>{"rs", "out", "ag"});
  CHECK(hasLine(s.ir(), "  kernel k0 (fused collective): %11 %12 %13"));
  CHECK(hasLine(s.ir(), "  results %13 as out"));
  expectSameResults(c.program(), *s.program,
                    worldRanks({{"B", 12}, {"H", 12}}));
}

TEST_CASE("fuse starts a kernel with gathers its stages read",
          "[passes][fuse]") {
  // Positions 2 * i - 3 of 0..15: negative ones and ones past the 6 rows
  // (0 for each), read through the index in the kernel.
  Compiled c = compile(R"(program p(mesh [ep: P], x: f32[P, 6, H] sliced(0),
          i: i32[P, T] sliced(0), w: f32[P, T, 1] sliced(0)) {
    idx = i * 2 - 3;
    g = gather(x, idx, dim=1);
    h = gather(x, idx, dim=1);
    y = g * w + h;
    return y;
}
schedule s for p {
    fuse(g, h, y);
}
)");
  Scheduled s = schedule(c, "s");
  REQUIRE(s.program->kernels.size() == 1);
  CHECK(kernelNames(s.program->kernels[0]) ==
        std::vector<std::string>{"g", "h", "y"});
  CHECK_FALSE(s.program->kernels[0].isFusedCollective());
  expectSameResults(c.program(), *s.program, worldRanks({{"H", 5}, {"T", 9}}),
                    Agreement::Bitwise);
}

TEST_CASE("fuse refuses a stage of another kind", "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(x: f32[B, H] replicated, w: f32[H,
          H] replicated) {
    y = matmul(x, w);
    z = relu(y);
    t = sum(z);
    u = z / t;
    return u;
}
schedule mm for p {
    fuse(y, z);
}
schedule red for p {
    fuse(z, t);
}
)");
  std::string d = expectRefusal(
      c, "mm",
      c.at("fuse(^y, z)") +
          ": error: cannot fuse 'y': it is a matmul; a kernel holds "
          "elementwise stages (the first may be gathers they read), "
          "optionally after one reducescatter or "
          "allreduce and before one allgather [fuse-not-fusable]");
  CHECK(hasLine(d, c.at("^y = matmul") + ": note: 'y' is defined here"));
  expectRefusal(c, "red",
                c.at("fuse(z, ^t)") +
                    ": error: cannot fuse 't': it is a reduction (sum); a "
                    "kernel holds elementwise stages (the first may be "
                    "gathers they read), optionally after one "
                    "reducescatter or allreduce and before one allgather "
                    "[fuse-not-fusable]");

  Compiled mesh = compile(R"(program p(mesh [dp: D, tp: T], g: f32[N] local) {
    gs = allreduce(sum, g);
    y = gs * 2.0;
    return y;
}
schedule s for p {
    fuse(gs, y);
}
)");
  expectRefusal(mesh, "s",
                mesh.at("fuse(^gs, y)") +
                    ": error: cannot fuse 'gs': it is a collective over "
                    "every mesh axis; a kernel holds elementwise stages "
                    "(the first may be gathers they read), optionally "
                    "after one reducescatter or allreduce and "
                    "before one allgather [fuse-not-fusable]");
}

TEST_CASE("fuse refuses a stage listed twice", "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    y = x * 2.0;
    z = relu(y);
    return z;
}
schedule s for p {
    fuse(y, z, y);
}
)");
  expectRefusal(c, "s",
                c.at("fuse(y, z, ^y)") +
                    ": error: 'y' is listed twice [listed-twice]");
}

TEST_CASE("fuse refuses stages that are not connected",
          "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    y = x * 2.0;
    z = relu(x);
    q = y + 1.0;
    return q, z;
}
schedule s for p {
    fuse(y, z, q);
}
)");
  expectRefusal(c, "s",
                c.at("fuse(y, ^z, q)") +
                    ": error: cannot fuse 'z' with the other stages: it "
                    "neither reads nor feeds a stage of the group "
                    "[fuse-not-connected]");
}

TEST_CASE("fuse refuses a group that a stage outside would cut",
          "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    e = exp(x);
    total = sum(e);
    y = e / total;
    return y;
}
schedule s for p {
    fuse(e, y);
}
)");
  expectRefusal(c, "s",
                c.at("fuse(e, ^y)") +
                    ": error: cannot fuse 'e' and 'y': 'y' depends on 'e' "
                    "through 'total', which is not in the group; add it or "
                    "fuse less [fuse-cycle]");

  // A longer path through two outside stages.
  Compiled l = compile(R"(program p(x: f32[N] replicated) {
    a = x + 1.0;
    s1 = sum(a);
    s2 = s1 * 2.0;
    b = a * s2;
    return b;
}
schedule s for p {
    fuse(a, b);
}
)");
  expectRefusal(l, "s",
                l.at("fuse(a, ^b)") +
                    ": error: cannot fuse 'a' and 'b': 'b' depends on 'a' "
                    "through 's2', which is not in the group; add it or fuse "
                    "less [fuse-cycle]");
}

TEST_CASE("fuse refuses two collectives of one role",
          "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, h: f32[N] local) {
    gs = allreduce(sum, g);
    hs = allreduce(sum, h);
    x = gs + hs;
    return x;
}
schedule reducing for p {
    fuse(gs, hs, x);
}
)");
  expectRefusal(c, "reducing",
                c.at("fuse(gs, ^hs, x)") +
                    ": error: cannot fuse 'gs' and 'hs': a kernel holds at "
                    "most one reducescatter or allreduce "
                    "[fuse-two-collectives]");

  Compiled g = compile(R"(program p(x: f32[N] sliced(0), y: f32[N] sliced(0)) {
    a = x * 2.0;
    ag1 = allgather(a);
    ag2 = allgather(y);
    return ag1, ag2;
}
schedule s for p {
    fuse(a, ag1, ag2);
}
)");
  expectRefusal(g, "s",
                g.at("fuse(a, ag1, ^ag2)") +
                    ": error: cannot fuse 'ag1' and 'ag2': a kernel holds at "
                    "most one allgather [fuse-two-collectives]");
}

TEST_CASE("fuse refuses a collective in the wrong place",
          "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    x = 2.0 * g;
    xs = allreduce(sum, x);
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
    return xs;
}
schedule reduce_inside for p {
    fuse(x, xs);
}
schedule gather_read for p {
    (rs, ag) = split(gs);
    fuse(rs, ag, w1);
}
)");
  expectRefusal(c, "reduce_inside",
                c.at("fuse(x, ^xs)") +
                    ": error: cannot fuse 'xs': a reducescatter or allreduce "
                    "must start the kernel, but it reads 'x' of the group "
                    "[fuse-collective-place]");
  expectRefusal(c, "gather_read",
                c.at("fuse(rs, ^ag, w1)") +
                    ": error: cannot fuse 'ag': an allgather must end the "
                    "kernel, but 'w1' of the group reads it "
                    "[fuse-collective-place]");
}

TEST_CASE("fuse refuses stages that loop over different shapes",
          "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated,
          b: f32[B, N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
    y = b * w1;
    return y;
}
schedule layouts for p {
    (rs, ag) = split(gs);
    fuse(rs, w1);
}
schedule shapes for p {
    fuse(w1, y);
}
)");
  expectRefusal(c, "layouts",
                c.at("fuse(rs, ^w1)") +
                    ": error: cannot fuse 'w1' ([N] replicated) with 'rs' "
                    "([N] sliced(0)): the stages of one kernel loop over one "
                    "shape and layout [fuse-shapes]");
  expectRefusal(c, "shapes",
                c.at("fuse(w1, ^y)") +
                    ": error: cannot fuse 'y' ([B, N] replicated) with 'w1' "
                    "([N] replicated): the stages of one kernel loop over "
                    "one shape and layout [fuse-shapes]");
}

TEST_CASE("fuse refuses to take part of an existing kernel",
          "[passes][fuse][refusal]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    a = x * 2.0;
    b = a + 1.0;
    c = relu(b);
    return c;
}
schedule s for p {
    fuse(a, b);
    fuse(b, c);
}
)");
  Refused r = refuse(c, "s");
  CHECK(r.directive == 1);
  // The refused directive left the first kernel as it was.
  CHECK(hasLine(r.after, "  kernel k0 (elementwise): %1 %2"));
  expectRefusal(c, "s",
                c.at("fuse(^b, c)") +
                    ": error: cannot fuse 'b': it is already in a kernel "
                    "with 'a', which this group leaves out [fuse-partial]");
}
