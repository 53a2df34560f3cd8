//===- SegmentsTest.cpp - segment tables: reading, checking, chunk maps ---===//
//
// runtime/include/coconet/segments.h: a flat tensor as T segments. Tables
// with empty and one-element segments and lengths that are no multiple of
// a chunk; every element's segment and every chunk's first segment against
// a search over the lengths; text and .npy tables, and the tables that are
// refused, with their messages.
//
//===----------------------------------------------------------------------===//

#include "coconet/segments.h"
#include "coconet/npy.h"
#include "coconet/segment_walk.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>

using namespace coconet::rt;

namespace {

/// The segment of element i by walking the lengths (empty segments hold
/// nothing).
int64_t walk(const std::vector<int64_t> &lengths, int64_t i) {
  for (size_t s = 0; s < lengths.size(); ++s) {
    if (i < lengths[s])
      return static_cast<int64_t>(s);
    i -= lengths[s];
  }
  return -1;
}

/// T segments of random lengths: a quarter empty, a quarter of one
/// element, the rest up to `longest`.
std::vector<int64_t> randomLengths(std::mt19937_64 &rng, size_t t,
                                   int64_t longest) {
  std::vector<int64_t> lengths(t);
  for (int64_t &n : lengths) {
    switch (rng() % 4) {
    case 0:
      n = 0;
      break;
    case 1:
      n = 1;
      break;
    default:
      n = static_cast<int64_t>(rng() % static_cast<uint64_t>(longest)) + 1;
    }
  }
  return lengths;
}

struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("seg", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
};

std::string parseError(std::string_view text) {
  SegmentTable t;
  Status st = parseSegmentTable(text, "t.txt", &t);
  return st.ok() ? std::string("ok") : st.message();
}

} // namespace

TEST_CASE("a segment table knows every element's segment and every chunk's "
          "first",
          "[runtime][segments]") {
  std::mt19937_64 rng(7);
  for (size_t t :
       {size_t(1), size_t(2), size_t(7), size_t(148), size_t(10000)}) {
    std::vector<int64_t> lengths = randomLengths(rng, t, t > 1000 ? 40 : 700);
    lengths.back() += 1; // at least one element
    SegmentTable table;
    REQUIRE(SegmentTable::fromLengths(lengths, "random", &table).ok());
    REQUIRE(table.segments() == static_cast<int64_t>(t));
    int64_t n = 0;
    for (int64_t l : lengths)
      n += l;
    REQUIRE(table.elements() == n);
    INFO("T = " << t << ", N = " << n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = table.segmentOf(i);
      REQUIRE(s == walk(lengths, i));
      REQUIRE(table.begin(s) <= i);
      REQUIRE(i < table.end(s));
    }
    for (int64_t chunk : {int64_t(1), int64_t(3), int64_t(512), n, n + 5}) {
      const std::vector<int64_t> starts = table.chunkStarts(chunk);
      REQUIRE(static_cast<int64_t>(starts.size()) == (n + chunk - 1) / chunk);
      for (size_t c = 0; c < starts.size(); ++c)
        REQUIRE(starts[c] == walk(lengths, static_cast<int64_t>(c) * chunk));
    }
  }
}

TEST_CASE("a segment table covers its tensor exactly", "[runtime][segments]") {
  SegmentTable table;
  REQUIRE(SegmentTable::fromLengths({3, 0, 5}, "model.txt", &table).ok());
  CHECK(table.checkElements(8, "w").ok());
  const Status st = table.checkElements(9, "w");
  CHECK(st.code() == StatusCode::InvalidArgument);
  CHECK(st.message() ==
        "model.txt: the 3 lengths sum to 8 elements, but 'w' has 9");
  CHECK(SegmentTable::fromLengths({}, "e", &table).message() ==
        "e: a segment table needs at least one segment");
  CHECK(SegmentTable::fromLengths({4, -1}, "n", &table).message() ==
        "n: segment 1 has length -1; lengths are 0 or more");
  CHECK(SegmentTable::fromLengths({INT64_MAX, 1}, "o", &table).message() ==
        "o: the lengths up to segment 1 sum past 2^63 - 1 elements");
}

TEST_CASE("segment tables are read from text", "[runtime][segments]") {
  SegmentTable table;
  REQUIRE(parseSegmentTable("# gpt-2 small, scaled\n3, 0\n5 1 # last\n", "t",
                            &table)
              .ok());
  CHECK(table.segments() == 4);
  CHECK(table.begin(2) == 3);
  CHECK(table.end(3) == 9);
  CHECK(parseError("1\n2\n-3\n") ==
        "t.txt:3: '-3' is not a length (an integer, 0 or more)");
  CHECK(parseError("4 1.5") ==
        "t.txt:1: '1.5' is not a length (an integer, 0 or more)");
  CHECK(parseError("\n\nabc") ==
        "t.txt:3: 'abc' is not a length (an integer, 0 or more)");
  CHECK(parseError("99999999999999999999") ==
        "t.txt:1: the length '99999999999999999999' is more than 2^63 - 1");
  CHECK(parseError("# nothing\n") ==
        "t.txt: a segment table needs at least one segment");
}

