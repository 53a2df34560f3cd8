//===- LayoutRulesTest.cpp - the layout rules as pure functions -----------===//
//
// Each rule of docs/language.md's layout tables, axis by axis, including
// every refusal.
//
//===----------------------------------------------------------------------===//

#include "ir/LayoutRules.h"

#include <catch2/catch.hpp>

using namespace coconet;
using ir::AxisState;
using ir::Layout;
using ir::StageKind;

namespace {
const ir::Mesh kWorld = ir::Mesh::world();
Layout R() { return Layout::replicated(1); }
Layout L() { return Layout::local(1); }
Layout S(int d) { return Layout(1, {AxisState::Sliced, d}); }
std::string str(const std::optional<Layout> &l) {
  return l ? l->str(kWorld) : "refused";
}
} // namespace

TEST_CASE("elementwise join: replicated takes the other layout",
          "[ir][layout]") {
  std::string hint;
  CHECK(str(ir::joinLayouts(R(), R(), hint)) == "replicated");
  CHECK(str(ir::joinLayouts(R(), L(), hint)) == "local");
  CHECK(str(ir::joinLayouts(L(), R(), hint)) == "local");
  CHECK(str(ir::joinLayouts(R(), S(0), hint)) == "sliced(0)");
  CHECK(str(ir::joinLayouts(S(1), R(), hint)) == "sliced(1)");
}

TEST_CASE("elementwise join: equal layouts stay", "[ir][layout]") {
  std::string hint;
  CHECK(str(ir::joinLayouts(L(), L(), hint)) == "local");
  CHECK(str(ir::joinLayouts(S(0), S(0), hint)) == "sliced(0)");
}

TEST_CASE("elementwise join refuses local with sliced", "[ir][layout]") {
  std::string hint;
  CHECK_FALSE(ir::joinLayouts(L(), S(0), hint));
  CHECK(hint.find("reducescatter") != std::string::npos);
  CHECK_FALSE(ir::joinLayouts(S(0), L(), hint));
}

TEST_CASE("elementwise join refuses slices of different dimensions",
          "[ir][layout]") {
  std::string hint;
  CHECK_FALSE(ir::joinLayouts(S(0), S(1), hint));
  CHECK(hint.find("allgather") != std::string::npos);
}

TEST_CASE("broadcast alignment renumbers sliced dimensions", "[ir][layout]") {
  CHECK(ir::alignLayout(S(0), 1, 3).str(kWorld) == "sliced(2)");
  CHECK(ir::alignLayout(R(), 1, 3).str(kWorld) == "replicated");
}

TEST_CASE("reductions of slices are partial values", "[ir][layout]") {
  CHECK(ir::reductionLayout(S(0), 1, -1).str(kWorld) == "local");
  CHECK(ir::reductionLayout(S(1), 2, 1).str(kWorld) == "local");
  CHECK(ir::reductionLayout(S(1), 2, 0).str(kWorld) == "sliced(0)");
  CHECK(ir::reductionLayout(S(0), 2, 1).str(kWorld) == "sliced(0)");
  CHECK(ir::reductionLayout(R(), 2, 0).str(kWorld) == "replicated");
  CHECK(ir::reductionLayout(L(), 2, -1).str(kWorld) == "local");
}

TEST_CASE("matmul layout rules", "[ir][layout]") {
  std::string hint;
  // [M, K] x [K, N]
  CHECK(str(ir::matmulLayout(R(), 2, R(), 2, hint)) == "replicated");
  CHECK(str(ir::matmulLayout(S(1), 2, S(0), 2, hint)) == "local");
  CHECK(str(ir::matmulLayout(S(0), 2, R(), 2, hint)) == "sliced(0)");
  CHECK(str(ir::matmulLayout(R(), 2, S(1), 2, hint)) == "sliced(1)");
  CHECK(str(ir::matmulLayout(L(), 2, R(), 2, hint)) == "local");
  CHECK(str(ir::matmulLayout(R(), 2, L(), 2, hint)) == "local");
  // Batched [B, M, K] x [K, N]: slicing the batch or the rows of a.
  CHECK(str(ir::matmulLayout(S(0), 3, R(), 2, hint)) == "sliced(0)");
  CHECK(str(ir::matmulLayout(S(2), 3, S(0), 2, hint)) == "local");
  CHECK(str(ir::matmulLayout(R(), 3, S(1), 2, hint)) == "sliced(2)");
  // The same batch slice on both sides of a batched matmul.
  CHECK(str(ir::matmulLayout(S(0), 3, S(0), 3, hint)) == "sliced(0)");
}

TEST_CASE("matmul refuses layouts without a rule", "[ir][layout]") {
  std::string hint;
  CHECK_FALSE(ir::matmulLayout(R(), 2, S(0), 2, hint));
  CHECK_FALSE(ir::matmulLayout(S(1), 2, R(), 2, hint));
  CHECK_FALSE(ir::matmulLayout(S(0), 2, S(1), 2, hint));
  CHECK_FALSE(ir::matmulLayout(L(), 2, S(1), 2, hint));
  CHECK(hint.find("contraction") != std::string::npos);
}

