//===- ScheduleSpace.h - the legal schedules of a program -------*- C++ -*-===//
//
// Enumerates the schedules that split, reorder, shard, fuse and overlap
// can make of a program (or of a schedule the user fixes, which every
// candidate applies first). The transformations are tried in that order,
// each over its choices on the program the earlier ones produced:
//
//   split    every subset of the allreduces a schedule can name;
//   reorder  for each allgather (or alltoall), every prefix of the chain
//            of stages that reads it (in program order; elementwise only
//            for an alltoall) up to the first one refused;
//   shard    every subset of the parameters that can be sharded and
//            that the caller allows to be (SpaceOptions::shardable);
//   fuse     nothing, the elementwise stages grouped into the largest
//            legal kernels (grown in program order), and those kernels
//            with the reducescatter or allreduce before and/or the
//            allgather after them;
//   overlap  each matmul with the collective that reads it, and each
//            alltoall with the matmul that reads it, in none or each of
//            the given part counts.
//
// The passes themselves decide what is legal (a refused directive drops
// the candidate), the sizes must divide as the scheduled program needs,
// and candidates are deduplicated by the program they produce (after the
// cleanups), keeping the one with the fewest directives.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_SCHEDULESPACE_H
#define COCONET_TUNE_SCHEDULESPACE_H

#include "ir/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace coconet::tune {

struct Candidate {
  /// The directives after `apply BASE` (if a base schedule is fixed).
  std::vector<ir::Schedule::Directive> directives;
  /// The scheduled program, after the cleanups.
  std::unique_ptr<ir::Program> program;
  /// "split(gs) reorder(ag, g32 .. w1) shard(m, v) fuse(rs .. ag)" in a
  /// few words, for tables.
  std::string summary;
};

struct SpaceOptions {
  /// A schedule every candidate applies first (null: none).
  const ir::Schedule *base = nullptr;
  /// Parameters a candidate may store sharded (`shard` changes the
  /// program's interface: the caller then passes their slices); every
  /// subset of those that can be is tried. `shardAll`: any parameter.
  std::vector<std::string> shardable;
  bool shardAll = false;
  /// Part counts tried for each overlap.
  llvm::SmallVector<int64_t, 4> chunks{2, 4, 8};
  /// Sizes the candidates must fit (sliced and chunked dimensions divide);
  /// an empty map checks nothing.
  ir::DimEnv sizes;
  /// Price the staging copies of fused collectives (the caller's tensors
  /// are not the program's symmetric memory).
  bool staging = false;
  /// Stop after this many programs tried (a guard for large programs).
  size_t limit = 20000;
  /// Algorithm files the tuner may name for collectives of their kind and
  /// ranks (`coconetc tune --algorithms`; chooseAlgorithmFiles).
  std::vector<std::shared_ptr<const ir::AlgorithmTable>> algorithmFiles;
};

struct SpaceStats {
  size_t tried = 0;      ///< directive lists run through the passes
  size_t refused = 0;    ///< of those, refused by a pass
  size_t misfit = 0;     ///< legal, but the sizes do not divide
  size_t duplicates = 0; ///< legal, but the same program as another
  bool truncated = false;
};

/// The distinct legal schedules of `program`, the unscheduled program (or
/// the base schedule alone) first.
std::vector<Candidate> enumerateSchedules(const ir::Module &module,
                                          const ir::Program &program,
                                          const SpaceOptions &options,
                                          SpaceStats &stats);

/// A directive as schedule source: "(rs, ag) = split(gs);".
std::string directiveText(const ir::Schedule::Directive &directive);

/// `schedule NAME for PROGRAM { ... }` with one directive per line, which
/// the compiler reads back.
std::string scheduleText(llvm::StringRef name, const ir::Program &program,
                         const ir::Schedule *base,
                         llvm::ArrayRef<ir::Schedule::Directive> directives);

/// Why `program` cannot run at `sizes`: a sliced dimension that its axes
/// do not divide, or an overlap whose parts do not divide; empty if it can.
std::string sizeMisfit(const ir::Program &program, const ir::DimEnv &sizes);

} // namespace coconet::tune

#endif // COCONET_TUNE_SCHEDULESPACE_H
