//===- segment_walk.h - the segment of an element, in a kernel --*- C++ -*-===//
//
// What generated kernels read a segment table with (coconet/segments.h): a
// table's `ends` (T entries: segment s is the elements [ends[s - 1],
// ends[s]), the first from 0) and `starts` (for every chunk of
// kSegmentChunk elements, the segment holding the chunk's first element).
// The segment of element i is found from its chunk's entry by walking
// forward over the segments that end at or before i: a shift and a few
// loads, no division and no search.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SEGMENT_WALK_H
#define COCONET_RUNTIME_SEGMENT_WALK_H

#include "coconet/numeric.h"

#include <cstdint>

namespace coconet::rt {

constexpr int kSegmentChunkLog2 = 10;
constexpr int64_t kSegmentChunk = int64_t(1) << kSegmentChunkLog2;

/// The segment holding element `i` (0 <= i < the table's length).
COCONET_HD int64_t segmentAt(const int64_t *ends, const int64_t *starts,
                             int64_t i) {
  int64_t s = starts[i >> kSegmentChunkLog2];
  while (ends[s] <= i)
    ++s;
  return s;
}

} // namespace coconet::rt

#endif // COCONET_RUNTIME_SEGMENT_WALK_H