TEST_CASE("transpose follows the swap", "[ir][layout]") {
  CHECK(ir::transposeLayout(S(1), 0, 1).str(kWorld) == "sliced(0)");
  CHECK(ir::transposeLayout(S(0), 0, 1).str(kWorld) == "sliced(1)");
  CHECK(ir::transposeLayout(S(0), 1, 2).str(kWorld) == "sliced(0)");
  // Any two dimensions: the slice moves with its dimension.
  CHECK(ir::transposeLayout(S(0), 0, 2).str(kWorld) == "sliced(2)");
  CHECK(ir::transposeLayout(S(1), 0, 2).str(kWorld) == "sliced(1)");
}

TEST_CASE("collective layout rules", "[ir][layout]") {
  std::string need;
  unsigned axis = 0;
  auto comm = [&](StageKind k, Layout in, int dim = 0) {
    return str(ir::communicationLayout(k, in, 0, dim, need, axis));
  };
  CHECK(comm(StageKind::AllReduce, L()) == "replicated");
  CHECK(comm(StageKind::AllReduce, R()) == "replicated");
  CHECK(comm(StageKind::ReduceScatter, L()) == "sliced(0)");
  CHECK(comm(StageKind::ReduceScatter, L(), 1) == "sliced(1)");
  CHECK(comm(StageKind::AllGather, S(0)) == "replicated");
  CHECK(comm(StageKind::Broadcast, L()) == "replicated");
  CHECK(comm(StageKind::Reduce, L()) == "local");
  CHECK(comm(StageKind::SendRecv, R()) == "local");
}

TEST_CASE("collectives refuse the wrong input layout", "[ir][layout]") {
  std::string need;
  unsigned axis = 0;
  auto refused = [&](StageKind k, Layout in) {
    return !ir::communicationLayout(k, in, 0, 0, need, axis);
  };
  CHECK(refused(StageKind::AllGather, L()));
  CHECK(need == "a sliced input");
  CHECK(refused(StageKind::AllGather, R()));
  CHECK(refused(StageKind::AllReduce, S(0)));
  CHECK(need == "a local or replicated input");
  CHECK(refused(StageKind::ReduceScatter, S(0)));
  CHECK(refused(StageKind::Broadcast, S(0)));
  CHECK(refused(StageKind::Reduce, S(0)));
  CHECK(refused(StageKind::SendRecv, S(0)));
}

TEST_CASE("collectives over one axis leave the other axes alone",
          "[ir][layout]") {
  ir::Mesh mesh;
  mesh.isImplicit = false;
  mesh.axes = {{"pp", "PP"}, {"tp", "T"}};
  Layout in(2);
  in[0] = {AxisState::Local, 0};
  in[1] = {AxisState::Local, 0};
  std::string need;
  unsigned axis = 0;
  auto out =
      ir::communicationLayout(StageKind::AllReduce, in, 1, 0, need, axis);
  REQUIRE(out);
  CHECK(out->str(mesh) == "local(pp) replicated(tp)");
  auto all =
      ir::communicationLayout(StageKind::AllReduce, in, -1, 0, need, axis);
  REQUIRE(all);
  CHECK(all->str(mesh) == "replicated");
}

namespace {
/// A two-axis layout [dp, tp] from one AxisLayout per axis.
Layout mesh2(ir::AxisLayout dp, ir::AxisLayout tp) {
  Layout l(2);
  l[0] = dp;
  l[1] = tp;
  return l;
}
const ir::AxisLayout kR{AxisState::Replicated, 0};
const ir::AxisLayout kS0{AxisState::Sliced, 0};
} // namespace

TEST_CASE("a dimension sliced over two axes joins only its outer-axis "
          "slices",
          "[ir][layout]") {
  std::string hint;
  Layout both = mesh2(kS0, kS0), outer = mesh2(kS0, kR), inner = mesh2(kR, kS0);
  CHECK(ir::joinLayouts(outer, both, hint) == both);
  CHECK(ir::joinLayouts(both, outer, hint) == both);
  CHECK(ir::joinLayouts(both, both, hint) == both);
  // The inner axis alone does not hold the result's block.
  CHECK_FALSE(ir::joinLayouts(inner, both, hint));
  CHECK(hint.find("outer ones") != std::string::npos);
  hint.clear();
  CHECK_FALSE(ir::joinLayouts(both, inner, hint));
  hint.clear();
  CHECK_FALSE(ir::joinLayouts(outer, inner, hint));
  // Different dimensions on different axes do not interact.
  CHECK(ir::joinLayouts(outer, mesh2(kR, {AxisState::Sliced, 1}), hint) ==
        mesh2(kS0, {AxisState::Sliced, 1}));
}

TEST_CASE("an allgather of a dimension sliced over two axes gathers the "
          "inner axis first",
          "[ir][layout]") {
  std::string need;
  unsigned bad = 0;
  Layout both = mesh2(kS0, kS0);
  auto inner =
      ir::communicationLayout(StageKind::AllGather, both, 1, 0, need, bad);
  CHECK(inner == mesh2(kS0, kR));
  CHECK_FALSE(
      ir::communicationLayout(StageKind::AllGather, both, 0, 0, need, bad));
  CHECK(bad == 1);
  CHECK(need == "dimension 0 gathered over its inner axis first");
  // Over every axis at once, the blocks come in mesh order.
  CHECK(ir::communicationLayout(StageKind::AllGather, both, -1, 0, need, bad) ==
        mesh2(kR, kR));
}
