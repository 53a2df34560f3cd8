//===- MemberOrderTest.cpp - the order in which members combine ----------===//
//
// coconet/combine.h's combineMembersInOrder, the one rule the simulator,
// the CPU runtime's collectives and the CUDA teams' kernels follow: the
// halving tree M(lo, n) = M(lo, ceil(n/2)) (+) M(lo + ceil(n/2),
// floor(n/2)). Pinned as text (each combination written "(a+b)") for the
// small counts docs/language.md draws, and every implementation of it
// (the unrolled tree up to 8 members, the levels up to 512 that a GPU
// keeps in registers, the host's stack beyond) against the same recursion
// written out here; then on values whose f64 sum depends on the order.
//
//===----------------------------------------------------------------------===//

#include "coconet/combine.h"

#include <catch2/catch.hpp>

#include <functional>
#include <string>

using namespace coconet::rt;

namespace {

/// The members' order as text, by `evaluate` (one of the implementations).
template <typename Evaluate>
std::string shape(int64_t members, Evaluate evaluate) {
  return evaluate(
      members, [](int64_t m) { return std::to_string(m); },
      [](const std::string &a, const std::string &b) {
        return "(" + a + "+" + b + ")";
      });
}

/// The rule, written out: the reference the implementations must match.
std::string written(int64_t lo, int64_t n) {
  if (n == 1)
    return std::to_string(lo);
  const int64_t left = n - n / 2;
  return "(" + written(lo, left) + "+" + written(lo + left, n - left) + ")";
}

auto inOrder = [](int64_t n, auto load, auto combine) {
  return combineMembersInOrder(n, load, combine);
};
auto hostStack = [](int64_t n, auto load, auto combine) {
  return reduce_order::combineTree(0, n, load, combine);
};
auto byLevels = [](int64_t n, auto load, auto combine) {
  return detail::memberTreeByLevels(n, load, combine);
};

} // namespace

TEST_CASE("members combine by the halving tree", "[member-order]") {
  CHECK(shape(1, inOrder) == "0");
  CHECK(shape(2, inOrder) == "(0+1)");
  // 2 and 3 members: ascending order.
  CHECK(shape(3, inOrder) == "((0+1)+2)");
  // A power of two: the perfect pairwise tree.
  CHECK(shape(4, inOrder) == "((0+1)+(2+3))");
  CHECK(shape(5, inOrder) == "(((0+1)+2)+(3+4))");
  CHECK(shape(6, inOrder) == "(((0+1)+2)+((3+4)+5))");
  CHECK(shape(8, inOrder) == "(((0+1)+(2+3))+((4+5)+(6+7)))");
}

TEST_CASE("every implementation of the members' order is the same tree",
          "[member-order]") {
  for (int64_t n = 1; n <= kMaxDeviceMembers + 40; ++n) {
    INFO(n << " members");
    const std::string want = written(0, n);
    CHECK(shape(n, inOrder) == want);
    CHECK(shape(n, hostStack) == want);
    if (n > kFewMembers && n <= kMaxDeviceMembers)
      CHECK(shape(n, byLevels) == want);
  }
}

TEST_CASE("on 4 members the order decides an f64 sum", "[member-order]") {
  // (2^54 + 1) + (-2^54 + 1) = 2^54 - 2^54 = 0; in ascending order
  // ((2^54 + 1) - 2^54) + 1 = 1.
  const double v[] = {18014398509481984.0, 1, -18014398509481984.0, 1};
  const double sum = combineMembersInOrder(
      4, [&](int64_t m) { return v[m]; },
      [](double a, double b) { return combineFloat<ReduceOp::Sum>(a, b); });
  CHECK(sum == 0);
}
