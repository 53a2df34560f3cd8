//===- FusionTest.cpp - fused collectives as one kernel, overlaps in parts ===//
//
// lower/Fusion.cpp and lower/Chunks.cpp: which fused collectives one
// kernel computes (and why not), which buffers live in a team's symmetric
// memory, what the kernel stores besides the gathered value; which
// overlaps run in parts, their steps per part and what runs after; and
// that the units of a fused collective stay adjacent.
//
//===----------------------------------------------------------------------===//

#include "LowerTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using lower::Buffer;
using lower::FusedCollective;
using lower::OverlapGroup;

namespace {

const char *kSgd = R"(program sgd(g: f32[N] local, w: f32[N] replicated,
          lr: f32) {
    gs = allreduce(sum, g);
    w1 = update(w, w - lr * gs);
}
schedule fused for sgd {
    (rs, ag) = split(gs);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
)";

bool contains(const std::string &text, const std::string &what) {
  INFO(text);
  return text.find(what) != std::string::npos;
}

} // namespace

TEST_CASE("a fused collective is one kernel on the symmetric memory of its "
          "axis",
          "[lower][fusion]") {
  Compiled c = compile(kSgd);
  Scheduled keep;
  auto plan = planOf(c, "fused", keep);
  REQUIRE(plan->fusedCollectives.size() == 1);
  const FusedCollective &f = plan->fusedCollectives[0];
  CHECK(f.fused());
  CHECK(f.axis == 0);
  CHECK(f.reducing == 0);
  CHECK(f.kernel == 1);
  CHECK(f.gather == 2);
  CHECK(f.steps == llvm::SmallVector<unsigned, 3>{0, 1, 2});
  // Peers read g and write w; the kernel's view of w is its own block.
  CHECK(buffer(*plan, "g").team == 0);
  CHECK(buffer(*plan, "w").team == 0);
  CHECK(buffer(*plan, "t_w1").kind == Buffer::Kind::View);
  CHECK(buffer(*plan, "t_w1").team == -1);
  CHECK_FALSE(f.storeReduced);
  CHECK_FALSE(f.storeGathered);
  // The fallback's reducescatter still moves nothing over one member.
  CHECK(buffer(*plan, "t_rs").loneInput >= 0);
  const std::string text = printed(*plan);
  CHECK(contains(text, "g : f32[N] param 0, symmetric on world\n"));
  CHECK(contains(text, "fused collective: steps 0 1 2: one kernel over the "
                       "team of world, N / P elements; else in sequence\n"));
}

TEST_CASE("the sequential form keeps every fused collective in sequence",
          "[lower][fusion]") {
  Compiled c = compile(kSgd);
  Scheduled keep;
  lower::LowerOptions options;
  options.sequential = true;
  auto plan = planOf(c, "fused", keep, options);
  REQUIRE(plan->fusedCollectives.size() == 1);
  CHECK_FALSE(plan->fusedCollectives[0].fused());
  CHECK(buffer(*plan, "g").team == -1);
  CHECK(contains(printed(*plan), "fused collective: steps 0 1 2 in sequence: "
                                 "the sequential form was asked for\n"));
}

TEST_CASE("a fused kernel stores the reduced value where another step reads "
          "it, and the gathered block where it is a result",
          "[lower][fusion]") {
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
  REQUIRE(plan->fusedCollectives.size() == 1);
  const FusedCollective &f = plan->fusedCollectives[0];
  REQUIRE(f.fused());
  CHECK(f.gather == -1);
  CHECK(f.storeReduced); // z's kernel reads it
  CHECK(contains(printed(*plan), ", stores the reduced value"));
}

TEST_CASE("a fused collective whose reducescatter scatters a later dimension "
          "runs in sequence",
          "[lower][fusion]") {
  Compiled c = compile(R"(program p(y: f32[B, H] local) {
    r = reducescatter(sum, y, dim=1);
    z = r * 2.0;
    return z;
}
schedule s for p {
    fuse(r, z);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->fusedCollectives.size() == 1);
  const FusedCollective &f = plan->fusedCollectives[0];
  CHECK_FALSE(f.fused());
  CHECK(f.sequential == "the reducescatter scatters a dimension after the "
                        "first, whose blocks are not contiguous");
  CHECK(buffer(*plan, "y").team == -1);
}

TEST_CASE("a fused collective whose allgather writes what its reducing "
          "collective reads runs in sequence",
          "[lower][fusion]") {
  Compiled c = compile(R"(program p(w: f32[N] replicated) {
    ws = allreduce(sum, w);
    w1 = update(w, ws * 0.5);
}
schedule s for p {
    (rs, ag) = split(ws);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->fusedCollectives.size() == 1);
  CHECK(plan->fusedCollectives[0].sequential ==
        "the reducing collective reads the buffer the allgather writes");
}

