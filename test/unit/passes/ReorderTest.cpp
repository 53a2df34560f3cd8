//===- ReorderTest.cpp - moving an allgather past its consumers -----------===//
//
// The reorder pass: elementwise chains on slices, replicated operands read
// at the slice's offset, reductions completed by an allreduce (and the
// reassociations recorded for float sums and norms), sendrecvs along
// another axis, the allgathers of values still needed whole (names, moved
// updates and results), equality with the unscheduled program, and every
// refusal.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"

using namespace coconet;
using namespace coconet::test;
using ir::StageKind;

TEST_CASE("reorder moves an allgather past an elementwise chain",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated,
          lr: f32) {
    gs = allreduce(sum, g);
    d = lr * gs;
    w1 = update(w, w - d);
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, d, w1);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.ir() == "program p {\n"
                  "  %0 g : f32[N] local = param 0\n"
                  "  %1 w : f32[N] replicated = param 1\n"
                  "  %2 lr : f32 = param 2\n"
                  "  %3 rs : f32[N] sliced(0) = reducescatter(sum, %0, dim=0) "
                  "over world\n"
                  "  %4 d : f32[N] sliced(0) = elementwise mul(%2, %3)\n"
                  "  %5 w1 : f32[N] sliced(0) = elementwise sub(%1, %4)\n"
                  "  %6 ag : f32[N] replicated = allgather(%5) over world -> "
                  "update %1\n"
                  "  results %6 -> w\n"
                  "}\n");
  // The old allgather is gone; the new one takes its name and the update.
  const ir::Stage &ag = s.stage("ag");
  CHECK(ag.kind == StageKind::AllGather);
  CHECK(ag.updates == &s.stage("w"));
  CHECK(s.stage("w1").updates == nullptr);
  CHECK(s.program->getResults()[0] == &ag);
  CHECK(s.program->getResultName(0) == "w");
  CHECK(s.program->reassociations.empty());
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}));
}

TEST_CASE("reorder reads replicated operands at the slice offset",
          "[passes][reorder]") {
  // The bias [H] broadcasts against [B, H]; on a tp slice of dimension 1,
  // each rank must read the matching block of the bias.
  Compiled c = compile(R"(program p(mesh [dp: D, tp: T],
          g: f32[B, H] sliced(0, dp) local(tp),
          bias: f32[H] replicated, r: f32[B, H] replicated) {
    gs = allreduce(sum, g, axis=tp);
    y = gs + bias;
    z = y * r;
    return z;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y, z);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.line("y") == "%4 y : f32[B, H] sliced(0, dp) sliced(1, tp) = "
                       "elementwise add(%3, %1)");
  CHECK(s.line("z") == "%5 z : f32[B, H] sliced(0, dp) sliced(1, tp) = "
                       "elementwise mul(%4, %2)");
  CHECK(s.line("ag") == "%6 ag : f32[B, H] sliced(0, dp) replicated(tp) = "
                        "allgather(%5) over tp");
  // Replicated operands keep their types.
  CHECK(s.type("bias") == "f32[H] replicated");
  CHECK(s.type("r") == "f32[B, H] replicated");
  // The returned value is now the allgather, known by its old name.
  CHECK(hasLine(s.ir(), "  results %6 as z"));
  CHECK(s.program->getResultName(0) == "z");
  expectSameResults(c.program(), *s.program,
                    meshRanks("D", "T",
                              {{1, 1}, {1, 2}, {2, 2}, {1, 3}, {2, 3}, {1, 4}},
                              {{"B", 12}, {"H", 12}}));
}

TEST_CASE("reorder on a one-axis mesh broadcasts a bias over the slices",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f32[B, H] local, bias: f32[H] replicated,
          col: f32[B, 1] replicated) {
    gs = allreduce(sum, g);
    y = relu(gs + bias) * col;
    return y;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.type("y") == "f32[B, H] sliced(0)");
  CHECK(s.operands("y") == std::vector<std::string>{"rs", "bias", "col"});
  expectSameResults(c.program(), *s.program, worldRanks({{"B", 12}, {"H", 5}}));
}

