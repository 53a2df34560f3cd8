//===- Simulator.h - the reference simulator --------------------*- C++ -*-===//
//
// Executes a typed IR program for all ranks of its mesh in one process, with
// the exact semantics of ir/Program.h. It is the oracle every transformation
// and every backend is tested against.
//
// Inputs are generated from a seed (sim/Inputs.h) or read from .npy files;
// scalar parameters can be set by value. A sliced dimension that does not
// divide evenly by the ranks slicing it is an error (there are no uneven
// blocks), reported before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SIM_SIMULATOR_H
#define COCONET_SIM_SIMULATOR_H

#include "ir/Program.h"
#include "sim/Tensor.h"

#include "coconet/segments.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::sim {

/// How generated float tensors are drawn (sim/Inputs.h).
enum class InputKind {
  /// 24-bit values in [-1, 1): sums of a few are exact in f64, in any order.
  Uniform,
  /// Values whose sums depend on the order of the terms: a quarter of
  /// f32/bf16/f64 elements +-2^54, f64 with all 53 bits (f16 stays
  /// uniform).
  Wide,
};

class SimResult;

struct SimOptions {
  /// Values of the program's size names, mesh axis sizes included.
  ir::DimEnv sizes;
  /// Seed of the generated inputs.
  uint64_t seed = 1;
  /// How generated inputs are drawn (--inputs).
  InputKind inputKind = InputKind::Uniform;
  /// Parameters given by value ("0.01", "7", "true"): a scalar, or every
  /// element of a tensor.
  std::map<std::string, std::string> scalarValues;
  /// Tensor parameters read from .npy files (see sim/Inputs.h for the form).
  std::map<std::string, std::string> inputFiles;
  /// Tensor parameters given directly, in assembled form (tests).
  std::map<std::string, Tensor> inputTensors;
  /// Segment tables read from files (a text list of lengths or a 1-D
  /// integer .npy: rt::readSegmentTable).
  std::map<std::string, std::string> segmentFiles;
  /// Segment tables given as lengths (tests). A table given neither way is
  /// generated (rt::randomSegmentTable with the seed) from its count,
  /// which must then be bound in `sizes`.
  std::map<std::string, std::vector<int64_t>> segmentLengths;
  /// Keep, for every element of a float sum or norm reduction, the sum of
  /// the magnitudes of its terms (SimResult::termSums).
  bool recordTermSums = false;
  /// Called after each stage that is not a parameter has been computed on
  /// every rank; it may read and replace the stage's blocks (the
  /// differential check, verify/Differential.h, puts values of another run
  /// in). An error stops the run.
  std::function<llvm::Error(const ir::Stage &, SimResult &)> afterStage;
};

/// Every value of every rank after one run.
class SimResult {
public:
  SimResult(const ir::Program &program, RankGrid grid)
      : grid(std::move(grid)), values(program.getStages().size()) {}

  const RankGrid &getGrid() const { return grid; }
  int64_t numRanks() const { return grid.numRanks(); }
  /// The block of `stage` that `rank` holds.
  const Tensor &value(const ir::Stage &stage, int64_t rank) const {
    return values[stage.id][rank];
  }
  /// The global tensor of `stage`, assembled from the blocks; for a value
  /// that is local on some axis, the blocks are stacked per rank first:
  /// shape [ranks, global shape...] (see Inputs.h).
  Tensor assembled(const ir::Program &program, const ir::Stage &stage) const;
  /// The placement of `stage` on `rank`.
  const Placement &placement(const ir::Stage &stage, int64_t rank) const {
    return placements[stage.id][rank];
  }
  /// The value of a size name.
  const ir::DimEnv &getSizes() const { return sizes; }
  /// The program's segment table `name` as this run bound it.
  const rt::SegmentTable &table(llvm::StringRef name) const {
    return tables.find(name)->second;
  }

  // Filled by simulate().
  RankGrid grid;
  ir::DimEnv sizes;
  std::map<std::string, rt::SegmentTable, std::less<>> tables;
  std::vector<std::vector<Tensor>> values;
  std::vector<std::vector<Placement>> placements;
  /// With SimOptions::recordTermSums: per stage and rank, for a float sum
  /// (norm) reduction, an f64 block of its shape holding each element's
  /// sum of |term| (sum of term^2), added as the reduction adds; else
  /// empty.
  std::vector<std::vector<Tensor>> termSums;
};

/// Runs `program` once on every rank.
llvm::Expected<SimResult> simulate(const ir::Program &program,
                                   const SimOptions &options);

/// The name result `index` is known by: the updated parameter, else the
/// returned value's name (ir::Program::getResultName).
std::string resultName(const ir::Program &program, size_t index);

/// One line per result: name, type, global shape, and statistics (sum,
/// min, max, L2 norm, first values) of the assembled tensor.
void printSummary(const ir::Program &program, const SimResult &result,
                  llvm::raw_ostream &os);

/// Writes every result to `dir`/<resultName>.npy (assembled form), creating
/// the directory.
llvm::Error writeResults(const ir::Program &program, const SimResult &result,
                         llvm::StringRef dir);

} // namespace coconet::sim

#endif // COCONET_SIM_SIMULATOR_H
