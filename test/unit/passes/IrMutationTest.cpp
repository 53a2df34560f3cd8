//===- IrMutationTest.cpp - the IR's mutation API and its verifier --------===//
//
// What passes build on: Program::insertStage, eraseStage, getUsers,
// replaceUses, replaceResult, uniqueName and clone (a deep copy that prints
// identically and shares nothing with the original), and the verifier's
// checks of kernels (convex, one kernel per stage, program order, no
// parameters) and overlaps (the consumer reads the producer, chunking in
// range).
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

namespace {

const char *const kChain = R"(program p(x: f32[N] replicated) {
    a = x * 2.0;
    b = a + 1.0;
    c = a * a;
    return b, c;
}
)";

/// A body that reads operand 0.
const ir::ScalarExpr *readOperand(ir::Program &p) {
  ir::ScalarExpr e;
  e.op = ir::ScalarOp::Operand;
  e.operandIndex = 0;
  return p.addExpr(e);
}

std::vector<std::string> names(llvm::ArrayRef<ir::Stage *> stages) {
  std::vector<std::string> out;
  for (const ir::Stage *s : stages)
    out.push_back(s->name);
  return out;
}

} // namespace

TEST_CASE("insertStage places a stage and renumbers", "[passes][ir]") {
  Compiled c = compile(kChain);
  std::unique_ptr<ir::Program> p = c.program().clone();
  ir::Stage *a = p->findStage("a");
  ir::Stage *mid =
      p->insertStage(2, StageKind::Elementwise, "mid", a->type, {a}, a->loc);
  mid->body = readOperand(*p);
  CHECK(mid->id == 2);
  CHECK(p->findStage("b")->id == 3);
  CHECK(p->findStage("c")->id == 4);
  CHECK(ir::verifyProgram(*p) == "");
  CHECK(stageLine(*p, "mid") == "%2 mid : f32[N] replicated = elementwise %1");
  // Nothing reads it yet.
  CHECK(p->getUsers(mid).empty());
  CHECK_FALSE(p->isResult(mid));
}

TEST_CASE("getUsers lists each reader once, in program order", "[passes][ir]") {
  Compiled c = compile(kChain);
  const ir::Program &p = c.program();
  CHECK(names(p.getUsers(p.findStage("a"))) ==
        std::vector<std::string>{"b", "c"});
  CHECK(names(p.getUsers(p.findStage("x"))) == std::vector<std::string>{"a"});
  CHECK(p.getUsers(p.findStage("b")).empty());
  CHECK(p.isResult(p.findStage("b")));
  CHECK_FALSE(p.isResult(p.findStage("a")));
}

TEST_CASE("replaceUses redirects readers, optionally filtered",
          "[passes][ir]") {
  Compiled c = compile(kChain);
  std::unique_ptr<ir::Program> p = c.program().clone();
  ir::Stage *a = p->findStage("a");
  ir::Stage *copy =
      p->insertStage(2, StageKind::Elementwise, "copy", a->type, {a}, a->loc);
  copy->body = readOperand(*p);
  // Only c reads the copy (c = a * a has one operand, read twice); the
  // copy itself keeps reading a.
  p->replaceUses(a, copy,
                 [](const ir::Stage &user) { return user.name == "c"; });
  CHECK(names(p->findStage("c")->operands) == std::vector<std::string>{"copy"});
  CHECK(names(p->findStage("b")->operands) == std::vector<std::string>{"a"});
  CHECK(names(copy->operands) == std::vector<std::string>{"a"});
  // Without a filter every reader but the new stage itself.
  p->replaceUses(a, copy);
  CHECK(names(p->findStage("b")->operands) == std::vector<std::string>{"copy"});
  CHECK(names(copy->operands) == std::vector<std::string>{"a"});
  CHECK(names(p->getUsers(a)) == std::vector<std::string>{"copy"});
  CHECK(ir::verifyProgram(*p) == "");
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("replaceResult keeps the result's name", "[passes][ir]") {
  Compiled c = compile(kChain);
  std::unique_ptr<ir::Program> p = c.program().clone();
  ir::Stage *b = p->findStage("b");
  ir::Stage *nb = p->insertStage(b->id + 1, StageKind::Elementwise, "nb",
                                 b->type, {b}, b->loc);
  nb->body = readOperand(*p);
  p->replaceResult(b, nb);
  CHECK(p->getResults()[0] == nb);
  CHECK(p->getResultName(0) == "b");
  CHECK(p->getResultName(1) == "c");
  CHECK(hasLine(printIR(*p), "  results %3 as b, %4"));
  // b is no longer a result, but nb reads it.
  CHECK_FALSE(p->isResult(b));
  CHECK(ir::verifyProgram(*p) == "");
  expectSameResults(c.program(), *p, worldRanks({{"N", 8}}));
}

TEST_CASE("eraseStage removes a stage from its kernel and overlaps",
          "[passes][ir]") {
  Compiled c = compile(R"(program p(x: f32[B, K] sliced(1), w: f32[K,
          H] sliced(0)) {
    y = matmul(x, w);
    ys = allreduce(sum, y);
    z = ys * 2.0;
    dead = relu(z);
    return z;
}
schedule s for p {
    overlap(y, ys) chunks 2;
    fuse(ys, z, dead);
}
)");
  Scheduled s = schedule(c, "s");
  ir::Program &p = *s.program;
  ir::Stage *dead = p.findStage("dead");
  p.eraseStage(dead);
  CHECK(p.findStage("dead") == nullptr);
  REQUIRE(p.kernels.size() == 1);
  CHECK(names(p.kernels[0].stages) == std::vector<std::string>{"ys", "z"});
  CHECK(ir::verifyProgram(p) == "");
  // Erasing the consumer's reader chain down to the overlap drops it, and
  // a kernel left empty disappears.
  p.replaceResult(p.findStage("z"), p.findStage("y"));
  p.eraseStage(p.findStage("z"));
  p.eraseStage(p.findStage("ys"));
  CHECK(p.kernels.empty());
  CHECK(p.overlaps.empty());
  CHECK(ir::verifyProgram(p) == "");
  CHECK(p.getResultName(0) == "z");
}

