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
  CHECK(f.reducing == 0u);
  CHECK(f.kernel == 1u);
  CHECK(f.gather == 2u);
  CHECK(f.steps == llvm::SmallVector<unsigned, 3>{0, 1, 2});
  // The plan decides the team: its axis, which the code generators read.
  CHECK(plan->teamAxes == llvm::SmallVector<unsigned, 2>{0});
  // Peers read g and write w; the kernel's view of w is its own block.
  CHECK(buffer(*plan, "g").team == 0);
  CHECK(buffer(*plan, "w").team == 0);
  CHECK(buffer(*plan, "t_w1").kind == Buffer::Kind::View);
  CHECK_FALSE(buffer(*plan, "t_w1").team);
  CHECK_FALSE(f.storeReduced);
  CHECK_FALSE(f.storeGathered);
  // The fallback's reducescatter still moves nothing over one member.
  CHECK(buffer(*plan, "t_rs").loneInput);
  const std::string text = printed(*plan);
  CHECK(contains(text, "g : f32[N] param 0, symmetric on world\n"));
  CHECK(contains(text, "fused collective: steps 0 1 2: one kernel over the "
                       "team of world, N / P elements; else in sequence\n"));
  // The kernel: step 1, its reduced input combined from every member, w1
  // gathered into every member (its own block is the view t_w1).
  REQUIRE(f.oneKernel);
  const lower::FusedKernelPlan &k = *f.oneKernel;
  CHECK_FALSE(k.madeStep);
  CHECK(k.step.name == plan->steps[1].name);
  REQUIRE(k.reducedInput);
  CHECK(k.kernel().inputs[*k.reducedInput].buffer ==
        bufferIndex(*plan, "t_rs"));
  REQUIRE(k.gatheredMember);
  CHECK(k.kernel().members[*k.gatheredMember].name == "w1");
  CHECK_FALSE(k.gatherReduced);
  CHECK(k.selfInView);
  CHECK(k.storeGatheredLocally);
  CHECK_FALSE(k.storeReduced);
  CHECK_FALSE(k.ranged);
  // It reads no reduced buffer (combined instead) and writes the view.
  CHECK_FALSE(llvm::is_contained(k.step.reads, bufferIndex(*plan, "t_rs")));
  CHECK(llvm::is_contained(k.step.writes, bufferIndex(*plan, "t_w1")));
  CHECK(contains(text, "    kernel: step 1; in" +
                           std::to_string(*k.reducedInput) +
                           " combined from every member; w1 into every "
                           "member, its own block through the view t_w1\n"));
}

