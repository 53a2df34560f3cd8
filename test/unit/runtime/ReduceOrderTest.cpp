//===- ReduceOrderTest.cpp - the order of a reduction, pinned -------------===//
//
// coconet/reduce_order.h defines the order in which every reduction
// combines its terms (docs/language.md, "The order of a reduction"). The
// first cases pin it with values written out by hand whose f64 sum depends
// on the order: 2^54 + 1 is 2^54 (its ulp is 4), so where 1 meets 2^54
// before -2^54 it is lost, and where 2^54 and -2^54 cancel first it stays.
// Each case names the plant it is for (another lane tree, a block
// boundary moved by one, the block tree's halves swapped, the partial
// values added in a chain as a second pass in launch order would). Then the
// CPU runtime's Reducer (threads over blocks, lanes in vector registers)
// against the reference on wide random values: every element type and
// kind, pieces shorter than a lane, exactly a block, a block plus one and
// longer than N / threads, segments cut by a rank's block, strided pieces,
// 1 to 8 threads; bit for bit.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "coconet/reduce_order.h"

#if defined(COCONET_HAVE_RT_CPU)
#include "coconet/cpu/runtime.h"

#include <omp.h>
#endif

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace coconet;
namespace order = coconet::rt::reduce_order;

namespace {

constexpr double kBig = 18014398509481984.0; // 2^54

/// The reference sum of `t` in the language's order.
double referenceSum(const std::vector<double> &t) {
  return order::reduce(
      static_cast<int64_t>(t.size()), 0.0,
      [&](int64_t i) { return t[static_cast<size_t>(i)]; },
      [](double a, double b) { return a + b; });
}

/// n zeros with `values` placed at their indices.
std::vector<double>
terms(int64_t n, std::initializer_list<std::pair<int64_t, double>> at) {
  std::vector<double> t(static_cast<size_t>(n), 0.0);
  for (auto [i, v] : at)
    t[static_cast<size_t>(i)] = v;
  return t;
}

} // namespace

TEST_CASE("the order's constants are the documented ones", "[reduce-order]") {
  CHECK(order::kBlock == 2048);
  CHECK(order::kLanes == 32);
  CHECK(order::blockCount(0) == 0);
  CHECK(order::blockCount(1) == 1);
  CHECK(order::blockCount(2048) == 1);
  CHECK(order::blockCount(2049) == 2);
}

TEST_CASE("a lane adds its terms in order, then the lane tree halves by "
          "strides of 16, 8, 4, 2, 1",
          "[reduce-order]") {
  // Lane 0 holds t0 and t32: (0 + 2^54) + 1 = 2^54, the 1 lost in the lane.
  CHECK(referenceSum(terms(64, {{0, kBig}, {32, 1}, {16, -kBig}})) == 0);
  // t0 = 2^54 (lane 0), t1 = -2^54 (lane 1), t16 = 1 (lane 16): the stride
  // tree adds lane 16 to lane 0 first (2^54 + 1 = 2^54), then lane 1: 0. A
  // tree of neighbours (lane 0 + lane 1 first) gives 1, as does the chain.
  CHECK(referenceSum(terms(17, {{0, kBig}, {1, -kBig}, {16, 1}})) == 0);
  // t8 = 1 meets lane 0's 2^54 at stride 8, before t1's -2^54 at stride 1
  // (neighbours first, or the chain: 1).
  CHECK(referenceSum(terms(9, {{0, kBig}, {1, -kBig}, {8, 1}})) == 0);
  // Lanes 0 and 2 meet at stride 2, before lane 1 (the chain: 0).
  CHECK(referenceSum(terms(3, {{0, kBig}, {1, 1}, {2, -kBig}})) == 1);
}

TEST_CASE("blocks hold 2048 terms: the boundary is between t2047 and t2048",
          "[reduce-order]") {
  // Block 0 = {1, 2^54 at t2047}: 2^54; block 1 = {-2^54}: the sum is 0. A
  // block of 2047 terms puts t2047 with -2^54 instead: 1.
  CHECK(referenceSum(terms(2049, {{0, 1}, {2047, kBig}, {2048, -kBig}})) == 0);
  // Block 0 = {-2^54, 1}: -2^54; block 1 = {2^54}: 0. A block of 2049
  // terms puts t2048 in lane 0 with -2^54 (cancelled, then 1 survives): 1.
  CHECK(referenceSum(terms(2049, {{0, -kBig}, {1, 1}, {2048, kBig}})) == 0);
}