TEST_CASE("uniqueName numbers names that are taken", "[passes][ir]") {
  Compiled c = compile(kChain);
  std::unique_ptr<ir::Program> p = c.program().clone();
  CHECK(p->uniqueName("fresh") == "fresh");
  CHECK(p->uniqueName("a") == "a.1");
  ir::Stage *a = p->findStage("a");
  ir::Stage *a1 =
      p->insertStage(2, StageKind::Elementwise, "a.1", a->type, {a}, a->loc);
  a1->body = readOperand(*p);
  CHECK(p->uniqueName("a") == "a.2");
  CHECK(p->uniqueName("a.1") == "a.1.1");
  // Parameters are names too.
  CHECK(p->uniqueName("x") == "x.1");
}

TEST_CASE("clone prints identically and shares nothing", "[passes][ir]") {
  Compiled c = compile(R"(program adam(g: f16[N] local, w: f32[N] replicated,
          m: f32[N] replicated, v: f32[N] replicated, lr: f32, beta1: f32,
          beta2: f32, eps: f32, step: i32) {
    gs   = allreduce(sum, g);
    g32  = f32(gs);
    m1   = update(m, beta1 * m + (1 - beta1) * g32);
    v1   = update(v, beta2 * v + (1 - beta2) * g32 * g32);
    mhat = m1 / (1 - pow(beta1, f32(step)));
    vhat = v1 / (1 - pow(beta2, f32(step)));
    n    = norm(vhat);
    w1   = update(w, w - lr * mhat / (sqrt(vhat) + eps) * n);
}
schedule s for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, mhat, vhat, n, w1);
    shard(m, v);
    fuse(g32, m1, v1, mhat, vhat);
}
)");
  Scheduled s = schedule(c, "s");
  const ir::Program &original = *s.program;
  // Everything a scheduled program records: sharded parameters, kernels,
  // reassociations, results by name.
  REQUIRE(original.kernels.size() == 1);
  REQUIRE(original.reassociations.size() == 1);
  std::string text = printIR(original);

  std::unique_ptr<ir::Program> copy = original.clone();
  CHECK(printIR(*copy) == text);
  CHECK(ir::verifyProgram(*copy) == "");
  CHECK(copy->getParams().size() == original.getParams().size());
  for (size_t i = 0; i < original.getStages().size(); ++i) {
    const ir::Stage *a = original.getStages()[i].get();
    const ir::Stage *b = copy->getStages()[i].get();
    CHECK(a != b);
    for (size_t k = 0; k < b->operands.size(); ++k)
      CHECK(b->operands[k] == copy->getStages()[a->operands[k]->id].get());
    if (a->body)
      CHECK(a->body != b->body);
    if (a->updates)
      CHECK(b->updates == copy->getParams()[a->updates->paramIndex]);
  }
  for (size_t i = 0; i < original.getResults().size(); ++i) {
    CHECK(copy->getResults()[i] ==
          copy->getStages()[original.getResults()[i]->id].get());
    CHECK(copy->getResultName(i) == original.getResultName(i));
  }
  REQUIRE(copy->kernels.size() == 1);
  for (size_t i = 0; i < copy->kernels[0].stages.size(); ++i)
    CHECK(copy->kernels[0].stages[i] ==
          copy->getStages()[original.kernels[0].stages[i]->id].get());

  // Changing the copy leaves the original alone.
  copy->kernels.clear();
  copy->reassociations.clear();
  copy->findStage("g32")->name = "renamed";
  ir::Stage *w1 = copy->findStage("w1");
  ir::Stage *extra = copy->insertStage(w1->id + 1, StageKind::Elementwise,
                                       "extra", w1->type, {w1}, w1->loc);
  extra->body = readOperand(*copy);
  CHECK(printIR(original) == text);
  CHECK(printIR(*copy) != text);

  // The copy outlives the original.
  std::unique_ptr<ir::Program> again = original.clone();
  std::string expected = printIR(*again);
  s.program.reset();
  CHECK(printIR(*again) == expected);
  CHECK(ir::verifyProgram(*again) == "");
  expectSameResults(c.program(), *again, worldRanks({{"N", 12}}),
                    Agreement::Reassociated, {{"v", "0.001"}});
}

