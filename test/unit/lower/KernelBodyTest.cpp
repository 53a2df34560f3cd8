//===- KernelBodyTest.cpp - an elementwise kernel's block as operations ---===//
//
// lower/KernelBody.cpp: the operations every target prints for one block
// of an elementwise kernel, and the order that is a fused kernel's
// semantics: the reduced block first (stored and gathered as it is where
// the plan says so), inputs before any store, the gathered member last,
// into its own buffer only where the plan keeps it, and into every member
// but its own block only when that block is a view of its own store.
//
//===----------------------------------------------------------------------===//

#include "LowerTestUtil.h"

#include "lower/KernelBody.h"

using namespace coconet;
using namespace coconet::test;
using lower::BlockOp;
using lower::BlockValue;

namespace {

std::string printedBody(const lower::KernelBody &body) {
  std::string text;
  llvm::raw_string_ostream os(text);
  lower::print(os, body);
  return text;
}

/// The body of plan's only fused collective's kernel.
lower::KernelBody fusedBody(const lower::Plan &plan) {
  return lower::fusedKernelBody(plan, plan.fusedCollectives.at(0));
}

std::string b(const lower::Plan &plan, llvm::StringRef name) {
  return "b" + std::to_string(bufferIndex(plan, name));
}

} // namespace

TEST_CASE("an elementwise kernel loads its tensors, computes, then stores",
          "[lower][kernel-body]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated, y: f32[N] replicated,
          a: f32) {
    z = x * a + y;
    return z;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "", keep);
  const lower::Step *step = nullptr;
  for (const lower::Step &s : plan->steps)
    if (std::holds_alternative<lower::ElementwiseKernel>(s.body))
      step = &s;
  REQUIRE(step);
  const auto &k = std::get<lower::ElementwiseKernel>(step->body);
  const lower::KernelBody body = lower::kernelBody(k);
  INFO(printedBody(body));
  // The scalar `a` is no block: read once before the loop.
  CHECK(printedBody(body) ==
        "load in0; load in2; compute; store m0 -> " + b(*plan, "out_z"));
  CHECK(body.stored({BlockValue::Kind::Member, 0}));
  CHECK_FALSE(body.storedToPeers({BlockValue::Kind::Member, 0}));
}

TEST_CASE("a fused kernel reduces first and gathers its member last, but "
          "into its own block",
          "[lower][kernel-body]") {
  Compiled c = compile(R"(program sgd(g: f32[N] local, w: f32[N] replicated,
          lr: f32) {
    gs = allreduce(sum, g);
    w1 = update(w, w - lr * gs);
}
schedule fused for sgd {
    (rs, ag) = split(gs);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "fused", keep);
  const lower::KernelBody body = fusedBody(*plan);
  const lower::FusedKernelPlan &k = *plan->fusedCollectives[0].oneKernel;
  REQUIRE(k.gatheredMember);
  REQUIRE(k.reducedInput);
  const std::string m = "m" + std::to_string(*k.gatheredMember);
  INFO(printedBody(body));
  // w1's own block of w is the view t_w1: stored there, and into every
  // other member's block of w.
  REQUIRE(*k.reducedInput == 2);
  CHECK(printedBody(body) == "team-reduce; load in0; load in2; compute; "
                             "store " +
                                 m + " -> " + b(*plan, "t_w1") + "; store " +
                                 m + " -> every member's " + b(*plan, "w") +
                                 " but its own");
  CHECK(body.ops.front().kind == BlockOp::Kind::TeamReduce);
  CHECK(body.ops.back().kind == BlockOp::Kind::StoreToPeers);
  CHECK(body.ops.back().skipSelf);
}

TEST_CASE("a fused kernel that gathers the reduced block gathers it as it is "
          "reduced",
          "[lower][kernel-body]") {
  Compiled c = compile(R"(program p(g: bf16[N] local) {
    gs = allreduce(sum, g);
    y  = f32(gs) * 2.0;
    return gs, y;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
    fuse(rs, y, ag);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  const lower::KernelBody body = fusedBody(*plan);
  INFO(printedBody(body));
  const lower::FusedKernelPlan &k = *plan->fusedCollectives[0].oneKernel;
  REQUIRE(k.gatherReduced);
  // Into every member's block of the output, its own included (no view).
  const auto &ag = std::get<lower::CollectiveCall>(
      plan->steps[*plan->fusedCollectives[0].gather].body);
  const auto &rs = std::get<lower::CollectiveCall>(
      plan->steps[*plan->fusedCollectives[0].reducing].body);
  (void)rs;
  CHECK(printedBody(body) == "team-reduce; store reduced -> every member's b" +
                                 std::to_string(ag.output) +
                                 "; load in0; compute; store m0 -> " +
                                 b(*plan, "t_y"));
}

TEST_CASE("a fused collective without a kernel passes the reduced block "
          "through to every member, its own included",
          "[lower][kernel-body]") {
  Compiled c = compile(R"(program p(g: f32[N] local) {
    gs = allreduce(sum, g);
    return gs;
}
schedule s for p {
    (rs, ag) = split(gs);
    fuse(rs, ag);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  const lower::KernelBody body = fusedBody(*plan);
  INFO(printedBody(body));
  const auto &ag = std::get<lower::CollectiveCall>(
      plan->steps[*plan->fusedCollectives[0].gather].body);
  // Its one member is the gathered one, not kept where it is.
  CHECK(printedBody(body) ==
        "team-reduce; load in0; compute; store m0 -> every member's b" +
            std::to_string(ag.output));
}

TEST_CASE("a fused kernel stores the reduced block where a later step reads "
          "it, before anything else",
          "[lower][kernel-body]") {
  Compiled c = compile(R"(program p(g: f32[N] local, b: f32[N] replicated) {
    gs = allreduce(sum, g);
    y = gs * 2.0;
    z = gs + b;
    return y, z;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y, z);
    fuse(rs, y);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  const lower::KernelBody body = fusedBody(*plan);
  INFO(printedBody(body));
  const auto &rs = std::get<lower::CollectiveCall>(
      plan->steps[*plan->fusedCollectives[0].reducing].body);
  REQUIRE(body.ops.size() > 2);
  CHECK(body.ops[0].kind == BlockOp::Kind::TeamReduce);
  CHECK(body.ops[1].kind == BlockOp::Kind::Store);
  CHECK(body.ops[1].buffer == rs.output);
  CHECK(body.stored({BlockValue::Kind::Reduced, 0}));
  CHECK_FALSE(body.storedToPeers({BlockValue::Kind::Reduced, 0}));
}
