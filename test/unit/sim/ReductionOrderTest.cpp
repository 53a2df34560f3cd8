//===- ReductionOrderTest.cpp - the simulator's order of a reduction ------===//
//
// The simulator reduces in the order of coconet/reduce_order.h (pinned in
// test/unit/runtime/ReduceOrderTest.cpp). Here, what that order promises
// for sliced tensors, on values whose f64 sum depends on the order
// (2^54 + 1 is 2^54): where each rank's block holds whole 2048-term
// blocks, a rank's partial value is a subtree of the whole tensor's tree,
// so on 2 ranks the allreduce of the partial values is the unsliced sum bit
// for bit; on 4 ranks the allreduce adds the ranks in order, which is not
// the tree's top (docs/language.md, "Sliced tensors").
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

/// Four blocks: 2^54, 1, -2^54, 1 at their first terms. The tree gives
/// (2^54 + 1) + (-2^54 + 1) = 0; blocks added in order give 1.
sim::SimOptions options(int64_t ranks) {
  sim::SimOptions o;
  o.sizes["P"] = ranks;
  o.sizes["N"] = 4 * kBlock;
  o.inputTensors["x"] = makeTensor(DType::F64, {4 * kBlock}, [](int64_t i) {
    return i == 0            ? kBig
           : i == kBlock     ? 1.0
           : i == 2 * kBlock ? -kBig
           : i == 3 * kBlock ? 1.0
                             : 0.0;
  });
  return o;
}

double sharded(int64_t ranks) {
  auto s = simulateSource(R"(
program q(x: f64[N] sliced) {
  p = sum(x);
  t = allreduce(sum, p);
  return t;
})",
                          options(ranks));
  REQUIRE(s.error == "");
  return s.at("t", 0).get(0);
}

} // namespace

TEST_CASE("a sum of whole blocks is its tree: sharded on 2 ranks it is the "
          "unsliced sum bit for bit, on 4 ranks it is not",
          "[sim][reduce-order]") {
  auto whole = simulateSource(R"(
program u(x: f64[N] replicated) {
  s = sum(x);
  return s;
})",
                              options(1));
  REQUIRE(whole.error == "");
  CHECK(whole.at("s", 0).get(0) == 0);
  // Rank 0: (2^54 + 1) = 2^54, rank 1: (-2^54 + 1) = -2^54.
  CHECK(sharded(2) == 0);
  // ((2^54 + 1) + -2^54) + 1: the ranks in order.
  CHECK(sharded(4) == 1);
}
