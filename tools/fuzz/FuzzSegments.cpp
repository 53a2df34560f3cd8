//===- FuzzSegments.cpp - libFuzzer target for segment tables -------------===//
//
// A segment table reaches coconetc sim and the generated drivers as a file
// (--segments: text lengths, or a .npy of integers; both through
// rt::segmentTableFromBytes, after coconet/files.h's checks) and is
// generated from a count and a length when none is given
// (rt::randomSegmentTable). The input is read as a table file; its first 8
// bytes also give a count and a length for a generated table. Checked
// besides the absence of crashes and sanitizer reports:
//   - a table read is valid: at least one segment, no length negative,
//     offsets the prefix sums, their sum at most 2^63 - 1; every element
//     probed is in the segment segmentOf names, which is not empty; the
//     kernel table, where it is small, is the segment ends then each
//     chunk's first segment;
//   - its lengths written back as text read back as the same table;
//   - a refusal's message names the table and is at most 1 KiB;
//   - a generated table has its count, its lengths sum to its length, it
//     is the same when made again, and its count is refused past 2^63 - 1
//     bytes without allocating.
//
//   build-fuzz/tools/coconet-fuzz-segments -dict=tools/fuzz/segments.dict
//       test/fuzz/corpus/segments
//
//===----------------------------------------------------------------------===//

#include "coconet/segment_walk.h"
#include "coconet/segments.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace rt = coconet::rt;

namespace {

[[noreturn]] void bug(const std::string &what) {
  std::fprintf(stderr, "==== coconet-fuzz-segments: %s ====\n", what.c_str());
  std::abort();
}

/// The most kernel-table entries built per input (the table of a tensor
/// of 2^62 elements is refused by the drivers' sizes first; larger ones
/// are left to the unit tests, to keep thousands of inputs a second).
constexpr int64_t kMaxKernelEntries = int64_t(1) << 12;

void checkTable(const rt::SegmentTable &t, const std::string &what) {
  const int64_t count = t.segments(), n = t.elements();
  if (count < 1)
    bug(what + ": a table without segments");
  int64_t sum = 0;
  std::vector<int64_t> lengths = t.lengths();
  if (static_cast<int64_t>(lengths.size()) != count)
    bug(what + ": lengths() is not one per segment");
  for (int64_t s = 0; s < count; ++s) {
    if (t.length(s) < 0 || t.length(s) != lengths[s])
      bug(what + ": a negative length, or lengths() disagrees");
    if (t.begin(s) != sum || t.end(s) != sum + t.length(s))
      bug(what + ": offsets are not the prefix sums");
    if (__builtin_add_overflow(sum, t.length(s), &sum))
      bug(what + ": the lengths overflow");
  }
  if (sum != n)
    bug(what + ": elements() is not the sum of the lengths");
  // Elements at the ends of every segment (the first 64) and spread out.
  std::vector<int64_t> probes;
  for (int64_t s = 0; s < count && s < 64; ++s)
    if (t.length(s) > 0)
      probes.insert(probes.end(), {t.begin(s), t.end(s) - 1});
  for (int k = 0; k < 16 && n > 0; ++k)
    probes.push_back(n / 16 * k + (n % 16) * k / 16);
  for (int64_t i : probes) {
    const int64_t s = t.segmentOf(i);
    if (s < 0 || s >= count || t.begin(s) > i || i >= t.end(s) ||
        t.length(s) == 0)
      bug(what + ": segmentOf(" + std::to_string(i) + ") is " +
          std::to_string(s));
  }
  if (rt::SegmentTable::kernelTableEntries(count, n) > kMaxKernelEntries)
    return;
  std::vector<int64_t> kernel;
  rt::Status st = t.kernelTable(&kernel);
  if (!st.ok())
    bug(what + ": a small kernel table refused: " + st.message());
  if (static_cast<int64_t>(kernel.size()) !=
      rt::SegmentTable::kernelTableEntries(count, n))
    bug(what + ": the kernel table's size");
  for (int64_t s = 0; s < count; ++s)
    if (kernel[s] != t.end(s))
      bug(what + ": the kernel table's segment ends");
  for (size_t c = static_cast<size_t>(count); c < kernel.size(); ++c) {
    const int64_t first = static_cast<int64_t>(c - count) * rt::kSegmentChunk;
    if (kernel[c] != t.segmentOf(first))
      bug(what + ": chunk " + std::to_string(c - count) +
          " starts in the wrong segment");
  }
}

void checkRefusal(const rt::Status &st, const std::string &what) {
  if (st.ok())
    return;
  if (st.message().rfind(what, 0) != 0)
    bug("a refusal that does not name the table: " + st.message());
  if (st.message().size() > 1024)
    bug("a refusal of " + std::to_string(st.message().size()) + " bytes");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char *>(data), size);
  const std::string what = "t.segments";

  // As a file.
  rt::SegmentTable table;
  rt::Status st = rt::segmentTableFromBytes(bytes, what, &table);
  checkRefusal(st, what);
  if (st.ok()) {
    checkTable(table, what);
    // Written back as text, read back the same.
    std::string text;
    for (int64_t s = 0; s < table.segments(); ++s)
      text += std::to_string(table.length(s)) + (s % 8 == 7 ? "\n" : " ");
    rt::SegmentTable again;
    rt::Status back = rt::parseSegmentTable(text, what, &again);
    if (!back.ok())
      bug("its lengths as text are refused: " + back.message());
    if (again.lengths() != table.lengths())
      bug("its lengths as text read back as another table");
  }

  // The first 8 bytes as a generated table's count and length: a count
  // below 2^8 in the low bits (each segment is a Philox draw: larger
  // counts are the unit tests'), a length of any magnitude to 2^40; the
  // count past 2^63 - 1 bytes with the top bit.
  if (size >= 8) {
    uint64_t word = 0;
    std::memcpy(&word, data, 8);
    int64_t count = static_cast<int64_t>(word & 0xff);
    const unsigned shift = static_cast<unsigned>((word >> 16) & 63);
    const int64_t length =
        static_cast<int64_t>((word >> 24) & ((uint64_t(1) << 40) - 1)) >>
        (shift % 40);
    if (word >> 63)
      count = INT64_MAX - count;
    const uint64_t seed = word >> 40;
    rt::SegmentTable made, again;
    rt::Status a = rt::randomSegmentTable(count, length, seed, 3, "gen", &made);
    rt::Status b =
        rt::randomSegmentTable(count, length, seed, 3, "gen", &again);
    checkRefusal(a, "gen");
    if (a.ok() != b.ok() || a.message() != b.message())
      bug("a generated table is not the same when made again");
    if ((count < 1) != !a.ok() && count < (int64_t(1) << 8))
      bug("a generated table of " + std::to_string(count) + " segments " +
          (a.ok() ? "made" : "refused: " + a.message()));
    if (a.ok()) {
      if (made.segments() != count || made.elements() != length)
        bug("a generated table has another count or length");
      if (made.lengths() != again.lengths())
        bug("a generated table differs when made again");
      checkTable(made, "gen");
    }
  }
  return 0;
}
