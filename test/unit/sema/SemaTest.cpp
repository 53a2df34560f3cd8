//===- SemaTest.cpp - element types, shapes, layouts of programs ----------===//
//
// Checks programs given as text: what sema infers for each stage, and that
// each rule refuses what it must (the exact wording is covered by the lit
// diagnostics suite; here the kind of the error).
//
//===----------------------------------------------------------------------===//

#include "SemaTestUtil.h"

#include <catch2/catch.hpp>

using coconet::test::check;

static bool hasError(const coconet::test::Checked &c, const char *kind) {
  return c.diagnostics.find(std::string("[") + kind + "]") != std::string::npos;
}

TEST_CASE("the sketch's adam step checks", "[sema]") {
  auto c = check(R"(
program adam(g: f16[N] local, w: f32[N] replicated, m: f32[N] replicated,
             v: f32[N] replicated, lr: f32, beta1: f32, beta2: f32, eps: f32,
             step: i32) {
    gs   = allreduce(sum, g);
    g32  = f32(gs);
    m1   = update(m, beta1 * m + (1 - beta1) * g32);
    v1   = update(v, beta2 * v + (1 - beta2) * g32 * g32);
    mhat = m1 / (1 - pow(beta1, f32(step)));
    vhat = v1 / (1 - pow(beta2, f32(step)));
    w1   = update(w, w - lr * mhat / (sqrt(vhat) + eps));
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("gs") == "f16[N] replicated");
  CHECK(c.typeOf("g32") == "f32[N] replicated");
  CHECK(c.typeOf("w1") == "f32[N] replicated");
  const auto &p = *c.module->programs.front();
  REQUIRE(p.getResults().size() == 3);
  CHECK(p.getResults()[0]->updates->name == "w");
  CHECK(p.getResults()[1]->updates->name == "m");
  CHECK(p.getResults()[2]->updates->name == "v");
}

TEST_CASE("literals adapt to the other operand's type", "[sema][dtype]") {
  auto c = check(R"(
program p(h: f16[N] replicated, k: i64[N] replicated) {
    a = h * 0.5 + 1;
    b = k * 3 - 1;
    c = 2 * 3 + h;
    return a, b, c;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("a") == "f16[N] replicated");
  CHECK(c.typeOf("b") == "i64[N] replicated");
  CHECK(c.typeOf("c") == "f16[N] replicated");
}

TEST_CASE("a literal alone has a default type", "[sema][dtype]") {
  auto c = check("program p() { x = 1.5; y = 2; z = 1 / 2; return x, y, z; }");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("x") == "f32");
  CHECK(c.typeOf("y") == "i32");
  CHECK(c.typeOf("z") == "f32");
}

TEST_CASE("no implicit conversion between float widths", "[sema][dtype]") {
  CHECK(hasError(check("program p(a: f16[N] replicated, b: f32[N] replicated)"
                       " { c = a + b; return c; }"),
                 "mixed-types"));
  CHECK(hasError(check("program p(a: bf16[N] replicated, lr: f32)"
                       " { c = lr * a; return c; }"),
                 "mixed-types"));
}

TEST_CASE("comparisons give bool and select needs it", "[sema][dtype]") {
  auto c = check(R"(
program p(x: f32[N] replicated) {
    pos = x > 0;
    y = select(pos, x, 0);
    return y;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("pos") == "bool[N] replicated");
  CHECK(c.typeOf("y") == "f32[N] replicated");
  CHECK(hasError(check("program p(x: f32[N] replicated) { y = select(x, x, x);"
                       " return y; }"),
                 "expected-bool"));
}

TEST_CASE("math functions need floats", "[sema][dtype]") {
  CHECK(hasError(check("program p(k: i32[N] replicated) { y = exp(k); "
                       "return y; }"),
                 "expected-float"));
  auto ok = check("program p(k: i32[N] replicated) { y = abs(k) + relu(k);"
                  " return y; }");
  INFO(ok.diagnostics);
  CHECK(ok.module);
}

TEST_CASE("shapes broadcast over trailing dimensions", "[sema][shape]") {
  auto c = check(R"(
program p(x: f32[B, S, H] replicated, b: f32[H] replicated,
          c: f32[1, H] replicated) {
    y = x + b;
    z = x * c;
    return y, z;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("y") == "f32[B, S, H] replicated");
  CHECK(c.typeOf("z") == "f32[B, S, H] replicated");
  CHECK(hasError(check("program p(x: f32[N] replicated, y: f32[M] replicated)"
                       " { z = x + y; return z; }"),
                 "shape-mismatch"));
}

TEST_CASE("dimension products are compared symbolically", "[sema][shape]") {
  auto c = check(R"(
program p(x: f32[B, 4*H] replicated, w: f32[H*4, H] replicated) {
    y = matmul(x, w);
    return y;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("y") == "f32[B, H] replicated");
}

TEST_CASE("the layout of a sliced operand broadcast into a bigger result",
          "[sema][layout]") {
  auto c = check(R"(
program p(x: f32[B, H] sliced(1), b: f32[H] sliced(0)) {
    y = x + b;
    return y;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("y") == "f32[B, H] sliced(1)");
}

TEST_CASE("elementwise layout refusals", "[sema][layout]") {
  CHECK(hasError(check("program p(g: f32[N] local, w: f32[N] sliced)"
                       " { y = g + w; return y; }"),
                 "layout-mismatch"));
  CHECK(hasError(check("program p(x: f32[N, N] sliced(0), "
                       "y: f32[N, N] sliced(1)) { z = x + y; return z; }"),
                 "layout-mismatch"));
}

TEST_CASE("reductions of sliced tensors are partial values", "[sema][layout]") {
  auto c = check(R"(
program p(w: f32[N] sliced, x: f32[B, H] sliced(1)) {
    n = norm(w);
    s = sum(x, dim=1);
    t = sum(x, dim=0);
    g = sqrt(allreduce(sum, sum(w * w)));
    return n, s, t, g;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("n") == "f32 local");
  CHECK(c.typeOf("s") == "f32[B] local");
  CHECK(c.typeOf("t") == "f32[H] sliced(0)");
  CHECK(c.typeOf("g") == "f32");
}

TEST_CASE("megatron row-parallel matmul gives partial sums", "[sema][layout]") {
  auto c = check(R"(
program mlp(x: f16[B, S, 4*H] sliced(2), w: f16[4*H, H] sliced(0),
            b: f16[H] replicated, r: f16[B, S, H] replicated,
            p: f32, seed: u64) {
    y   = matmul(x, w);
    ys  = allreduce(sum, y);
    out = dropout(ys + b, p, seed) + r;
    return out;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("y") == "f16[B, S, H] local");
  CHECK(c.typeOf("ys") == "f16[B, S, H] replicated");
  CHECK(c.typeOf("out") == "f16[B, S, H] replicated");
}

TEST_CASE("collectives check their input layouts", "[sema][layout]") {
  CHECK(hasError(check("program p(g: f32[N] local) { y = allgather(g);"
                       " return y; }"),
                 "collective-input"));
  CHECK(hasError(check("program p(g: f32[N] sliced) { y = allreduce(sum, g);"
                       " return y; }"),
                 "collective-input"));
  auto c = check(R"(
program p(g: f32[N] local) {
    rs = reducescatter(sum, g);
    ag = allgather(rs);
    b  = broadcast(g, 0);
    r  = reduce(max, g, 1);
    return rs, ag, b, r;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("rs") == "f32[N] sliced(0)");
  CHECK(c.typeOf("ag") == "f32[N] replicated");
  CHECK(c.typeOf("b") == "f32[N] replicated");
  CHECK(c.typeOf("r") == "f32[N] local");
}

TEST_CASE("a mesh gives per-axis layouts", "[sema][layout][mesh]") {
  auto c = check(R"(
program stage(mesh [pp: PP, tp: T], y: f16[B, H] local,
              w: f16[H] sliced(0, tp) local(pp)) {
    ys  = allreduce(sum, y, tp);
    rs  = reducescatter(sum, y, tp, dim=1);
    ag  = allgather(w, tp);
    nxt = sendrecv(ys, pp, 1);
    all = allreduce(sum, y);
    return ys, rs, ag, nxt, all;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("w") == "f16[H] local(pp) sliced(0, tp)");
  CHECK(c.typeOf("ys") == "f16[B, H] local(pp) replicated(tp)");
  CHECK(c.typeOf("rs") == "f16[B, H] local(pp) sliced(1, tp)");
  CHECK(c.typeOf("ag") == "f16[H] local(pp) replicated(tp)");
  CHECK(c.typeOf("nxt") == "f16[B, H] local(pp) replicated(tp)");
  CHECK(c.typeOf("all") == "f16[B, H] replicated");
  CHECK(hasError(check("program p(mesh [a: A, b: B2], y: f16[N] local(a))"
                       " { z = allgather(y); return z; }"),
                 "collective-needs-axis"));
}

TEST_CASE("unmentioned axes of a layout are replicated", "[sema][mesh]") {
  auto c = check("program p(mesh [dp: D, tp: T], w: f32[N] sliced(0, tp))"
                 " { return w; }");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("w") == "f32[N] replicated(dp) sliced(0, tp)");
}

TEST_CASE("non-elementwise operations nested in a statement are stages",
          "[sema][naming]") {
  auto c = check(R"(
program p(g: f32[N] local, h: f32[N] local) {
    x = allreduce(sum, g * h) * 2;
    return x;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  std::string ir = c.ir();
  CHECK(ir.find("x.1 : f32[N] local = elementwise") != std::string::npos);
  CHECK(ir.find("x.2 : f32[N] replicated = allreduce(sum") !=
        std::string::npos);
  CHECK(ir.find("x : f32[N] replicated = elementwise") != std::string::npos);
}

TEST_CASE("a top-level collective takes the statement's name",
          "[sema][naming]") {
  auto c = check("program p(g: f32[N] local) { gs = allreduce(sum, g);"
                 " return gs; }");
  REQUIRE(c.module);
  CHECK(c.ir().find("gs : f32[N] replicated = allreduce(sum, %0) over world") !=
        std::string::npos);
}

TEST_CASE("updates must keep the parameter's type", "[sema][update]") {
  CHECK(hasError(check("program p(g: f32[N] local, w: f32[N] replicated)"
                       " { w1 = update(w, w - g); }"),
                 "update-type-mismatch"));
  CHECK(hasError(check("program p(w: f32[N] replicated, lr: f32)"
                       " { a = update(lr, lr); }"),
                 "update-not-param"));
  CHECK(hasError(check("program p(w: f32[N] replicated)"
                       " { a = update(w, w * 2); b = update(w, w * 3); }"),
                 "update-twice"));
}

TEST_CASE("updating with an earlier value copies it", "[sema][update]") {
  auto c = check(R"(
program p(w: f32[N] replicated, g: f32[N] local) {
    s = allreduce(sum, g);
    w1 = update(w, s);
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.ir().find("w1 : f32[N] replicated = elementwise %2 -> update %0") !=
        std::string::npos);
}

TEST_CASE("dropout, layernorm and rmsnorm", "[sema]") {
  auto c = check(R"(
program p(x: bf16[B, H] sliced(0), gamma: bf16[H] replicated,
          beta: bf16[H] replicated, p: f32, seed: u64) {
    d = dropout(x, p, seed);
    n = layernorm(d, gamma, beta, 1e-5);
    r = rmsnorm(n, gamma, 1e-6);
    return r;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("d") == "bf16[B, H] sliced(0)");
  CHECK(c.typeOf("n") == "bf16[B, H] sliced(0)");
  CHECK(c.typeOf("r") == "bf16[B, H] sliced(0)");
  CHECK(hasError(check("program p(x: f32[B, H] sliced(1), g: f32[H] "
                       "replicated) { r = rmsnorm(x, g, 1e-6); return r; }"),
                 "sliced-row-op"));
}

TEST_CASE("errors poison only the name they define", "[sema][recovery]") {
  auto c = check(R"(
program p(g: f32[N] local) {
    a = g + nope;
    b = a * 2;
    c = b + alsonope;
    return c;
})");
  CHECK_FALSE(c.module);
  CHECK(c.errors == 2);
}

TEST_CASE("schedules resolve names and refuse unknown ones",
          "[sema][schedule]") {
  const char *program = R"(
program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
}
)";
  auto ok = check(std::string(program) + R"(
schedule base for p { (rs, ag) = split(gs); reorder(ag, w1); }
schedule more for p { apply base; fuse(rs, w1, ag); shard(w); }
)");
  INFO(ok.diagnostics);
  REQUIRE(ok.module);
  CHECK(ok.module->schedules.size() == 2);
  CHECK(hasError(
      check(std::string(program) + "schedule s for p { fuse(rs, w1); }"),
      "schedule-unknown-stage"));
  CHECK(hasError(check(std::string(program) +
                       "schedule s for p { (rs, gs) = split(gs); }"),
                 "schedule-name-clash"));
  CHECK(hasError(check(std::string(program) +
                       "schedule s for p { overlap(gs, w1) chunks 0; }"),
                 "chunks-positive"));
  // A result name is bound once: by one directive, or across two.
  CHECK(hasError(
      check(std::string(program) + "schedule s for p { (a, a) = split(gs); }"),
      "redefinition"));
  CHECK(hasError(check(std::string(program) +
                       "schedule s for p { (rs, ag) = split(gs); "
                       "(rs, ag2) = split(ag); }"),
                 "redefinition"));
  CHECK(hasError(check(std::string(program) +
                       "program q(g: f32[N] local) { return g; }\n"
                       "schedule s for q { apply t; }\n"
                       "schedule t for p { split(gs); }"),
                 "apply-other-program"));
}

TEST_CASE("max and min with dim= are reductions, with two values elementwise",
          "[sema]") {
  auto c = check(R"(
program p(x: f32[B, H] replicated, y: f32[B, H] replicated) {
  a = max(x, dim=1); b = min(x, dim=0); e = max(x, y); return a, b, e;
})");
  INFO(c.diagnostics);
  REQUIRE(c.module);
  CHECK(c.typeOf("a") == "f32[B] replicated");
  CHECK(c.typeOf("b") == "f32[H] replicated");
  CHECK(c.typeOf("e") == "f32[B, H] replicated");
}

TEST_CASE("a norm's epsilon must be replicated", "[sema]") {
  auto c = check(R"(
program p(x: f32[B, H] replicated, g: f32[H] replicated, l: f32[N] local) {
  y = rmsnorm(x, g, sum(l)); return y;
})");
  CHECK(c.errors == 1);
  CHECK(hasError(c, "scalar-not-replicated"));
  auto ok = check(R"(
program p(x: f32[B, H] replicated, g: f32[H] replicated, e: f32) {
  y = rmsnorm(x, g, e); return y;
})");
  CHECK(ok.errors == 0);
}