TEST_CASE("the block tree halves its partial values, the left half the "
          "larger",
          "[reduce-order]") {
  const int64_t b = order::kBlock;
  // m = 3: (p0 + p1) + p2 = (2^54 - 2^54) + 1 = 1; p0 + (p1 + p2) = 0.
  CHECK(referenceSum(terms(2 * b + 1, {{0, kBig}, {b, -kBig}, {2 * b, 1}})) ==
        1);
  // m = 4: (p0 + p1) + (p2 + p3) = 2^54 - 2^54 = 0; the chain in launch
  // order ((p0 + p1) + p2) + p3 = 1.
  CHECK(referenceSum(terms(
            4 * b, {{0, kBig}, {b, 1}, {2 * b, -kBig}, {3 * b, 1}})) == 0);
  // m = 5: ((p0 + p1) + p2) + (p3 + p4): p3 + p4 = 2^54 - 2^54 = 0 first.
  CHECK(referenceSum(terms(5 * b, {{0, 1}, {3 * b, kBig}, {4 * b, -kBig}})) ==
        1);
}

TEST_CASE("the tree's nodes at one depth tile it in order", "[reduce-order]") {
  for (int64_t m : {1, 2, 3, 5, 8, 13, 255, 256, 257, 1000}) {
    const int depth = order::treeDepth(m, 256);
    CHECK((int64_t{1} << depth) <= m);
    CHECK((depth == 8 || (int64_t{2} << depth) > m));
    int64_t next = 0;
    for (int64_t t = 0; t < (int64_t{1} << depth); ++t) {
      int64_t lo = 0, n = 0;
      order::treeNode(m, depth, t, &lo, &n);
      CHECK(lo == next);
      CHECK(n >= 1);
      next = lo + n;
    }
    CHECK(next == m);
    // The nodes combined pairwise are the whole tree.
    std::vector<double> p(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i)
      p[static_cast<size_t>(i)] = (i % 3 == 0   ? kBig
                                   : i % 3 == 1 ? 1.0
                                                : -kBig) *
                                  (1 + i * 0x1p-40);
    auto add = [](double a, double b) { return a + b; };
    auto at = [&](int64_t i) { return p[static_cast<size_t>(i)]; };
    std::vector<double> nodes;
    for (int64_t t = 0; t < (int64_t{1} << depth); ++t) {
      int64_t lo = 0, n = 0;
      order::treeNode(m, depth, t, &lo, &n);
      nodes.push_back(order::combineTree(lo, n, at, add));
    }
    for (size_t w = 1; w < nodes.size(); w *= 2)
      for (size_t t = 0; t + w < nodes.size(); t += 2 * w)
        nodes[t] = nodes[t] + nodes[t + w];
    CHECK(rt::doubleBits(nodes[0]) ==
          rt::doubleBits(order::combineTree(0, m, at, add)));
  }
}

TEST_CASE("a NaN result is the canonical quiet NaN", "[reduce-order]") {
  const double payload = rt::doubleFromBits(UINT64_C(0xfff0000000000123));
  CHECK(std::isnan(payload));
  CHECK(rt::doubleBits(order::canonicalNaN(payload)) ==
        UINT64_C(0x7ff8000000000000));
  CHECK(order::canonicalNaN(-0.0) == 0.0);
  CHECK(std::signbit(order::canonicalNaN(-0.0)));
}

#if defined(COCONET_HAVE_RT_CPU)

namespace {

/// Wide values of `dtype` as storage bytes and as the doubles (or 64-bit
/// patterns) the reference reads: all 53 bits (rounded to the type), a
/// quarter +-2^54 (not for f16), some -0.
struct Values {
  std::vector<uint8_t> bytes;
  std::vector<double> f;
  std::vector<uint64_t> i;
};

Values wideValues(rt::DType dtype, int64_t n, uint64_t seed) {
  sim::Tensor t(static_cast<ir::DType>(dtype), {n});
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t bits =
        rt::uniformInputBits(seed, 5, static_cast<uint64_t>(k));
    sim::Scalar s;
    s.f = 3 * rt::uniformInput(seed, 6, static_cast<uint64_t>(k)) *
          (1 + static_cast<double>(bits >> 12) * 0x1p-52);
    if ((bits & 3) == 0 && dtype != rt::DType::F16)
      s.f = bits & 8 ? -kBig : kBig;
    if (bits % 97 == 1)
      s.f = -0.0;
    s.i = bits;
    t.setScalar(k, s);
  }
  Values v;
  v.bytes = test::storageOf(t);
  for (int64_t k = 0; k < n; ++k) {
    v.f.push_back(t.get(k));
    v.i.push_back(t.getScalar(k).i);
  }
  return v;
}

