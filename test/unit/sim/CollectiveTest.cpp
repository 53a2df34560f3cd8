//===- CollectiveTest.cpp - every collective against hand-computed results ===//
//
// Each collective runs on 1, 2, 3 and 4 ranks. Rank r's block of a local
// input x holds x[r][i] = 10 r + i, so the expected values below are
// closed-form sums written out by hand, not a second implementation.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

using namespace coconet;
using coconet::test::makeTensor;
using coconet::test::simulateSource;
using coconet::test::values;
using ir::DType;

namespace {

/// Options for P ranks with x: f32[n] local holding 10 r + i.
sim::SimOptions localInput(int64_t ranks, int64_t n, const char *name = "x") {
  sim::SimOptions o;
  o.sizes["P"] = ranks;
  o.sizes["N"] = n;
  o.inputTensors[name] = makeTensor(DType::F32, {ranks, n}, [n](int64_t k) {
    return 10.0 * static_cast<double>(k / n) + static_cast<double>(k % n);
  });
  return o;
}

double triangle(int64_t p) { return static_cast<double>(p * (p - 1) / 2); }

} // namespace

TEST_CASE("allreduce sums the ranks' blocks", "[sim][collective]") {
  for (int64_t p : {1, 2, 3, 4}) {
    DYNAMIC_SECTION(p << " ranks") {
      auto s = simulateSource(R"(
program t(x: f32[N] local) { y = allreduce(sum, x); return y; })",
                              localInput(p, 4));
      REQUIRE(s.error == "");
      for (int64_t r = 0; r < p; ++r)
        for (int64_t i = 0; i < 4; ++i)
          CHECK(s.at("y", r).get(i) ==
                10 * triangle(p) + static_cast<double>(p * i));
    }
  }
}

TEST_CASE("allreduce with prod, max, min and avg", "[sim][collective]") {
  for (int64_t p : {1, 2, 3, 4}) {
    DYNAMIC_SECTION(p << " ranks") {
      auto s = simulateSource(R"(
program t(x: f32[N] local) {
  a = allreduce(prod, x); b = allreduce(max, x);
  c = allreduce(min, x);  d = allreduce(avg, x);
  return a, b, c, d;
})",
                              localInput(p, 3));
      REQUIRE(s.error == "");
      for (int64_t i = 0; i < 3; ++i) {
        double prod = 1;
        for (int64_t r = 0; r < p; ++r)
          prod *= 10.0 * r + i;
        CHECK(s.at("a", p - 1).get(i) == prod);
        CHECK(s.at("b", 0).get(i) == 10.0 * (p - 1) + i);
        CHECK(s.at("c", p - 1).get(i) == static_cast<double>(i));
        CHECK(s.at("d", 0).get(i) ==
              static_cast<float>((10 * triangle(p) + p * i) / p));
      }
    }
  }
}

TEST_CASE("reducescatter leaves block r of the sum on rank r",
          "[sim][collective]") {
  for (int64_t p : {1, 2, 3, 4}) {
    DYNAMIC_SECTION(p << " ranks") {
      const int64_t n = 2 * p;
      auto s = simulateSource(R"(
program t(x: f32[N] local) { y = reducescatter(sum, x); return y; })",
                              localInput(p, n));
      REQUIRE(s.error == "");
      for (int64_t r = 0; r < p; ++r) {
        const sim::Tensor &y = s.at("y", r);
        REQUIRE(y.size() == 2);
        for (int64_t j = 0; j < 2; ++j) {
          int64_t i = 2 * r + j; // global index of the element
          CHECK(y.get(j) == 10 * triangle(p) + static_cast<double>(p * i));
        }
      }
      // Assembled, the slices form the whole sum.
      auto all = values(s.assembled("y"));
      REQUIRE(all.size() == static_cast<size_t>(n));
      CHECK(all.back() == 10 * triangle(p) + static_cast<double>(p * (n - 1)));
    }
  }
}