TEST_CASE("reorder of a gathered vector broadcast against a matrix",
          "[passes][reorder]") {
  // The gathered [H] vector broadcasts along the rows of [B, H]: on slices
  // its dimension 0 becomes dimension 1 of the result, and the row sums of
  // the result are completed by an allreduce.
  Compiled c = compile(R"(program p(g: f32[H] local, m: f32[B, H] replicated) {
    gs = allreduce(sum, g);
    y = m * gs;
    r = sum(y, 1);
    return y, r;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y, r);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.line("y") == "%3 y : f32[B, H] sliced(1) = elementwise mul(%1, %2)");
  CHECK(s.line("ag") ==
        "%4 ag : f32[B, H] replicated = allgather(%3) over world");
  CHECK(s.line("r.partial") ==
        "%5 r.partial : f64[B] local = reduction sum(%3, dim=1)");
  CHECK(s.line("r") == "%7 r : f32[B] replicated = elementwise f32(%6)");
  expectSameResults(c.program(), *s.program, worldRanks({{"B", 3}, {"H", 12}}),
                    Agreement::Reassociated);
}

TEST_CASE("reorder completes max and min with an allreduce, exactly",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f32[B, H] local, k: i32[N] local) {
    gs = allreduce(sum, g);
    mx = max(gs);
    mn = min(gs);
    ks = allreduce(sum, k);
    kmax = max(ks);
    return mx, mn, kmax;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, mx, mn);
    (krs, kag) = split(ks);
    reorder(kag, kmax);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.line("mx.partial") ==
        "%3 mx.partial : f32 local = reduction max(%2)");
  CHECK(s.line("mx") == "%4 mx : f32 = allreduce(max, %3) over world");
  CHECK(s.line("mn.partial") ==
        "%5 mn.partial : f32 local = reduction min(%2)");
  CHECK(s.line("mn") == "%6 mn : f32 = allreduce(min, %5) over world");
  CHECK(s.line("kmax") == "%9 kmax : i32 = allreduce(max, %8) over world");
  // Nothing reads the gathered values any more.
  CHECK_FALSE(s.has("ag"));
  CHECK_FALSE(s.has("kag"));
  CHECK(s.program->reassociations.empty());
  expectSameResults(c.program(), *s.program,
                    worldRanks({{"B", 12}, {"H", 3}, {"N", 24}}));
}

TEST_CASE("reorder completes a float sum from f64 partial sums",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f32[B, H] local) {
    gs = allreduce(sum, g);
    total = sum(gs);
    cols = sum(gs, 0);
    rows = sum(gs, 1);
    return total, cols, rows;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, total, cols, rows);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.ir() ==
        "program p {\n"
        "  %0 g : f32[B, H] local = param 0\n"
        "  %1 rs : f32[B, H] sliced(0) = reducescatter(sum, %0, "
        "dim=0) over world\n"
        "  %2 total.partial : f64 local = reduction sum(%1)\n"
        "  %3 total.sum : f64 = allreduce(sum, %2) over world\n"
        "  %4 total : f32 = elementwise f32(%3)\n"
        "  %5 cols.partial : f64[H] local = reduction sum(%1, dim=0)\n"
        "  %6 cols.sum : f64[H] replicated = allreduce(sum, %5) over "
        "world\n"
        "  %7 cols : f32[H] replicated = elementwise f32(%6)\n"
        "  %8 rows : f32[B] sliced(0) = reduction sum(%1, dim=1)\n"
        "  %9 ag : f32[B] replicated = allgather(%8) over world\n"
        "  results %4, %7, %9 as rows\n"
        "  reassociates: 'total' (sum) adds per-rank partial values "
        "in f64, then allreduces them over 'world'\n"
        "  reassociates: 'cols' (sum) adds per-rank partial values "
        "in f64, then allreduces them over 'world'\n"
        "}\n");
  CHECK(s.stage("total.partial").reduction == ir::ReductionKind::Sum);
  // The completed values keep their types, so readers do not change.
  CHECK(s.type("total") ==
        c.program().findStage("total")->type.str(c.program().mesh));
  REQUIRE(s.program->reassociations.size() == 2);
  expectSameResults(c.program(), *s.program, worldRanks({{"B", 12}, {"H", 3}}),
                    Agreement::Reassociated);
}

