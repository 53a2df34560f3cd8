//===- SegmentsTest.cpp - segment tables in the simulator -----------------===//
//
// Per-segment reductions and `expand` against values written out by hand,
// on tables with empty and one-element segments and segments that straddle
// rank boundaries; inputs whose f64 sums depend on the order of addition
// (2^54 + 1 - 2^54 is 0 added in element order, 1 in the order of a
// reduction, which adds lanes 0 and 2 before lane 1), so that a reduction
// in another order fails.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include <cmath>

using namespace coconet;
using coconet::test::makeTensor;
using coconet::test::simulateSource;
using ir::DType;

namespace {

constexpr double kBig = 18014398509481984.0; // 2^54

sim::SimOptions options(int64_t ranks, std::vector<int64_t> lengths,
                        int64_t n) {
  sim::SimOptions o;
  o.sizes["P"] = ranks;
  o.sizes["N"] = n;
  o.segmentLengths["t"] = std::move(lengths);
  return o;
}

} // namespace

TEST_CASE("per-segment sums add each segment's elements in the order of a "
          "reduction",
          "[sim][segments]") {
  // Segments: [0, 3) [3, 3) [3, 4) [4, 8).
  for (int64_t p : {1, 2, 4}) {
    DYNAMIC_SECTION(p << " ranks") {
      sim::SimOptions o = options(p, {3, 0, 1, 4}, 8);
      const double x[8] = {kBig, 1, -kBig, 5, 1, kBig, -kBig, 2};
      o.inputTensors["x"] =
          makeTensor(DType::F64, {8}, [&](int64_t i) { return x[i]; });
      auto s = simulateSource(R"(
program q(t: segments[T], x: f64[N] replicated segmented(t)) {
  s = sum(x, by=t);
  n = norm(x, by=t);
  return s, n;
})",
                              o);
      REQUIRE(s.error == "");
      for (int64_t r = 0; r < p; ++r) {
        const sim::Tensor &sum = s.at("s", r);
        REQUIRE(sum.shape() == llvm::ArrayRef<int64_t>{4});
        // Lanes 0, 1, 2: (2^54 + -2^54) + 1 (in element order 0).
        CHECK(sum.get(0) == 1);
        CHECK(sum.get(1) == 0); // empty
        CHECK(sum.get(2) == 5);
        // Lanes 0-3: (1 + -2^54) + (2^54 + 2) = -2^54 + 2^54 (in element
        // order 2).
        CHECK(sum.get(3) == 0);
        CHECK(s.at("n", r).get(2) == 5);
        CHECK(s.at("n", r).get(1) == 0);
      }
    }
  }
}

TEST_CASE("per-segment reductions of a sliced tensor are partial values per "
          "rank",
          "[sim][segments]") {
  // 3 ranks of 4 elements: segment 1 = [2, 11) straddles both boundaries.
  sim::SimOptions o = options(3, {2, 9, 0, 1}, 12);
  o.inputTensors["x"] = makeTensor(
      DType::F32, {12}, [](int64_t i) { return static_cast<double>(i + 1); });
  auto s = simulateSource(R"(
program q(t: segments[T], x: f32[N] sliced segmented(t)) {
  s = sum(x, by=t);
  m = max(x, by=t);
  return s, m;
})",
                          o);
  REQUIRE(s.error == "");
  // Rank 0 holds 1 2 3 4: segment 0 = 1 + 2, segment 1 = 3 + 4.
  CHECK(test::values(s.at("s", 0)) == std::vector<double>{3, 7, 0, 0});
  CHECK(test::values(s.at("s", 1)) == std::vector<double>{0, 26, 0, 0});
  CHECK(test::values(s.at("s", 2)) == std::vector<double>{0, 30, 0, 12});
  // The max of no elements is NaN, which a max allreduce ignores.
  CHECK(std::isnan(s.at("m", 0).get(2)));
  CHECK(std::isnan(s.at("m", 0).get(3)));
  CHECK(s.at("m", 1).get(1) == 8);
  CHECK(std::isnan(s.at("m", 1).get(0)));
}

