//===- Table.h - what `coconetc tune` prints and writes ---------*- C++ -*-===//
//
// The table of ranked schedules (docs/tuner.md, "The table"): its header,
// its rows (with the measured times under --measure), the CSV of --csv, the
// measured summary, and the schedules as text. The driver parses the
// options and says where each goes.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_TABLE_H
#define COCONET_TUNE_TABLE_H

#include "tune/Tuner.h"

#include "llvm/ADT/ArrayRef.h"

#include <map>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace coconet::tune {

/// "1.5 MiB": three significant digits in B, KiB, MiB, GiB or TiB.
std::string bytesText(double bytes);
/// "N = 4096, P = 4".
std::string sizesText(const ir::DimEnv &sizes);
/// Why no schedule was ranked.
std::string noSchedule(const ir::Program &program, const TuneResult &result);

/// The schedules of `program` in `module`, by the program each makes (its
/// printed IR): "[= fused_rs_c_ag]" marks a row the file has already.
std::map<std::string, std::string> knownSchedules(const ir::Module &module,
                                                  const ir::Program &program);

/// What the table shows beside the ranked schedules.
struct TableView {
  const ir::Program *program = nullptr;
  const ir::Schedule *base = nullptr;
  const Machine *machine = nullptr;
  const ir::DimEnv *sizes = nullptr;
  /// The rows shown (at most the ranked schedules).
  size_t rows = 0;
  /// The measured seconds of each row, or empty.
  llvm::ArrayRef<double> measured;
  const std::map<std::string, std::string> *known = nullptr;
};

/// The header lines: the program, machine and sizes; the space.
void printHeader(llvm::raw_ostream &os, const TuneResult &result,
                 const TableView &view);
/// The table's column names and rows, and how many more there are.
void printRows(llvm::raw_ostream &os, const TuneResult &result,
               const TableView &view);
/// --csv: a line per row shown.
void writeCsv(llvm::raw_ostream &os, const TuneResult &result,
              const TableView &view);
/// --measure: how the rows were measured, the rank correlation, the median
/// error and how the pick did. `steps`: each row's steps a run; `dir`: where
/// the builds are.
void printMeasured(llvm::raw_ostream &os, const TuneResult &result,
                   const TableView &view, llvm::ArrayRef<int64_t> steps,
                   int64_t rounds, int64_t runTimeMs, llvm::StringRef dir);

/// The schedule text `coconetc tune` writes: the fastest as `name`, or
/// (`table`) every row shown as `name_1`, `name_2`, ..., each after a
/// comment with its predicted time.
std::string tunedSchedules(const TuneResult &result, const TableView &view,
                           llvm::StringRef name, bool table);

} // namespace coconet::tune

#endif // COCONET_TUNE_TABLE_H
