//===- Algorithm.cpp - collective algorithms and their symbolic check -----===//

#include "synth/Algorithm.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <utility>

namespace coconet::synth {

namespace {

struct CollectiveName {
  Collective c;
  llvm::StringRef name;
};
constexpr CollectiveName kCollectives[] = {
    {Collective::AllGather, "Allgather"},
    {Collective::AllToAll, "Alltoall"},
    {Collective::ReduceScatter, "ReduceScatter"},
    {Collective::AllReduce, "Allreduce"}};

/// "the contribution of rank 1", "the contributions of ranks {0, 3}".
std::string contributions(const llvm::BitVector &set) {
  if (set.count() == 1)
    return "the contribution of rank " + std::to_string(set.find_first());
  std::string out = "the contributions of ranks {";
  bool first = true;
  for (unsigned r : set.set_bits()) {
    out += (first ? "" : ", ") + std::to_string(r);
    first = false;
  }
  return out + "}";
}

/// The symbolic state: which ranks' contributions each rank's copy of each
/// chunk holds (empty: the rank does not have the chunk).
class State {
public:
  State(unsigned ranks, unsigned chunks)
      : ranks(ranks), chunks(chunks), sets(size_t(ranks) * chunks) {}

  const llvm::BitVector &at(unsigned rank, unsigned chunk) const {
    const llvm::BitVector &s = sets[size_t(rank) * chunks + chunk];
    return s.empty() ? none() : s;
  }
  void set(unsigned rank, unsigned chunk, llvm::BitVector v) {
    sets[size_t(rank) * chunks + chunk] = std::move(v);
  }
  void add(unsigned rank, unsigned chunk, unsigned contributor) {
    llvm::BitVector &s = sets[size_t(rank) * chunks + chunk];
    if (s.empty())
      s.resize(ranks);
    s.set(contributor);
  }
  bool holds(unsigned rank, unsigned chunk) const {
    return at(rank, chunk).any();
  }

private:
  const llvm::BitVector &none() const {
    if (empty.size() != ranks)
      empty.resize(ranks);
    return empty;
  }
  unsigned ranks, chunks;
  std::vector<llvm::BitVector> sets;
  mutable llvm::BitVector empty;
};

std::string where(size_t step, const Transfer &t) {
  return "step " + std::to_string(step) + ": chunk " + std::to_string(t.chunk) +
         " from rank " + std::to_string(t.src) + " to rank " +
         std::to_string(t.dst);
}

} // namespace

std::optional<Collective> parseCollective(llvm::StringRef name) {
  for (const CollectiveName &c : kCollectives)
    if (name.equals_insensitive(c.name))
      return c.c;
  return std::nullopt;
}

llvm::StringRef collectiveName(Collective c) {
  for (const CollectiveName &n : kCollectives)
    if (n.c == c)
      return n.name;
  return "?";
}

bool reduces(Collective c) {
  switch (c) {
  case Collective::AllGather:
  case Collective::AllToAll:
    return false;
  case Collective::ReduceScatter:
  case Collective::AllReduce:
    return true;
  }
  return false;
}

unsigned Algorithm::chunks() const {
  unsigned per = collective == Collective::AllToAll ? ranks : 1;
  return ranks * per * chunksPerRank;
}

unsigned Algorithm::owner(unsigned c) const {
  unsigned per = collective == Collective::AllToAll ? ranks : 1;
  return c / (per * chunksPerRank);
}

/// verifyAlgorithm, or with no topology verifyDataFlow.
static std::optional<std::string> verify(const Algorithm &alg,
                                         const Topology *topology) {
  const unsigned R = alg.ranks;
  if (topology && R != topology->ranks())
    return "the algorithm is for " + std::to_string(R) +
           " ranks; the topology has " + std::to_string(topology->ranks());
  if (R == 0 || alg.chunksPerRank == 0)
    return std::string("an algorithm needs ranks and chunks");
  const unsigned C = alg.chunks();
  const bool reducing = reduces(alg.collective);

  State state(R, C);
  for (unsigned c = 0; c < C; ++c) {
    if (reducing)
      for (unsigned r = 0; r < R; ++r)
        state.add(r, c, r);
    else
      state.add(alg.owner(c), c, alg.owner(c));
  }

  for (size_t s = 0; s < alg.steps.size(); ++s) {
    const Step &step = alg.steps[s];
    if (step.rounds == 0)
      return "step " + std::to_string(s) + " has no rounds";
    // Every transfer reads the state before the step.
    std::map<std::pair<unsigned, unsigned>, llvm::BitVector> writes;
    llvm::DenseMap<std::pair<unsigned, unsigned>, unsigned> perLink;
    for (const Transfer &t : step.transfers) {
      if (t.src >= R || t.dst >= R || t.chunk >= C)
        return where(s, t) + ": no such rank or chunk (" + std::to_string(R) +
               " ranks, " + std::to_string(C) + " chunks)";
      if (t.src == t.dst)
        return where(s, t) + ": a rank sends to itself";
      if (topology && !topology->link(t.src, t.dst))
        return where(s, t) + ": the topology has no link from rank " +
               std::to_string(t.src) + " to rank " + std::to_string(t.dst);
      const llvm::BitVector &from = state.at(t.src, t.chunk);
      if (from.none())
        return where(s, t) + ": rank " + std::to_string(t.src) +
               " does not have the chunk yet";
      const llvm::BitVector &to = state.at(t.dst, t.chunk);
      auto [it, first] = writes.try_emplace({t.dst, t.chunk});
      if (!first)
        return where(s, t) + ": a second transfer into rank " +
               std::to_string(t.dst) + "'s chunk " + std::to_string(t.chunk) +
               " in the same step";
      if (t.reduce) {
        if (!reducing)
          return where(s, t) + ": a reduction in an " +
                 collectiveName(alg.collective).str();
        llvm::BitVector both = from;
        both &= to;
        if (both.any())
          return where(s, t) + ": the reduction counts " + contributions(both) +
                 " twice";
        it->second = to;
        it->second |= from;
      } else {
        if (to == from)
          return where(s, t) + ": rank " + std::to_string(t.dst) +
                 " already has it";
        // A copy over contributions the sender's copy lacks loses them.
        llvm::BitVector lost = to;
        lost.reset(from);
        if (lost.any())
          return where(s, t) + ": the copy overwrites " + contributions(lost) +
                 ", which the sender's copy does not hold";
        it->second = from;
      }
      unsigned &n = perLink[{t.src, t.dst}];
      if (++n > step.rounds && topology)
        return where(s, t) + ": the link from rank " + std::to_string(t.src) +
               " to rank " + std::to_string(t.dst) + " carries " +
               std::to_string(n) + " chunks in a step of " +
               std::to_string(step.rounds) + " round" +
               (step.rounds == 1 ? "" : "s");
    }
    for (const Switch &sw :
         topology ? topology->switches : std::vector<Switch>()) {
      unsigned n = 0;
      for (const auto &[link, count] : perLink)
        if (llvm::is_contained(sw.srcs, link.first) &&
            llvm::is_contained(sw.dsts, link.second))
          n += count;
      if (n > step.rounds)
        return "step " + std::to_string(s) + ": switch port " + sw.name +
               " carries " + std::to_string(n) + " chunks in a step of " +
               std::to_string(step.rounds) + " round" +
               (step.rounds == 1 ? "" : "s");
    }
    for (auto &[key, value] : writes)
      state.set(key.first, key.second, std::move(value));
  }

  // What each rank must end with.
  for (unsigned c = 0; c < C; ++c)
    for (unsigned r = 0; r < R; ++r) {
      bool must = false;
      switch (alg.collective) {
      case Collective::AllGather:
      case Collective::AllReduce:
        must = true;
        break;
      case Collective::AllToAll:
        must = (c / alg.chunksPerRank) % R == r;
        break;
      case Collective::ReduceScatter:
        must = alg.owner(c) == r;
        break;
      }
      if (!must)
        continue;
      const llvm::BitVector &have = state.at(r, c);
      if (have.none())
        return "rank " + std::to_string(r) + " ends without chunk " +
               std::to_string(c) + " (" + collectiveName(alg.collective).str() +
               ")";
      if (reducing && have.count() != R) {
        llvm::BitVector missing(R, true);
        missing.reset(have);
        return "rank " + std::to_string(r) + "'s chunk " + std::to_string(c) +
               " lacks " + contributions(missing);
      }
    }
  return std::nullopt;
}

std::optional<std::string> verifyAlgorithm(const Algorithm &alg,
                                           const Topology &topology) {
  return verify(alg, &topology);
}

std::optional<std::string> verifyDataFlow(const Algorithm &alg) {
  return verify(alg, nullptr);
}

} // namespace coconet::synth
