//===- IndexOpsTest.cpp - topk, cumsum, gather, scatter by hand -----------===//
//
// The simulator's index operations against values worked out by hand: the
// targets are compared with the simulator (codegen-cpu:cases, cuda-emu:cases
// on test/codegen/cases/coverage-index.coco), so these pin the simulator
// itself to docs/language.md: ties to the lower position, a NaN above every
// number, u64 in unsigned order, running sums in f64 rounded per element,
// positions out of range giving 0 (gather) or dropped (scatter), and the
// last of colliding writes staying.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include <cmath>
#include <limits>

using namespace coconet;
using coconet::test::makeTensor;
using coconet::test::simulateSource;
using coconet::test::values;
using ir::DType;

namespace {

sim::SimOptions onRanks(int64_t p) {
  sim::SimOptions o;
  o.sizes["P"] = p;
  return o;
}

sim::Tensor fromList(DType dtype, std::vector<double> v) {
  return makeTensor(dtype, {static_cast<int64_t>(v.size())},
                    [v](int64_t i) { return v[i]; });
}

} // namespace

TEST_CASE("topk ranks equal values by their position", "[sim][index]") {
  sim::SimOptions o = onRanks(1);
  o.inputTensors["x"] = fromList(DType::I32, {3, 5, 5, 1, 5, 3});
  auto s = simulateSource(R"(
program t(x: i32[6]) {
  (v, i) = topk(x, 4, dim=0);
  return v, i;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("v", 0)) == std::vector<double>{5, 5, 5, 3});
  CHECK(values(s.at("i", 0)) == std::vector<double>{1, 2, 4, 0});
}

TEST_CASE("topk puts a NaN first and orders -0 with +0 by position",
          "[sim][index]") {
  sim::SimOptions o = onRanks(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  o.inputTensors["x"] = fromList(DType::F32, {1, nan, -0.0, 0.0, 2});
  auto s = simulateSource(R"(
program t(x: f32[5]) {
  (v, i) = topk(x, 5, dim=0);
  return v, i;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("i", 0)) == std::vector<double>{1, 4, 0, 2, 3});
  std::vector<double> v = values(s.at("v", 0));
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == 2);
  CHECK(std::signbit(v[3]));
  CHECK(!std::signbit(v[4]));
}

TEST_CASE("topk of u64 values is in unsigned order", "[sim][index]") {
  sim::SimOptions o = onRanks(1);
  o.inputTensors["x"] = fromList(DType::U64, {1, 2, 0});
  auto s = simulateSource(R"(
program t(x: u64[3]) {
  y = 18446744073709551615 - x;
  (v, i) = topk(select(x > 1, y, x), 1, dim=0);
  return i;
})",
                          o);
  REQUIRE(s.error == "");
  // {1, 2^64 - 3, 0}: as signed values the second would be the smallest.
  CHECK(values(s.at("i", 0)) == std::vector<double>{1});
}

TEST_CASE("topk along a middle dimension of a sliced value", "[sim][index]") {
  sim::SimOptions o = onRanks(2);
  o.sizes["B"] = 2;
  o.sizes["M"] = 4;
  o.sizes["N"] = 2;
  // x[b, m, n] = (m * 7 + n * 3 + b) % 5.
  o.inputTensors["x"] = makeTensor(DType::I64, {2, 4, 2}, [](int64_t i) {
    int64_t b = i / 8, m = (i / 2) % 4, n = i % 2;
    return static_cast<double>((m * 7 + n * 3 + b) % 5);
  });
  auto s = simulateSource(R"(
program t(x: i64[B, M, N] sliced(0)) {
  (v, i) = topk(x, 2, dim=1);
  return v, i;
})",
                          o);
  REQUIRE(s.error == "");
  // b = 0, n = 0: 0 2 4 1 -> 4 (m 2), 2 (m 1). b = 0, n = 1: 3 0 2 4 ->
  // 4 (3), 3 (0). b = 1, n = 0: 1 3 0 2 -> 3 (1), 2 (3). b = 1, n = 1:
  // 4 1 3 0 -> 4 (0), 3 (2). Element (b, k, n) of the result.
  CHECK(values(s.assembled("v")) ==
        std::vector<double>{4, 4, 2, 3, 3, 4, 2, 3});
  CHECK(values(s.assembled("i")) ==
        std::vector<double>{2, 3, 1, 0, 1, 0, 3, 2});
}

