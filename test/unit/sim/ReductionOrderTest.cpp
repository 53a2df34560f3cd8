//===- ReductionOrderTest.cpp - the simulator's order of a reduction ------===//
//
// The simulator reduces in the order of coconet/reduce_order.h (pinned in
// test/unit/runtime/ReduceOrderTest.cpp) and combines a collective's
// members by the same halving tree (coconet/combine.h, pinned in
// MemberOrderTest.cpp). Here, what that promises for sliced tensors, on
// values whose f64 sum depends on the order (2^54 + 1 is 2^54): where each
// rank's block holds the same whole number of 2048-term blocks and the
// ranks are a power of two, a rank's partial value is a subtree of the
// whole tensor's tree and the allreduce of the partial values is its top,
// so the sharded sum is the unsliced sum bit for bit; 3 ranks of 2 blocks
// each are not (docs/language.md, "Sliced tensors").
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

using namespace coconet;
using coconet::test::makeTensor;
using coconet::test::simulateSource;
using ir::DType;

namespace {

constexpr double kBig = 18014398509481984.0; // 2^54
constexpr int64_t kBlock = 2048;

/// `blocks` blocks, block b's first term firsts[b], the others 0.
sim::SimOptions options(int64_t ranks, std::vector<double> firsts) {
  const int64_t n = static_cast<int64_t>(firsts.size()) * kBlock;
  sim::SimOptions o;
  o.sizes["P"] = ranks;
  o.sizes["N"] = n;
  o.inputTensors["x"] = makeTensor(DType::F64, {n}, [=](int64_t i) {
    return i % kBlock == 0 ? firsts[static_cast<size_t>(i / kBlock)] : 0.0;
  });
  return o;
}

double whole(const std::vector<double> &firsts) {
  auto s = simulateSource(R"(
program u(x: f64[N] replicated) {
  s = sum(x);
  return s;
})",
                          options(1, firsts));
  REQUIRE(s.error == "");
  return s.at("s", 0).get(0);
}

double sharded(int64_t ranks, const std::vector<double> &firsts) {
  auto s = simulateSource(R"(
program q(x: f64[N] sliced) {
  p = sum(x);
  t = allreduce(sum, p);
  return t;
})",
                          options(ranks, firsts));
  REQUIRE(s.error == "");
  return s.at("t", 0).get(0);
}

} // namespace

TEST_CASE("a sum of whole blocks is its tree: sharded over a power of two "
          "of ranks it is the unsliced sum bit for bit",
          "[sim][reduce-order]") {
  // The tree: (2^54 + 1) + (-2^54 + 1) = 0; blocks (or ranks) added in
  // order: ((2^54 + 1) - 2^54) + 1 = 1.
  const std::vector<double> four = {kBig, 1, -kBig, 1};
  CHECK(whole(four) == 0);
  CHECK(sharded(2, four) == 0);
  CHECK(sharded(4, four) == 0);
  // Eight blocks, on 2, 4 and 8 ranks: the tree gives
  // ((1 + 2^54) + (1 + 1)) + ((-2^54 + 1) + (1 + 1)) = 2^54 + (-2^54 + 2)
  // = 2 (2^54 + 1 and 2^54 + 2 round to 2^54; -2^54 + 2 is exact), 8 ranks
  // added in ascending order 3.
  const std::vector<double> eight = {1, kBig, 1, 1, -kBig, 1, 1, 1};
  const double w = whole(eight);
  CHECK(sharded(2, eight) == w);
  CHECK(sharded(4, eight) == w);
  CHECK(sharded(8, eight) == w);
}

TEST_CASE("3 ranks of 2 blocks each: the ranks' tree is not the blocks' tree",
          "[sim][reduce-order]") {
  // Blocks: ((p0 + p1) + p2) + ((p3 + p4) + p5); ranks: (r0 + r1) + r2 =
  // ((p0 + p1) + (p2 + p3)) + (p4 + p5).
  const std::vector<double> six = {0, 1, kBig, -kBig, 1, 0};
  // By blocks ((0 + 1) + 2^54) + ((-2^54 + 1) + 0) = 2^54 - 2^54 = 0; by
  // ranks (1 + (2^54 - 2^54)) + 1 = 2.
  CHECK(whole(six) == 0);
  CHECK(sharded(3, six) == 2);
}
