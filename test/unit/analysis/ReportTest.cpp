//===- ReportTest.cpp - polynomials and the cost report -------------------===//
//
// The polynomial arithmetic of the report, and the bytes and FLOPs of small
// scheduled programs against counts worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "AnalysisTestUtil.h"

#include "analysis/Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>

using namespace coconet;
using analysis::LaunchCost;
using analysis::Polynomial;
using analysis::Rational;
using test::schedule;

namespace {

Polynomial sym(llvm::StringRef name, int exponent = 1) {
  return Polynomial::symbol(name, exponent);
}

Polynomial num(int64_t value) { return Polynomial(value); }

std::string report(const ir::Program &program, const ir::DimEnv &sizes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  analysis::printReport(program, analysis::analyzeLaunches(program), "test",
                        sizes, os);
  return text;
}

const char *const kSgd = R"(
program sgd(g: f16[N] local, w: f32[N] replicated, lr: f32) {
    gs = allreduce(sum, g);
    w1 = update(w, w - lr * f32(gs));
}
schedule ar_c for sgd {
    fuse(w1);
}
schedule rs_c_ag for sgd {
    (rs, ag) = split(gs);
    reorder(ag, w1);
}
schedule fused for sgd {
    apply rs_c_ag;
    fuse(rs, w1, ag);
}
)";

} // namespace

TEST_CASE("rationals are kept in lowest terms", "[analysis][polynomial]") {
  Rational r(6, -4);
  CHECK(r.num() == -3);
  CHECK(r.den() == 2);
  CHECK(r.str() == "-3/2");
  CHECK((Rational(1, 3) + Rational(1, 6)) == Rational(1, 2));
  CHECK((Rational(2, 3) * Rational(3, 2)) == Rational(1));
  CHECK((Rational(1, 2) - Rational(1, 2)).isZero());
}

TEST_CASE("polynomials print terms in a fixed readable order",
          "[analysis][polynomial]") {
  Polynomial a = num(4) * sym("N") + num(2) * sym("N") * sym("P", -1);
  CHECK(a.str() == "4*N + 2*N/P");
  // The same terms added in another order print the same way.
  Polynomial b = sym("N") * sym("P", -1) * num(2) + sym("N") * num(4);
  CHECK(a == b);
  CHECK(b.str() == "4*N + 2*N/P");
  Polynomial c = num(12) + num(2) * sym("H") +
                 num(16) * sym("H", 2) * sym("P", -1) +
                 num(8) * sym("B") * sym("H");
  CHECK(c.str() == "8*B*H + 16*H^2/P + 2*H + 12");
  CHECK((sym("N") * sym("P", -1) * sym("T", -1)).str() == "N/(P*T)");
  CHECK(sym("P", -1).str() == "1/P");
  CHECK((num(3) - sym("N")).str() == "-N + 3");
  CHECK((sym("N") * Polynomial(Rational(3, 2)) * sym("P", -1)).str() ==
        "3*N/(2*P)");
  CHECK(Polynomial().str() == "0");
}

TEST_CASE("polynomial arithmetic cancels terms and exponents",
          "[analysis][polynomial]") {
  Polynomial n = sym("N");
  Polynomial ring = n - n * sym("P", -1);
  CHECK(ring.str() == "N - N/P");
  CHECK((ring * sym("P")).str() == "N*P - N");
  CHECK((ring - ring).isZero());
  CHECK((n * sym("P", -1) * sym("P")) == n);
  CHECK((ring * num(2)).coefficient({{"N", 1}, {"P", -1}}) == Rational(-2));
  CHECK(
      Polynomial::fromDim(ir::Dim::constant(4) * ir::Dim::symbol("H")).str() ==
      "4*H");
  CHECK(
      Polynomial::fromDim(ir::Dim::symbol("H") * ir::Dim::symbol("H")).str() ==
      "H^2");
}

TEST_CASE("polynomials evaluate only when every name is bound",
          "[analysis][polynomial]") {
  Polynomial p = num(2) * sym("N") - num(2) * sym("N") * sym("P", -1);
  CHECK_FALSE(p.evaluate({{"N", 1024}}).has_value());
  std::optional<double> v = p.evaluate({{"N", 1024}, {"P", 4}});
  REQUIRE(v.has_value());
  CHECK(*v == 1536);
  CHECK(num(20).evaluate({}) == std::optional<double>(20));
}

