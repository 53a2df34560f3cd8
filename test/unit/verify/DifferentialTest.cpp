//===- DifferentialTest.cpp - the reassociation bound and its check -------===//
//
// verify::reassociationBound on constructed sums: a cancelling sum added in
// another order passes where the old check (16 ulp of the result) fails,
// an error beyond the bound fails. Then comparePrograms on reordered sums
// and norms with wide inputs (whose sums see their order): the
// reassociated values differ and pass, the results are bitwise equal once
// the reference's values are put in, and a candidate that combines its
// partial values wrongly, or changes anything after them, fails.
//
//===----------------------------------------------------------------------===//

#include "../passes/PassTestUtil.h"

#include "support/Philox.h"

#include <cmath>

using namespace coconet;
using coconet::test::compile;
using coconet::test::Compiled;
using coconet::test::schedule;
using coconet::test::Scheduled;
using ir::DType;
using ir::ReductionKind;

namespace {

/// The old check: within 16 ulp of the result's type at the result.
bool withinOldTolerance(DType dtype, double a, double b) {
  return std::fabs(a - b) <=
         16 * verify::epsilonOf(dtype) * std::max(std::fabs(a), std::fabs(b));
}

/// `n` terms with all 53 bits in [-1, 1), the last one chosen so that the
/// exact sum is near `target`.
std::vector<double> cancellingTerms(int n, double target, uint64_t seed) {
  std::vector<double> t;
  double sum = 0;
  for (int i = 0; i + 1 < n; ++i) {
    const uint64_t bits =
        support::uniformInputBits(seed, 0, static_cast<uint64_t>(i));
    t.push_back(static_cast<double>(bits >> 11) * 0x1p-52 - 1);
    sum += t.back();
  }
  t.push_back(target - sum);
  return t;
}

/// Adds in ascending order (the unscheduled reduction), and as `parts`
/// partial sums, each ascending, added in ascending order (the reordered
/// one: per-rank partial values, then an allreduce).
double ascending(const std::vector<double> &t) {
  double s = 0;
  for (double v : t)
    s += v;
  return s;
}
double inParts(const std::vector<double> &t, size_t parts) {
  const size_t each = t.size() / parts;
  double total = 0;
  for (size_t p = 0; p < parts; ++p) {
    double s = 0;
    for (size_t i = p * each; i < (p + 1) * each; ++i)
      s += t[i];
    total += s;
  }
  return total;
}

double magnitudes(const std::vector<double> &t) {
  double m = 0;
  for (double v : t)
    m += std::fabs(v);
  return m;
}

double roundedTo(DType dtype, double v) {
  sim::Tensor t(dtype, {1});
  t.set(0, v);
  return t.get(0);
}

/// comparePrograms, which must run.
verify::Comparison compare(const ir::Program &reference,
                           const ir::Program &candidate,
                           const sim::SimOptions &options) {
  auto cmp = verify::comparePrograms(reference, candidate, options);
  if (!cmp)
    FAIL(llvm::toString(cmp.takeError()));
  return std::move(*cmp);
}

std::string printed(const verify::Comparison &c) {
  std::string text;
  llvm::raw_string_ostream os(text);
  c.print(os);
  return text;
}

} // namespace

TEST_CASE("the reassociation bound admits a reassociated cancelling sum",
          "[verify]") {
  // 36 terms of magnitude up to 1 that cancel to -0.02: added in four parts
  // (four ranks' partial sums), the f64 sum is some 1e-16 away, far more
  // than 16 ulp of 0.02 (7e-17), well within 2 gamma(36) sum|t| (8e-14).
  int found = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const std::vector<double> t = cancellingTerms(36, -0.02, seed);
    const double a = ascending(t), b = inParts(t, 4);
    INFO("seed " << seed << ": " << a << " vs " << b);
    CHECK(std::fabs(a + 0.02) < 1e-12);
    CHECK(verify::withinReassociationBound(ReductionKind::Sum, 36,
                                           magnitudes(t), DType::F64, a, b));
    if (!withinOldTolerance(DType::F64, a, b))
      ++found;
  }
  // The old check fails most of them.
  CHECK(found >= 10);
}