TEST_CASE("the integer max and min of an empty segment are the type's "
          "extremes",
          "[sim][segments]") {
  sim::SimOptions o = options(1, {2, 0}, 2);
  o.inputTensors["x"] = makeTensor(
      DType::I32, {2}, [](int64_t i) { return static_cast<double>(-3 - i); });
  auto s = simulateSource(R"(
program q(t: segments[T], x: i32[N] segmented(t)) {
  a = max(x, by=t);
  b = min(x, by=t);
  return a, b;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(test::values(s.at("a", 0)) == std::vector<double>{-3, INT32_MIN});
  CHECK(test::values(s.at("b", 0)) == std::vector<double>{-4, INT32_MAX});
}

TEST_CASE("expand reads each element's segment, at global positions",
          "[sim][segments]") {
  for (int64_t p : {1, 2, 3}) {
    DYNAMIC_SECTION(p << " ranks") {
      // [0, 1) [1, 1) [1, 5) [5, 6): a one-element segment on each end.
      sim::SimOptions o = options(p, {1, 0, 4, 1}, 6);
      o.inputTensors["x"] =
          makeTensor(DType::F32, {6}, [](int64_t) { return 1; });
      o.inputTensors["r"] = makeTensor(DType::F32, {4}, [](int64_t s) {
        return static_cast<double>(10 * (s + 1));
      });
      auto s = simulateSource(R"(
program q(t: segments[T], x: f32[N] sliced segmented(t), r: f32[T]) {
  y = x * expand(r, t) + 1;
  return y;
})",
                              o);
      REQUIRE(s.error == "");
      CHECK(test::values(s.assembled("y")) ==
            std::vector<double>{11, 31, 31, 31, 31, 41});
    }
  }
}

TEST_CASE("a table that does not fit its program is an error",
          "[sim][segments]") {
  const char *program = R"(
program q(t: segments[T], x: f32[N] segmented(t)) { s = sum(x, by=t); return s; })";
  SECTION("lengths that do not sum to N") {
    auto s = simulateSource(program, options(1, {2, 3}, 6));
    CHECK(s.error == "t: the 2 lengths sum to 5 elements, but 'N' has 6");
  }
  SECTION("a negative length") {
    auto s = simulateSource(program, options(1, {7, -1}, 6));
    CHECK(s.error == "t: segment 1 has length -1; lengths are 0 or more");
  }
  SECTION("a count bound otherwise") {
    sim::SimOptions o = options(1, {2, 4}, 6);
    o.sizes["T"] = 3;
    auto s = simulateSource(program, o);
    CHECK(s.error ==
          "segment table 't' has 2 segments, but its count T is bound to 3");
  }
  SECTION("no table and no count") {
    sim::SimOptions o;
    o.sizes["P"] = 1;
    o.sizes["N"] = 6;
    auto s = simulateSource(program, o);
    CHECK(s.error == "segment table 't' is not given and cannot be "
                     "generated: bind T (its segment count) and N (its "
                     "length) with --size, or give it with --segments "
                     "t=FILE");
  }
}

TEST_CASE("a generated table has its count and length", "[sim][segments]") {
  sim::SimOptions o;
  o.sizes["P"] = 2;
  o.sizes["N"] = 64;
  o.sizes["T"] = 40;
  auto s = simulateSource(R"(
program q(t: segments[T], x: f32[N] segmented(t)) { s = sum(x, by=t); return s; })",
                          o);
  REQUIRE(s.error == "");
  const rt::SegmentTable &t = s.result->table("t");
  CHECK(t.segments() == 40);
  CHECK(t.elements() == 64);
  // The per-segment sums add up to the whole (inputs are exact in f64).
  double whole = 0, parts = 0;
  const sim::Tensor &x = s.at("x", 0);
  for (int64_t i = 0; i < x.size(); ++i)
    whole += x.get(i);
  for (int64_t k = 0; k < 40; ++k)
    parts += s.at("s", 0).get(k);
  CHECK(parts == Approx(whole).margin(1e-5));
}