TEST_CASE("a fused collective without a kernel passes its block through a "
          "kernel of its own",
          "[lower][fusion]") {
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
  REQUIRE(plan->fusedCollectives.size() == 1);
  const FusedCollective &f = plan->fusedCollectives[0];
  REQUIRE(f.fused());
  REQUIRE(f.oneKernel);
  const lower::FusedKernelPlan &k = *f.oneKernel;
  CHECK(k.madeStep);
  CHECK_FALSE(f.kernel);
  // One member, the identity of the reduced block, which is gathered.
  REQUIRE(k.kernel().members.size() == 1);
  CHECK(k.kernel().members[0].body == k.identity.get());
  CHECK(k.reducedInput == 0u);
  CHECK(k.gatherReduced == !k.gatheredMember);
  CHECK_FALSE(k.storeReduced); // its one member stores it instead
  CHECK(contains(printed(*plan), "    kernel: its own, passing "));
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
  CHECK(plan->teamAxes.empty());
  CHECK_FALSE(buffer(*plan, "g").team);
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
  CHECK_FALSE(f.gather);
  CHECK(f.storeReduced); // z's kernel reads it
  CHECK(contains(printed(*plan), ", stores the reduced value"));
  REQUIRE(f.oneKernel);
  CHECK(f.oneKernel->storeReduced);
  // The kernel writes the reduced value's buffer, and reads it from no one.
  const unsigned reduced =
      std::get<lower::CollectiveCall>(plan->steps[*f.reducing].body).output;
  CHECK(llvm::is_contained(f.oneKernel->step.writes, reduced));
  CHECK_FALSE(llvm::is_contained(f.oneKernel->step.reads, reduced));
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
  CHECK(f.sequential->kind == lower::Refusal::Kind::Shape);
  CHECK(f.sequential->detail == "the reducescatter scatters a dimension after "
                                "the first, whose blocks are not contiguous");
  CHECK_FALSE(buffer(*plan, "y").team);
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
  CHECK(plan->fusedCollectives[0].sequential->kind ==
        lower::Refusal::Kind::Access);
  CHECK(plan->fusedCollectives[0].sequential->detail ==
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
  CHECK(o.after == 3u);
  CHECK(o.blockAxis == 0u);
  CHECK(buffer(*plan, "t_y").team == 0);
  CHECK(contains(printed(*plan),
                 "overlap: step 0 with step 1, 4 chunks along dim 0: per "
                 "chunk steps 1 2, then step 3; t_y chunk-major over world\n"));
  // Its fused collective's kernel runs on the parts' elements.
  REQUIRE(plan->fusedCollectives.size() == 1);
  REQUIRE(plan->fusedCollectives[0].oneKernel);
  CHECK(plan->fusedCollectives[0].oneKernel->ranged);
  CHECK(contains(printed(*plan), "    kernel: step 2, in parts;"));
}

TEST_CASE("a dispatch whose result other steps read runs in parts, then "
          "unpacks",
          "[lower][overlap]") {
  // SwiGLU's two matmuls read the dispatched tokens: the first computes
  // each part where it arrived; the unpack runs after the last part, for
  // the second.
  Compiled c = compile(R"(program p(mesh [ep: P], x: f32[E, C, H] sliced(1),
          w1: f32[E, H, F] sliced(0), w3: f32[E, H, F] sliced(0)) {
    d = alltoall(x, dim=0);
    u = matmul(d, w1);
    v = matmul(d, w3);
    return u, v;
}
schedule s for p {
    overlap(d, u) chunks 2;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->overlaps.size() == 1);
  const OverlapGroup &o = plan->overlaps[0];
  REQUIRE(o.inChunks());
  CHECK(o.dispatch);
  CHECK(o.producer == 0);
  CHECK(o.consumer == 2);
  CHECK_FALSE(o.packStep);
  CHECK(o.after == 1u);
  CHECK(contains(printed(*plan),
                 "overlap: step 0 with step 2, 2 chunks along dim 0: per "
                 "chunk steps 2, then step 1; batches read from t_d_gathered "
                 "where they arrive\n"));
}

TEST_CASE("dropless: an alltoallv and a grouped matmul run in parts of the "
          "experts",
          "[lower][overlap]") {
  const char *source = R"(program p(mesh [ep: P], x: f32[P, M, H] sliced(0),
          counts: i32[P, E] sliced(0), w1: f32[E, H, F] sliced(0),
          w2: f32[E, F, H] sliced(0)) {
    (rows, received) = alltoallv(x, counts, M * P);
    u = grouped_matmul(rows, w1, received);
    o = grouped_matmul(u, w2, received);
    (back, sent) = alltoallv(o, received, M);
    raw = grouped_matmul(rows, w1, counts);
    return back, raw;
}
schedule s for p {
    overlap(rows, u) chunks 2;
    overlap(o, back) chunks 2;
}
schedule raw for p {
    overlap(rows, raw) chunks 2;
}
)";
  Compiled c = compile(source);
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->overlaps.size() == 2);
  const OverlapGroup &d = plan->overlaps[0], &b = plan->overlaps[1];
  REQUIRE(d.inChunks());
  CHECK(d.dropless);
  CHECK(d.dispatch);
  CHECK(d.first == 1u); // the counts' exchange
  CHECK(d.perChunk == llvm::SmallVector<unsigned, 3>{2});
  REQUIRE(b.inChunks());
  CHECK(b.dropless);
  CHECK_FALSE(b.dispatch);
  CHECK_FALSE(b.first);
  const std::string text = printed(*plan);
  CHECK(contains(text, "overlap: step 0 with step 2, 2 chunks along dim 1: "
                       "per chunk steps 2; parts of each member's experts, "
                       "step 1 first\n"));
  CHECK(contains(text, "check: E divisible by P * 2 (dimension 1 of 'counts', "
                       "the experts of the alltoallv 'rows', overlapped in 2 "
                       "parts)"));
  // A grouped matmul of the counts as sent, not as received: its segments
  // are not the parts'.
  Scheduled keepRaw;
  auto refused = planOf(c, "raw", keepRaw);
  REQUIRE(refused->overlaps.size() == 1);
  CHECK_FALSE(refused->overlaps[0].inChunks());
  CHECK(refused->overlaps[0].sequential->detail ==
        "the step between them is not the exchange of the counts the grouped "
        "matmul reads");
}

