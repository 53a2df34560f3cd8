//===- segments.cpp - reading and validating segment tables ---------------===//

#include "coconet/segments.h"

#include "coconet/files.h"
#include "coconet/npy.h"
#include "coconet/numeric.h"
#include "coconet/segment_walk.h"
#include "coconet/sizes.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace coconet::rt {

namespace {

Status invalid(const std::string &what, const std::string &why) {
  return Status::error(StatusCode::InvalidArgument, what + ": " + why);
}

} // namespace

Status SegmentTable::fromLengths(const std::vector<int64_t> &lengths,
                                 const std::string &what, SegmentTable *out) {
  if (lengths.empty())
    return invalid(what, "a segment table needs at least one segment");
  SegmentTable t;
  t.what_ = what;
  t.offsets_.reserve(lengths.size() + 1);
  for (size_t s = 0; s < lengths.size(); ++s) {
    const int64_t n = lengths[s];
    if (n < 0)
      return invalid(what, "segment " + std::to_string(s) + " has length " +
                               std::to_string(n) + "; lengths are 0 or more");
    if (n > std::numeric_limits<int64_t>::max() - t.offsets_.back())
      return invalid(what, "the lengths up to segment " + std::to_string(s) +
                               " sum past 2^63 - 1 elements");
    t.offsets_.push_back(t.offsets_.back() + n);
  }
  *out = std::move(t);
  return Status::success();
}

int64_t SegmentTable::segmentOf(int64_t i) const {
  // The last offset <= i among the starts; empty segments share their
  // start with the next one, which holds the element.
  auto it = std::upper_bound(offsets_.begin(), offsets_.end() - 1, i);
  return static_cast<int64_t>(it - offsets_.begin()) - 1;
}

std::vector<int64_t> SegmentTable::chunkStarts(int64_t chunk) const {
  std::vector<int64_t> starts;
  if (chunk <= 0)
    return starts;
  const int64_t n = elements();
  // ceil(n / chunk) chunks, counted without n + chunk - 1 (n may be near
  // 2^63 - 1).
  const int64_t chunks = n / chunk + (n % chunk != 0);
  starts.reserve(static_cast<size_t>(chunks));
  int64_t s = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t first = c * chunk;
    // Walk forward: the chunks' first elements increase.
    while (end(s) <= first)
      ++s;
    starts.push_back(s);
  }
  return starts;
}

Status SegmentTable::checkElements(int64_t n, const std::string &tensor) const {
  if (elements() == n)
    return Status::success();
  return invalid(what_, "the " + std::to_string(segments()) +
                            " lengths sum to " + std::to_string(elements()) +
                            " elements, but '" + tensor + "' has " +
                            std::to_string(n));
}

std::vector<int64_t> SegmentTable::lengths() const {
  std::vector<int64_t> out;
  out.reserve(offsets_.size() - 1);
  for (size_t s = 1; s < offsets_.size(); ++s)
    out.push_back(offsets_[s] - offsets_[s - 1]);
  return out;
}

Status SegmentTable::kernelTable(std::vector<int64_t> *out) const {
  const int64_t entries = kernelTableEntries(segments(), elements());
  try {
    std::vector<int64_t> table(offsets_.begin() + 1, offsets_.end());
    table.reserve(static_cast<size_t>(entries));
    const std::vector<int64_t> starts = chunkStarts(kSegmentChunk);
    table.insert(table.end(), starts.begin(), starts.end());
    *out = std::move(table);
  } catch (const std::exception &) { // bad_alloc, length_error
    // A table of few segments over a tensor of 2^60 elements: a chunk
    // start for every 2^k elements of it.
    return invalid(
        what_, "cannot allocate its kernel table: " + std::to_string(entries) +
                   " entries of 8 bytes of host memory (" +
                   std::to_string(segments()) + " segments over " +
                   std::to_string(elements()) + " elements)");
  }
  return Status::success();
}

int64_t SegmentTable::kernelTableEntries(int64_t count, int64_t length) {
  // Without length + kSegmentChunk - 1, which overflows for a length near
  // 2^63 - 1 (a table of one such segment: found by coconet-fuzz-segments);
  // saturated at 2^63 - 1.
  const int64_t chunks = length / kSegmentChunk + (length % kSegmentChunk != 0);
  return count > INT64_MAX - chunks ? INT64_MAX : count + chunks;
}

Status segmentTableOf(const int64_t *lengths, int64_t count,
                      const std::string &what, SegmentTable *out) {
  if (lengths == nullptr)
    return invalid(what, "the lengths are null");
  if (count < 1)
    return invalid(what, "a segment table needs at least one segment");
  return SegmentTable::fromLengths(
      std::vector<int64_t>(lengths, lengths + count), what, out);
}