TEST_CASE("the reassociation bound of a sum rounded to f32", "[verify]") {
  // 2^54, -2^54 and 0.3: added in this order 0.3, with the small term first
  // 0 (0.3 is lost in 2^54 + 0.3): both legal, and 0.3 is 2^22 ulp from 0.
  const double t[] = {0x1p54, -0x1p54, 0.3};
  const double a = roundedTo(DType::F32, (t[0] + t[1]) + t[2]);
  const double b = roundedTo(DType::F32, (t[2] + t[0]) + t[1]);
  CHECK(a == roundedTo(DType::F32, 0.3));
  CHECK(b == 0);
  const double m = 0x1p55 + 0.3;
  CHECK(verify::withinReassociationBound(ReductionKind::Sum, 3, m, DType::F32,
                                         a, b));
  CHECK_FALSE(withinOldTolerance(DType::F32, a, b));
  // Without the large terms the sum is exact in any order: the bound is
  // then one rounding to f32 (and a difference of 1.0 is far outside it).
  const double small = 0.25 + 0.5 + 0.125;
  const double bound = verify::reassociationBound(ReductionKind::Sum, 3, small,
                                                  DType::F32, small, small);
  CHECK(bound < 2e-7);
  CHECK_FALSE(verify::withinReassociationBound(ReductionKind::Sum, 3, small,
                                               DType::F32, small, small + 1));
}

TEST_CASE("an error beyond the reassociation bound fails", "[verify]") {
  const std::vector<double> t = cancellingTerms(36, -0.02, 3);
  const double a = ascending(t), m = magnitudes(t);
  for (DType dtype : {DType::F64, DType::F32, DType::BF16, DType::F16}) {
    const double x = roundedTo(dtype, a);
    const double bound =
        verify::reassociationBound(ReductionKind::Sum, 36, m, dtype, x, x);
    INFO(ir::dtypeName(dtype).str() << ": bound " << bound);
    CHECK(bound > 0);
    CHECK(verify::withinReassociationBound(ReductionKind::Sum, 36, m, dtype, x,
                                           x + 0.5 * bound));
    CHECK_FALSE(verify::withinReassociationBound(ReductionKind::Sum, 36, m,
                                                 dtype, x, x + 2 * bound));
    // A dropped term (the smallest of them is 2e-3) is far outside it.
    double smallest = 1;
    for (double v : t)
      smallest = std::min(smallest, std::fabs(v));
    CHECK(smallest > 4 * bound);
  }
  // NaN matches NaN; infinity matches only itself.
  CHECK(verify::withinReassociationBound(ReductionKind::Sum, 4, 1, DType::F32,
                                         NAN, NAN));
  CHECK(verify::withinReassociationBound(ReductionKind::Sum, 4, INFINITY,
                                         DType::F32, INFINITY, INFINITY));
  CHECK_FALSE(verify::withinReassociationBound(ReductionKind::Sum, 4, INFINITY,
                                               DType::F32, INFINITY, 1e30));
  CHECK_FALSE(verify::withinReassociationBound(ReductionKind::Sum, 4, 1,
                                               DType::F32, 1, NAN));
}

TEST_CASE("the reassociation bound of a norm", "[verify]") {
  // sqrt of a sum of squares: the sums' difference through the square
  // root, whose own roundings count too.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<double> x = cancellingTerms(64, 0.5, seed), sq;
    for (double v : x)
      sq.push_back(v * v);
    const double m = ascending(sq);
    for (DType dtype : {DType::F64, DType::F32}) {
      const double a = roundedTo(dtype, std::sqrt(ascending(sq)));
      const double b = roundedTo(dtype, std::sqrt(inParts(sq, 8)));
      const double bound =
          verify::reassociationBound(ReductionKind::Norm, 64, m, dtype, a, b);
      INFO("seed " << seed << " " << ir::dtypeName(dtype).str() << ": " << a
                   << " vs " << b << ", bound " << bound);
      CHECK(verify::withinReassociationBound(ReductionKind::Norm, 64, m, dtype,
                                             a, b));
      CHECK_FALSE(verify::withinReassociationBound(ReductionKind::Norm, 64, m,
                                                   dtype, a, a + 2 * bound));
      // About 64 ulp of the norm in f64 (gamma(64), a few roundings), a
      // few ulp in f32: not more.
      CHECK(bound <= 80 * verify::epsilonOf(dtype) * a);
    }
  }
  CHECK(verify::reassociationBound(ReductionKind::Norm, 8, 0, DType::F64, 0,
                                   0) == 0);
}

