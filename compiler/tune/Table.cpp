//===- Table.cpp - what `coconetc tune` prints and writes ----------------===//
//
// See Table.h; docs/tuner.md shows the table and explains its columns.
//
//===----------------------------------------------------------------------===//

#include "tune/Table.h"

#include "tune/CostModel.h"
#include "tune/Measure.h"

#include "diag/Diagnostic.h"
#include "ir/Program.h"
#include "passes/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace coconet::tune {

namespace {

/// A CSV field: quoted, with its quotes doubled, where it holds a comma, a
/// quote or a line break.
std::string csvField(llvm::StringRef text) {
  if (text.find_first_of(",\"\n") == llvm::StringRef::npos)
    return text.str();
  std::string quoted = "\"";
  for (char ch : text) {
    if (ch == '"')
      quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

} // namespace

std::string bytesText(double v) {
  static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.3g", v) << ' ' << kUnits[unit];
  return s;
}

std::string sizesText(const ir::DimEnv &sizes) {
  llvm::SmallVector<std::string, 4> bound;
  for (const auto &[name, value] : sizes)
    bound.push_back(name + " = " + std::to_string(value));
  return llvm::join(bound, ", ");
}

std::string noSchedule(const ir::Program &program, const TuneResult &result) {
  if (result.unpriced)
    return "the machine prices none of the " + std::to_string(result.unpriced) +
           " legal schedules of '" + program.name +
           "': " + result.unpricedReason;
  return "no schedule of '" + program.name + "' fits these sizes";
}

std::map<std::string, std::string> knownSchedules(const ir::Module &module,
                                                  const ir::Program &program) {
  std::map<std::string, std::string> known; // printed IR -> names
  for (const ir::Schedule &s : module.schedules) {
    if (s.program != program.name)
      continue;
    llvm::raw_null_ostream silent;
    llvm::SourceMgr sm;
    DiagnosticEngine quiet(sm, silent);
    auto scheduled = passes::scheduleProgram(module, program, &s, quiet,
                                             passes::PassOptions{});
    if (!scheduled)
      continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    ir::printProgram(*scheduled, os);
    std::string &names = known[text];
    names += (names.empty() ? "" : ", ") + s.name;
  }
  return known;
}

void printHeader(llvm::raw_ostream &os, const TuneResult &result,
                 const TableView &view) {
  const SpaceStats &st = result.stats;
  os << "tune " << view.program->name
     << (view.base ? " (after schedule " + view.base->name + ")"
                   : std::string())
     << " on machine " << view.machine->shownName() << " ("
     << view.machine->shownPath() << "): " << sizesText(*view.sizes) << '\n';
  os << "space: " << result.ranked.size() << " legal schedules (" << st.tried
     << " directives tried: " << st.refused << " refused, " << st.misfit
     << " unfit for these sizes, " << st.duplicates << " duplicates"
     << (result.unpriced
             ? "; " + std::to_string(result.unpriced) +
                   " not priced by the machine, e.g. " + result.unpricedReason
             : std::string())
     << (st.truncated ? "; STOPPED at the limit" : "") << ") in "
     << llvm::format("%.3f", result.enumerateSeconds) << " s; priced in "
     << llvm::format("%.3f", result.predictSeconds) << " s\n";
}

void printRows(llvm::raw_ostream &os, const TuneResult &result,
               const TableView &view) {
  const bool measured = !view.measured.empty();
  const double best = result.ranked.front().time.seconds;
  // rank, predicted, [measured, predicted / measured,] x best, ...
  os << llvm::format("%4s  %-10s ", static_cast<const char *>("rank"),
                     static_cast<const char *>("predicted"));
  if (measured)
    os << llvm::format("%-10s %6s  ", static_cast<const char *>("measured"),
                       static_cast<const char *>("ratio"));
  os << llvm::format(
      "%6s  %-9s  %-9s %8s  %-26s %s\n", static_cast<const char *>("x best"),
      static_cast<const char *>("memory"), static_cast<const char *>("net"),
      static_cast<const char *>("launches"),
      static_cast<const char *>("collectives"),
      static_cast<const char *>("schedule"));
  for (size_t i = 0; i < view.rows; ++i) {
    const Ranked &r = result.ranked[i];
    std::string text;
    llvm::raw_string_ostream ir(text);
    ir::printProgram(*r.candidate.program, ir);
    auto it = view.known->find(text);
    std::string summary = r.candidate.summary;
    if (it != view.known->end())
      summary += "  [= " + it->second + "]";
    os << llvm::format("%4zu  %-10s ", i + 1,
                       formatSeconds(r.time.seconds).c_str());
    if (measured)
      os << llvm::format("%-10s %6.2f  ",
                         formatSeconds(view.measured[i]).c_str(),
                         r.time.seconds / view.measured[i]);
    os << llvm::format("%6.2f  %-9s  %-9s %8zu  %-26s %s\n",
                       r.time.seconds / best, bytesText(r.memoryBytes).c_str(),
                       bytesText(r.networkBytes).c_str(), r.launches.size(),
                       (r.algorithms.empty() ? "-" : r.algorithms).c_str(),
                       summary.c_str());
  }
  if (view.rows < result.ranked.size())
    os << "  ... " << result.ranked.size() - view.rows
       << " more (--top 0 shows them all)\n";
}

void writeCsv(llvm::raw_ostream &os, const TuneResult &result,
              const TableView &view) {
  os << "rank,predicted_s,measured_s,memory_bytes,net_bytes,"
        "launches,collectives,schedule\n";
  for (size_t i = 0; i < view.rows; ++i) {
    const Ranked &r = result.ranked[i];
    os << i + 1 << ',' << llvm::format("%.9g", r.time.seconds) << ',';
    if (!view.measured.empty())
      os << llvm::format("%.9g", view.measured[i]);
    os << ',' << llvm::format("%.0f", r.memoryBytes) << ','
       << llvm::format("%.0f", r.networkBytes) << ',' << r.launches.size()
       << ',' << csvField(r.algorithms) << ',' << csvField(r.candidate.summary)
       << '\n';
  }
}

void printMeasured(llvm::raw_ostream &os, const TuneResult &result,
                   const TableView &view, llvm::ArrayRef<int64_t> steps,
                   int64_t rounds, int64_t runTimeMs, llvm::StringRef dir) {
  std::vector<double> predicted, errors;
  size_t fastest = 0;
  const llvm::ArrayRef<double> measured = view.measured;
  for (size_t i = 0; i < view.rows; ++i) {
    predicted.push_back(result.ranked[i].time.seconds);
    errors.push_back(std::fabs(predicted[i] - measured[i]) / measured[i]);
    if (measured[i] < measured[fastest])
      fastest = i;
  }
  llvm::sort(errors);
  os << "measured: " << view.rows << " schedules on "
     << rankCount(*view.program, *view.sizes) << " ranks x "
     << view.machine->threadsPerRank << " threads, fastest step of " << rounds
     << " runs of " << stepsText(steps, runTimeMs) << " (in " << dir << ")\n"
     << llvm::format(
            "  rank correlation (Spearman) %.2f; median error "
            "%.0f%%; the pick (rank 1) measured %s, %.2fx the "
            "fastest measured (rank %zu, %s)\n",
            spearman(predicted, measured), 100 * errors[errors.size() / 2],
            formatSeconds(measured[0]).c_str(), measured[0] / measured[fastest],
            fastest + 1, formatSeconds(measured[fastest]).c_str());
}

std::string tunedSchedules(const TuneResult &result, const TableView &view,
                           llvm::StringRef name, bool table) {
  if (!table)
    return scheduleText(name, *view.program, view.base,
                        result.ranked.front().candidate.directives);
  // Each row as a schedule of its own, named by its rank.
  std::string schedule;
  for (size_t i = 0; i < view.rows; ++i) {
    const Ranked &r = result.ranked[i];
    schedule += "// rank " + std::to_string(i + 1) + ": predicted " +
                formatSeconds(r.time.seconds) + "\n" +
                scheduleText(name.str() + "_" + std::to_string(i + 1),
                             *view.program, view.base, r.candidate.directives);
  }
  return schedule;
}

} // namespace coconet::tune