/// The reference result of piece [begin + k * stride, k < length) as the
/// bits of the stored result of `outType`.
uint64_t referenceBits(rt::ReductionKind kind, rt::DType dtype, const Values &v,
                       int64_t begin, int64_t length, int64_t stride,
                       rt::DType outType) {
  const bool isF = rt::isFloat(dtype);
  const bool squares =
      kind == rt::ReductionKind::Norm || kind == rt::ReductionKind::SumSquares;
  const bool max = kind == rt::ReductionKind::Max;
  sim::Tensor out(static_cast<ir::DType>(outType), {1});
  sim::Scalar s;
  auto at = [&](int64_t k) { return static_cast<size_t>(begin + k * stride); };
  if (isF || squares) {
    auto term = [&](int64_t k) {
      const double x =
          isF ? v.f[at(k)]
              : static_cast<double>(static_cast<int64_t>(v.i[at(k)]));
      return squares ? x * x : x;
    };
    double r;
    if (kind == rt::ReductionKind::Max || kind == rt::ReductionKind::Min)
      r = order::reduce(
          length, static_cast<double>(NAN), term, [&](double a, double b) {
            return max ? rt::maxNumber(a, b) : rt::minNumber(a, b);
          });
    else
      r = order::reduce(length, 0.0, term,
                        [](double a, double b) { return a + b; });
    if (kind == rt::ReductionKind::Norm)
      r = std::sqrt(r);
    s.f = order::canonicalNaN(r);
  } else {
    auto term = [&](int64_t k) { return v.i[at(k)]; };
    const bool u = dtype == rt::DType::U64;
    const bool i32 = dtype == rt::DType::I32;
    if (kind == rt::ReductionKind::Sum) {
      s.i = order::reduce(length, uint64_t{0}, term,
                          [](uint64_t a, uint64_t b) { return a + b; });
    } else {
      const uint64_t identity =
          u ? (max ? 0 : UINT64_MAX)
            : static_cast<uint64_t>(
                  max ? (i32 ? int64_t{INT32_MIN} : INT64_MIN)
                      : (i32 ? int64_t{INT32_MAX} : INT64_MAX));
      s.i = order::reduce(length, identity, term, [&](uint64_t a, uint64_t b) {
        if (u)
          return max ? std::max(a, b) : std::min(a, b);
        const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
        return static_cast<uint64_t>(max ? std::max(x, y) : std::min(x, y));
      });
    }
  }
  out.setScalar(0, s);
  const std::vector<uint8_t> bytes = test::storageOf(out);
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), bytes.size());
  return bits;
}

uint64_t resultBits(const std::vector<uint8_t> &out, rt::DType outType,
                    int64_t s) {
  const size_t size = rt::dtypeSize(outType);
  uint64_t bits = 0;
  std::memcpy(&bits, out.data() + static_cast<size_t>(s) * size, size);
  return bits;
}

const rt::DType kTypes[] = {rt::DType::F16, rt::DType::BF16, rt::DType::F32,
                            rt::DType::F64, rt::DType::I32,  rt::DType::I64,
                            rt::DType::U64};
const rt::ReductionKind kKinds[] = {
    rt::ReductionKind::Sum, rt::ReductionKind::Max, rt::ReductionKind::Min,
    rt::ReductionKind::Norm, rt::ReductionKind::SumSquares};

bool kindApplies(rt::ReductionKind kind, rt::DType dtype) {
  return rt::isFloat(dtype) || kind != rt::ReductionKind::Norm;
}

} // namespace