namespace {

const char *const kProgram = R"(
program p(g: f32[N] local, d: f64[N] local, h: f16[N] local, c: f32) {
    gs = allreduce(sum, g);
    total = sum(gs);
    shifted = total + c;
    ds = allreduce(sum, d);
    dtotal = sum(ds);
    hs = allreduce(sum, h);
    hn = norm(hs);
    scaled = gs / f32(hn);
    return shifted, dtotal, hn, scaled;
}
schedule s for p {
    (rs, ag) = split(gs);
    reorder(ag, total);
    (drs, dag) = split(ds);
    reorder(dag, dtotal);
    (hrs, hag) = split(hs);
    reorder(hag, hn);
}
)";

sim::SimOptions wideOptions(int64_t ranks, uint64_t seed) {
  sim::SimOptions o;
  o.sizes = {{"P", ranks}, {"N", 12 * ranks}};
  o.seed = seed;
  o.inputKind = sim::InputKind::Wide;
  return o;
}

} // namespace

TEST_CASE("comparePrograms bounds reassociated sums where they happen",
          "[verify]") {
  Compiled c = compile(kProgram);
  Scheduled s = schedule(c, "s");
  REQUIRE(s.program->reassociations.size() == 3);
  int substituted = 0, oldFails = 0;
  for (int64_t ranks : {3, 4})
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      const verify::Comparison cmp =
          compare(c.program(), *s.program, wideOptions(ranks, seed));
      const std::string text = printed(cmp);
      INFO(ranks << " ranks, seed " << seed << ":\n" << text);
      CHECK(cmp.ok());
      CHECK_FALSE(cmp.bitwise);
      if (!cmp.substituted)
        continue;
      ++substituted;
      // The values the reordered reductions complete, found by name.
      REQUIRE(cmp.reassociated.size() == 3);
      CHECK(cmp.reassociated[0].name == "total");
      CHECK(cmp.reassociated[0].terms == 12 * ranks);
      CHECK(cmp.reassociated[2].kind == ReductionKind::Norm);
      for (const verify::ResultDiff &d : cmp.substitutedResults)
        CHECK(d.differing == 0);
      CHECK(text.find("with the reassociated values as the unscheduled "
                      "program computes them: every result bitwise equal") !=
            std::string::npos);
      // The old check, 16 ulp of each result, fails some of these.
      for (const verify::ResultDiff &d :
           cmp.results) // the raw results, as the programs computed them
        oldFails += d.maxUlps > 16;
    }
  // Wide inputs make the reassociation visible, and the old tolerance
  // could not take it.
  CHECK(substituted >= 6);
  CHECK(oldFails >= 1);
}