TEST_CASE("reducescatter along a chosen dimension", "[sim][collective]") {
  sim::SimOptions o;
  o.sizes["P"] = 2;
  o.inputTensors["x"] = makeTensor(DType::F32, {2, 2, 4}, [](int64_t k) {
    return static_cast<double>(k); // rank r, row i, column j: 8r + 4i + j
  });
  auto s = simulateSource(R"(
program t(x: f32[2, 4] local) { y = reducescatter(sum, x, dim=1); return y; })",
                          o);
  REQUIRE(s.error == "");
  // Sum over ranks: 8 + 2 (4i + j); rank 1 keeps columns 2 and 3.
  CHECK(values(s.at("y", 1)) == std::vector<double>{12, 14, 20, 22});
  CHECK(values(s.at("y", 0)) == std::vector<double>{8, 10, 16, 18});
}

TEST_CASE("allgather concatenates the slices in rank order",
          "[sim][collective]") {
  for (int64_t p : {1, 2, 3, 4}) {
    DYNAMIC_SECTION(p << " ranks") {
      sim::SimOptions o;
      o.sizes["P"] = p;
      o.sizes["N"] = 3 * p;
      o.inputTensors["x"] = makeTensor(DType::F32, {3 * p}, [](int64_t k) {
        return 100.0 + static_cast<double>(k);
      });
      auto s = simulateSource(R"(
program t(x: f32[N] sliced) { y = allgather(x); return y; })",
                              o);
      REQUIRE(s.error == "");
      for (int64_t r = 0; r < p; ++r) {
        // Rank r's own slice is elements 3r .. 3r + 2.
        CHECK(s.at("x", r).get(0) == 100.0 + 3 * r);
        const sim::Tensor &y = s.at("y", r);
        REQUIRE(y.size() == 3 * p);
        for (int64_t i = 0; i < 3 * p; ++i)
          CHECK(y.get(i) == 100.0 + i);
      }
    }
  }
}