TEST_CASE("clone copies overlaps", "[passes][ir]") {
  Compiled c = compile(R"(program p(x: f32[B, K] sliced(1), w: f32[K,
          H] sliced(0)) {
    y = matmul(x, w);
    ys = allreduce(sum, y);
    return ys;
}
schedule s for p {
    overlap(y, ys) chunks 2;
}
)");
  Scheduled s = schedule(c, "s");
  std::unique_ptr<ir::Program> copy = s.program->clone();
  CHECK(printIR(*copy) == s.ir());
  REQUIRE(copy->overlaps.size() == 1);
  CHECK(copy->overlaps[0].producer == copy->findStage("y"));
  CHECK(copy->overlaps[0].consumer == copy->findStage("ys"));
  CHECK(copy->overlaps[0].chunks == 2);
  copy->overlaps.clear();
  CHECK(s.program->overlaps.size() == 1);
}

TEST_CASE("the verifier refuses kernels that are not convex", "[passes][ir]") {
  Compiled c = compile(R"(program p(x: f32[N] replicated) {
    e = exp(x);
    total = sum(e);
    y = e / total;
    return y;
}
)");
  std::unique_ptr<ir::Program> p = c.program().clone();
  ir::Kernel k;
  k.stages = {p->findStage("e"), p->findStage("y")};
  p->kernels.push_back(k);
  CHECK(ir::verifyProgram(*p) ==
        "kernel k0: 'y' depends on the kernel through a stage outside it");
  // With the reduction inside (allowed by the verifier, not by fuse) the
  // group is convex.
  p->kernels[0].stages = {p->findStage("e"), p->findStage("total"),
                          p->findStage("y")};
  CHECK(ir::verifyProgram(*p) == "");
}

TEST_CASE("the verifier refuses a stage in two kernels and other kernel "
          "faults",
          "[passes][ir]") {
  Compiled c = compile(kChain);
  std::unique_ptr<ir::Program> p = c.program().clone();
  ir::Stage *x = p->findStage("x");
  ir::Stage *a = p->findStage("a");
  ir::Stage *b = p->findStage("b");
  ir::Stage *cc = p->findStage("c");

  p->kernels = {ir::Kernel{{a, b}, {}}, ir::Kernel{{a, cc}, {}}};
  CHECK(ir::verifyProgram(*p) == "kernel k1: 'a' is in two kernels");

  p->kernels = {ir::Kernel{{b, a}, {}}};
  CHECK(ir::verifyProgram(*p) == "kernel k0: members out of program order");

  p->kernels = {ir::Kernel{{x, a}, {}}};
  CHECK(ir::verifyProgram(*p) == "kernel k0: holds parameter 'x'");

  p->kernels = {ir::Kernel{{}, {}}};
  CHECK(ir::verifyProgram(*p) == "kernel k0: no stages");

  std::unique_ptr<ir::Program> other = c.program().clone();
  p->kernels = {ir::Kernel{{other->findStage("a")}, {}}};
  CHECK(ir::verifyProgram(*p) ==
        "kernel k0: a member is not a stage of the program");

  p->kernels = {ir::Kernel{{a, b}, {}}, ir::Kernel{{cc}, {}}};
  CHECK(ir::verifyProgram(*p) == "");
}

TEST_CASE("the verifier refuses overlaps that do not hold", "[passes][ir]") {
  Compiled c = compile(R"(program p(x: f32[B, H] sliced(1), w: f32[H,
          H] sliced(0)) {
    y = matmul(x, w);
    z = 2.0 * y;
    zs = allreduce(sum, z);
    ys = allreduce(sum, y);
    return zs, ys;
}
)");
  std::unique_ptr<ir::Program> p = c.program().clone();
  ir::Overlap o;
  o.producer = p->findStage("y");
  o.consumer = p->findStage("zs");
  o.chunks = 2;
  p->overlaps.push_back(o);
  CHECK(ir::verifyProgram(*p) ==
        "overlap of 'y' with 'zs': the consumer does not read the producer");

  p->overlaps[0].consumer = p->findStage("ys");
  CHECK(ir::verifyProgram(*p) == "");
  p->overlaps[0].chunks = 0;
  CHECK(ir::verifyProgram(*p) == "overlap of 'y' with 'ys': bad chunking");
  p->overlaps[0].chunks = 2;
  p->overlaps[0].dim = 2;
  CHECK(ir::verifyProgram(*p) == "overlap of 'y' with 'ys': bad chunking");
  p->overlaps[0].dim = 1;
  CHECK(ir::verifyProgram(*p) == "");

  std::unique_ptr<ir::Program> other = c.program().clone();
  p->overlaps[0].producer = other->findStage("y");
  CHECK(ir::verifyProgram(*p) ==
        "an overlap names a stage that is not in the program");
}
