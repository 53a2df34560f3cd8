//===- CpuTest.cpp - combineBlocks and matmul of the CPU target -----------===//
//
// combineBlocks against the simulator's allreduce for every element type
// and operator on random blocks (with -0, infinities and NaN, and values
// whose sums and products depend on the order of the members, on 3, 4 and
// 5 members: a combination in another order fails); matmul
// against the simulator for float types, against a naive f64 reference and
// hand-computed values otherwise. Both must agree bit for bit. The mesh's
// collectives run under MPI in test/runtime/MpiCollectivesTest.cpp.
//
//===----------------------------------------------------------------------===//

#if defined(COCONET_HAVE_RT_CPU)

#include "RuntimeTestUtil.h"

#include "../sim/SimTestUtil.h"

#include "coconet/cpu/algorithm.h"
#include "coconet/cpu/runtime.h"

#include "../../runtime/RelayTable.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace coconet;
using coconet::test::simulateSource;
using coconet::test::storageOf;
using coconet::test::toRuntime;

namespace {

/// A [ranks, n] input with random values of `dtype`, some of them special.
/// Floats are drawn so that the order of a sum changes its bits: values
/// with all 53 bits (f64; rounded to the others), and among them a third
/// +-2^54 (the sum of 2^54, -2^54 and 0.3 is 0.3 or 0 depending on the
/// order, in every type but f16).
sim::Tensor randomInput(ir::DType dtype, int64_t ranks, int64_t n,
                        uint64_t seed) {
  sim::Tensor t(dtype, {ranks, n});
  for (int64_t i = 0; i < t.size(); ++i) {
    sim::Scalar s;
    // 3u with all 53 bits: u times 1 + 52 random bits, rounded.
    const uint64_t bits =
        rt::uniformInputBits(seed, 3, static_cast<uint64_t>(i));
    s.f = 3 * rt::uniformInput(seed, 1, static_cast<uint64_t>(i)) *
          (1 + static_cast<double>(bits >> 12) * 0x1p-52);
    if (bits % 3 == 0 && dtype != ir::DType::F16) // no f16 is that large
      s.f = bits & 8 ? -0x1p54 : 0x1p54;
    if (i % 13 == 4)
      s.f = -0.0;
    else if (i % 31 == 7)
      s.f = i % 2 ? INFINITY : -INFINITY;
    else if (i % 37 == 9)
      s.f = NAN;
    s.i = rt::uniformInputBits(seed, 2, static_cast<uint64_t>(i));
    if (i % 3 == 0)
      s.i = static_cast<uint64_t>(static_cast<int64_t>(s.i % 9) - 4);
    t.setScalar(i, s);
  }
  return t;
}

std::string programFor(const char *dtype, const char *op) {
  return std::string("program t(x: ") + dtype + "[N] local) { y = allreduce(" +
         op + ", x); return y; }";
}

} // namespace