TEST_CASE("the unscheduled sgd launches an allreduce and one kernel",
          "[analysis][report]") {
  auto s = schedule(kSgd);
  std::vector<LaunchCost> l = analysis::analyzeLaunches(*s->program);
  REQUIRE(l.size() == 2);
  CHECK(l[0].kind == LaunchCost::Kind::Collective);
  CHECK(l[0].read.str() == "2*N");
  CHECK(l[0].write.str() == "2*N");
  CHECK(l[0].sent.str() == "4*N - 4*N/P");
  CHECK(l[1].kind == LaunchCost::Kind::Kernel);
  // gs (f16), w (f32) and lr; writes w1.
  CHECK(l[1].read.str() == "6*N + 4");
  CHECK(l[1].write.str() == "4*N");
  CHECK(l[1].sent.isZero());
}

TEST_CASE("split sgd reads and writes slices of the weights",
          "[analysis][report]") {
  auto s = schedule(kSgd, "rs_c_ag");
  std::vector<LaunchCost> l = analysis::analyzeLaunches(*s->program);
  REQUIRE(l.size() == 3);
  CHECK(l[0].description ==
        "reducescatter rs (sum, dim=0) over world: f16[N] local -> f16[N] "
        "sliced(0)");
  CHECK(l[0].read.str() == "2*N");
  CHECK(l[0].write.str() == "2*N/P");
  CHECK(l[0].sent.str() == "2*N - 2*N/P");
  // The replicated w is read only where the sliced w1 needs it.
  CHECK(l[1].read.str() == "6*N/P + 4");
  CHECK(l[1].write.str() == "4*N/P");
  // w1 lives in the rank's block of w (the lowering's view), so the
  // allgather runs in place: only the others' blocks come in.
  CHECK(l[1].fresh.isZero());
  CHECK(l[2].kind == LaunchCost::Kind::Collective);
  CHECK(l[2].read.str() == "4*N - 4*N/P");
  CHECK(l[2].write.str() == "4*N - 4*N/P");
  CHECK(l[2].sent.str() == "4*N - 4*N/P");
  // The step's buffers: g, rs and w (w1 is w's block, read and written
  // by the kernel; all of w written by the allgather).
  llvm::SmallVector<std::string, 4> touched;
  for (const LaunchCost &launch : l)
    for (const auto &[stage, bytes] : launch.touched)
      touched.push_back(stage->name + " " + bytes.str());
  CHECK(llvm::join(touched, ", ") ==
        "g 2*N, rs 2*N/P, w 4*N/P, lr 4, rs 2*N/P, w 4*N/P, w 4*N");
}

TEST_CASE("a value gathered in place only where the lowering places it so",
          "[analysis][report]") {
  // w is read again after the update's kernel (by v): w1 needs its own
  // buffer, and the allgather copies every block.
  auto s = schedule(R"(
program p(g: f32[N] local, w: f32[N] replicated) {
    gs = allreduce(sum, g);
    w1 = update(w, w - gs);
    v = w * 2.0;
    return v;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, w1);
}
)",
                    "s");
  std::vector<LaunchCost> l = analysis::analyzeLaunches(*s->program);
  const LaunchCost *ag = nullptr;
  for (const LaunchCost &launch : l)
    if (launch.kind == LaunchCost::Kind::Collective &&
        llvm::StringRef(launch.description).starts_with("allgather"))
      ag = &launch;
  REQUIRE(ag);
  CHECK(ag->read.str() == "4*N/P");
  CHECK(ag->write.str() == "4*N");
}

