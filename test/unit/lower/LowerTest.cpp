//===- LowerTest.cpp - scheduled IR to the kernel-level plan --------------===//
//
// Where values live (registers, in place, outputs, scratch), when an update
// cannot be written in place and is copied instead (and in which order),
// how scratch slots are shared, the steps of collectives along a dimension
// other than the first, scalars stored for a collective, the seams of fused
// collectives and overlaps, and the size checks.
//
//===----------------------------------------------------------------------===//

#include "LowerTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using lower::Buffer;
using lower::Plan;

TEST_CASE("updates are written in place when nothing reads the old value "
          "later",
          "[lower]") {
  Compiled c = compile(R"(program adam(g: f16[N] local, w: f32[N] replicated,
          m: f32[N] replicated, v: f32[N] replicated, lr: f32, beta1: f32,
          beta2: f32, eps: f32) {
    gs   = allreduce(sum, g);
    g32  = f32(gs);
    m1   = update(m, beta1 * m + (1 - beta1) * g32);
    v1   = update(v, beta2 * v + (1 - beta2) * g32 * g32);
    w1   = update(w, w - lr * m1 / (sqrt(v1) + eps));
}
schedule rs_c_ag for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, w1);
    shard(m, v);
    fuse(g32, m1, v1, w1);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "rs_c_ag", keep);
  CHECK(stepNames(*plan) == std::vector<std::string>{"reducescatter_rs",
                                                     "k0_g32_to_w1",
                                                     "allgather_ag"});
  // m and v (sharded) are updated in place by the kernel; w1 is written
  // into its block of w (a view), which the allgather gathers in place;
  // g32 stays in registers; nothing is copied.
  CHECK(buffer(*plan, "m").written);
  CHECK(buffer(*plan, "v").written);
  CHECK(buffer(*plan, "w").written);
  CHECK(buffer(*plan, "m").sharded);
  const auto &k = std::get<lower::ElementwiseKernel>(plan->steps[1].body);
  CHECK(k.members[0].name == "g32");
  CHECK_FALSE(k.members[0].output);
  CHECK(plan->buffers[k.members[1].output.value()].name == "m");
  CHECK(k.flat);
  for (const Plan::Result &r : plan->results)
    CHECK(plan->buffers[r.buffer].name == r.name);
  // w is read at the slice's offset: through the view the kernel writes.
  const lower::Buffer &view = buffer(*plan, "t_w1");
  CHECK(view.kind == Buffer::Kind::View);
  CHECK(plan->buffers[view.base].name == "w");
  CHECK(view.viewAxis == 0);
  bool readsView = false;
  for (const lower::KernelInput &in : k.inputs) {
    CHECK(plan->buffers[in.buffer].name != "w");
    if (plan->buffers[in.buffer].name == "t_w1")
      readsView = in.flat;
  }
  CHECK(readsView);
  const auto &ag = std::get<lower::CollectiveCall>(plan->steps[2].body);
  CHECK(plan->buffers[ag.input].name == "t_w1");
  CHECK(plan->buffers[ag.output].name == "w");
  CHECK(plan->numSlots == 1);
  // On one rank the reducescatter's result is g itself.
  const Buffer &rs = buffer(*plan, "t_rs");
  REQUIRE(rs.loneInput);
  CHECK(plan->buffers[*rs.loneInput].name == "g");
  CHECK(rs.loneAxis == 0);
}