TEST_CASE("combineBlocks and combineMembers combine as the simulator's "
          "allreduce",
          "[runtime][cpu]") {
  const ir::DType dtypes[] = {ir::DType::F16, ir::DType::BF16, ir::DType::F32,
                              ir::DType::F64, ir::DType::I32,  ir::DType::I64,
                              ir::DType::U64};
  const ir::ReduceOp ops[] = {ir::ReduceOp::Sum, ir::ReduceOp::Prod,
                              ir::ReduceOp::Max, ir::ReduceOp::Min,
                              ir::ReduceOp::Avg};
  uint64_t seed = 0;
  for (ir::DType dtype : dtypes)
    for (ir::ReduceOp op : ops) {
      if (op == ir::ReduceOp::Avg && !ir::isFloat(dtype))
        continue;
      for (int64_t ranks : {1, 2, 3, 4, 5})
        for (int64_t n :
             {int64_t(96), int64_t(3 * 1024 + 37), int64_t(40001)}) {
          const std::string name = ir::dtypeName(dtype).str();
          DYNAMIC_SECTION(name << " " << ir::reduceOpName(op).str() << " on "
                               << ranks << " ranks, " << n << " elements") {
            sim::SimOptions options;
            options.sizes["P"] = ranks;
            options.sizes["N"] = n;
            options.inputTensors["x"] = randomInput(dtype, ranks, n, ++seed);
            auto s = simulateSource(
                programFor(name.c_str(), ir::reduceOpName(op).str().c_str()),
                options);
            REQUIRE(s.error == "");
            std::vector<uint8_t> blocks;
            for (int64_t r = 0; r < ranks; ++r) {
              std::vector<uint8_t> b = storageOf(s.at("x", r));
              blocks.insert(blocks.end(), b.begin(), b.end());
            }
            const std::vector<uint8_t> want = storageOf(s.at("y", 0));
            std::vector<uint8_t> got(want.size(), 0xee);
            rt::cpu::combineBlocks(blocks.data(), ranks, got.data(), n,
                                   toRuntime(dtype),
                                   static_cast<rt::ReduceOp>(op));
            CHECK(got == want);
            // The members' blocks apart, in memory in the reverse order:
            // combineMembers follows the pointers, in member order.
            std::vector<std::vector<uint8_t>> apart;
            for (int64_t r = ranks; r-- > 0;)
              apart.push_back(storageOf(s.at("x", r)));
            std::vector<const void *> members;
            for (int64_t r = 0; r < ranks; ++r)
              members.push_back(
                  apart[static_cast<size_t>(ranks - 1 - r)].data());
            std::vector<uint8_t> fromMembers(want.size(), 0xee);
            rt::cpu::combineMembers(members.data(), ranks, fromMembers.data(),
                                    n, toRuntime(dtype),
                                    static_cast<rt::ReduceOp>(op));
            CHECK(fromMembers == want);
            // combineTile: pieces at any offset (not a multiple of a tile),
            // each into a buffer of its own, as a fused kernel's tiles.
            const size_t size = rt::dtypeSize(toRuntime(dtype));
            std::vector<uint8_t> pieces(want.size(), 0xee);
            for (int64_t at = 0; at < n; at += 700) {
              const int64_t len = std::min<int64_t>(700, n - at);
              std::vector<uint8_t> piece(static_cast<size_t>(len) * size, 0xee);
              rt::cpu::combineTile(members.data(), ranks, at, piece.data(), len,
                                   toRuntime(dtype),
                                   static_cast<rt::ReduceOp>(op));
              std::memcpy(pieces.data() + static_cast<size_t>(at) * size,
                          piece.data(), piece.size());
            }
            CHECK(pieces == want);
            // In place, over the first block.
            rt::cpu::combineBlocks(blocks.data(), ranks, blocks.data(), n,
                                   toRuntime(dtype),
                                   static_cast<rt::ReduceOp>(op));
            blocks.resize(want.size());
            CHECK(blocks == want);
          }
        }
    }
}

TEST_CASE("combineBlocks on hand-computed values", "[runtime][cpu]") {
  using rt::DType;
  using rt::ReduceOp;
  SECTION("f16 sums in f64 and rounds once") {
    // 1 + 2^-11 + 2^-11: in f16 steps each addition ties back to 1.
    const uint16_t blocks[] = {0x3c00, 0x1000, 0x1000};
    uint16_t out = 0;
    rt::cpu::combineBlocks(blocks, 3, &out, 1, DType::F16, ReduceOp::Sum);
    CHECK(out == 0x3c01);
  }
  SECTION("f16 sums round once, not twice through a float") {
    // 1 + 2^-11 + 2^-24, exact in f64, is just above the tie between 1 and
    // 1 + 2^-10; the float nearest to it is the tie itself, which would
    // round to even (1.0). Rounded once: 1 + 2^-10.
    const uint16_t blocks[] = {0x3c00, 0x1000, 0x0001};
    uint16_t out = 0;
    rt::cpu::combineBlocks(blocks, 3, &out, 1, DType::F16, ReduceOp::Sum);
    CHECK(out == 0x3c01);
  }
  SECTION("avg divides the f64 sum by the members") {
    const float blocks[] = {1.0f, 2.0f, 4.0f};
    float out = 0;
    rt::cpu::combineBlocks(blocks, 3, &out, 1, DType::F32, ReduceOp::Avg);
    CHECK(out == static_cast<float>(7.0 / 3.0));
  }
  SECTION("max and min on zeros do not depend on the order") {
    const double blocks[] = {-0.0, 0.0, 0.0, -0.0};
    double out[2];
    rt::cpu::combineBlocks(blocks, 2, out, 2, DType::F64, ReduceOp::Max);
    CHECK_FALSE(std::signbit(out[0]));
    CHECK_FALSE(std::signbit(out[1]));
    rt::cpu::combineBlocks(blocks, 2, out, 2, DType::F64, ReduceOp::Min);
    CHECK(std::signbit(out[0]));
    CHECK(std::signbit(out[1]));
  }
  SECTION("integers wrap at their width") {
    const int32_t blocks[] = {INT32_MAX, 1, 65536, 65536};
    int32_t out[2];
    rt::cpu::combineBlocks(blocks, 2, out, 2, DType::I32, ReduceOp::Sum);
    CHECK(out[0] == INT32_MIN + 65535); // INT32_MAX + 65536, wrapped
    CHECK(out[1] == 65537);
    rt::cpu::combineBlocks(blocks, 2, out, 2, DType::I32, ReduceOp::Prod);
    CHECK(out[0] == static_cast<int32_t>(65536u * 2147483647u));
    CHECK(out[1] == 65536);
    const uint64_t u[] = {UINT64_MAX, 3};
    uint64_t uout = 0;
    rt::cpu::combineBlocks(u, 2, &uout, 1, DType::U64, ReduceOp::Max);
    CHECK(uout == UINT64_MAX);
    rt::cpu::combineBlocks(u, 2, &uout, 1, DType::U64, ReduceOp::Sum);
    CHECK(uout == 2);
    const int64_t s[] = {-5, 3};
    int64_t sout = 0;
    rt::cpu::combineBlocks(s, 2, &sout, 1, DType::I64, ReduceOp::Max);
    CHECK(sout == 3);
  }
  SECTION("bool: sum and max are or, prod and min are and") {
    const uint8_t blocks[] = {0, 0, 1, 1, 0, 1, 0, 7};
    uint8_t out[4];
    rt::cpu::combineBlocks(blocks, 2, out, 4, DType::Bool, ReduceOp::Sum);
    CHECK(std::vector<uint8_t>(out, out + 4) ==
          std::vector<uint8_t>{0, 1, 1, 1});
    rt::cpu::combineBlocks(blocks, 2, out, 4, DType::Bool, ReduceOp::Max);
    CHECK(std::vector<uint8_t>(out, out + 4) ==
          std::vector<uint8_t>{0, 1, 1, 1});
    rt::cpu::combineBlocks(blocks, 2, out, 4, DType::Bool, ReduceOp::Prod);
    CHECK(std::vector<uint8_t>(out, out + 4) ==
          std::vector<uint8_t>{0, 0, 0, 1});
    rt::cpu::combineBlocks(blocks, 2, out, 4, DType::Bool, ReduceOp::Min);
    CHECK(std::vector<uint8_t>(out, out + 4) ==
          std::vector<uint8_t>{0, 0, 0, 1});
  }
}