TEST_CASE("reorder completes a norm from partial sums of squares",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f16[N] local, x: f32[N] local) {
    gs = allreduce(sum, g);
    n = norm(gs);
    xs = allreduce(sum, x);
    m = norm(xs);
    return n, m;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, n);
    (xrs, xag) = split(xs);
    reorder(xag, m);
}
)");
  Scheduled s = schedule(c, "s");
  const ir::Stage &partial = s.stage("n.partial");
  CHECK(partial.kind == StageKind::Reduction);
  CHECK(partial.reduction == ir::ReductionKind::SumSquares);
  CHECK(s.line("n.partial") ==
        "%3 n.partial : f64 local = reduction sumsq(%2)");
  CHECK(s.line("n.sum") == "%4 n.sum : f64 = allreduce(sum, %3) over world");
  CHECK(s.line("n") == "%5 n : f16 = elementwise f16(sqrt(%4))");
  CHECK(s.line("m") == "%9 m : f32 = elementwise f32(sqrt(%8))");
  REQUIRE(s.program->reassociations.size() == 2);
  CHECK(s.program->reassociations[0] ==
        "'n' (norm) adds per-rank partial values in f64, then allreduces "
        "them over 'world'");
  CHECK(hasLine(s.ir(), "  reassociates: 'm' (norm) adds per-rank partial "
                        "values in f64, then allreduces them over 'world'"));
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}),
                    Agreement::Reassociated);
}

TEST_CASE("reorder of integer and f64 sums needs no conversion",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(k: i32[N] local, d: f64[N] local) {
    ks = allreduce(sum, k);
    ds = allreduce(sum, d);
    kt = sum(ks);
    dt = sum(ds);
    return kt, dt;
}
schedule ints for p {
    (krs, kag) = split(ks);
    reorder(kag, kt);
}
schedule doubles for p {
    (drs, dag) = split(ds);
    reorder(dag, dt);
}
)");
  // An integer sum wraps the same in any order: no reassociation.
  Scheduled i = schedule(c, "ints");
  CHECK(i.line("kt.partial") ==
        "%4 kt.partial : i32 local = reduction sum(%2)");
  CHECK(i.line("kt") == "%5 kt : i32 = allreduce(sum, %4) over world");
  CHECK_FALSE(i.has("kt.sum"));
  CHECK(i.program->reassociations.empty());
  expectSameResults(c.program(), *i.program, worldRanks({{"N", 12}}));

  // An f64 sum is completed without a conversion, but adds in another order.
  Scheduled d = schedule(c, "doubles");
  CHECK(d.line("dt.partial") ==
        "%5 dt.partial : f64 local = reduction sum(%3)");
  CHECK(d.line("dt") == "%6 dt : f64 = allreduce(sum, %5) over world");
  CHECK(d.program->reassociations.size() == 1);
  expectSameResults(c.program(), *d.program, worldRanks({{"N", 12}}),
                    Agreement::Reassociated);
}

TEST_CASE("reorder lets a listed stage read a completed reduction",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f32[N] local) {
    gs = allreduce(sum, g);
    e = exp(gs);
    top = max(e);
    y = e / top;
    return y;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, e, top, y);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.type("e") == "f32[N] sliced(0)");
  CHECK(s.type("top") == "f32");
  CHECK(s.stage("top").kind == StageKind::AllReduce);
  CHECK(s.operands("y") == std::vector<std::string>{"e", "top"});
  CHECK(s.type("y") == "f32[N] sliced(0)");
  CHECK(s.operands("ag") == std::vector<std::string>{"y"});
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}));
}

TEST_CASE("reorder moves past a sendrecv along another axis",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(mesh [pp: S, tp: T],
          g: f32[B, H] local(tp), b: f32[H] replicated) {
    gs = allreduce(sum, g, axis=tp);
    y = gs + b;
    z = sendrecv(y, pp, 1);
    u = z * 3.0;
    return u;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y, z, u);
}
)");
  Scheduled s = schedule(c, "s");
  const ir::Stage &z = s.stage("z");
  CHECK(z.kind == StageKind::SendRecv);
  CHECK(z.axis == 0);
  CHECK(z.offset == 1);
  CHECK(s.line("z") == "%4 z : f32[B, H] local(pp) sliced(0, tp) = "
                       "sendrecv(%3, offset=1) over pp");
  CHECK(s.line("ag") == "%6 ag : f32[B, H] local(pp) replicated(tp) = "
                        "allgather(%5) over tp");
  expectSameResults(
      c.program(), *s.program,
      meshRanks("S", "T",
                {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 2}, {2, 3}, {4, 1}},
                {{"B", 12}, {"H", 4}}));
}