TEST_CASE("a fused collective kernel moves only what crosses it",
          "[analysis][report]") {
  auto s = schedule(kSgd, "fused");
  std::vector<LaunchCost> l = analysis::analyzeLaunches(*s->program);
  REQUIRE(l.size() == 1);
  CHECK(l[0].kind == LaunchCost::Kind::FusedCollective);
  CHECK(l[0].read.str() == "2*N + 4*N/P + 4");
  CHECK(l[0].write.str() == "4*N");
  CHECK(l[0].sent.str() == "6*N - 6*N/P");
  // Staging: g (f16) copied in; w (f32), read by the kernel, in and out.
  CHECK(l[0].staging.str() == "20*N");
  ir::DimEnv sizes{{"N", 1024}, {"P", 4}};
  CHECK(l[0].read.evaluate(sizes) == std::optional<double>(3076));
  std::string text = report(*s->program, sizes);
  CHECK_THAT(text, Catch::Contains("kernel k0 (fused collective): rs w1 ag"));
  CHECK_THAT(text, Catch::Contains("read   2*N + 4*N/P + 4 = 3076"));
  CHECK_THAT(text, Catch::Contains("net    6*N - 6*N/P     = 4608"));
  CHECK_THAT(text, Catch::Contains("total: 1 launch (1 kernel)"));
}

TEST_CASE("broadcast operands read their own elements", "[analysis][report]") {
  auto s = schedule(R"(
program bias(x: f32[B, H] sliced(0), b: f32[H] replicated,
             c: f32[B, H] sliced(1), d: f32[H] replicated) {
    y = x + b;
    z = c * d;
    return y, z;
}
)");
  std::vector<LaunchCost> l = analysis::analyzeLaunches(*s->program);
  REQUIRE(l.size() == 2);
  // Rows are sliced: all of b is needed.
  CHECK(l[0].read.str() == "4*B*H/P + 4*H");
  CHECK(l[0].write.str() == "4*B*H/P");
  // Columns are sliced: only d's block.
  CHECK(l[1].read.str() == "4*B*H/P + 4*H/P");
}

TEST_CASE("matmul FLOPs and bytes on a two-axis mesh", "[analysis][report]") {
  auto s = schedule(R"(
program mm(mesh [dp: D, tp: T], x: f16[B, K] sliced(0, dp),
           w: f16[K, M] sliced(1, tp)) {
    y = matmul(x, w);
    return y;
}
)");
  std::vector<LaunchCost> l = analysis::analyzeLaunches(*s->program);
  REQUIRE(l.size() == 1);
  CHECK(l[0].kind == LaunchCost::Kind::Matmul);
  CHECK(l[0].read.str() == "2*B*K/D + 2*K*M/T");
  CHECK(l[0].write.str() == "2*B*M/(D*T)");
  CHECK(l[0].flops.str() == "2*B*K*M/(D*T)");
  ir::DimEnv sizes{{"B", 8}, {"K", 16}, {"M", 32}, {"D", 2}, {"T", 4}};
  CHECK(l[0].flops.evaluate(sizes) == std::optional<double>(1024));
}

TEST_CASE("collectives over one mesh axis divide by its size",
          "[analysis][report]") {
  auto s = schedule(R"(
program p(mesh [pp: PP, tp: T], y: f32[N] local) {
    a = allreduce(sum, y, tp);
    b = sendrecv(a, pp, 1);
    c = broadcast(b, 0, pp);
    return c;
}
)");
  std::vector<LaunchCost> l = analysis::analyzeLaunches(*s->program);
  REQUIRE(l.size() == 3);
  CHECK(l[0].sent.str() == "8*N - 8*N/T");
  CHECK(l[1].sent.str() == "4*N");
  CHECK(l[2].sent.str() == "4*N");
  CHECK(l[2].read.str() == "4*N");
  CHECK(l[2].write.str() == "4*N");
}

TEST_CASE("a fuse group of one stage costs what the stage costs",
          "[analysis][report]") {
  auto plain = schedule(kSgd);
  auto fused = schedule(kSgd, "ar_c");
  std::vector<LaunchCost> a = analysis::analyzeLaunches(*plain->program);
  std::vector<LaunchCost> b = analysis::analyzeLaunches(*fused->program);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  CHECK(b[1].description == "kernel k0 (elementwise): w1");
  CHECK(a[1].description == "kernel w1 (elementwise): f32[N] replicated");
  CHECK(a[1].read == b[1].read);
  CHECK(a[1].write == b[1].write);
}