TEST_CASE("matmul computes as the simulator's matmul", "[runtime][cpu]") {
  // Shapes that hit every edge of the blocked kernel (matmul.cpp): sizes of
  // 1, sizes that are not multiples of the register block (8 x 24 doubles
  // with AVX-512, 4 x 12 otherwise), K over two panels of 256, N over a
  // block of 480 columns, M over a task's 768 rows; and exact multiples.
  struct Shape {
    int64_t batch, m, k, n;
  };
  const Shape shapes[] = {{3, 5, 7, 4},     {1, 1, 1, 1},    {1, 1, 300, 1},
                          {2, 9, 1, 25},    {1, 8, 256, 24}, {2, 13, 257, 49},
                          {1, 17, 600, 31}, {1, 3, 5, 500},  {1, 800, 3, 2}};
  uint64_t seed = 100;
  for (const Shape &shape : shapes)
    for (const char *name : {"f16", "bf16", "f32", "f64"}) {
      const int64_t batch = shape.batch, m = shape.m, k = shape.k, n = shape.n;
      DYNAMIC_SECTION(name << " " << batch << "x" << m << "x" << k << "x"
                           << n) {
        const ir::DType dtype = *ir::parseDType(name);
        sim::SimOptions options;
        options.sizes = {{"P", 1}, {"B", batch}, {"M", m}, {"K", k}, {"N", n}};
        // A single rank: the assembled forms are the global tensors.
        // f64 values use all 53 bits, so that their products round and a
        // sum's value depends on its order (a fused multiply-add, or k
        // panels taken out of order, would show); narrower values are
        // rounded to their type by set().
        const bool wide = dtype == ir::DType::F64;
        auto fill = [&](llvm::ArrayRef<int64_t> shape) {
          sim::Tensor t(dtype, shape);
          for (int64_t i = 0; i < t.size(); ++i)
            t.set(i, wide ? std::ldexp(
                                static_cast<double>(
                                    rt::uniformInputBits(++seed, 0, 0) >> 11),
                                -51) -
                                2
                          : 2 * rt::uniformInput(++seed, 0, 0));
          return t;
        };
        options.inputTensors["a"] = fill({batch, m, k});
        options.inputTensors["b"] = fill({k, n});
        options.inputTensors["c"] = fill({batch, k, n});
        auto s =
            simulateSource(std::string("program t(a: ") + name +
                               "[B, M, K], b: " + name + "[K, N], c: " + name +
                               "[B, K, N]) { x = matmul(a, b); y = matmul(a, "
                               "c); return x, y; }",
                           options);
        REQUIRE(s.error == "");
        const rt::DType rd = toRuntime(dtype);
        const std::vector<uint8_t> a = storageOf(s.at("a", 0)),
                                   b = storageOf(s.at("b", 0)),
                                   c = storageOf(s.at("c", 0));
        const std::vector<uint8_t> wantX = storageOf(s.at("x", 0)),
                                   wantY = storageOf(s.at("y", 0));
        std::vector<uint8_t> x(wantX.size()), y(wantY.size());
        rt::cpu::matmul(rd, batch, m, n, k, a.data(), m * k, b.data(), 0,
                        x.data(), m * n);
        rt::cpu::matmul(rd, batch, m, n, k, a.data(), m * k, c.data(), k * n,
                        y.data(), m * n);
        CHECK(x == wantX);
        CHECK(y == wantY);
      }
    }
}

