//===- CostModel.h - predicted time of one step on a machine ----*- C++ -*-===//
//
// Turns the report's counts (analysis::LaunchCost: bytes read, written and
// moved, FLOPs) into seconds on a Machine:
//
//   kernel             launch + max(memory bytes / bandwidth,
//                      ordered * ordered-sum / min(threads, sums) +
//                      drawn * random-draw / threads +
//                      libm * libm-call / threads +
//                      rounded * rounding / threads): the exact CPU
//                      target's in-order f64 sums are chains of dependent
//                      adds, one thread each, its math library calls are
//                      f64 calls per element and its f16/bf16 roundings
//                      integer operations on the bits (machine lines
//                      optional)
//   matmul             launch + max(memory time, FLOPs / matmul rate)
//   collective         latency * steps(P) + volume(P, n) / bandwidth of
//                      the algorithm that runs: the schedule's
//                      (`algorithm`), else the library's (the cheapest of
//                      its library, ring and tree lines: NCCL chooses
//                      among its own)
//   fused collective   launch + its memory time (with `staging`, the
//                      copies of caller's tensors in and out included)
//                      and its collectives by the `direct` algorithm,
//                      added (a CPU's shared memory) or the larger
//                      (`fused-collective overlapped`, a GPU)
//   overlap in K parts each part of the producer and the collective costs
//                      its fixed part (launch, latencies) plus 1/K of the
//                      rest; concurrent: first producer part + last
//                      collective part + (K - 1) * the larger part;
//                      alternating: K * (both parts)
//
// A kernel's memory bytes are read + write; with a `cache`, the share h
// of them the cache holds (h = min(1, cache / the step's buffers, the
// union of what its launches touch, times the ranks sharing a node)) moves
// at the cache's bandwidth, the rest at the memory's; on a machine whose
// stores allocate (`write-allocate yes`, a CPU) the missed share of its
// writes to buffers it does not read moves once more. A collective over
// every axis of a two-axis mesh costs the sum of its
// terms on each axis, each on the level its ranks are on. Launches run one
// after the other. docs/tuner.md has the derivations and the limits.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_COSTMODEL_H
#define COCONET_TUNE_COSTMODEL_H

#include "analysis/Report.h"
#include "tune/Machine.h"
#include "tune/PlanLaunches.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace coconet::tune {

/// How many latency-bound steps an algorithm takes and how many bytes each
/// member moves, for P members each holding n bytes.
struct AlgorithmShape {
  double steps = 0;
  double volume = 0;
};
/// The shape of `algorithm` for `collective`, or none when the algorithm
/// does not implement it (a tree reducescatter).
std::optional<AlgorithmShape> algorithmShape(Collective collective,
                                             Algorithm algorithm,
                                             int64_t members, double bytes);
/// latency * steps + volume / bandwidth; where the line states a bandwidth
/// beyond the cache, the volume's share `cacheHits` (the step's, as its
/// kernels') at `bandwidth` and the rest at `beyondCache`.
double algorithmSeconds(const LinkCost &cost, const AlgorithmShape &shape,
                        double cacheHits = 1);
/// The shape of an algorithm file's run (ir/AlgorithmTable.h) moving
/// `bytes` (the n of algorithmShape): one latency per step, and per step
/// the most chunks one rank sends or receives in it, each n / (R k) bytes.
AlgorithmShape tableShape(const ir::AlgorithmTable &table, double bytes);
/// The same over two levels: member r of the table is on node r x stride
/// / ranksPerNode (stride: the world ranks between an axis's members), a
/// transfer between members of one node priced on `node`'s line, others
/// on `network`'s; a step lasts as long as its slowest rank's transfers on
/// the slower of its two levels (the levels' links work at once).
double tableSeconds(const ir::AlgorithmTable &table, double bytes,
                    int64_t stride, int64_t ranksPerNode, const LinkCost &node,
                    const LinkCost &network, double cacheHits);