TEST_CASE("the CPU runtime reduces segments in the order, bit for bit, on "
          "1 to 8 threads",
          "[reduce-order][cpu]") {
  const int64_t b = order::kBlock;
  // A rank's block [offset, offset + count) of a flat tensor of 5 * b + 77
  // elements cut into segments: empty, shorter than a lane, a lane, a
  // block, a block plus one, and long.
  const std::vector<int64_t> lengths = {0, 1,         31, 32, 33,    b, b + 1,
                                        7, 2 * b + 3, 0,  5,  b - 1, 70};
  std::vector<int64_t> ends;
  int64_t total = 0;
  for (int64_t l : lengths)
    ends.push_back(total += l);
  const int64_t segments = static_cast<int64_t>(lengths.size());
  const int threads = omp_get_max_threads();
  for (rt::DType dtype : kTypes)
    for (rt::ReductionKind kind : kKinds) {
      if (!kindApplies(kind, dtype))
        continue;
      const Values v = wideValues(dtype, total, 17 + static_cast<int>(dtype));
      // The whole tensor, then a rank's block that starts and ends inside
      // segments (the pieces counted from their first element there).
      for (auto [offset, count] :
           {std::pair<int64_t, int64_t>{0, total}, {40, total - 100}}) {
        const rt::DType outType =
            kind == rt::ReductionKind::SumSquares ? rt::DType::F64 : dtype;
        for (int t : {1, 2, 3, 8}) {
          omp_set_num_threads(t);
          std::vector<uint8_t> out(static_cast<size_t>(segments) *
                                   rt::dtypeSize(outType));
          REQUIRE(rt::cpu::reduce(kind, dtype,
                                  v.bytes.data() + static_cast<size_t>(offset) *
                                                       rt::dtypeSize(dtype),
                                  count, ends.data(), segments, offset, outType,
                                  out.data())
                      .ok());
          int64_t begin = 0;
          for (int64_t s = 0; s < segments; ++s) {
            const int64_t lo = std::max(begin, offset),
                          hi = std::min(ends[s], offset + count);
            begin = ends[s];
            INFO(rt::dtypeName(dtype)
                 << " kind " << static_cast<int>(kind) << " offset " << offset
                 << " segment " << s << " threads " << t);
            CHECK(resultBits(out, outType, s) ==
                  referenceBits(kind, dtype, v, lo,
                                std::max<int64_t>(hi - lo, 0), 1, outType));
          }
        }
      }
    }
  omp_set_num_threads(threads);
}

TEST_CASE("the CPU runtime reduces a large tensor and along dimensions in the "
          "order",
          "[reduce-order][cpu]") {
  const int threads = omp_get_max_threads();
  for (rt::DType dtype : {rt::DType::F32, rt::DType::F16, rt::DType::F64}) {
    // Longer than N / threads: many blocks, one piece.
    const int64_t n = 37 * order::kBlock + 5;
    const Values v = wideValues(dtype, n, 3);
    for (rt::ReductionKind kind :
         {rt::ReductionKind::Sum, rt::ReductionKind::Norm}) {
      for (int t : {1, 2, 5}) {
        omp_set_num_threads(t);
        std::vector<uint8_t> out(rt::dtypeSize(dtype));
        REQUIRE(rt::cpu::reduce(kind, dtype, v.bytes.data(), n, nullptr, 1, 0,
                                dtype, out.data())
                    .ok());
        CHECK(resultBits(out, dtype, 0) ==
              referenceBits(kind, dtype, v, 0, n, 1, dtype));
      }
    }
    // Along a dimension: [3, 2049, 1] (contiguous) and [3, 2049, 4]
    // (strided).
    for (int64_t inner : {1, 4}) {
      const int64_t outer = 3, reduced = order::kBlock + 1;
      const Values w = wideValues(dtype, outer * reduced * inner, 9);
      std::vector<uint8_t> out(static_cast<size_t>(outer * inner) *
                               rt::dtypeSize(dtype));
      REQUIRE(rt::cpu::reduceAlong(rt::ReductionKind::Sum, dtype,
                                   w.bytes.data(), outer, reduced, inner, dtype,
                                   out.data())
                  .ok());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          CHECK(resultBits(out, dtype, o * inner + i) ==
                referenceBits(rt::ReductionKind::Sum, dtype, w,
                              o * reduced * inner + i, reduced, inner, dtype));
    }
  }
  omp_set_num_threads(threads);
}

#endif // COCONET_HAVE_RT_CPU
