//===- AllToAllVReference.h - what a dropless all-to-all must give --------===//
//
// Shared by the CPU target's test (test/runtime/AllToAllVTest.cpp) and the
// CUDA target's under the emulation (test/emu/tests/AllToAllVTest.cpp):
// the cases (the same on every rank: each rank can make every member's
// input), every member's input rows (each element names its member, row
// and column, so a row in the wrong place shows), and the output the
// semantics of cpu::Mesh::allToAllV give, computed here straight from
// them (segment by segment, row by row; not from the runtime's table).
// Also a naive grouped matmul for integer types.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_RUNTIME_ALLTOALLV_REFERENCE_H
#define COCONET_TEST_RUNTIME_ALLTOALLV_REFERENCE_H

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace coconet::test::alltoallv {

/// One call on every member of a group of `members`.
struct Case {
  std::string name;
  int64_t members = 1, groups = 1, rowElems = 1;
  std::vector<std::vector<int32_t>> counts; ///< per member, `groups` each
  std::vector<int64_t> inRows, outRows;     ///< per member
};

inline int64_t positive(int32_t c) { return c < 0 ? 0 : c; }

/// The rows member p sends to member q, before any clipping.
inline int64_t blockRows(const Case &c, int64_t p, int64_t q) {
  const int64_t g = c.groups / c.members;
  int64_t n = 0;
  for (int64_t e = q * g; e < (q + 1) * g; ++e)
    n += positive(c.counts[p][e]);
  return n;
}

inline int64_t sentRows(const Case &c, int64_t p) {
  int64_t n = 0;
  for (int32_t x : c.counts[p])
    n += positive(x);
  return n;
}

inline int64_t receivedRows(const Case &c, int64_t q) {
  int64_t n = 0;
  for (int64_t p = 0; p < c.members; ++p)
    n += blockRows(c, p, q);
  return n;
}

/// The cases for a group of `members` (deterministic: every rank makes
/// the same).
inline std::vector<Case> cases(int64_t members) {
  std::mt19937_64 rng(static_cast<uint64_t>(members) * 1000003u + 17u);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<Case> out;
  auto make = [&](const std::string &name, int64_t perMember, int64_t rowElems,
                  int64_t lo, int64_t hi) {
    Case c;
    c.name = name;
    c.members = members;
    c.groups = perMember * members;
    c.rowElems = rowElems;
    c.counts.assign(static_cast<size_t>(members),
                    std::vector<int32_t>(static_cast<size_t>(c.groups)));
    for (auto &counts : c.counts)
      for (int32_t &x : counts)
        x = static_cast<int32_t>(uniform(lo, hi));
    return c;
  };
  // Exact sizes: every member's inRows its rows, outRows what it gets.
  auto exact = [](Case &c) {
    c.inRows.clear();
    c.outRows.clear();
    for (int64_t p = 0; p < c.members; ++p) {
      c.inRows.push_back(sentRows(c, p));
      c.outRows.push_back(receivedRows(c, p));
    }
  };

  {
    // Random counts with zeros; the odd members send nothing to member 0
    // and member 0 nothing to the last; a tail of 2 rows to zero.
    Case c = make("random counts, zeros from some peers", 2, 3, 0, 4);
    const int64_t g = c.groups / members;
    for (int64_t p = 1; p < members; p += 2)
      for (int64_t e = 0; e < g; ++e)
        c.counts[p][e] = 0;
    for (int64_t e = (members - 1) * g; e < members * g; ++e)
      c.counts[0][e] = 0;
    exact(c);
    for (int64_t &r : c.outRows)
      r += 2;
    out.push_back(c);
  }
  {
    // Every row to member 0.
    Case c = make("every row to member 0", 1, 2, 1, 5);
    for (auto &counts : c.counts)
      for (size_t e = 1; e < counts.size(); ++e)
        counts[e] = 0;
    exact(c);
    for (int64_t q = 1; q < members; ++q)
      c.outRows[q] = 3; // all zeros
    out.push_back(c);
  }
  {
    // outRows smaller than what arrives: the last rows are dropped (a
    // member with no room at all, when there are several).
    Case c = make("outRows clips", 2, 2, 0, 6);
    exact(c);
    for (int64_t q = 0; q < members; ++q)
      c.outRows[q] = std::max<int64_t>(0, c.outRows[q] - 3 - 2 * q);
    if (members > 1)
      c.outRows[1] = 0;
    out.push_back(c);
  }
  {
    // inRows smaller than the rows the counts name: rows of zeros.
    Case c = make("inRows short of the counts", 2, 3, 1, 5);
    exact(c);
    for (int64_t p = 0; p < members; ++p)
      c.inRows[p] = std::max<int64_t>(0, c.inRows[p] - (2 + 3 * p));
    out.push_back(c);
  }
  {
    // Negative counts (as 0), three groups a member.
    Case c = make("negative counts", 3, 2, -3, 4);
    exact(c);
    out.push_back(c);
  }
  {
    // Everything at once, sizes differing between members.
    Case c = make("negative, short and clipped", 2, 5, -2, 7);
    exact(c);
    for (int64_t p = 0; p < members; ++p) {
      c.inRows[p] = std::max<int64_t>(0, c.inRows[p] - uniform(0, 6));
      c.outRows[p] = std::max<int64_t>(0, c.outRows[p] + uniform(-6, 3));
    }
    out.push_back(c);
  }
  {
    Case c = make("no rows at all", 2, 4, 0, 0);
    exact(c);
    for (int64_t &r : c.outRows)
      r = 5;
    out.push_back(c);
  }
  {
    Case c = make("rows of no elements", 2, 0, 0, 3);
    exact(c);
    out.push_back(c);
  }
  {
    Case c = make("larger", 4, 17, 0, 40);
    exact(c);
    for (int64_t p = 0; p < members; ++p)
      c.inRows[p] += 5; // rows past the segments, never sent
    out.push_back(c);
  }
  return out;
}

/// The bits of element j of row r of member p's input: its member, row
/// and column (`size` bytes, little-endian; 4 bytes: (p + 1) << 24 | r <<
/// 8 | j, for rows below 65536 and rows of at most 255 elements).
inline uint64_t elementBits(int64_t p, int64_t r, int64_t j, size_t size) {
  const uint64_t bits = size >= 8
                            ? (static_cast<uint64_t>(p + 1) << 40) |
                                  (static_cast<uint64_t>(r) << 16) |
                                  static_cast<uint64_t>(j + 1)
                            : (static_cast<uint64_t>(p + 1) << 24) |
                                  (static_cast<uint64_t>(r & 0xffff) << 8) |
                                  static_cast<uint64_t>((j + 1) & 0xff);
  return bits;
}

/// Member p's input: inRows[p] rows.
inline std::vector<uint8_t> input(const Case &c, int64_t p, size_t size) {
  std::vector<uint8_t> bytes(static_cast<size_t>(c.inRows[p] * c.rowElems) *
                             size);
  for (int64_t r = 0; r < c.inRows[p]; ++r)
    for (int64_t j = 0; j < c.rowElems; ++j) {
      const uint64_t bits = elementBits(p, r, j, size);
      std::memcpy(bytes.data() + (r * c.rowElems + j) * size, &bits, size);
    }
  return bytes;
}

/// What member q's `out` must hold (outRows[q] rows), from the semantics:
/// for each sender p in order, its segments for q, row by row.
inline std::vector<uint8_t> expectedOut(const Case &c, int64_t q, size_t size) {
  const int64_t rowBytes = c.rowElems * static_cast<int64_t>(size);
  std::vector<uint8_t> out(static_cast<size_t>(c.outRows[q] * rowBytes), 0);
  const std::vector<int64_t> &inRows = c.inRows;
  const int64_t g = c.groups / c.members;
  int64_t at = 0; // the next row of q's out
  for (int64_t p = 0; p < c.members; ++p) {
    const std::vector<uint8_t> in = input(c, p, size);
    int64_t segmentStart = 0; // in p's rows
    for (int64_t e = 0; e < c.groups; ++e) {
      const int64_t n = positive(c.counts[p][e]);
      if (e / g == q)
        for (int64_t t = 0; t < n; ++t, ++at) {
          const int64_t row = segmentStart + t;
          if (at < c.outRows[q] && row < inRows[p])
            std::memcpy(out.data() + at * rowBytes, in.data() + row * rowBytes,
                        static_cast<size_t>(rowBytes));
        }
      segmentStart += n;
    }
  }
  return out;
}

inline std::vector<int32_t> expectedOutCounts(const Case &c, int64_t q) {
  const int64_t g = c.groups / c.members;
  std::vector<int32_t> out;
  for (int64_t p = 0; p < c.members; ++p)
    for (int64_t k = 0; k < g; ++k)
      out.push_back(static_cast<int32_t>(positive(c.counts[p][q * g + k])));
  return out;
}

/// C = the grouped matmul, naively (integer types: wrapping): segment j
/// (counts[j] rows, negatives 0) of A times B[j % localGroups], clipped
/// at `rows`; rows past the segments zero.
template <typename T, typename Wide>
std::vector<T> naiveGroupedMatmul(int64_t rows, int64_t n, int64_t k,
                                  const std::vector<T> &a,
                                  const std::vector<T> &b, int64_t localGroups,
                                  const std::vector<int32_t> &counts) {
  std::vector<T> c(static_cast<size_t>(rows * n), T(0));
  int64_t start = 0;
  for (size_t j = 0; j < counts.size(); ++j) {
    const T *bj = b.data() + static_cast<int64_t>(j) % localGroups * k * n;
    for (int64_t t = 0; t < positive(counts[j]); ++t) {
      const int64_t i = start + t;
      if (i >= rows)
        break;
      for (int64_t col = 0; col < n; ++col) {
        Wide acc = 0;
        for (int64_t x = 0; x < k; ++x)
          acc += static_cast<Wide>(a[i * k + x]) *
                 static_cast<Wide>(bj[x * n + col]);
        c[i * n + col] = static_cast<T>(acc);
      }
    }
    start += positive(counts[j]);
  }
  return c;
}

/// The grouped-matmul cases: {rows, counts}, with an empty segment, a
/// negative count, a last segment clipped at `rows`, rows past the
/// segments, and no groups at all.
struct MatmulCase {
  std::string name;
  int64_t rows;
  std::vector<int32_t> counts;
};
inline std::vector<MatmulCase> matmulCases() {
  return {
      {"segments fill the rows", 12, {3, 0, 4, 5}},
      {"an empty and a negative segment, rows past the segments",
       15,
       {2, 0, -4, 6, 1, 0}},
      {"the last segment clipped", 10, {4, 3, 7, 2}},
      {"one segment", 9, {9}},
      {"no rows", 0, {2, 3}},
      {"no groups", 4, {}},
  };
}

} // namespace coconet::test::alltoallv

#endif // COCONET_TEST_RUNTIME_ALLTOALLV_REFERENCE_H