TEST_CASE("reorder gathers every value still needed whole",
          "[passes][reorder]") {
  // Adam without shard: every stage is listed, and m1, v1 and w1 update
  // parameters, so each of them needs an allgather.
  Compiled c = compile(R"(program adam(g: f16[N] local, w: f32[N] replicated,
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
schedule s for adam {
    (rs, ag) = split(gs);
    reorder(ag, g32, m1, v1, mhat, vhat, w1);
}
)");
  Scheduled s = schedule(c, "s");
  for (const char *name : {"g32", "m1", "v1", "mhat", "vhat", "w1"}) {
    INFO(name);
    CHECK(s.type(name) == "f32[N] sliced(0)");
    CHECK(s.stage(name).updates == nullptr);
  }
  // One allgather per updated value; the last takes the name ag.
  CHECK(s.line("ag.m1") ==
        "%12 ag.m1 : f32[N] replicated = allgather(%11) over world -> update "
        "%2");
  CHECK(s.line("ag.v1") ==
        "%14 ag.v1 : f32[N] replicated = allgather(%13) over world -> update "
        "%3");
  CHECK(s.line("ag") ==
        "%18 ag : f32[N] replicated = allgather(%17) over world -> update %1");
  CHECK(s.operands("ag") == std::vector<std::string>{"w1"});
  CHECK(hasLine(s.ir(), "  results %18 -> w, %12 -> m, %14 -> v"));
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}),
                    Agreement::Bitwise, {{"v", "0.001"}});
}

TEST_CASE("reorder keeps the old allgather while something still reads it",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f32[B, H] local, w: f32[H] replicated,
          cc: f32[B, H] replicated) {
    gs = allreduce(sum, g);
    y = gs * 2.0;
    w1 = update(w, sum(y, 0));
    c1 = update(cc, y + 1.0);
    q = y - 1.0;
    return gs, q;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y, w1, c1);
}
)");
  Scheduled s = schedule(c, "s");
  // gs is still returned: the old allgather stays, the new ones are named
  // ag.<stage>.
  CHECK(s.line("ag") == "%4 ag : f32[B, H] replicated = allgather(%3) over "
                        "world");
  CHECK(s.line("ag.y") == "%6 ag.y : f32[B, H] replicated = allgather(%5) "
                          "over world");
  // q is not listed: it reads the gathered y.
  CHECK(s.operands("q") == std::vector<std::string>{"ag.y"});
  // The reduction along the sliced dimension is completed; it keeps the
  // update.
  CHECK(s.line("w1") ==
        "%9 w1 : f32[H] replicated = elementwise f32(%8) -> update %1");
  CHECK(s.line("ag.c1") == "%11 ag.c1 : f32[B, H] replicated = allgather(%10) "
                           "over world -> update %2");
  CHECK(hasLine(s.ir(), "  results %9 -> w, %11 -> cc, %4 as gs, %12"));
  expectSameResults(c.program(), *s.program, worldRanks({{"B", 12}, {"H", 4}}),
                    Agreement::Reassociated);
}

TEST_CASE("reorder refuses a stage that is not an allgather",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
}
schedule s for p {
    reorder(gs, w1);
}
)");
  std::string d = expectRefusal(
      c, "s",
      c.at("reorder(^gs, w1)") +
          ": error: cannot reorder 'gs': it is an allreduce, not an "
          "allgather or an alltoall [reorder-not-all-gather]");
  CHECK(hasLine(d, c.at("^gs = allreduce") + ": note: 'gs' is defined here"));
}

