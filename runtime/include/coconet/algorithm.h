//===- algorithm.h - a collective algorithm as a table ----------*- C++ -*-===//
//
// A synthesised (or hand-written) collective algorithm as the runtimes run
// it: what `coconetc synth --emit=cpp` writes from an algorithm file
// (docs/synth.md, "Running an algorithm"), checked by the compiler's
// verifier before it is written. The numbering is the algorithm file's:
// with R ranks and k chunks a rank,
//
//   AllGather      R x k chunks; chunk c is rank c / k's input chunk c % k
//                  and every rank's output chunk c;
//   ReduceScatter  R x k chunks; every rank's input chunk c, combined into
//                  rank c / k's output chunk c % k;
//   AllReduce      R x k chunks; every rank's input chunk c, combined into
//                  every rank's output chunk c;
//   AllToAll       R x R x k chunks; chunk (s * R + d) * k + i is rank s's
//                  input chunk d * k + i and rank d's output chunk s * k + i.
//
// Steps run in order; a step's transfers happen at once: rank `src` sends
// its copy of `chunk` to rank `dst`, which stores it (a copy) or combines
// it into its own copy (reduce: the receiver's value first, the arriving
// one second, by coconet/combine.h's rule for two members, rounded to the
// element type at once). So the order in which a reduction combines is the
// algorithm's, the same on every run and target, not the simulator's rank
// order (docs/synth.md says when the two agree).
//
// Plain data, no functions: usable from host and device code.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_ALGORITHM_H
#define COCONET_RUNTIME_ALGORITHM_H

#include <cstdint>

namespace coconet::rt::algorithm {

enum class Collective : uint32_t {
  AllGather = 0,
  AllToAll = 1,
  ReduceScatter = 2,
  AllReduce = 3,
};

struct Transfer {
  uint32_t chunk;
  uint32_t src;
  uint32_t dst;
  uint32_t reduce; ///< 1: combined into dst's copy; 0: stored over it
};

struct Table {
  const char *name;
  Collective collective;
  uint32_t ranks;
  uint32_t chunksPerRank;
  uint32_t numSteps;
  /// numSteps + 1 entries: step s is transfers [stepBegin[s],
  /// stepBegin[s + 1]).
  const uint32_t *stepBegin;
  const Transfer *transfers;
};

/// The chunks of the collective (R x k, or R x R x k for AllToAll).
inline uint64_t numChunks(const Table &t) {
  const uint64_t rk = uint64_t{t.ranks} * t.chunksPerRank;
  return t.collective == Collective::AllToAll ? rk * t.ranks : rk;
}

/// Chunks of one rank's input and of its output buffer.
inline uint64_t inputChunks(const Table &t) {
  const uint64_t rk = uint64_t{t.ranks} * t.chunksPerRank;
  return t.collective == Collective::AllGather ? t.chunksPerRank : rk;
}
inline uint64_t outputChunks(const Table &t) {
  const uint64_t rk = uint64_t{t.ranks} * t.chunksPerRank;
  return t.collective == Collective::ReduceScatter ? t.chunksPerRank : rk;
}

inline bool reduces(const Table &t) {
  return t.collective == Collective::ReduceScatter ||
         t.collective == Collective::AllReduce;
}

} // namespace coconet::rt::algorithm

#endif // COCONET_RUNTIME_ALGORITHM_H