TEST_CASE("matmul of integers wraps, sums of nothing are +0",
          "[runtime][cpu]") {
  using rt::DType;
  SECTION("i32 against a naive wrapping reference") {
    const int64_t shapes[][3] = {
        {4, 3, 5}, {1, 1, 1}, {13, 49, 300}, {3, 500, 2}};
    for (const auto &shape : shapes) {
      const int64_t m = shape[0], n = shape[1], k = shape[2];
      CAPTURE(m, n, k);
      std::vector<int32_t> a(m * k), b(k * n), c(m * n);
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = static_cast<int32_t>(rt::uniformInputBits(1, 0, i));
      for (size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<int32_t>(rt::uniformInputBits(2, 0, i));
      rt::cpu::matmul(DType::I32, 1, m, n, k, a.data(), 0, b.data(), 0,
                      c.data(), 0);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          uint32_t sum = 0;
          for (int64_t kk = 0; kk < k; ++kk)
            sum += static_cast<uint32_t>(a[i * k + kk]) *
                   static_cast<uint32_t>(b[kk * n + j]);
          CHECK(c[i * n + j] == static_cast<int32_t>(sum));
        }
    }
  }
  SECTION("u64 and i64 by hand") {
    const uint64_t a[] = {UINT64_MAX, 2}, b[] = {3, UINT64_MAX};
    uint64_t c = 0;
    rt::cpu::matmul(DType::U64, 1, 1, 1, 2, a, 0, b, 0, &c, 0);
    CHECK(c == UINT64_MAX - 4); // -1 * 3 + 2 * -1, wrapped
    const int64_t ai[] = {-4, 5}, bi[] = {6, -7};
    int64_t ci = 0;
    rt::cpu::matmul(DType::I64, 1, 1, 1, 2, ai, 0, bi, 0, &ci, 0);
    CHECK(ci == -59);
  }
  SECTION("f16 rounds once, f64 sums in k order, k == 0 gives +0") {
    const uint16_t a[] = {0x3c00, 0x1000, 0x1000},
                   b[] = {0x3c00, 0x3c00, 0x3c00};
    uint16_t c = 0;
    rt::cpu::matmul(DType::F16, 1, 1, 1, 3, a, 0, b, 0, &c, 0);
    CHECK(c == 0x3c01);
    const double ad[] = {1e16, 1.0, -1e16}, bd[] = {1, 1, 1};
    double cd = 5;
    rt::cpu::matmul(DType::F64, 1, 1, 1, 3, ad, 0, bd, 0, &cd, 0);
    CHECK(cd == 0.0); // (1e16 + 1) rounds to 1e16 first
    rt::cpu::matmul(DType::F64, 1, 1, 1, 0, ad, 0, bd, 0, &cd, 0);
    CHECK(cd == 0.0);
    CHECK_FALSE(std::signbit(cd));
  }
}

TEST_CASE("the team path lands at once only what no transfer of the step "
          "disturbs",
          "[runtime][cpu]") {
  // Step 0: rank 1's chunk 2 is written (0 -> 1) and read (1 -> 2): both
  // go through staging; the others land at once. Step 1: all at once.
  const coconet::rt::algorithm::Table &t = coconet_test::relayTable();
  std::vector<uint8_t> direct;
  std::vector<std::pair<uint32_t, uint32_t>> scratch;
  coconet::rt::cpu::algorithmTeamDirect(t, 0, direct, scratch);
  CHECK(direct == std::vector<uint8_t>{0, 0, 1, 1});
  coconet::rt::cpu::algorithmTeamDirect(t, 1, direct, scratch);
  CHECK(direct == std::vector<uint8_t>{1, 1, 1});
}

TEST_CASE("the default host allocator aligns to 64 bytes", "[runtime][cpu]") {
  rt::cpu::Allocator &allocator = rt::cpu::defaultAllocator();
  for (size_t bytes : {size_t(0), size_t(1), size_t(100), size_t(4096)}) {
    void *p = nullptr;
    REQUIRE(allocator.allocate(bytes, &p).ok());
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    std::memset(p, 1, bytes);
    allocator.deallocate(p, bytes);
  }
}

#endif // COCONET_HAVE_RT_CPU