TEST_CASE("topk of more than the dimension holds is an error", "[sim][index]") {
  sim::SimOptions o = onRanks(1);
  o.sizes["N"] = 2;
  auto s = simulateSource(R"(
program t(x: f32[N]) {
  (v, i) = topk(x, 3, dim=0);
  return v;
})",
                          o);
  CHECK(s.error == "'v': topk of 3 along dimension 0, which has only 2 "
                   "elements");
}

TEST_CASE("cumsum accumulates floats in f64, integers wrapping",
          "[sim][index]") {
  sim::SimOptions o = onRanks(1);
  o.inputTensors["f"] = fromList(DType::F32, {1e8, 1, -1e8, 1});
  o.inputTensors["n"] = fromList(DType::I32, {2147483647, 1, 5});
  auto s = simulateSource(R"(
program t(f: f32[4], n: i32[3]) {
  cf = cumsum(f, dim=0);
  cn = cumsum(n, 0);
  return cf, cn;
})",
                          o);
  REQUIRE(s.error == "");
  // In f32, 1e8 + 1 is 1e8 and the third sum would be 0; in f64 it is 1.
  CHECK(values(s.at("cf", 0)) == std::vector<double>{1e8, 1e8, 1, 2});
  CHECK(values(s.at("cn", 0)) ==
        std::vector<double>{2147483647, -2147483648.0, -2147483643.0});
}

TEST_CASE("gather gives 0 for a position out of range", "[sim][index]") {
  sim::SimOptions o = onRanks(1);
  o.inputTensors["x"] = fromList(DType::F16, {10, 11, 12, 13});
  o.inputTensors["i"] = fromList(DType::I64, {0, 3, 4, -1, 2});
  auto s = simulateSource(R"(
program t(x: f16[4], i: i64[5]) {
  g = gather(x, i, dim=0);
  return g;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("g", 0)) == std::vector<double>{10, 13, 0, 0, 12});
}

TEST_CASE("scatter drops positions out of range, and the last write stays",
          "[sim][index]") {
  sim::SimOptions o = onRanks(1);
  o.inputTensors["into"] = fromList(DType::F32, {1, 1, 1, 1});
  o.inputTensors["x"] = fromList(DType::F32, {5, 6, 7, 8, 9});
  o.inputTensors["i"] = fromList(DType::I32, {3, 0, 3, 4, -2});
  auto s = simulateSource(R"(
program t(into: f32[4], x: f32[5], i: i32[5]) {
  d = scatter(x, i, 0, into);
  return d;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("d", 0)) == std::vector<double>{6, 1, 1, 7});
}

TEST_CASE("rows sliced over the ranks: each rank its own rows",
          "[sim][index]") {
  sim::SimOptions o = onRanks(2);
  o.sizes["T"] = 4;
  o.sizes["S"] = 3;
  o.sizes["H"] = 2;
  // Token t's row is (t, t + 0.5); slots 2, 0 | 1, 7 (out of range).
  o.inputTensors["x"] = makeTensor(DType::F32, {4, 2}, [](int64_t i) {
    return static_cast<double>(i / 2) + 0.5 * (i % 2);
  });
  o.inputTensors["slot"] = fromList(DType::I32, {2, 0, 1, 7});
  o.inputTensors["buf"] =
      makeTensor(DType::F32, {3, 2}, [](int64_t) { return -1.0; });
  auto s = simulateSource(R"(
program t(x: f32[T, H] sliced(0), slot: i32[T] sliced(0), buf: f32[S, H]) {
  d = scatter(x, slot, 0, buf);
  back = gather(d, slot, dim=0);
  return d, back;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("d", 0)) == std::vector<double>{1, 1.5, -1, -1, 0, 0.5});
  CHECK(values(s.at("d", 1)) == std::vector<double>{-1, -1, 2, 2.5, -1, -1});
  // Each rank gathers its own tokens back from its own buffer.
  CHECK(values(s.assembled("back")) ==
        std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5, 0, 0});
}