/// The level the ranks of mesh axis `axis` are on: a node when the axis's
/// ranks (numbered row-major, the last axis fastest) lie within
/// ranks-per-node consecutive ranks.
Level axisLevel(const ir::Program &program, unsigned axis,
                const ir::DimEnv &sizes, const Machine &machine);

/// The ranks a step runs on: the product of the mesh's axis sizes (an
/// unbound one counts 1).
int64_t rankCount(const ir::Program &program, const ir::DimEnv &sizes);

/// One collective's priced algorithm, on one mesh axis.
struct CollectiveTime {
  const ir::Stage *stage = nullptr;
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Library;
  /// The schedule's algorithm file, priced on `algorithm`'s (the ring's)
  /// line; empty for the others.
  std::string file;
  Level level = Level::Node;
  unsigned axis = 0;
  int64_t members = 1;
  double bytes = 0;
  double seconds = 0;
  /// The other priced algorithms' times ("ring 12.1 us, tree 15 us").
  std::string alternatives;
  /// The cheapest priced algorithm, which a schedule could choose
  /// (`algorithm(s, NAME)`) where the target runs it.
  Algorithm cheapest = Algorithm::Library;
  double cheapestSeconds = 0;
};

struct LaunchTime {
  /// The whole launch; `fixed` of it does not shrink when the launch is cut
  /// into parts (launch latency, collective latencies).
  double seconds = 0;
  double fixed = 0;
  double memorySeconds = 0;
  double computeSeconds = 0;
  double networkSeconds = 0;
  /// A matmul's packing of its right-hand operand (Machine::matmulPack),
  /// beside its compute: in `fixed` where an overlap's parts of its rows
  /// each pack it again, with the compute where the parts are batches.
  double packSeconds = 0;
  /// A matmul's one packing of its right-hand operand (every batch's), and
  /// the shape of its call on a rank: rows and columns of a batch of the
  /// result, and batches. The CPU target packs it once per block of rows
  /// (matmulRowBlocks), so packSeconds is packOnce times those blocks, and
  /// an overlap's parts pack it as often as their own blocks say.
  double packOnce = 0;
  int64_t matmulRows = 0, matmulCols = 0, matmulBatch = 1;
  std::vector<CollectiveTime> collectives;
  /// An overlap pair: the index of the other launch and the part count;
  /// the pair's time is on the first of the two (the other shows 0 in
  /// `overlapped`).
  int overlapWith = -1;
  int64_t chunks = 1;
  double overlapped = -1;
};

struct StepTime {
  std::vector<LaunchTime> launches;
  double seconds = 0;
  /// The bytes of the buffers one rank's step touches, and the fraction
  /// of them the machine's cache holds from one step to the next: all when
  /// they (times the ranks of a node) fit, else the cache's size over
  /// theirs.
  double footprint = 0;
  double cacheHits = 0;
};

/// The predicted time of one step of `program` (launches as planLaunches()
/// returns them for it) on `machine`, with every size name bound in
/// `sizes`; an error names an unbound size or a price the machine does not
/// state. `staging`: the caller's tensors are not the program's symmetric
/// memory, so fused collectives copy them in and out (else zero copy, as
/// the generated driver runs).
llvm::Expected<StepTime> predictStep(const ir::Program &program,
                                     const StepLaunches &launches,
                                     const Machine &machine,
                                     const ir::DimEnv &sizes,
                                     bool staging = false);

/// The blocks of rows the CPU target's matmul hands its threads in one
/// batch of a call of `batch` batches of `rows` x `cols` results on
/// `threads` threads (runtime/src/cpu/matmul.cpp's tasks): blocks of at
/// most 768 rows, columns in blocks of at most 480, the row blocks halved
/// while there are fewer than two tasks a thread. Each block packs the
/// batch's B again, all of its columns over the column blocks' tasks.
int64_t matmulRowBlocks(int64_t batch, int64_t rows, int64_t cols,
                        int64_t threads);

/// "12.3 us", "4.56 ms", "1.2 s" (three significant digits).
std::string formatSeconds(double seconds);

} // namespace coconet::tune

#endif // COCONET_TUNE_COSTMODEL_H
