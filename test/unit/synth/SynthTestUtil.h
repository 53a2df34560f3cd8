//===- SynthTestUtil.h - topologies and algorithms the synth tests share --===//
//
// Small topologies whose algorithms can be worked out by hand, and the
// ring AllGather written out, for test/unit/synth/.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_SYNTH_SYNTHTESTUTIL_H
#define COCONET_TEST_UNIT_SYNTH_SYNTHTESTUTIL_H

#include "synth/Algorithm.h"

#include "llvm/ADT/STLExtras.h"

#include <tuple>

namespace coconet::synth::test {

/// Every rank linked to every other, each link `cost` a chunk.
inline Topology complete(unsigned ranks, double cost) {
  Topology t;
  t.name = "complete";
  t.gpusPerNode = ranks;
  for (unsigned s = 0; s < ranks; ++s)
    for (unsigned d = 0; d < ranks; ++d)
      if (s != d)
        t.links.push_back({s, d, 0, cost, cost, false});
  return t;
}

/// A bidirectional ring; links from even ranks cost `even`, from odd
/// ranks `odd`.
inline Topology ring(unsigned ranks, double even = 1, double odd = 1) {
  Topology t;
  t.name = "ring";
  t.gpusPerNode = ranks;
  for (unsigned r = 0; r < ranks; ++r) {
    double c = r % 2 ? odd : even;
    t.links.push_back({r, (r + 1) % ranks, 0, c, c, false});
    t.links.push_back({r, (r + ranks - 1) % ranks, 0, c, c, false});
  }
  llvm::sort(t.links, [](const Link &a, const Link &b) {
    return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
  });
  return t;
}

/// Ring AllGather on 4 ranks one way round: in step j rank r passes on
/// chunk (r - j) mod 4 to rank r + 1.
inline Algorithm ringAllGather() {
  Algorithm a;
  a.name = "ring";
  a.collective = Collective::AllGather;
  a.ranks = 4;
  for (unsigned j = 0; j < 3; ++j) {
    Step s;
    for (unsigned r = 0; r < 4; ++r)
      s.transfers.push_back({(r + 4 - j) % 4, r, (r + 1) % 4, false});
    a.steps.push_back(s);
  }
  return a;
}

} // namespace coconet::synth::test

#endif // COCONET_TEST_UNIT_SYNTH_SYNTHTESTUTIL_H