TEST_CASE("a batched matmul's allreduce runs in parts of its batches",
          "[lower][overlap]") {
  Compiled c = compile(R"(program p(mesh [ep: P, tp: T],
          h: f32[E, M, F] sliced(0, ep) sliced(2, tp),
          w2: f32[E, F, H] sliced(0, ep) sliced(1, tp)) {
    partial = matmul(h, w2);
    o = allreduce(sum, partial, tp);
    return o;
}
schedule s for p {
    overlap(partial, o) chunks 2;
}
)");
  Scheduled keep;
  auto plan = planOf(c, "s", keep);
  REQUIRE(plan->overlaps.size() == 1);
  const OverlapGroup &o = plan->overlaps[0];
  REQUIRE(o.inChunks());
  CHECK(o.batches);
  CHECK(o.perChunk == llvm::SmallVector<unsigned, 3>{1});
  CHECK(contains(printed(*plan), "overlap: step 0 with step 1, 2 chunks "
                                 "along dim 0: per chunk steps 1; parts of "
                                 "the batches\n"));
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
    CHECK(plan->overlaps[0].sequential->kind == lower::Refusal::Kind::Memory);
    CHECK(plan->overlaps[0].sequential->detail ==
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
    CHECK(plan->overlaps[0].sequential->kind == lower::Refusal::Kind::Asked);
    CHECK(plan->overlaps[0].sequential->detail ==
          "the sequential form was asked for");
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
  for (unsigned i = o.producer; i <= o.after.value_or(o.producer); ++i)
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

TEST_CASE("element counts compare by structure, not by their printed form",
          "[lower][fusion]") {
  auto extent = [](ir::Dim global, llvm::SmallVector<unsigned, 2> axes) {
    lower::Extent e;
    e.global = std::move(global);
    e.axes = std::move(axes);
    return e;
  };
  const ir::Dim n = ir::Dim::symbol("N"), h = ir::Dim::symbol("H");
  // [N / P, H] and [N, H / P]: printed "(N / P) * H" and "N * (H / P)".
  const lower::Extents rows{extent(n, {0}), extent(h, {})};
  const lower::Extents cols{extent(n, {}), extent(h, {0})};
  CHECK(lower::elementCount(rows) == lower::elementCount(cols));
  // [4 * H] and [2, 2 * H]; [N * H] and [H, N].
  CHECK(lower::elementCount({extent(ir::Dim::constant(4) * h, {})}) ==
        lower::elementCount({extent(ir::Dim::constant(2), {}),
                             extent(ir::Dim::constant(2) * h, {})}));
  CHECK(lower::elementCount({extent(n * h, {})}) ==
        lower::elementCount({extent(h, {}), extent(n, {})}));
  // Other axes, other names, other constants differ.
  CHECK(lower::elementCount({extent(n, {0})}) !=
        lower::elementCount({extent(n, {1})}));
  CHECK(lower::elementCount({extent(n, {})}) !=
        lower::elementCount({extent(h, {})}));
  CHECK(lower::elementCount({extent(ir::Dim::constant(3), {})}) !=
        lower::elementCount({extent(ir::Dim::constant(4), {})}));
  // A product of constants that overflows is never a real count.
  const ir::Dim big = ir::Dim::constant(int64_t(1) << 62);
  CHECK(lower::elementCount({extent(big, {}), extent(big, {})}).coefficient ==
        0);
}