TEST_CASE("allgather of a dimension other than the first",
          "[sim][collective]") {
  sim::SimOptions o;
  o.sizes["P"] = 2;
  o.inputTensors["x"] = makeTensor(
      DType::F32, {2, 4}, [](int64_t k) { return static_cast<double>(k); });
  auto s = simulateSource(R"(
program t(x: f32[2, 4] sliced(1)) { y = allgather(x); return y; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("x", 1)) == std::vector<double>{2, 3, 6, 7});
  CHECK(values(s.at("y", 1)) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("alltoall re-slices the same global value", "[sim][collective]") {
  // x[i][j] = 100 i + j, [2P, 3P]; sliced along one dimension in, the other
  // out: rank r's block of y holds exactly x's elements of that block.
  for (int64_t p : {1, 2, 3, 4}) {
    for (int from : {0, 1}) {
      DYNAMIC_SECTION(p << " ranks, sliced(" << from << ") to sliced("
                        << 1 - from << ")") {
        const int64_t rows = 2 * p, cols = 3 * p;
        sim::SimOptions o;
        o.sizes["P"] = p;
        o.sizes["N"] = rows;
        o.sizes["M"] = cols;
        o.inputTensors["x"] =
            makeTensor(DType::F32, {rows, cols}, [&](int64_t k) {
              return 100.0 * static_cast<double>(k / cols) +
                     static_cast<double>(k % cols);
            });
        auto s = simulateSource(
            "program t(x: f32[N, M] sliced(" + std::to_string(from) +
                ")) { y = alltoall(x, dim=" + std::to_string(1 - from) +
                "); return y; }",
            o);
        REQUIRE(s.error == "");
        for (int64_t r = 0; r < p; ++r) {
          const sim::Tensor &y = s.at("y", r);
          // Out sliced(0): rows 2r, 2r + 1, every column; sliced(1):
          // every row, columns 3r .. 3r + 2.
          const int64_t bRows = from == 1 ? 2 : rows,
                        bCols = from == 1 ? cols : 3;
          const int64_t r0 = from == 1 ? 2 * r : 0, c0 = from == 1 ? 0 : 3 * r;
          REQUIRE(y.size() == bRows * bCols);
          for (int64_t i = 0; i < bRows; ++i)
            for (int64_t j = 0; j < bCols; ++j)
              CHECK(y.get(i * bCols + j) ==
                    100.0 * static_cast<double>(r0 + i) +
                        static_cast<double>(c0 + j));
        }
      }
    }
  }
}

TEST_CASE("alltoall over one axis of two", "[sim][collective]") {
  // mesh [ep: 2, tp: 2]; x [4, 4] sliced(0) over ep, replicated over tp.
  // The alltoall over ep exchanges within each tp coordinate's group.
  sim::SimOptions o;
  o.sizes["E"] = 2;
  o.sizes["T"] = 2;
  o.inputTensors["x"] = makeTensor(DType::F32, {4, 4}, [](int64_t k) {
    return static_cast<double>(k); // 4i + j
  });
  auto s = simulateSource(R"(
program t(mesh [ep: E, tp: T], x: f32[4, 4] sliced(0, ep) replicated(tp)) {
  y = alltoall(x, ep, dim=1); return y; })",
                          o);
  REQUIRE(s.error == "");
  // Rank (e, t) = 2e + t holds columns 2e, 2e + 1 of every row.
  CHECK(values(s.at("y", 0)) == std::vector<double>{0, 1, 4, 5, 8, 9, 12, 13});
  CHECK(values(s.at("y", 1)) == std::vector<double>{0, 1, 4, 5, 8, 9, 12, 13});
  CHECK(values(s.at("y", 2)) ==
        std::vector<double>{2, 3, 6, 7, 10, 11, 14, 15});
  CHECK(values(s.at("y", 3)) ==
        std::vector<double>{2, 3, 6, 7, 10, 11, 14, 15});
}

TEST_CASE("broadcast copies the root's block", "[sim][collective]") {
  for (int64_t p : {1, 2, 3, 4}) {
    for (int64_t root = 0; root < p; ++root) {
      DYNAMIC_SECTION(p << " ranks, root " << root) {
        std::string src = "program t(x: f32[N] local) { y = broadcast(x, " +
                          std::to_string(root) + "); return y; }";
        auto s = simulateSource(src, localInput(p, 2));
        REQUIRE(s.error == "");
        for (int64_t r = 0; r < p; ++r)
          CHECK(values(s.at("y", r)) ==
                std::vector<double>{10.0 * root, 10.0 * root + 1});
      }
    }
  }
}

TEST_CASE("reduce leaves the sum on the root and zeros elsewhere",
          "[sim][collective]") {
  for (int64_t p : {1, 2, 3, 4}) {
    int64_t root = p - 1;
    DYNAMIC_SECTION(p << " ranks") {
      std::string src = "program t(x: f32[N] local) { y = reduce(sum, x, " +
                        std::to_string(root) + "); return y; }";
      auto s = simulateSource(src, localInput(p, 2));
      REQUIRE(s.error == "");
      for (int64_t r = 0; r < p; ++r) {
        std::vector<double> expected{0, 0};
        if (r == root)
          expected = {10 * triangle(p), 10 * triangle(p) + p};
        CHECK(values(s.at("y", r)) == expected);
      }
    }
  }
}

TEST_CASE("a root beyond the axis is a run-time error", "[sim][collective]") {
  auto s = simulateSource(
      "program t(x: f32[N] local) { y = broadcast(x, 5); return y; }",
      localInput(4, 2));
  CHECK(s.error == "broadcast 'y': root 5 is out of range; axis 'world' has "
                   "4 ranks");
}

TEST_CASE("sendrecv shifts blocks along the axis without wrapping",
          "[sim][collective]") {
  for (int64_t p : {1, 2, 3, 4}) {
    for (int64_t offset : {1, -1, 2}) {
      DYNAMIC_SECTION(p << " ranks, offset " << offset) {
        std::string src = "program t(x: f32[N] local) { y = sendrecv(x, " +
                          std::to_string(offset) + "); return y; }";
        auto s = simulateSource(src, localInput(p, 2));
        REQUIRE(s.error == "");
        for (int64_t r = 0; r < p; ++r) {
          int64_t from = r - offset;
          std::vector<double> expected{0, 0};
          if (from >= 0 && from < p)
            expected = {10.0 * from, 10.0 * from + 1};
          CHECK(values(s.at("y", r)) == expected);
        }
      }
    }
  }
}

TEST_CASE("collectives over one axis of a two-axis mesh", "[sim][collective]") {
  // 2 x 3 mesh; rank = 3 * a + b. x[rank][i] = 10 rank + i.
  sim::SimOptions o;
  o.sizes["A"] = 2;
  o.sizes["B"] = 3;
  o.inputTensors["x"] = makeTensor(DType::F32, {6, 2}, [](int64_t k) {
    return 10.0 * static_cast<double>(k / 2) + static_cast<double>(k % 2);
  });
  auto s = simulateSource(R"(
program t(mesh [a: A, b: B], x: f32[2] local) {
  ya = allreduce(sum, x, a);
  yb = allreduce(sum, x, b);
  yall = allreduce(sum, x);
  sa = sendrecv(x, a, 1);
  return ya, yb, yall, sa;
})",
                          o);
  REQUIRE(s.error == "");
  // Rank 4 is (a=1, b=1). Its a-group is {1, 4}, its b-group {3, 4, 5}.
  CHECK(values(s.at("ya", 4)) == std::vector<double>{50, 52});
  CHECK(values(s.at("yb", 4)) == std::vector<double>{120, 123});
  CHECK(values(s.at("yall", 4)) == std::vector<double>{150, 156});
  CHECK(values(s.at("sa", 4)) == std::vector<double>{10, 11});
  CHECK(values(s.at("sa", 1)) == std::vector<double>{0, 0});
}