TEST_CASE("segment tables are read from .npy files", "[runtime][segments]") {
  TempDir dir;
  SegmentTable table;
  const int64_t lengths[] = {2, 0, 7};
  REQUIRE(writeNpyFile(dir.file("t.npy"), NpyType::I64, {3}, lengths,
                       sizeof lengths)
              .ok());
  REQUIRE(readSegmentTable(dir.file("t.npy"), &table).ok());
  CHECK(table.segments() == 3);
  CHECK(table.elements() == 9);
  const int32_t narrow[] = {1, 1};
  REQUIRE(writeNpyFile(dir.file("i32.npy"), NpyType::I32, {2}, narrow,
                       sizeof narrow)
              .ok());
  REQUIRE(readSegmentTable(dir.file("i32.npy"), &table).ok());
  CHECK(table.elements() == 2);
  const float floats[] = {1, 2};
  REQUIRE(
      writeNpyFile(dir.file("f.npy"), NpyType::F32, {2}, floats, sizeof floats)
          .ok());
  CHECK(readSegmentTable(dir.file("f.npy"), &table).message() ==
        dir.file("f.npy") +
            ": a .npy segment table holds integer lengths; this one is <f4");
  REQUIRE(writeNpyFile(dir.file("2d.npy"), NpyType::I64, {1, 3}, lengths,
                       sizeof lengths)
              .ok());
  CHECK(readSegmentTable(dir.file("2d.npy"), &table).message() ==
        dir.file("2d.npy") + ": a .npy segment table is a 1-D array of "
                             "lengths; this one has 2 dimensions");
  {
    std::ofstream(dir.file("text.txt")) << "4 4\n";
  }
  REQUIRE(readSegmentTable(dir.file("text.txt"), &table).ok());
  CHECK(table.elements() == 8);
  CHECK(readSegmentTable(dir.file("missing.txt"), &table).code() ==
        StatusCode::IoError);
}

TEST_CASE("generated tables are valid, deterministic and varied",
          "[segments]") {
  int empty = 0, ones = 0;
  for (int64_t count : {1, 2, 7, 148, 10000}) {
    for (int64_t length : {0, 1, 100, 100000}) {
      SegmentTable a, b;
      REQUIRE(
          randomSegmentTable(count, length, 7, segmentTableStream(0), "t", &a)
              .ok());
      REQUIRE(
          randomSegmentTable(count, length, 7, segmentTableStream(0), "t", &b)
              .ok());
      CHECK(a.segments() == count);
      CHECK(a.elements() == length);
      bool same = true;
      for (int64_t s = 0; s < count; ++s) {
        same &= a.length(s) == b.length(s);
        empty += a.length(s) == 0;
        ones += a.length(s) == 1;
      }
      CHECK(same);
    }
  }
  CHECK(empty > 100);
  CHECK(ones > 100);
  SegmentTable other, first;
  REQUIRE(randomSegmentTable(148, 100000, 8, segmentTableStream(0), "t", &other)
              .ok());
  REQUIRE(randomSegmentTable(148, 100000, 7, segmentTableStream(0), "t", &first)
              .ok());
  bool differs = false;
  for (int64_t s = 0; s < 148; ++s)
    differs |= other.length(s) != first.length(s);
  CHECK(differs);
  SegmentTable bad;
  CHECK(!randomSegmentTable(0, 10, 1, 0, "t", &bad).ok());
}

TEST_CASE("a table over 2^63 - 1 elements: its kernel table is counted "
          "without overflow and refused, not thrown",
          "[runtime][segments]") {
  SegmentTable t;
  REQUIRE(SegmentTable::fromLengths({INT64_MAX}, "t", &t).ok());
  // ceil((2^63 - 1) / 1024) chunks and one segment end (length + 1023
  // overflowed: found by coconet-fuzz-segments).
  CHECK(SegmentTable::kernelTableEntries(1, INT64_MAX) ==
        1 + INT64_MAX / kSegmentChunk + 1);
  CHECK(SegmentTable::kernelTableEntries(INT64_MAX, INT64_MAX) == INT64_MAX);
  CHECK(SegmentTable::kernelTableEntries(3, 0) == 3);
  CHECK(SegmentTable::kernelTableEntries(3, kSegmentChunk) == 4);
  CHECK(SegmentTable::kernelTableEntries(3, kSegmentChunk + 1) == 5);
  // Its kernel table does not fit in memory: an error naming the table
  // (create() let std::bad_alloc out).
  std::vector<int64_t> kernel;
  Status st = t.kernelTable(&kernel);
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::InvalidArgument);
  CHECK(st.message().rfind("t: cannot allocate its kernel table: ", 0) == 0);
  CHECK(kernel.empty());
  // A small table's kernel table: the ends, then each chunk's segment.
  SegmentTable small;
  REQUIRE(SegmentTable::fromLengths({kSegmentChunk, 0, 3}, "s", &small).ok());
  REQUIRE(small.kernelTable(&kernel).ok());
  CHECK(kernel == std::vector<int64_t>{kSegmentChunk, kSegmentChunk,
                                       kSegmentChunk + 3, 0, 2});
}