Status randomSegmentTable(int64_t count, int64_t length, uint64_t seed,
                          uint64_t stream, const std::string &what,
                          SegmentTable *out) {
  if (count < 1 || length < 0)
    return invalid(what, "a generated table needs at least one segment and "
                         "a length of 0 or more; got " +
                             std::to_string(count) + " segments over " +
                             std::to_string(length) + " elements");
  // Checked before anything is allocated: the table holds T + 1 offsets of
  // 8 bytes, and generating it takes 17 bytes a segment more.
  if (count > kMaxTensorBytes / 32)
    return invalid(what, "a generated table of " + std::to_string(count) +
                             " segments would take more than 2^63 - 1 "
                             "bytes: choose a smaller count");
  try {
    // The top 3 bits of each cut's draw, and the cuts.
    std::vector<uint8_t> top(static_cast<size_t>(count - 1));
    std::vector<int64_t> cuts(top.size());
    const uint64_t range = static_cast<uint64_t>(length) + 1;
    for (size_t i = 0; i < top.size(); ++i) {
      const uint64_t bits = uniformInputBits(seed, stream, i);
      top[i] = static_cast<uint8_t>(bits >> 61);
      cuts[i] = static_cast<int64_t>(bits % range);
    }
    std::sort(cuts.begin(), cuts.end());
    int64_t previous = 0;
    for (size_t i = 0; i < cuts.size(); ++i) {
      if (top[i] == 0)
        cuts[i] = previous;
      else if (top[i] == 1)
        cuts[i] = std::min(cuts[i], previous + 1);
      previous = cuts[i];
    }
    std::vector<uint8_t>().swap(top);
    // The cuts become the lengths in place, the last one appended.
    previous = 0;
    for (int64_t &c : cuts) {
      const int64_t cut = c;
      c = cut - previous;
      previous = cut;
    }
    cuts.push_back(length - previous);
    return SegmentTable::fromLengths(cuts, what, out);
  } catch (const std::exception &) { // bad_alloc, length_error
    return invalid(what, "a generated table of " + std::to_string(count) +
                             " segments does not fit in memory (17 bytes a "
                             "segment while it is made): choose a smaller "
                             "count");
  }
}

Status parseSegmentTable(std::string_view text, const std::string &what,
                         SegmentTable *out) {
  std::vector<int64_t> lengths;
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n')
        ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
      ++i;
      continue;
    }
    // One word: up to white space, a comma or a comment.
    size_t j = i;
    while (j < text.size() &&
           !std::isspace(static_cast<unsigned char>(text[j])) &&
           text[j] != ',' && text[j] != '#')
      ++j;
    const std::string_view word = text.substr(i, j - i);
    const std::string where = what + ":" + std::to_string(line);
    int64_t value = 0;
    bool digits = !word.empty();
    for (char d : word) {
      if (d < '0' || d > '9') {
        digits = false;
        break;
      }
      if (value > (std::numeric_limits<int64_t>::max() - (d - '0')) / 10)
        return invalid(where, "the length '" + std::string(word) +
                                  "' is more than 2^63 - 1");
      value = value * 10 + (d - '0');
    }
    if (!digits)
      return invalid(where, "'" + std::string(word.substr(0, 40)) +
                                "' is not a length (an integer, 0 or more)");
    lengths.push_back(value);
    i = j;
  }
  return SegmentTable::fromLengths(lengths, what, out);
}

Status readSegmentTable(const std::string &path, SegmentTable *out) {
  std::string bytes;
  COCONET_RETURN_IF_ERROR(readRegularFile(path, "the segment table",
                                          kMaxSegmentTableFileBytes, &bytes));
  return segmentTableFromBytes(bytes, path, out);
}

Status segmentTableFromBytes(std::string_view bytes, const std::string &path,
                             SegmentTable *out) {
  if (bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    return parseSegmentTable(bytes, path, out);
  NpyArray array;
  if (Status st = parseNpy(bytes, &array); !st.ok())
    return invalid(path, st.message());
  if (array.shape.size() != 1)
    return invalid(path, "a .npy segment table is a 1-D array of lengths; "
                         "this one has " +
                             std::to_string(array.shape.size()) +
                             " dimensions");
  switch (array.type) {
  case NpyType::I32:
  case NpyType::I64:
  case NpyType::U64:
    break;
  case NpyType::F16:
  case NpyType::F32:
  case NpyType::F64:
  case NpyType::Bool:
    return invalid(path, std::string("a .npy segment table holds integer "
                                     "lengths; this one is ") +
                             npyDescr(array.type));
  }
  std::vector<int64_t> lengths(static_cast<size_t>(array.numElements()));
  for (int64_t s = 0; s < array.numElements(); ++s) {
    lengths[s] = array.getAsInt(s);
    if (array.type == NpyType::U64 && lengths[s] < 0)
      return invalid(path, "segment " + std::to_string(s) +
                               " is longer than 2^63 - 1 elements");
  }
  return SegmentTable::fromLengths(lengths, path, out);
}

} // namespace coconet::rt
