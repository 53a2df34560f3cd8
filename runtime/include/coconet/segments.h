//===- segments.h - a flat tensor as a list of segments ---------*- C++ -*-===//
//
// A model's parameters kept in one flat buffer: T segments of given lengths
// (a segment may be empty), one per tensor, in order, their lengths summing
// to the buffer's N elements. The table is given at run time (a text file of
// lengths, or a .npy of a 1-D integer array); SegmentTable validates it and
// answers where each segment starts. Kernels do not search it per element:
// chunkStarts() gives, for chunks of a fixed size, the first segment each
// chunk touches (as apex's multi_tensor_apply does), from which a chunk walks
// its segments in order.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SEGMENTS_H
#define COCONET_RUNTIME_SEGMENTS_H

#include "coconet/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace coconet::rt {

class SegmentTable {
public:
  /// A table of `lengths` (each at least 0; their sum at most 2^63 - 1).
  /// `what` names the table in errors ("segments.txt").
  static Status fromLengths(const std::vector<int64_t> &lengths,
                            const std::string &what, SegmentTable *out);

  /// T, and N (the sum of the lengths).
  int64_t segments() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t elements() const { return offsets_.back(); }
  /// Segment s is the elements [begin(s), end(s)).
  int64_t begin(int64_t s) const { return offsets_[s]; }
  int64_t end(int64_t s) const { return offsets_[s + 1]; }
  int64_t length(int64_t s) const { return end(s) - begin(s); }
  /// The segment that holds element i (0 <= i < N): the last of the
  /// segments starting at or before i that is not empty.
  int64_t segmentOf(int64_t i) const;
  /// For chunks of `chunk` elements (the last one shorter): the segment of
  /// each chunk's first element, ceil(N / chunk) entries.
  std::vector<int64_t> chunkStarts(int64_t chunk) const;
  /// InvalidArgument unless the table covers exactly `n` elements, naming
  /// the table and `tensor`.
  Status checkElements(int64_t n, const std::string &tensor) const;
  /// The T lengths.
  std::vector<int64_t> lengths() const;
  /// What kernels read (coconet/segment_walk.h), in one array: the T
  /// segment ends, then chunkStarts(kSegmentChunk). InvalidArgument,
  /// naming the table, when it does not fit in memory (a table over a
  /// tensor of 2^60 elements threw std::bad_alloc out of create()).
  Status kernelTable(std::vector<int64_t> *out) const;
  /// Its number of entries for a table of `count` segments over `length`
  /// elements (2^63 - 1 when there are more).
  static int64_t kernelTableEntries(int64_t count, int64_t length);

private:
  std::string what_;
  std::vector<int64_t> offsets_{0}; ///< T + 1 prefix sums
};

/// The table generated when none is given (the simulator's and the
/// generated drivers'): `count` segments over `length` elements, a pure
/// function of (seed, stream). With b_i = uniformInputBits(seed, stream, i)
/// (coconet/numeric.h), the count - 1 cuts c_i = b_i mod (length + 1) are
/// sorted; then, in order, a cut with b_i >> 61 == 0 moves onto the cut
/// before it (an empty segment) and one with b_i >> 61 == 1 to at most one
/// past it (a segment of 0 or 1 elements). Segment s runs from cut s - 1
/// (0 for the first) to cut s (`length` for the last).
Status randomSegmentTable(int64_t count, int64_t length, uint64_t seed,
                          uint64_t stream, const std::string &what,
                          SegmentTable *out);
/// The stream of the generated table of a program's table `index` (the
/// parameters' streams are (index << 32) | group, below it).
constexpr uint64_t segmentTableStream(uint64_t index) {
  return ~uint64_t(0) - index;
}

/// A table of the `count` lengths at `lengths` (a generated program's
/// create() argument); `what` names it in errors.
Status segmentTableOf(const int64_t *lengths, int64_t count,
                      const std::string &what, SegmentTable *out);

/// A table from text: lengths separated by white space or commas, `#`
/// starting a comment to the end of its line. Errors name `what` and the
/// line of a length that is not a non-negative integer.
Status parseSegmentTable(std::string_view text, const std::string &what,
                         SegmentTable *out);
/// A table from a file: a .npy (its first bytes are the .npy magic) of a
/// 1-D array of integers, else text as parseSegmentTable reads it. The
/// file is a regular file of at most 1 GiB (coconet/files.h).
Status readSegmentTable(const std::string &path, SegmentTable *out);
/// The same from the file's bytes (`what` names it in errors).
Status segmentTableFromBytes(std::string_view bytes, const std::string &what,
                             SegmentTable *out);

} // namespace coconet::rt

#endif // COCONET_RUNTIME_SEGMENTS_H
