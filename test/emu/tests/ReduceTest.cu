//===- ReduceTest.cu - the CUDA runtime's Reducer under the emulation -----===//
//
// cuda::Reducer (runtime/src/cuda/reduce.cu: a warp per block of terms,
// the lane tree in shared memory, then one block per piece evaluating its
// block tree by nodes and pairs) against the order of
// coconet/reduce_order.h, bit for bit: values whose sums depend on the
// order (a quarter +-2^54, the rest with all 53 bits), every kind, f16,
// f32, f64 and integers; segments shorter than a lane, a block and a block
// plus one, a rank's block cut inside segments, strided pieces, and a piece
// of 300 blocks (its tree deeper than one thread a node). A second pass
// that added the partial values in launch order, or a lane tree of
// neighbours, fails the hand-written case.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/runtime.h"
#include "coconet/reduce_order.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace coconet;
namespace order = coconet::rt::reduce_order;

namespace {

constexpr double kBig = 18014398509481984.0; // 2^54

/// Device memory holding `bytes` host bytes.
void *toDevice(const void *host, size_t bytes) {
  void *p = nullptr;
  REQUIRE(cudaMalloc(&p, bytes == 0 ? 1 : bytes) == cudaSuccess);
  REQUIRE(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  return p;
}

/// Runs a Reducer of `pieces` on `in` (storage bytes of `dtype`) and
/// returns the results' bytes (`outType`).
std::vector<uint8_t> runReducer(const rt::ReductionPieces &pieces,
                                rt::ReductionKind kind, rt::DType dtype,
                                const std::vector<uint8_t> &in,
                                rt::DType outType) {
  rt::cuda::Reducer reducer;
  REQUIRE(reducer.create(pieces, rt::cuda::defaultAllocator()).ok());
  void *din = toDevice(in.data(), in.size());
  const size_t outBytes =
      static_cast<size_t>(pieces.pieces()) * rt::dtypeSize(outType);
  void *dout = nullptr;
  REQUIRE(cudaMalloc(&dout, outBytes) == cudaSuccess);
  rt::Status st = reducer.run(kind, dtype, din, outType, dout, nullptr);
  INFO(st.message());
  REQUIRE(st.ok());
  std::vector<uint8_t> out(outBytes);
  REQUIRE(cudaMemcpy(out.data(), dout, outBytes, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  cudaFree(din);
  cudaFree(dout);
  return out;
}

/// Wide values: doubles (as the reference reads them) and their storage.
struct Values {
  std::vector<double> f;
  std::vector<uint64_t> i;
  std::vector<uint8_t> bytes;
};

Values wide(rt::DType dtype, int64_t n, uint64_t seed) {
  Values v;
  const size_t size = rt::dtypeSize(dtype);
  v.bytes.resize(static_cast<size_t>(n) * size);
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t bits =
        rt::uniformInputBits(seed, 5, static_cast<uint64_t>(k));
    double x = 3 * rt::uniformInput(seed, 6, static_cast<uint64_t>(k)) *
               (1 + static_cast<double>(bits >> 12) * 0x1p-52);
    if ((bits & 3) == 0 && dtype != rt::DType::F16)
      x = bits & 8 ? -kBig : kBig;
    uint8_t *p = v.bytes.data() + static_cast<size_t>(k) * size;
    switch (dtype) {
    case rt::DType::F16: {
      const uint16_t h = rt::doubleToHalfBits(x);
      std::memcpy(p, &h, 2);
      x = rt::halfBitsToFloat(h);
      break;
    }
    case rt::DType::F32: {
      const float f = static_cast<float>(x);
      std::memcpy(p, &f, 4);
      x = f;
      break;
    }
    case rt::DType::F64:
      std::memcpy(p, &x, 8);
      break;
    default:
      std::memcpy(p, &bits, 8); // i64 / u64
      break;
    }
    v.f.push_back(x);
    v.i.push_back(bits);
  }
  return v;
}

/// The reference result of piece s as bits of `outType`.
uint64_t reference(rt::ReductionKind kind, rt::DType dtype, const Values &v,
                   const rt::ReductionPieces &p, int64_t s, rt::DType outType) {
  auto at = [&](int64_t k) {
    return static_cast<size_t>(p.begin[s] + k * p.stride);
  };
  const int64_t n = p.length[s];
  const bool max = kind == rt::ReductionKind::Max;
  if (rt::isFloat(dtype)) {
    double r;
    if (kind == rt::ReductionKind::Max || kind == rt::ReductionKind::Min) {
      r = order::reduce(
          n, static_cast<double>(NAN), [&](int64_t k) { return v.f[at(k)]; },
          [&](double a, double b) {
            return max ? rt::maxNumber(a, b) : rt::minNumber(a, b);
          });
    } else {
      const bool squares = kind != rt::ReductionKind::Sum;
      r = order::reduce(
          n, 0.0,
          [&](int64_t k) {
            return squares ? v.f[at(k)] * v.f[at(k)] : v.f[at(k)];
          },
          [](double a, double b) { return a + b; });
      if (kind == rt::ReductionKind::Norm)
        r = std::sqrt(r);
    }
    r = order::canonicalNaN(r);
    if (outType == rt::DType::F64)
      return rt::doubleBits(r);
    if (outType == rt::DType::F32)
      return rt::floatBits(static_cast<float>(r));
    return rt::doubleToHalfBits(r);
  }
  // i64: a wrapping sum, or the signed max / min.
  if (kind == rt::ReductionKind::Sum)
    return order::reduce(
        n, uint64_t{0}, [&](int64_t k) { return v.i[at(k)]; },
        [](uint64_t a, uint64_t b) { return a + b; });
  return order::reduce(
      n, static_cast<uint64_t>(max ? INT64_MIN : INT64_MAX),
      [&](int64_t k) { return v.i[at(k)]; },
      [&](uint64_t a, uint64_t b) {
        const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
        return static_cast<uint64_t>(max ? (x > y ? x : y) : (x < y ? x : y));
      });
}

uint64_t bitsAt(const std::vector<uint8_t> &out, rt::DType type, int64_t s) {
  uint64_t bits = 0;
  const size_t size = rt::dtypeSize(type);
  std::memcpy(&bits, out.data() + static_cast<size_t>(s) * size, size);
  return bits;
}

} // namespace

TEST_CASE("the CUDA Reducer adds blocks in the block tree, not in launch "
          "order",
          "[reduce]") {
  const int64_t b = order::kBlock;
  // Four blocks: (p0 + p1) + (p2 + p3) = (2^54 + 1) + (-2^54 + 1) = 0; in
  // launch order 1. Block 0's lanes: 2^54 (lane 0), -2^54 (lane 1), 1
  // (lane 16): the stride tree gives 0 there, a tree of neighbours 1.
  std::vector<double> x(static_cast<size_t>(4 * b), 0.0);
  x[b] = 1;
  x[2 * b] = -kBig;
  x[3 * b] = 1;
  x[0] = kBig;
  std::vector<uint8_t> bytes(x.size() * 8);
  std::memcpy(bytes.data(), x.data(), bytes.size());
  rt::ReductionPieces p;
  REQUIRE(
      rt::ReductionPieces::ofSegments(nullptr, 1, 4 * b, 0, "test", &p).ok());
  auto out = runReducer(p, rt::ReductionKind::Sum, rt::DType::F64, bytes,
                        rt::DType::F64);
  CHECK(rt::doubleFromBits(bitsAt(out, rt::DType::F64, 0)) == 0);

  std::vector<double> lanes(17, 0.0);
  lanes[0] = kBig;
  lanes[1] = -kBig;
  lanes[16] = 1;
  std::vector<uint8_t> lb(lanes.size() * 8);
  std::memcpy(lb.data(), lanes.data(), lb.size());
  REQUIRE(rt::ReductionPieces::ofSegments(nullptr, 1, 17, 0, "test", &p).ok());
  out =
      runReducer(p, rt::ReductionKind::Sum, rt::DType::F64, lb, rt::DType::F64);
  CHECK(rt::doubleFromBits(bitsAt(out, rt::DType::F64, 0)) == 0);
}

TEST_CASE("the CUDA Reducer computes the order's bits for every kind and "
          "piece",
          "[reduce]") {
  const int64_t b = order::kBlock;
  const std::vector<int64_t> lengths = {0, 1, 31, 33, b, b + 1, 5, 2 * b + 3};
  std::vector<int64_t> ends;
  int64_t total = 0;
  for (int64_t l : lengths)
    ends.push_back(total += l);
  const int64_t segments = static_cast<int64_t>(lengths.size());
  for (rt::DType dtype :
       {rt::DType::F16, rt::DType::F32, rt::DType::F64, rt::DType::I64}) {
    const Values v = wide(dtype, total, 7 + static_cast<int>(dtype));
    for (rt::ReductionKind kind :
         {rt::ReductionKind::Sum, rt::ReductionKind::Max,
          rt::ReductionKind::Min, rt::ReductionKind::Norm,
          rt::ReductionKind::SumSquares}) {
      const bool isF = rt::isFloat(dtype);
      if (!isF && (kind == rt::ReductionKind::Norm ||
                   kind == rt::ReductionKind::SumSquares))
        continue;
      const rt::DType outType = kind == rt::ReductionKind::SumSquares
                                    ? rt::DType::F64
                                : dtype == rt::DType::F16 ? rt::DType::F32
                                                          : dtype;
      // The whole table, then a rank's block cut inside segments.
      for (auto [offset, count] :
           {std::pair<int64_t, int64_t>{0, total}, {20, total - 50}}) {
        rt::ReductionPieces p;
        REQUIRE(rt::ReductionPieces::ofSegments(ends.data(), segments, count,
                                                offset, "test", &p)
                    .ok());
        std::vector<uint8_t> in(
            v.bytes.begin() +
                static_cast<int64_t>(offset * rt::dtypeSize(dtype)),
            v.bytes.begin() +
                static_cast<int64_t>((offset + count) * rt::dtypeSize(dtype)));
        Values shifted = v;
        shifted.f.erase(shifted.f.begin(), shifted.f.begin() + offset);
        shifted.i.erase(shifted.i.begin(), shifted.i.begin() + offset);
        const auto out = runReducer(p, kind, dtype, in, outType);
        for (int64_t s = 0; s < segments; ++s) {
          INFO(rt::dtypeName(dtype)
               << " kind " << static_cast<int>(kind) << " offset " << offset
               << " segment " << s);
          CHECK(bitsAt(out, outType, s) ==
                reference(kind, dtype, shifted, p, s, outType));
        }
      }
    }
  }
}

TEST_CASE("the CUDA Reducer takes strided pieces and deep trees", "[reduce]") {
  // Along dimension 1 of [2, 2049, 3]: strided pieces of a block plus one.
  const Values v = wide(rt::DType::F32, 2 * (order::kBlock + 1) * 3, 11);
  rt::ReductionPieces p;
  REQUIRE(rt::ReductionPieces::along(2, order::kBlock + 1, 3, "test", &p).ok());
  auto out = runReducer(p, rt::ReductionKind::Sum, rt::DType::F32, v.bytes,
                        rt::DType::F32);
  for (int64_t s = 0; s < 6; ++s)
    CHECK(bitsAt(out, rt::DType::F32, s) == reference(rt::ReductionKind::Sum,
                                                      rt::DType::F32, v, p, s,
                                                      rt::DType::F32));
  // 300 blocks: 256 nodes, some of two blocks, then 8 levels of pairs.
  const int64_t n = 300 * order::kBlock - 7;
  const Values w = wide(rt::DType::F32, n, 13);
  REQUIRE(rt::ReductionPieces::ofSegments(nullptr, 1, n, 0, "test", &p).ok());
  out = runReducer(p, rt::ReductionKind::Sum, rt::DType::F32, w.bytes,
                   rt::DType::F32);
  CHECK(bitsAt(out, rt::DType::F32, 0) == reference(rt::ReductionKind::Sum,
                                                    rt::DType::F32, w, p, 0,
                                                    rt::DType::F32));
}