TEST_CASE("reorder refuses a stage of another kind",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N, N] local, w: f32[N,
          N] replicated) {
    gs = allreduce(sum, g);
    y = matmul(gs, w);
    t = transpose(gs);
    return y, t;
}
schedule mm for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
}
schedule tr for p {
    (rs, ag) = split(gs);
    reorder(ag, t);
}
schedule itself for p {
    (rs, ag) = split(gs);
    reorder(ag, ag);
}
)");
  std::string d = expectRefusal(
      c, "mm",
      c.at("reorder(ag, ^y)") +
          ": error: cannot reorder 'ag' past 'y': it is a matmul; an "
          "allgather moves past elementwise stages, reductions and "
          "sendrecvs along another axis [reorder-stage-kind]");
  CHECK(hasLine(d, c.at("^y = matmul") + ": note: 'y' is defined here"));
  expectRefusal(c, "tr",
                c.at("reorder(ag, ^t)") +
                    ": error: cannot reorder 'ag' past 't': it is a "
                    "transpose; an allgather moves past elementwise stages, "
                    "reductions and sendrecvs along another axis "
                    "[reorder-stage-kind]");
  expectRefusal(c, "itself",
                c.at("reorder(ag, ^ag)") +
                    ": error: cannot reorder 'ag' past 'ag': it is the "
                    "allgather itself; an allgather moves past elementwise "
                    "stages, reductions and sendrecvs along another axis "
                    "[reorder-stage-kind]");
}

TEST_CASE("reorder refuses a stage that does not depend on the allgather",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    wn = norm(w);
    w1 = update(w, w - wn * gs);
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, wn, w1);
}
)");
  std::string d = expectRefusal(
      c, "s",
      c.at("reorder(ag, ^wn, w1)") +
          ": error: cannot reorder 'ag' past 'wn': 'wn' does not depend on "
          "'ag'; only stages computed from the gathered value can run on its "
          "slices [reorder-independent]");
  CHECK(hasLine(d, c.at("^wn = norm(w);") + ": note: 'wn' is defined here"));
}

TEST_CASE("reorder refuses a stage that skips a stage in between",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated,
          lr: f32) {
    gs = allreduce(sum, g);
    d = lr * gs;
    w1 = update(w, w - d);
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, w1);
}
)");
  std::string d = expectRefusal(
      c, "s",
      c.at("reorder(ag, ^w1)") +
          ": error: cannot reorder 'ag' past 'w1': 'w1' reads neither 'ag' "
          "nor a stage listed before it; list the stages in between too "
          "[reorder-not-connected]");
  CHECK(hasLine(d, c.at("^w1 = update") + ": note: 'w1' is defined here"));
}

TEST_CASE("reorder refuses a stage that reads a local value",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, h: f32[N] local) {
    gs = allreduce(sum, g);
    x = gs * h;
    return x;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, x);
}
)");
  std::string d = expectRefusal(
      c, "s",
      c.at("reorder(ag, ^x)") +
          ": error: cannot reorder 'ag' past 'x': stage 'x' reads 'h', which "
          "is local; reorder needs replicated or sliced operands "
          "[reorder-local-operand]");
  CHECK(hasLine(d, c.at("^h: f32[N] local") + ": note: 'h' is defined here"));
}

TEST_CASE("reorder refuses to combine slices of different dimensions",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N, N] local, cs: f32[N,
          N] sliced(1)) {
    gs = allreduce(sum, g);
    x = gs + cs;
    return x;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, x);
}
)");
  expectRefusal(c, "s",
                c.at("reorder(ag, ^x)") +
                    ": error: cannot reorder 'ag' past 'x': on slices it "
                    "would combine 'cs' (sliced(1)) with the slices of 'rs' "
                    "(sliced(0)); "
                    "slices of different dimensions cannot be combined "
                    "element by element; allgather one of them first "
                    "[reorder-layout-mismatch]");
}

TEST_CASE("reorder refuses a fused stage", "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
}
schedule s for p {
    (rs, ag) = split(gs);
    fuse(w1);
    reorder(ag, w1);
}
)");
  Refused r = refuse(c, "s");
  CHECK(r.directive == 2);
  expectRefusal(c, "s",
                c.at("reorder(ag, ^w1)") +
                    ": error: cannot reorder 'ag' past 'w1': on slices it "
                    "would change the layout of a fused stage; reorder "
                    "before fusing [reorder-layout-mismatch]");
}