TEST_CASE("comparePrograms fails a wrong combination of partial values",
          "[verify]") {
  Compiled c = compile(kProgram);
  for (const char *stage : {"total.sum", "dtotal", "hn.sum"}) {
    DYNAMIC_SECTION("max instead of sum at " << stage) {
      // A planted bug in the completed reduction: the partial values
      // combined with max (one rank's terms kept, the others dropped).
      Scheduled s = schedule(c, "s");
      ir::Stage *ar = s.program->findStage(stage);
      REQUIRE(ar);
      REQUIRE(ar->kind == ir::StageKind::AllReduce);
      ar->reduceOp = ir::ReduceOp::Max;
      for (bool wide : {false, true}) {
        sim::SimOptions o = wideOptions(3, 5);
        if (!wide)
          o.inputKind = sim::InputKind::Uniform;
        const verify::Comparison cmp = compare(c.program(), *s.program, o);
        INFO((wide ? "wide" : "uniform") << " inputs:\n" << printed(cmp));
        CHECK_FALSE(cmp.ok());
        CHECK(cmp.substituted);
        int failing = 0;
        for (const verify::ReassociatedValue &r : cmp.reassociated)
          failing += r.failing > 0;
        CHECK(failing == 1);
      }
    }
  }
  SECTION("a change after the reassociated value") {
    // Anything else is still bitwise: 'scaled' divides by the completed
    // norm; planted: it multiplies.
    Scheduled s = schedule(c, "s");
    ir::Stage *scaled = s.program->findStage("scaled");
    REQUIRE(scaled);
    REQUIRE(scaled->body);
    ir::ScalarExpr e = *scaled->body;
    REQUIRE(e.op == ir::ScalarOp::Div);
    e.op = ir::ScalarOp::Mul;
    scaled->body = s.program->addExpr(e);
    const verify::Comparison cmp =
        compare(c.program(), *s.program, wideOptions(4, 2));
    const std::string text = printed(cmp);
    INFO(text);
    CHECK_FALSE(cmp.ok());
    CHECK(cmp.substituted);
    for (const verify::ReassociatedValue &r : cmp.reassociated)
      CHECK(r.failing == 0);
    CHECK(cmp.substitutedResults[3].differing > 0);
    CHECK(text.find("outside the tolerance") != std::string::npos);
  }
}

namespace {

/// A reassociated sum that a later split renames: `col`, completed by the
/// reorder as an allreduce of per-rank partial values, is then split, so
/// the allgather `cag` holds it whole and the reducescatter `crs` a block;
/// in `block`, `sq` is reordered past `cag` too, so only `crs` holds it.
const char *const kSplitProgram = R"(
program q(d: f64[B, N] local) {
    ds = allreduce(sum, d);
    col = sum(ds, 0);
    sq = col * col;
    return sq;
}
schedule whole for q {
    (drs, dag) = split(ds);
    reorder(dag, col);
    (crs, cag) = split(col);
}
schedule block for q {
    (drs, dag) = split(ds);
    reorder(dag, col);
    (crs, cag) = split(col);
    reorder(cag, sq);
}
)";

} // namespace

TEST_CASE("comparePrograms finds a reassociated sum that split renamed",
          "[verify]") {
  Compiled c = compile(kSplitProgram);
  for (const char *name : {"whole", "block"}) {
    DYNAMIC_SECTION("schedule " << name) {
      Scheduled s = schedule(c, name);
      const std::string holder = std::string(name) == "whole" ? "cag" : "crs";
      const ir::Stage *h = s.program->findStage(holder);
      REQUIRE(h);
      CHECK(h->valueName() == "col");
      REQUIRE_FALSE(s.program->findStage("col"));
      int substituted = 0;
      for (int64_t ranks : {3, 4})
        for (uint64_t seed = 1; seed <= 8; ++seed) {
          sim::SimOptions o = wideOptions(ranks, seed);
          o.sizes["B"] = 5 * ranks;
          const verify::Comparison cmp = compare(c.program(), *s.program, o);
          const std::string text = printed(cmp);
          INFO(ranks << " ranks, seed " << seed << ":\n" << text);
          CHECK(cmp.ok());
          if (!cmp.substituted)
            continue;
          ++substituted;
          // Checked and replaced at the reducescatter, block by block
          // (where it differs); the allgather, in `whole`, then holds the
          // reference's value bit for bit.
          REQUIRE(cmp.reassociated.size() == (holder == "cag" ? 2u : 1u));
          CHECK(cmp.reassociated[0].name == "col' as 'crs");
          CHECK(cmp.reassociated[0].terms == 5 * ranks);
          CHECK(cmp.reassociated[0].failing == 0);
          if (holder == "cag") {
            CHECK(cmp.reassociated[1].name == "col' as 'cag");
            CHECK(cmp.reassociated[1].differing == 0);
          }
          for (const verify::ResultDiff &d : cmp.substitutedResults)
            CHECK(d.differing == 0);
        }
      // The sums see their order on wide inputs.
      CHECK(substituted >= 4);
    }
  }
}
