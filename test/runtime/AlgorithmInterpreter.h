//===- AlgorithmInterpreter.h - what an algorithm table computes -*- C++
//-*-===//
//
// The tests' oracle for collective algorithm tables (coconet/algorithm.h),
// shared by the CPU runtime's test (test/runtime/AlgorithmTest.cpp) and the
// CUDA emulation's (test/emu/tests/AlgorithmTest.cpp): every rank's input
// drawn here, and every rank's output computed by interpreting the table
// with all ranks in one process. A step reads every transfer's value
// before any of its transfers lands, then stores or combines them in the
// step's order, the receiver's value first, element by element with
// coconet/combine.h's rule (Element<T>: held in f64 or as 64-bit
// patterns, rounded to T at once), not with a runtime's combine code.
//
// The float inputs make the order of a reduction visible: +-2^54 (scaled
// into the type's range) among small values, so that the sum of 2^54,
// -2^54 and 3 is 3 or 0 by order.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_RUNTIME_ALGORITHMINTERPRETER_H
#define COCONET_TEST_RUNTIME_ALGORITHMINTERPRETER_H

#include "coconet/algorithm.h"
#include "coconet/combine.h"
#include "coconet/numeric.h"
#include "coconet/types.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace coconet_test {

using Bytes = std::vector<uint8_t>;
using coconet::rt::DType;
using coconet::rt::ReduceOp;
namespace alg = coconet::rt::algorithm;

/// Element i of rank r's input, as a double: mostly small values with all
/// bits used, every 7th or so +-2^54.
inline double inputValue(uint32_t r, uint64_t i) {
  const uint64_t h =
      (r + 1) * 0x9E3779B97F4A7C15ull ^ (i + 1) * 0xC2B2AE3D27D4EB4Full;
  const uint64_t m = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
  if ((m >> 7) % 7 == 0)
    return ((m >> 3) & 1) ? 18014398509481984.0 : -18014398509481984.0;
  return static_cast<double>(m >> 11) / 9007199254740992.0 * 4.0 - 2.0;
}

/// Rank r's input buffer: inputChunks(t) chunks of `elements` elements.
/// Types: f64, f32, f16, i64.
inline Bytes algorithmInput(const alg::Table &t, uint32_t r, int64_t elements,
                            DType dtype) {
  const uint64_t n = alg::inputChunks(t) * elements;
  Bytes b(n * coconet::rt::dtypeSize(dtype));
  for (uint64_t i = 0; i < n; ++i) {
    const double v = inputValue(r, i);
    const bool big = std::fabs(v) > 1e10;
    switch (dtype) {
    case DType::F64:
      std::memcpy(&b[i * 8], &v, 8);
      break;
    case DType::F32: {
      const float f = static_cast<float>(big ? v / 1e6 : v);
      std::memcpy(&b[i * 4], &f, 4);
      break;
    }
    case DType::F16: {
      const uint16_t h = coconet::rt::doubleToHalfBits(big ? v / 1e12 : v);
      std::memcpy(&b[i * 2], &h, 2);
      break;
    }
    case DType::I64: {
      const int64_t x =
          static_cast<int64_t>(big ? v : v * 1e6) ^ (int64_t(r) << 40);
      std::memcpy(&b[i * 8], &x, 8);
      break;
    }
    default:
      break;
    }
  }
  return b;
}

/// to = to (+) from, element by element, by combine.h's rule for T.
template <typename T>
void combineInto(uint8_t *to, const uint8_t *from, int64_t elements,
                 ReduceOp op) {
  using E = coconet::rt::Element<T>;
  for (int64_t i = 0; i < elements; ++i) {
    T a, b;
    std::memcpy(&a, to + i * sizeof(T), sizeof(T));
    std::memcpy(&b, from + i * sizeof(T), sizeof(T));
    typename E::Acc c;
    if constexpr (E::kFloat)
      c = coconet::rt::combineFloat(op, E::load(a), E::load(b));
    else
      c = coconet::rt::combineInt(op, E::kUnsigned, E::load(a), E::load(b));
    const T s = E::store(c);
    std::memcpy(to + i * sizeof(T), &s, sizeof(T));
  }
}

inline void combineInto(DType dtype, uint8_t *to, const uint8_t *from,
                        int64_t elements, ReduceOp op) {
  switch (dtype) {
  case DType::F64:
    return combineInto<double>(to, from, elements, op);
  case DType::F32:
    return combineInto<float>(to, from, elements, op);
  case DType::F16:
    return combineInto<coconet::rt::Half>(to, from, elements, op);
  case DType::I64:
    return combineInto<int64_t>(to, from, elements, op);
  default:
    return;
  }
}