TEST_CASE("reorder refuses a sendrecv along the gathered axis",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local) {
    gs = allreduce(sum, g);
    nx = sendrecv(gs, 1);
    return nx;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, nx);
}
)");
  expectRefusal(c, "s",
                c.at("reorder(ag, ^nx)") +
                    ": error: cannot reorder 'ag' past 'nx': 'nx' sends along "
                    "axis 'world', the axis 'ag' gathers over "
                    "[reorder-send-same-axis]");

  Compiled m = compile(R"(program p(mesh [pp: S, tp: T], g: f32[N] local(tp)) {
    gs = allreduce(sum, g, axis=tp);
    nx = sendrecv(gs, tp, -1);
    return nx;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, nx);
}
)");
  expectRefusal(m, "s",
                m.at("reorder(ag, ^nx)") +
                    ": error: cannot reorder 'ag' past 'nx': 'nx' sends along "
                    "axis 'tp', the axis 'ag' gathers over "
                    "[reorder-send-same-axis]");
}

TEST_CASE("reorder refuses a stage listed twice",
          "[passes][reorder][refusal]") {
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, w1, w1);
}
)");
  expectRefusal(c, "s",
                c.at("reorder(ag, w1, ^w1)") +
                    ": error: 'w1' is listed twice [listed-twice]");
}

TEST_CASE("reorder adds no allgather for a stage that was already sliced",
          "[passes][reorder]") {
  // y reads x, which is sliced: y was sliced(0) before the reorder, so its
  // reader z still reads it sliced and needs no allgather.
  Compiled c =
      compile(R"(program p(g: f32[B, H] local, x: f32[B, H] sliced(0)) {
    gs = allreduce(sum, g);
    y = gs + x;
    z = y * 2.0;
    return z;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, y);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.line("y") == "%3 y : f32[B, H] sliced(0) = elementwise add(%2, %1)");
  CHECK(s.operands("z") == std::vector<std::string>{"y"});
  for (const auto &st : s.program->getStages())
    CHECK(st->kind != StageKind::AllGather);
  expectSameResults(c.program(), *s.program, worldRanks({{"B", 12}, {"H", 5}}));
}

TEST_CASE("reorder twice over one axis gathers a stage once",
          "[passes][reorder]") {
  Compiled c = compile(R"(program p(g: f32[N] local, h: f32[N] local) {
    a = allreduce(sum, g);
    b = allreduce(sum, h);
    t = a + b;
    return t;
}
schedule s for p {
    (rs1, ag1) = split(a);
    reorder(ag1, t);
    (rs2, ag2) = split(b);
    reorder(ag2, t);
}
)");
  Scheduled s = schedule(c, "s");
  CHECK(s.line("t") == "%4 t : f32[N] sliced(0) = elementwise add(%2, %3)");
  CHECK(s.line("ag1") ==
        "%5 ag1 : f32[N] replicated = allgather(%4) over world");
  CHECK_FALSE(s.has("ag2"));
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}));
}

TEST_CASE("reorder keeps a reduction of an already sliced value partial",
          "[passes][reorder]") {
  // r is each rank's maximum of its block before the reorder (local) and
  // must stay so: completing it would change its value and its type.
  Compiled c = compile(R"(program p(g: f32[N] local, s: f32[N] sliced) {
    a = allreduce(sum, g);
    t = a + s;
    r = max(t);
    q = sum(t);
    qs = allreduce(sum, q);
    return r, qs;
}
schedule x for p {
    (rs, ag) = split(a);
    reorder(ag, t, r, q);
}
)");
  Scheduled s = schedule(c, "x");
  CHECK(s.line("r") == "%4 r : f32 local = reduction max(%3)");
  CHECK(s.line("q") == "%5 q : f32 local = reduction sum(%3)");
  CHECK(s.program->reassociations.empty());
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}));
}

TEST_CASE("reorder past a float max or min stays bitwise with signed zeros",
          "[passes][reorder]") {
  // z is +0 or -0 by the sign of w; max and min order -0 below +0, so the
  // maxima of the slices combine to the maximum of the whole tensor.
  Compiled c = compile(R"(program p(g: f32[N] local, w: f32[N]) {
    a = allreduce(sum, g);
    z = (a - a) * w;
    m = max(z);
    n = min(z);
    return m, n;
}
schedule x for p {
    (rs, ag) = split(a);
    reorder(ag, z, m, n);
}
)");
  Scheduled s = schedule(c, "x");
  CHECK(s.stage("m").kind == StageKind::AllReduce);
  CHECK(s.program->reassociations.empty());
  expectSameResults(c.program(), *s.program, worldRanks({{"N", 24}}));
}
