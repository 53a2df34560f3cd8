//===- Machine.h - a machine description for the cost model -----*- C++ -*-===//
//
// A machine file (tools/machines/*.machine, docs/tuner.md) states what one
// step's launches cost on one system: memory bandwidth and launch latency
// per rank, matmul rate per element type, and for every collective
// algorithm the machine has, a latency per step and a bandwidth per link
// level. Each line is `KEY WORDS... VALUE UNIT`, `#` starts a comment; a
// value is refused with its line and column when it is missing, malformed,
// in the wrong unit, or given twice.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_MACHINE_H
#define COCONET_TUNE_MACHINE_H

#include "diag/Diagnostic.h"
#include "ir/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
} // namespace llvm

namespace coconet::tune {

/// How a collective moves its data. `Library` is the communication
/// library's own choice (NCCL's tuner; on the CPU target the runtime's exact
/// collectives on MPI); `Direct` is a fused collective kernel's own loads
/// and stores over shared memory or NVLink.
enum class Algorithm {
  Library,
  Ring,
  Tree,
#define TEAM_ALGORITHM(Name, Printed) Name,
#include "ir/TeamAlgorithms.def"
  Direct
};
llvm::StringRef algorithmName(Algorithm a);
std::optional<Algorithm> parseAlgorithm(llvm::StringRef name);
/// One of a team's algorithms (coconet/team_algorithms.def), which the
/// runtimes run for an unfused collective.
bool isTeamAlgorithm(Algorithm a);
llvm::ArrayRef<Algorithm> allAlgorithms();

/// Where the members of a collective are: one node (shared memory, NVLink)
/// or several (the network).
enum class Level { Node, Network };
llvm::StringRef levelName(Level l);

/// The collectives a machine file prices: every communication stage of
/// ir/StageKinds.def, in its order.
enum class Collective {
#define STAGE(Name, Printed, Description)
#define COMMUNICATION_STAGE(Name, Printed, Description) Name,
#include "ir/StageKinds.def"
};
/// Its printed name, as the IR's: "allreduce", "reducescatter", ...
llvm::StringRef collectiveName(Collective c);
std::optional<Collective> collectiveOf(ir::StageKind kind);

/// One algorithm of one collective on one level:
/// time = latency * steps(P) + volume(P, n) / bandwidth (CostModel.h).
/// Where the line also states a bandwidth beyond the cache (a CPU's
/// shared-memory collectives, whose volume is memory traffic), the volume
/// moves at `bandwidth` for the share of the step's buffers the cache holds
/// and at `beyondCache` for the rest: volume * (h / bandwidth + (1 - h) /
/// beyondCache).
struct LinkCost {
  double latency = 0;     ///< seconds per step
  double bandwidth = 0;   ///< bytes per second
  double beyondCache = 0; ///< bytes per second; 0: `bandwidth` throughout
};

struct Machine {
  std::string name;
  /// "cpu" or "cuda": the target the constants were measured or stated for.
  std::string target;
  /// Ranks that share a node; axes whose ranks lie within one node use the
  /// node level (ranks are numbered row-major, the last axis fastest).
  int64_t ranksPerNode = 1;
  /// Threads each rank uses (CPU target; 1 for a GPU).
  int64_t threadsPerRank = 1;
  double kernelLaunch = 0;    ///< seconds per launch
  double memoryBandwidth = 0; ///< bytes per second, per rank
  /// Does a store to a line the cache does not hold read the line first (a
  /// CPU's write-back caches without streaming stores)? Then a kernel's
  /// writes to buffers it does not read move their bytes twice.
  bool writeAllocate = false;
  /// The last-level cache a node's ranks share, and the bytes per second
  /// one rank moves from it while all do (both 0: none stated). A step
  /// whose buffers all fit stays in it from one step to the next.
  double cacheSize = 0;
  double cacheBandwidth = 0;
  /// FLOP per second of a matmul, per element type.
  std::map<ir::DType, double> matmulRate;
  /// Seconds per element of an in-order f64 running sum (a reduction's,
  /// a norm's: one dependent add each) on one thread, and of a Philox
  /// draw (dropout). Optional (0: the time hides under the memory's, as on
  /// a GPU, whose reductions are trees of threads).
  double orderedSum = 0;
  double randomDraw = 0;
  /// Seconds per call of the math library (exp, erf, tanh, gelu, ...) on
  /// one thread: the exact CPU target evaluates them in f64, one element at
  /// a time. Optional, as the two above.
  double libmCall = 0;
  /// Seconds per rounding of a float to f16 or bf16 on one thread (the
  /// exact CPU target's integer operations on the bits). Optional, as the
  /// three above.
  double rounding = 0;
  /// Seconds per element of a matmul's right-hand operand per call: the
  /// exact CPU target widens B to f64 and packs it into panels in each call
  /// (its rate excludes this). Optional, as the four above.
  double matmulPack = 0;
  /// Does a fused collective kernel's communication overlap its memory
  /// traffic (a GPU: max of the two) or share the memory with it (a CPU's
  /// shared-memory team: their sum)?
  bool fusedOverlaps = false;
  /// Does an overlapped matmul run while its collective moves data (the
  /// GPU's copy engines and NVLink), or do they take turns on the cores?
  bool overlapConcurrent = true;
  /// Keyed by collective, algorithm, level and the element type a line
  /// names (`collective allreduce library node f16 latency ...`: the CPU
  /// target's exact reductions cost per element, not only per byte), or
  /// none: the line for every type without one of its own.
  std::map<std::tuple<Collective, Algorithm, Level, std::optional<ir::DType>>,
           LinkCost>
      collectives;
  /// Where each value was stated: the machine file's name (for messages).
  std::string path;

  /// `name` and `path` as output prints them (a file's bytes may hold
  /// escapes, bells or invalid UTF-8, and be 1 MB long): escaped and cut,
  /// as diag/TerminalText.h's safeWord makes any value from a file.
  std::string shownName() const;
  std::string shownPath() const;

  /// The line for elements of `type`: its own, else (bf16) f16's, the same
  /// bytes and a rounding each, else the untyped line; null when none.
  const LinkCost *find(Collective c, Algorithm a, Level l,
                       std::optional<ir::DType> type = std::nullopt) const;
};

/// Parses the machine file in `buffer` (added to `sourceMgr`); reports each
/// problem at its line and returns null after any.
std::optional<Machine> parseMachine(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                    llvm::SourceMgr &sourceMgr,
                                    DiagnosticEngine &diags);

/// Writes `machine` in the file format, one value per line, with `header`
/// (comment lines) first: parseMachine reads back the same machine.
void printMachine(const Machine &machine, llvm::StringRef header,
                  llvm::raw_ostream &os);

} // namespace coconet::tune

#endif // COCONET_TUNE_MACHINE_H