TEST_CASE("the units of a fused collective run adjacent", "[lower][fusion]") {
  // b's kernel does not depend on the reducescatter, but comes between its
  // stages in program order: it runs before or after the fused collective,
  // not inside it.
  Compiled c = compile(R"(program p(g: f32[N] local, x: f32[N] replicated,
          lr: f32) {
    gs = allreduce(sum, g);
    b = x * lr;
    y = gs + b;
    return y;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
    fuse(rs, y, ag);
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->fusedCollectives.size() == 1);
  const FusedCollective &f = plan->fusedCollectives[0];
  CHECK(f.fused());
  for (size_t i = 1; i < f.steps.size(); ++i)
    CHECK(f.steps[i] == f.steps[i - 1] + 1);
  CHECK(stepNames(*plan) == std::vector<std::string>{"k0_b", "reducescatter_rs",
                                                     "k1_y", "allgather_ag"});
}

TEST_CASE("an overlap with a fused collective runs in parts, chunk-major",
          "[lower][overlap]") {
  Compiled c = compile(R"(program mlp(h: f16[B, F] local,
          w2: f16[F, H] replicated, r: f16[B, H] replicated) {
    y = matmul(h, w2);
    ys = allreduce(sum, y);
    out = ys + r;
    return out;
}
schedule s for mlp {
    (rs, ag) = split(ys);
    reorder(ag, out);
    fuse(rs, out, ag);
    overlap(y, rs) chunks 4;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->overlaps.size() == 1);
  const OverlapGroup &o = plan->overlaps[0];
  CHECK(o.inChunks());
  CHECK(o.producer == 0);
  CHECK(o.consumer == 1);
  CHECK(o.perChunk == llvm::SmallVector<unsigned, 3>{1, 2});
  CHECK(o.after == 3);
  CHECK(o.blockAxis == 0);
  CHECK(buffer(*plan, "t_y").team == 0);
  CHECK(contains(printed(*plan),
                 "overlap: step 0 with step 1, 4 chunks along dim 0: per "
                 "chunk steps 1 2, then step 3; t_y chunk-major over world\n"));
}

TEST_CASE("an overlap whose parts are not independent rows runs whole",
          "[lower][overlap]") {
  SECTION("the matmul's result is read by another step") {
    Compiled c = compile(R"(program p(h: f32[B, F] local, w2: f32[F, H]) {
    y = matmul(h, w2);
    r = reducescatter(sum, y);
    z = y * 2.0;
    return r, z;
}
schedule s for p {
    overlap(y, r) chunks 2;
}
)");
    Scheduled keep;
    auto plan = planOf(c, "s", keep);
    REQUIRE(plan->overlaps.size() == 1);
    CHECK_FALSE(plan->overlaps[0].inChunks());
    CHECK(plan->overlaps[0].sequential ==
          "'y' is also read by step 2 (its parts are stored in the "
          "reducescatter's order)");
  }
  SECTION("the sequential form is asked for") {
    Compiled c = compile(R"(program p(h: f32[B, F] local, w2: f32[F, H]) {
    y = matmul(h, w2);
    s = allreduce(sum, y);
    return s;
}
schedule s for p {
    overlap(y, s) chunks 2;
}
)");
    Scheduled keep;
    lower::LowerOptions options;
    options.sequential = true;
    auto plan = planOf(c, "s", keep, options);
    REQUIRE(plan->overlaps.size() == 1);
    CHECK(plan->overlaps[0].sequential == "the sequential form was asked for");
    CHECK(plan->overlaps[0].perChunk.empty());
    CHECK(contains(printed(*plan), "2 chunks along dim 0, in sequence: the "
                                   "sequential form was asked for\n"));
  }
}

TEST_CASE("the buffers an overlap's parts touch share no scratch slot",
          "[lower][overlap]") {
  // Run in sequence, t_out could take t_y's slot (t_y is dead once the
  // reducescatter has read it) and t_rs t_h's; in parts, the kernel writes
  // part c of t_out while the reducescatter of part c + 1 still reads t_y,
  // and the matmul of part c + 1 reads t_h while part c's reducescatter
  // writes t_rs.
  Compiled c = compile(R"(program mlp(x: f16[B, H] replicated,
          w1: f16[H, F] sliced(1), w2: f16[F, H] sliced(0),
          r: f16[B, H] replicated) {
    h = matmul(x, w1) * 2.0;
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
  REQUIRE(plan->overlaps.size() == 1);
  REQUIRE(plan->overlaps[0].inChunks());
  const auto &o = plan->overlaps[0];
  llvm::SmallVector<unsigned, 8> touched;
  for (unsigned i = o.producer; i <= static_cast<unsigned>(o.after); ++i)
    for (const auto *list : {&plan->steps[i].reads, &plan->steps[i].writes})
      for (unsigned b : *list)
        if (plan->buffers[b].kind == Buffer::Kind::Scratch &&
            !llvm::is_contained(touched, b))
          touched.push_back(b);
  CHECK(touched.size() >= 4);
  for (unsigned a : touched)
    for (unsigned b : touched)
      if (a != b) {
        INFO(plan->buffers[a].name << " and " << plan->buffers[b].name);
        CHECK(plan->buffers[a].slot != plan->buffers[b].slot);
      }
}