TEST_CASE("a slice that does not divide evenly is an error", "[sim][uneven]") {
  sim::SimOptions o;
  o.sizes["P"] = 4;
  o.sizes["N"] = 10;
  auto s = simulateSource(
      "program t(x: f32[N] sliced) { y = allgather(x); return y; }", o);
  CHECK(s.error == "dimension 0 of 'x' has size 10, which is not divisible "
                   "by the 4 ranks of axis 'world' that slice it; choose "
                   "sizes that divide evenly");
  // And one produced by a collective, with even inputs.
  sim::SimOptions o2;
  o2.sizes["P"] = 3;
  o2.sizes["N"] = 4;
  auto s2 = simulateSource(
      "program t(x: f32[N] local) { y = reducescatter(sum, x); return y; }",
      o2);
  CHECK(s2.error == "dimension 0 of 'y' has size 4, which is not divisible "
                    "by the 3 ranks of axis 'world' that slice it; choose "
                    "sizes that divide evenly");
}

TEST_CASE("integer collectives wrap and stay exact", "[sim][collective]") {
  sim::SimOptions o;
  o.sizes["P"] = 2;
  sim::Tensor x(DType::I64, {2, 1});
  sim::Scalar big, two;
  big.i = (uint64_t(1) << 53) + 1; // not representable as a double
  two.i = 2;
  x.setScalar(0, big);
  x.setScalar(1, two);
  o.inputTensors["x"] = x;
  auto s = simulateSource(
      "program t(x: i64[1] local) { y = allreduce(sum, x); return y; }", o);
  REQUIRE(s.error == "");
  CHECK(s.at("y", 0).getInt(0) == 9007199254740995);
}