/// Every rank's output buffer (outputChunks(t) chunks), interpreting `t`;
/// `error` says what went wrong (a transfer from a rank that does not hold
/// its chunk), else stays empty.
inline std::vector<Bytes> interpretAlgorithm(const alg::Table &t,
                                             int64_t elements, DType dtype,
                                             ReduceOp op, std::string &error) {
  const size_t bytes = elements * coconet::rt::dtypeSize(dtype);
  const uint64_t k = t.chunksPerRank, R = t.ranks, chunks = alg::numChunks(t);
  // held[r][c]: rank r's copy of chunk c (empty while it holds none).
  std::vector<std::vector<Bytes>> held(R, std::vector<Bytes>(chunks));
  for (uint32_t r = 0; r < R; ++r) {
    const Bytes in = algorithmInput(t, r, elements, dtype);
    auto chunk = [&](uint64_t at) {
      return Bytes(in.begin() + at * bytes, in.begin() + (at + 1) * bytes);
    };
    switch (t.collective) {
    case alg::Collective::AllGather:
      for (uint64_t i = 0; i < k; ++i)
        held[r][r * k + i] = chunk(i);
      break;
    case alg::Collective::ReduceScatter:
    case alg::Collective::AllReduce:
      for (uint64_t c = 0; c < chunks; ++c)
        held[r][c] = chunk(c);
      break;
    case alg::Collective::AllToAll:
      for (uint64_t d = 0; d < R; ++d)
        for (uint64_t i = 0; i < k; ++i)
          held[r][(r * R + d) * k + i] = chunk(d * k + i);
      break;
    }
  }
  for (uint32_t s = 0; s < t.numSteps; ++s) {
    std::vector<Bytes> sent;
    for (uint32_t x = t.stepBegin[s]; x < t.stepBegin[s + 1]; ++x)
      sent.push_back(held[t.transfers[x].src][t.transfers[x].chunk]);
    for (uint32_t x = t.stepBegin[s]; x < t.stepBegin[s + 1]; ++x) {
      const alg::Transfer &tr = t.transfers[x];
      Bytes &to = held[tr.dst][tr.chunk];
      const Bytes &v = sent[x - t.stepBegin[s]];
      if (v.empty() || (tr.reduce && to.empty())) {
        error = std::string(t.name) + ": step " + std::to_string(s) +
                " moves a chunk a rank does not hold";
        return {};
      }
      if (tr.reduce)
        combineInto(dtype, to.data(), v.data(), elements, op);
      else
        to = v;
    }
  }
  std::vector<Bytes> out(R);
  for (uint32_t r = 0; r < R; ++r) {
    auto add = [&](uint64_t c) {
      out[r].insert(out[r].end(), held[r][c].begin(), held[r][c].end());
    };
    switch (t.collective) {
    case alg::Collective::AllGather:
    case alg::Collective::AllReduce:
      for (uint64_t c = 0; c < chunks; ++c)
        add(c);
      break;
    case alg::Collective::ReduceScatter:
      for (uint64_t i = 0; i < k; ++i)
        add(r * k + i);
      break;
    case alg::Collective::AllToAll:
      for (uint64_t src = 0; src < R; ++src)
        for (uint64_t i = 0; i < k; ++i)
          add((src * R + r) * k + i);
      break;
    }
  }
  return out;
}

/// What is wrong with rank `rank`'s output `out` of a run of `t` (the
/// interpretation's error, or that the bits differ), or "" when it equals
/// the interpretation bit for bit.
inline std::string compareWithInterpretation(const alg::Table &t,
                                             int64_t elements, DType dtype,
                                             ReduceOp op, uint32_t rank,
                                             const Bytes &out) {
  std::string error;
  const std::vector<Bytes> expected =
      interpretAlgorithm(t, elements, dtype, op, error);
  if (!error.empty())
    return error;
  return out == expected[rank] ? "" : "differs from the table's interpretation";
}

/// The exact wrapping sum of every rank's i64 input (ReduceScatter: rank
/// r's own chunks; AllReduce: every chunk) for a reduction's check.
inline std::vector<int64_t> integerSum(const alg::Table &t, int64_t elements,
                                       uint32_t rank) {
  const uint64_t n = alg::numChunks(t) * elements;
  std::vector<uint64_t> sum(n, 0);
  for (uint32_t r = 0; r < t.ranks; ++r) {
    const Bytes b = algorithmInput(t, r, elements, DType::I64);
    for (uint64_t i = 0; i < n; ++i) {
      int64_t x;
      std::memcpy(&x, &b[i * 8], 8);
      sum[i] += static_cast<uint64_t>(x);
    }
  }
  const uint64_t first = t.collective == alg::Collective::ReduceScatter
                             ? rank * t.chunksPerRank * elements
                             : 0;
  const uint64_t count = alg::outputChunks(t) * elements;
  std::vector<int64_t> out(count);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = static_cast<int64_t>(sum[first + i]);
  return out;
}

} // namespace coconet_test

#endif // COCONET_TEST_RUNTIME_ALGORITHMINTERPRETER_H