TEST_CASE("a lone collective's output is its input only when that input "
          "keeps its value",
          "[lower]") {
  Compiled c = compile(R"(program p(g: f32[N] local, h: f32[N] local,
          w: f32[N] replicated) {
    gs = allreduce(sum, g);
    h2 = h * 2.0;
    hs = allreduce(sum, h2);
    ws = allreduce(max, w);
    w1 = update(w, w - gs - hs * ws);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  // gs: g is a parameter nothing writes. hs: its input is scratch, whose
  // slot may be reused while hs is read. ws: w is written by the update.
  CHECK(plan->buffers[buffer(*plan, "t_gs").loneInput.value()].name == "g");
  CHECK_FALSE(buffer(*plan, "t_hs").loneInput);
  CHECK(buffer(*plan, "t_ws").kind == Buffer::Kind::Scratch);
  CHECK_FALSE(buffer(*plan, "t_ws").loneInput);
}

TEST_CASE("an update is copied at the end when a later step reads the old "
          "value",
          "[lower]") {
  Compiled c =
      compile(R"(program p(w: f32[N] replicated, g: f32[N] replicated) {
    w1 = update(w, w * 2.0);
    y = w + g;
    return y;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  // w1 goes to scratch; y reads the old w; w is written by the final copy.
  CHECK(stepNames(*plan) ==
        std::vector<std::string>{"k0_w1", "k1_y", "copy_w"});
  CHECK(buffer(*plan, "t_w1").kind == Buffer::Kind::Scratch);
  CHECK(buffer(*plan, "w").written);
  CHECK(buffer(*plan, "out_y").kind == Buffer::Kind::Output);
}

TEST_CASE("a gathered update is no view of the parameter while a later step "
          "reads the parameter's old value",
          "[lower]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated,
          x: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
    y = w * x;
    return y;
}
schedule rs_c_ag for p {
    (rs, ag) = split(gs);
    reorder(ag, w1);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "rs_c_ag", keep);
  // y reads the old w after the allgather: w1's block goes to scratch, the
  // allgather into scratch, and w is written by the final copy.
  CHECK(stepNames(*plan) == std::vector<std::string>{"reducescatter_rs",
                                                     "k0_w1", "allgather_ag",
                                                     "k1_y", "copy_w"});
  CHECK(buffer(*plan, "t_w1").kind == Buffer::Kind::Scratch);
  CHECK(buffer(*plan, "t_ag").kind == Buffer::Kind::Scratch);
  for (const Buffer &b : plan->buffers)
    CHECK(b.kind != Buffer::Kind::View);
}

TEST_CASE("an update read later and also returned goes to its output first",
          "[lower]") {
  Compiled c =
      compile(R"(program p(w: f32[N] replicated, g: f32[N] replicated) {
    w1 = update(w, w + g);
    w_old = w;
    return w_old, w1;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  // w_old reads the old w after w1 is computed, so w1 cannot overwrite w:
  // it is computed into its own output (it is returned too) and copied
  // into w after the last step.
  CHECK(stepNames(*plan) ==
        std::vector<std::string>{"k0_w1", "k1_w_old", "copy_w"});
  REQUIRE(plan->results.size() == 3);
  CHECK(plan->results[0].name == "w");
  CHECK(plan->results[1].name == "w_old");
  CHECK(plan->results[2].name == "w1");
  REQUIRE(plan->outputs().size() == 2);
  CHECK(plan->buffers[plan->outputs()[0]].name == "out_w_old");
  CHECK(plan->buffers[plan->outputs()[1]].name == "out_w1");
  const auto &copy = std::get<lower::CopyCall>(plan->steps[2].body);
  CHECK(plan->buffers[copy.input].name == "out_w1");
  CHECK(plan->buffers[copy.output].name == "w");
}

TEST_CASE("scratch slots are shared by intermediates that are never live "
          "together",
          "[lower]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    a = x * 2.0;
    b = a * 3.0;
    c = b * 4.0;
    d = c * 5.0;
    e = d + a;
    return e;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  // a lives until e; b, c and d alternate in a second and third slot.
  CHECK(buffer(*plan, "t_a").slot == 0);
  CHECK(buffer(*plan, "t_b").slot == 1);
  CHECK(buffer(*plan, "t_c").slot == 2);
  CHECK(buffer(*plan, "t_d").slot == 1);
  CHECK(plan->numSlots == 3);
}

TEST_CASE("collectives along dimension 1 pack and unpack their blocks",
          "[lower]") {
  Compiled c = compile(R"(program p(g: f32[B, H] local) {
    s = reducescatter(sum, g, dim=1);
    t = s * 2.0;
    u = allgather(t);
    return u;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  CHECK(stepNames(*plan) ==
        std::vector<std::string>{"k0_pack_s", "reducescatter_s", "k1_t",
                                 "allgather_u", "k2_unpack_u"});
  const auto &pack = std::get<lower::PackKernel>(plan->steps[0].body);
  CHECK_FALSE(pack.unpack);
  CHECK(pack.outer.size() == 1);
  CHECK(pack.inner.empty());
  CHECK(std::get<lower::PackKernel>(plan->steps[4].body).unpack);
  CHECK(printed(*plan).find("check: H divisible by P (dimension 1 of 's')") !=
        std::string::npos);
}

TEST_CASE("a scalar argument is stored into memory for a collective",
          "[lower]") {
  Compiled c = compile(R"(program p(lr: f32, x: f32[N] replicated) {
    s = allreduce(sum, lr);
    y = x * s;
    return y;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  CHECK(stepNames(*plan) ==
        std::vector<std::string>{"store_lr", "allreduce_s", "k0_y"});
  CHECK(buffer(*plan, "lr").kind == Buffer::Kind::ScalarParam);
  CHECK(buffer(*plan, "t_lr").kind == Buffer::Kind::Scratch);
  const auto &k = std::get<lower::ElementwiseKernel>(plan->steps[2].body);
  // s is a one-element buffer read as a scalar.
  bool scalar = false;
  for (const lower::KernelInput &in : k.inputs)
    if (plan->buffers[in.buffer].name == "t_s")
      scalar = in.isScalar();
  CHECK(scalar);
}

TEST_CASE("fused collectives and overlaps are recorded as seams", "[lower]") {
  Compiled c = compile(R"(program mlp(x: f16[B, H] replicated,
          w1: f16[H, 4*H] sliced(1), w2: f16[4*H, H] sliced(0),
          r: f16[B, H] replicated) {
    h = matmul(x, w1);
    y = matmul(h, w2);
    ys = allreduce(sum, y);
    out = ys + r;
    return out;
}
schedule s for mlp {
    (rs, ag) = split(ys);
    reorder(ag, out);
    fuse(rs, out, ag);
    overlap(y, rs) chunks 2;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->fusedCollectives.size() == 1);
  std::vector<std::string> fused;
  for (unsigned s : plan->fusedCollectives[0].steps)
    fused.push_back(plan->steps[s].name);
  CHECK(fused ==
        std::vector<std::string>{"reducescatter_rs", "k0_out", "allgather_ag"});
  REQUIRE(plan->overlaps.size() == 1);
  CHECK(plan->steps[plan->overlaps[0].producer].name == "matmul_y");
  CHECK(plan->steps[plan->overlaps[0].consumer].name == "reducescatter_rs");
  CHECK(plan->overlaps[0].chunks == 2);
  CHECK(printed(*plan).find("check: B divisible by P * 2 (dimension 0 of "
                            "'y', overlapped in 2 chunks)") !=
        std::string::npos);
}

TEST_CASE("names that are C++ keywords or the generator's own are renamed",
          "[lower]") {
  Compiled c = compile(R"(program p(int: f32[N] replicated, cc_x: f32,
          step: i32) {
    new = int * cc_x;
    return new;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  CHECK(buffer(*plan, "int_").kind == Buffer::Kind::Param);
  CHECK(buffer(*plan, "v_cc_x").kind == Buffer::Kind::ScalarParam);
  CHECK(buffer(*plan, "step_").kind == Buffer::Kind::ScalarParam);
  CHECK(buffer(*plan, "out_new").kind == Buffer::Kind::Output);
}
