//===- CostModel.cpp - predicted time of one step on a machine ------------===//
//
// See CostModel.h for the model; docs/tuner.md for where each term comes
// from.
//
//===----------------------------------------------------------------------===//

#include "tune/CostModel.h"

#include "ir/AlgorithmTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <tuple>

namespace coconet::tune {

std::optional<AlgorithmShape> algorithmShape(Collective collective,
                                             Algorithm algorithm,
                                             int64_t members, double bytes) {
  const double p = static_cast<double>(members), n = bytes;
  if (members <= 1)
    return AlgorithmShape{0, 0};
  const double ring = (p - 1) / p * n;
  const double logP = std::ceil(std::log2(p));
  switch (algorithm) {
  // The library's own choice is priced as a ring: what NCCL picks for
  // large messages, and what the CPU runtime's alltoall-based collectives
  // move.
  case Algorithm::Library:
  case Algorithm::Ring:
    switch (collective) {
    case Collective::AllReduce:
      return AlgorithmShape{2 * (p - 1), 2 * ring};
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll:  // P - 1 pairwise exchanges of n / P
    case Collective::AllToAllV: // as many, where the routing is even
      return AlgorithmShape{p - 1, ring};
    case Collective::Broadcast:
    case Collective::Reduce:
      return AlgorithmShape{p - 1, n};
    case Collective::SendRecv:
      return AlgorithmShape{1, n};
    }
    break;
  case Algorithm::Tree:
    switch (collective) {
    case Collective::AllReduce:
      return AlgorithmShape{2 * logP, 2 * n};
    case Collective::Broadcast:
    case Collective::Reduce:
      return AlgorithmShape{logP, n};
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::SendRecv:
    case Collective::AllToAll:
    case Collective::AllToAllV:
      return std::nullopt;
    }
    break;
  case Algorithm::OneShot:
    // Every member reads every other member's whole input at once (its
    // block of it, for a reducescatter or an alltoall).
    switch (collective) {
    case Collective::AllReduce:
      return AlgorithmShape{1, (p - 1) * n};
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll:
    case Collective::AllToAllV: // where the routing is even
      return AlgorithmShape{1, ring};
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:
      return std::nullopt;
    }
    break;
  case Algorithm::TwoShot:
    // A one-shot reducescatter, then a one-shot allgather.
    if (collective == Collective::AllReduce)
      return AlgorithmShape{2, 2 * ring};
    return std::nullopt;
  case Algorithm::Direct:
    switch (collective) {
    case Collective::AllReduce:
      return AlgorithmShape{2, 2 * ring};
    case Collective::ReduceScatter:
    case Collective::AllGather:
      return AlgorithmShape{1, ring};
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:
    case Collective::AllToAll:
    case Collective::AllToAllV:
      return std::nullopt;
    }
    break;
  }
  return std::nullopt;
}

double algorithmSeconds(const LinkCost &cost, const AlgorithmShape &shape,
                        double cacheHits) {
  double perByte = 1 / cost.bandwidth;
  if (cost.beyondCache > 0) {
    const double h = std::clamp(cacheHits, 0.0, 1.0);
    perByte = h / cost.bandwidth + (1 - h) / cost.beyondCache;
  }
  return cost.latency * shape.steps + shape.volume * perByte;
}

AlgorithmShape tableShape(const ir::AlgorithmTable &table, double bytes) {
  const double chunk =
      bytes / static_cast<double>(uint64_t{table.ranks} * table.chunksPerRank);
  AlgorithmShape shape{0, 0};
  std::vector<uint32_t> sent(table.ranks), received(table.ranks);
  for (const auto &step : table.steps) {
    if (step.empty())
      continue;
    std::fill(sent.begin(), sent.end(), 0);
    std::fill(received.begin(), received.end(), 0);
    uint32_t most = 0;
    for (const ir::AlgorithmTable::Transfer &t : step) {
      if (t.src < table.ranks)
        most = std::max(most, ++sent[t.src]);
      if (t.dst < table.ranks)
        most = std::max(most, ++received[t.dst]);
    }
    shape.steps += 1;
    shape.volume += most * chunk;
  }
  return shape;
}

double tableSeconds(const ir::AlgorithmTable &table, double bytes,
                    int64_t stride, int64_t ranksPerNode, const LinkCost &node,
                    const LinkCost &network, double cacheHits) {
  const double chunk =
      bytes / static_cast<double>(uint64_t{table.ranks} * table.chunksPerRank);
  auto nodeOf = [&](uint32_t r) {
    return static_cast<int64_t>(r) * stride /
           std::max<int64_t>(1, ranksPerNode);
  };
  double seconds = 0;
  const size_t R = table.ranks;
  // Chunks each rank sends and receives in a step, within its node and
  // across (links are full duplex: the larger of the two counts).
  std::vector<uint32_t> nodeOut(R), nodeIn(R), netOut(R), netIn(R);
  for (const auto &step : table.steps) {
    if (step.empty())
      continue;
    for (auto *v : {&nodeOut, &nodeIn, &netOut, &netIn})
      std::fill(v->begin(), v->end(), 0);
    for (const ir::AlgorithmTable::Transfer &t : step) {
      if (t.src >= R || t.dst >= R)
        continue;
      const bool local = nodeOf(t.src) == nodeOf(t.dst);
      ++(local ? nodeOut : netOut)[t.src];
      ++(local ? nodeIn : netIn)[t.dst];
    }
    // The step ends when its slowest rank's transfers on each level do
    // (the two levels' links work at once).
    double slowest = 0;
    for (size_t r = 0; r < R; ++r) {
      const uint32_t local = std::max(nodeOut[r], nodeIn[r]);
      const uint32_t remote = std::max(netOut[r], netIn[r]);
      double t = 0;
      if (local)
        t = algorithmSeconds(node, AlgorithmShape{1, local * chunk}, cacheHits);
      if (remote)
        t = std::max(t, algorithmSeconds(network,
                                         AlgorithmShape{1, remote * chunk},
                                         cacheHits));
      slowest = std::max(slowest, t);
    }
    seconds += slowest;
  }
  return seconds;
}

namespace {

int64_t axisSize(const ir::Program &program, unsigned axis,
                 const ir::DimEnv &sizes) {
  auto it = sizes.find(program.mesh.axes[axis].size);
  return it == sizes.end() ? 1 : it->second;
}

llvm::Error problem(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `p` at `sizes`, or an error naming `what` when a size is unbound.
llvm::Expected<double> evaluate(const analysis::Polynomial &p,
                                const ir::DimEnv &sizes,
                                const llvm::Twine &what) {
  if (std::optional<double> v = p.evaluate(sizes))
    return *v;
  return problem("cannot predict a time: the " + what + " (" + p.str() +
                 ") has a size that is not bound; give every size with "
                 "--size (and --ranks)");
}

class Predictor {
public:
  Predictor(const ir::Program &program, const Machine &machine,
            const ir::DimEnv &sizes, bool staging, double hits)
      : program(program), machine(machine), sizes(sizes), staging(staging),
        hits(hits) {}

  llvm::Expected<LaunchTime> launch(const analysis::LaunchCost &cost);

private:
  llvm::Expected<double> value(const analysis::Polynomial &p,
                               llvm::StringRef what) const;
  /// Evaluates each polynomial into its double, in order; the first that
  /// cannot be (an unbound size) is the error.
  llvm::Error
  values(std::initializer_list<
         std::tuple<const analysis::Polynomial &, llvm::StringRef, double &>>
             items) const;
  /// The collective's cheapest priced algorithm on each of its axes.
  llvm::Error collective(const ir::Stage &stage, double bytes, bool fused,
                         LaunchTime &out) const;
  /// Adds the launch's ordered sums and random draws to its compute time.
  llvm::Error elementCompute(const analysis::LaunchCost &cost,
                             LaunchTime &out) const;

  const ir::Program &program;
  const Machine &machine;
  const ir::DimEnv &sizes;
  bool staging;
  /// The fraction of the step's bytes the cache holds from the last step.
  double hits;

  /// Seconds to move `bytes`, `allocated` of them written to lines the
  /// kernel does not read (read first where stores allocate): the hits at
  /// the cache's bandwidth, the rest at the memory's.
  double memoryTime(double bytes, double allocated) const {
    double miss = (1 - hits) / machine.memoryBandwidth;
    double hit = hits > 0 ? hits / machine.cacheBandwidth : 0;
    return bytes * (hit + miss) +
           (machine.writeAllocate ? allocated : 0) * miss;
  }
};

llvm::Expected<double> Predictor::value(const analysis::Polynomial &p,
                                        llvm::StringRef what) const {
  return evaluate(p, sizes, what);
}

llvm::Error Predictor::values(
    std::initializer_list<
        std::tuple<const analysis::Polynomial &, llvm::StringRef, double &>>
        items) const {
  for (const auto &[p, what, out] : items) {
    auto v = value(p, what);
    if (!v)
      return v.takeError();
    out = *v;
  }
  return llvm::Error::success();
}

llvm::Error Predictor::collective(const ir::Stage &stage, double bytes,
                                  bool fused, LaunchTime &out) const {
  std::optional<Collective> kind = collectiveOf(stage.kind);
  if (!kind)
    return llvm::Error::success();
  for (unsigned axis = 0; axis < program.mesh.size(); ++axis) {
    if (stage.axis >= 0 && static_cast<unsigned>(stage.axis) != axis)
      continue;
    CollectiveTime t;
    t.stage = &stage;
    t.collective = *kind;
    t.axis = axis;
    t.members = axisSize(program, axis, sizes);
    t.level = axisLevel(program, axis, sizes, machine);
    t.bytes = bytes;
    if (t.members <= 1) {
      // One member moves nothing (the runtime copies in to out at most).
      t.algorithm = fused ? Algorithm::Direct : Algorithm::Library;
      t.alternatives = "one member: nothing moves";
      out.collectives.push_back(std::move(t));
      continue;
    }
    struct Priced {
      Algorithm algorithm;
      double seconds, fixed;
      /// The schedule's algorithm file, priced on the ring's line.
      bool table = false;
    };
    llvm::SmallVector<Priced, 6> priced;
    for (Algorithm a : allAlgorithms()) {
      if ((a == Algorithm::Direct) != fused)
        continue;
      const LinkCost *cost = machine.find(*kind, a, t.level, stage.type.dtype);
      std::optional<AlgorithmShape> shape =
          algorithmShape(*kind, a, t.members, bytes);
      if (!cost || !shape)
        continue;
      double seconds = algorithmSeconds(*cost, *shape, hits);
      // The CUDA runtime's one- and two-shot collectives first copy this
      // member's input into the team's symmetric memory
      // (cuda/team_collectives.h): read and written once more.
      if (machine.target == "cuda" &&
          (a == Algorithm::OneShot || a == Algorithm::TwoShot) &&
          machine.memoryBandwidth > 0) {
        const double input = *kind == Collective::AllGather
                                 ? bytes / static_cast<double>(t.members)
                                 : bytes;
        seconds += 2 * input / machine.memoryBandwidth;
      }
      priced.push_back({a, seconds, cost->latency * shape->steps});
      // An algorithm file's steps are point-to-point transfers, as a
      // ring's are: priced with the ring's latency and bandwidth, over
      // several nodes each transfer on its own level's.
      if (stage.table && !fused && a == Algorithm::Ring) {
        const AlgorithmShape own = tableShape(*stage.table, bytes);
        double seconds = algorithmSeconds(*cost, own, hits);
        const LinkCost *node =
            machine.find(*kind, a, Level::Node, stage.type.dtype);
        if (t.level == Level::Network && node) {
          int64_t stride = 1;
          for (unsigned b = axis + 1; b < program.mesh.size(); ++b)
            stride *= axisSize(program, b, sizes);
          seconds = tableSeconds(*stage.table, bytes, stride,
                                 machine.ranksPerNode, *node, *cost, hits);
        }
        priced.push_back({a, seconds, cost->latency * own.steps, true});
      }
    }
    // The cheapest first; the first listed on a tie.
    llvm::stable_sort(priced, [](const Priced &x, const Priced &y) {
      return x.seconds < y.seconds;
    });
    if (priced.empty())
      return problem("machine '" + machine.shownName() + "' (" +
                     machine.shownPath() + ") prices no " +
                     (fused ? "'direct' algorithm (a fused collective "
                              "kernel's own)"
                            : "algorithm") +
                     " for " + collectiveName(*kind) + " on the " +
                     levelName(t.level) + " level; add a line 'collective " +
                     collectiveName(*kind) + " ALGORITHM " +
                     levelName(t.level) + " latency ... bandwidth ...'");
    // What runs: a fused kernel's own transfers; the schedule's algorithm;
    // else the library's (NCCL picks among its ring and tree itself).
    auto runs = [&](const Priced &p) {
      const Algorithm a = p.algorithm;
      if (fused)
        return true;
      if (stage.table)
        return p.table;
      if (p.table)
        return false;
      switch (stage.algorithm) {
      case ir::CollectiveAlgorithm::OneShot:
        return a == Algorithm::OneShot;
      case ir::CollectiveAlgorithm::TwoShot:
        return a == Algorithm::TwoShot;
      case ir::CollectiveAlgorithm::Auto:
      case ir::CollectiveAlgorithm::Library:
        return a == Algorithm::Library || a == Algorithm::Ring ||
               a == Algorithm::Tree;
      case ir::CollectiveAlgorithm::Synthesized:
        return false;
      }
      return false;
    };
    auto chosen =
        llvm::find_if(priced, [&](const Priced &p) { return runs(p); });
    if (chosen == priced.end())
      return problem(
          "machine '" + machine.shownName() + "' (" + machine.shownPath() +
          ") does not price " +
          (stage.algorithm == ir::CollectiveAlgorithm::OneShot ||
                   stage.algorithm == ir::CollectiveAlgorithm::TwoShot
               ? "the " + ir::collectiveAlgorithmName(stage.algorithm).str() +
                     " algorithm the schedule chose"
           : stage.table ? "a ring, on whose line the algorithm file '" +
                               stage.table->file + "' is priced,"
                         : std::string("the library's algorithm")) +
          " for " + collectiveName(*kind) + " '" + stage.name + "' on the " +
          levelName(t.level) + " level");
    t.algorithm = chosen->algorithm;
    if (chosen->table)
      t.file = stage.table->file;
    t.seconds = chosen->seconds;
    t.cheapest = priced.front().algorithm;
    t.cheapestSeconds = priced.front().seconds;
    llvm::SmallVector<std::string, 4> others;
    for (const Priced &o : priced)
      if (&o != &*chosen && !o.table)
        others.push_back(algorithmName(o.algorithm).str() + " " +
                         formatSeconds(o.seconds));
    t.alternatives = llvm::join(others, ", ");
    const double chosenFixed = chosen->fixed;
    out.networkSeconds += t.seconds;
    out.fixed += chosenFixed;
    out.collectives.push_back(std::move(t));
  }
  return llvm::Error::success();
}

/// ordered * ordered-sum / min(threads, sums): each sum is one thread's
/// chain of dependent adds, and the threads share the sums out; drawn *
/// random-draw / threads; libm * libm-call / threads; rounded * rounding /
/// threads.
llvm::Error Predictor::elementCompute(const analysis::LaunchCost &cost,
                                      LaunchTime &out) const {
  const double threads =
      static_cast<double>(std::max<int64_t>(machine.threadsPerRank, 1));
  if (machine.orderedSum > 0 && !cost.ordered.isZero()) {
    double ordered = 0, chains = 0;
    if (llvm::Error e =
            values({{cost.ordered, "elements summed in order", ordered},
                    {cost.orderedChains, "ordered sums", chains}}))
      return e;
    out.computeSeconds +=
        ordered * machine.orderedSum / std::clamp(chains, 1.0, threads);
  }
  if (machine.randomDraw > 0 && !cost.drawn.isZero()) {
    auto drawn = value(cost.drawn, "random draws");
    if (!drawn)
      return drawn.takeError();
    out.computeSeconds += *drawn * machine.randomDraw / threads;
  }
  if (machine.libmCall > 0 && !cost.libm.isZero()) {
    auto calls = value(cost.libm, "math library calls");
    if (!calls)
      return calls.takeError();
    out.computeSeconds += *calls * machine.libmCall / threads;
  }
  if (machine.rounding > 0 && !cost.rounded.isZero()) {
    auto roundings = value(cost.rounded, "roundings to f16 or bf16");
    if (!roundings)
      return roundings.takeError();
    out.computeSeconds += *roundings * machine.rounding / threads;
  }
  return llvm::Error::success();
}

llvm::Expected<LaunchTime> Predictor::launch(const analysis::LaunchCost &cost) {
  using Kind = analysis::LaunchCost::Kind;
  LaunchTime t;
  double read = 0, write = 0, fresh = 0;
  if (llvm::Error e =
          values({{cost.read, "bytes read", read},
                  {cost.write, "bytes written", write},
                  {cost.fresh, "bytes written to buffers not read", fresh}}))
    return e;
  double memory = read + write;
  if (cost.kind == Kind::FusedCollective && staging) {
    auto copies = value(cost.staging, "bytes of the staging copies");
    if (!copies)
      return copies.takeError();
    memory += *copies;
  }
  for (const auto &[stage, bytes] : cost.transfers) {
    auto n = value(bytes, "bytes of " + stage->name);
    if (!n)
      return n.takeError();
    if (llvm::Error e =
            collective(*stage, *n, cost.kind == Kind::FusedCollective, t))
      return e;
  }
  if (cost.kind == Kind::Collective) {
    // A collective reads its input and writes its output as part of what
    // the algorithm's bandwidth already measures; one of a single member
    // is that copy alone (where the plan does not alias its output).
    if (llvm::all_of(t.collectives,
                     [](const CollectiveTime &c) { return c.members <= 1; })) {
      t.memorySeconds = memoryTime(memory, 0);
      t.seconds = t.memorySeconds;
      return t;
    }
    t.seconds = t.networkSeconds;
    return t;
  }
  t.memorySeconds = memoryTime(memory, fresh);
  if (cost.kind == Kind::Matmul) {
    auto flops = value(cost.flops, "FLOPs");
    if (!flops)
      return flops.takeError();
    const ir::Stage *mm = nullptr;
    for (const ir::Stage *m : cost.members)
      if (m->kind == ir::StageKind::MatMul)
        mm = m;
    ir::DType dtype = mm ? mm->type.dtype : ir::DType::F32;
    auto rate = machine.matmulRate.find(dtype);
    if (rate == machine.matmulRate.end())
      return problem("machine '" + machine.shownName() + "' (" +
                     machine.shownPath() + ") has no matmul rate for " +
                     ir::dtypeName(dtype) + "; add a line 'matmul " +
                     ir::dtypeName(dtype) + " RATE GFLOP/s'");
    t.computeSeconds = *flops / rate->second;
    if (machine.matmulPack > 0 && !cost.packed.isZero()) {
      double packed = 0, rows = 0, cols = 0, batch = 0;
      if (llvm::Error e =
              values({{cost.packed, "elements of the matmul's operand", packed},
                      {cost.matmulRows, "rows of the matmul", rows},
                      {cost.matmulCols, "columns of the matmul", cols},
                      {cost.matmulBatch, "batches of the matmul", batch}}))
        return e;
      t.matmulRows = std::llround(rows);
      t.matmulCols = std::llround(cols);
      t.matmulBatch = std::max<int64_t>(std::llround(batch), 1);
      t.packOnce = packed * machine.matmulPack;
      t.packSeconds = t.packOnce * static_cast<double>(matmulRowBlocks(
                                       t.matmulBatch, t.matmulRows,
                                       t.matmulCols, machine.threadsPerRank));
    }
  }
  if (llvm::Error e = elementCompute(cost, t))
    return e;
  // A matmul's packing: once a block of rows of a call, which an overlap's
  // parts of its rows each make for their own (fixed); with the compute
  // where the parts are batches.
  double body = std::max(t.memorySeconds,
                         t.computeSeconds + (cost.batched ? t.packSeconds : 0));
  if (!cost.batched)
    t.fixed += t.packSeconds;
  if (cost.kind == Kind::FusedCollective) {
    double transfer = t.networkSeconds - t.fixed;
    body = machine.fusedOverlaps ? std::max(body, transfer) : body + transfer;
  }
  t.fixed += machine.kernelLaunch;
  t.seconds = t.fixed + body;
  return t;
}

} // namespace

Level axisLevel(const ir::Program &program, unsigned axis,
                const ir::DimEnv &sizes, const Machine &machine) {
  int64_t span = 1;
  for (unsigned a = axis; a < program.mesh.size(); ++a)
    span *= axisSize(program, a, sizes);
  return span <= machine.ranksPerNode ? Level::Node : Level::Network;
}

llvm::Expected<StepTime> predictStep(const ir::Program &program,
                                     const StepLaunches &planned,
                                     const Machine &machine,
                                     const ir::DimEnv &sizes, bool staging) {
  StepTime step;
  llvm::ArrayRef<analysis::LaunchCost> launches = planned.launches;
  // A collective whose output is its input when its group has one member
  // (the plan's alias, Buffer::loneInput): it moves nothing, and its
  // readers read the input.
  std::vector<const ir::Stage *> aliased(launches.size(), nullptr);
  llvm::DenseMap<const ir::Stage *, const ir::Stage *> alias;
  for (size_t i = 0; i < launches.size(); ++i) {
    const StepLaunches::Lone &lone = planned.lone[i];
    if (!lone.input)
      continue;
    const int64_t members =
        lone.axis < 0
            ? rankCount(program, sizes)
            : axisSize(program, static_cast<unsigned>(lone.axis), sizes);
    if (members <= 1)
      alias[launches[i].members.front()] = aliased[i] = lone.input;
  }
  // The step's footprint: each buffer once, at the most of it any launch
  // touches.
  llvm::DenseMap<const ir::Stage *, double> buffers;
  for (size_t i = 0; i < launches.size(); ++i)
    for (const auto &[stage, bytes] : launches[i].touched) {
      if (aliased[i])
        continue;
      auto n = evaluate(bytes, sizes, "footprint of " + stage->name);
      if (!n)
        return n.takeError();
      double &b = buffers[alias.lookup(stage) ? alias.lookup(stage) : stage];
      b = std::max(b, *n);
    }
  for (const auto &entry : buffers)
    step.footprint += entry.second;
  const double sharing = static_cast<double>(
      std::clamp<int64_t>(rankCount(program, sizes), 1, machine.ranksPerNode));
  // The cache holds what fits of the node's buffers: all of them, or, when
  // they are larger, a share of their bytes as large as it is (a cache that
  // keeps some lines of a stream it cannot hold, as this VM's victim L3
  // does, rather than an LRU one, which keeps none).
  if (machine.cacheSize > 0 && machine.cacheBandwidth > 0 && step.footprint > 0)
    step.cacheHits =
        std::min(1.0, machine.cacheSize / (step.footprint * sharing));
  Predictor predictor(program, machine, sizes, staging, step.cacheHits);
  for (size_t i = 0; i < launches.size(); ++i) {
    auto t = predictor.launch(launches[i]);
    if (!t)
      return t.takeError();
    if (aliased[i]) {
      t->seconds = t->memorySeconds = 0;
      for (CollectiveTime &c : t->collectives)
        c.alternatives =
            "one member: its output is " + aliased[i]->name + " itself";
    }
    step.launches.push_back(std::move(*t));
  }
  auto launchOf = [&](const ir::Stage *s) -> int {
    for (size_t i = 0; i < launches.size(); ++i)
      if (llvm::is_contained(launches[i].members, s))
        return static_cast<int>(i);
    return -1;
  };
  for (size_t oi = 0; oi < program.overlaps.size(); ++oi) {
    // The plan runs a refused overlap whole: priced as its two launches.
    if (oi < planned.overlapInParts.size() && !planned.overlapInParts[oi])
      continue;
    const ir::Overlap &o = program.overlaps[oi];
    int p = launchOf(o.producer), c = launchOf(o.consumer);
    if (p < 0 || c < 0 || p == c)
      continue;
    LaunchTime &first = step.launches[std::min(p, c)];
    LaunchTime &second = step.launches[std::max(p, c)];
    const LaunchTime &producer = step.launches[p];
    const LaunchTime &consumer = step.launches[c];
    const double k = static_cast<double>(o.chunks);
    double m = producer.fixed + (producer.seconds - producer.fixed) / k;
    // A part of a matmul's rows packs B as often as its own blocks of rows
    // say; where a reducescatter consumes it, a part is one piece of each
    // of the P members' blocks, a call of P batches sharing B (chunk-major,
    // lower/Chunks.cpp).
    if (!launches[p].batched && producer.packOnce > 0) {
      int64_t members = 1;
      if (o.consumer->kind == ir::StageKind::ReduceScatter)
        for (const CollectiveTime &ct : consumer.collectives)
          if (ct.stage == o.consumer)
            members = std::max<int64_t>(ct.members, 1);
      const int64_t rows =
          std::max<int64_t>(producer.matmulRows / (members * o.chunks), 1);
      const double packings =
          static_cast<double>(members) *
          static_cast<double>(matmulRowBlocks(
              members, rows, producer.matmulCols, machine.threadsPerRank));
      m += producer.packOnce * packings - producer.packSeconds;
    }
    double n = consumer.fixed + (consumer.seconds - consumer.fixed) / k;
    // A batched matmul beside an alltoall (lower/Chunks.cpp: the MoE
    // layer's combine after it, its dispatch before it) runs each part of
    // its batches as one call per member's rows, each packing the part's
    // batches' B once per block of those rows.
    auto batchedPart = [&](const ir::Stage *alltoall, const LaunchTime &mm,
                           const LaunchTime &coll) {
      int64_t members = 1;
      for (const CollectiveTime &ct : coll.collectives)
        if (ct.stage == alltoall)
          members = std::max<int64_t>(ct.members, 1);
      const double packings =
          static_cast<double>(members) *
          static_cast<double>(
              matmulRowBlocks(std::max<int64_t>(mm.matmulBatch / o.chunks, 1),
                              std::max<int64_t>(mm.matmulRows / members, 1),
                              mm.matmulCols, machine.threadsPerRank));
      const double before =
          std::max(mm.memorySeconds, mm.computeSeconds + mm.packSeconds);
      const double after = std::max(mm.memorySeconds,
                                    mm.computeSeconds + mm.packOnce * packings);
      return (after - before) / k;
    };
    if (launches[p].batched && producer.packOnce > 0 &&
        o.consumer->kind == ir::StageKind::AllToAll)
      m += batchedPart(o.consumer, producer, consumer);
    if (launches[c].batched && consumer.packOnce > 0 &&
        o.producer->kind == ir::StageKind::AllToAll)
      n += batchedPart(o.producer, consumer, producer);
    const double pair = machine.overlapConcurrent
                            ? m + n + (k - 1) * std::max(m, n)
                            : k * (m + n);
    first.overlapWith = std::max(p, c);
    second.overlapWith = std::min(p, c);
    first.chunks = second.chunks = o.chunks;
    first.overlapped = pair;
    second.overlapped = 0;
  }
  for (const LaunchTime &t : step.launches)
    step.seconds += t.overlapped >= 0 ? t.overlapped : t.seconds;
  // Each field of a machine file is within its range, but sizes can still
  // take a price past the largest double: such a step has no price.
  if (!std::isfinite(step.seconds) || !std::isfinite(step.footprint))
    return llvm::createStringError(
        "machine '" + machine.shownName() + "' (" + machine.shownPath() +
        ") prices this step at more seconds than a double holds: the "
        "sizes are too large for a prediction");
  return step;
}

int64_t matmulRowBlocks(int64_t batch, int64_t rows, int64_t cols,
                        int64_t threads) {
  // runtime/src/cpu/matmul.cpp: kRows, kNC, and kMR with AVX-512 (the rows
  // of a micro-tile, which only a call of a few rows reaches).
  constexpr int64_t kRows = 768, kNC = 480, kMR = 8;
  batch = std::max<int64_t>(batch, 1);
  rows = std::max<int64_t>(rows, 1);
  threads = std::max<int64_t>(threads, 1);
  const int64_t colBlocks = (std::max<int64_t>(cols, 1) + kNC - 1) / kNC;
  int64_t rowBlocks = (rows + kRows - 1) / kRows;
  while (batch * colBlocks * rowBlocks < 2 * threads && rowBlocks * kMR < rows)
    rowBlocks *= 2;
  const int64_t rowBlock =
      ((rows + rowBlocks - 1) / rowBlocks + kMR - 1) / kMR * kMR;
  return (rows + rowBlock - 1) / rowBlock;
}

int64_t rankCount(const ir::Program &program, const ir::DimEnv &sizes) {
  int64_t ranks = 1;
  for (unsigned a = 0; a < program.mesh.size(); ++a)
    ranks *= axisSize(program, a, sizes);
  return ranks;
}

std::string formatSeconds(double seconds) {
  static const char *const kUnits[] = {"s", "ms", "us", "ns"};
  unsigned unit = 0;
  double v = seconds;
  while (unit < 3 && v != 0 && std::fabs(v) < 1) {
    v *= 1000;
    ++unit;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.3g", v) << ' ' << kUnits[unit];
  return s;
}

} // namespace coconet::tune
