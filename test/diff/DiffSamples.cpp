//===- DiffSamples.cpp - every shipped schedule against its program -------===//
//
// The differential suite over the samples and the standard library: every
// program of samples/*.coco and stdlib/**/*.coco, under every schedule
// written for it (and under the cleanup passes alone), on 1, 2, 3, 4 and 8
// ranks (a program with a mesh on every factorisation of the rank count
// into its axes), with several random sizes and input seeds, is run on the
// simulator next to the unscheduled program (as sema produced it, no
// passes) and every result is compared (verify::comparePrograms): bitwise,
// or within the tolerance when the schedule records a reassociation.
// Schedules are applied with the IR verifier after every pass.
//
// Sizes. Every size name that is not a mesh size gets unit * k, k random in
// 1..3. The unit is the smallest of 4, 8, R, 2R, 4R, 8R (R = ranks; at least
// 4) for which the simulator accepts both programs with every size equal to
// it:
// sliced dimensions must divide by the ranks slicing them and overlapped
// dimensions by chunks * ranks, a topk's dimension must hold its k, and a
// divisibility or bound that holds for the unit holds for its multiples.
//
// Inputs are the simulator's generated ones, except that a float tensor
// parameter named `v` (Adam's and LAMB's second moment, which must not be
// negative: the update takes its square root) gets the absolute value of
// its generated input.
//
// With --tuned, the schedules are instead those the tuner enumerates for
// each program (tune/ScheduleSpace.h: any parameter may be sharded,
// overlaps in 2 and 4 parts), every K-th of them with --every K (starting
// at --offset), on 2, 3 and 4 ranks with one size draw: the tuner must
// only ever offer schedules that keep the program's results. With --cap N,
// a program offering more than N schedules has N of them checked, evenly
// spaced from its first (the default tier's bound on time: the
// MoE layers' schedules cost a second or more each in the simulator).
//
// Prints one line per (program, schedule) and the totals; exits with 1 on
// any mismatch, simulator error or refused schedule.
//
//===----------------------------------------------------------------------===//

#include "diag/Diagnostic.h"
#include "ir/Program.h"
#include "passes/PassManager.h"
#include "sema/Sema.h"
#include "sim/Inputs.h"
#include "sim/Simulator.h"
#include "tune/ScheduleSpace.h"
#include "tune/Tuner.h"
#include "verify/Differential.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#ifndef COCONET_SOURCE_DIR
#error "COCONET_SOURCE_DIR must name the source tree"
#endif

using namespace coconet;

namespace {

constexpr int64_t kRankCounts[] = {1, 2, 3, 4, 8};
constexpr int64_t kTunedRankCounts[] = {2, 3, 4};
/// Random size draws per mesh configuration, and seeds per draw.
constexpr int kSizeDraws = 3;
constexpr int kSeedsPerDraw = 2;

/// The .coco files to check, sorted.
std::vector<std::string> sourceFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  std::string samples = COCONET_SOURCE_DIR "/samples";
  for (llvm::sys::fs::directory_iterator it(samples, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".coco")
      files.push_back(it->path());
  std::string stdlib = COCONET_SOURCE_DIR "/stdlib";
  for (llvm::sys::fs::recursive_directory_iterator it(stdlib, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".coco")
      files.push_back(it->path());
  llvm::sort(files);
  return files;
}

/// Every way to write `ranks` as a product of `axes` positive factors.
void factorisations(int64_t ranks, unsigned axes,
                    llvm::SmallVectorImpl<int64_t> &prefix,
                    std::vector<llvm::SmallVector<int64_t, 2>> &out) {
  if (axes == 1) {
    prefix.push_back(ranks);
    out.emplace_back(prefix.begin(), prefix.end());
    prefix.pop_back();
    return;
  }
  for (int64_t f = 1; f <= ranks; ++f)
    if (ranks % f == 0) {
      prefix.push_back(f);
      factorisations(ranks / f, axes - 1, prefix, out);
      prefix.pop_back();
    }
}

/// Statistics of one (program, schedule) row.
struct Row {
  std::string program, schedule;
  unsigned cases = 0; ///< rank counts
  unsigned runs = 0;
  unsigned failures = 0;
  bool tolerance = false;
  unsigned runsNotBitwise = 0;
  unsigned wideNotBitwise = 0;
  double maxUlps = 0;
  double ms = 0;
};

class Suite {
public:
  /// --tuned: the tuner's schedules, every `every`-th from `offset`.
  bool tuned = false;
  size_t every = 1, offset = 0;
  /// --cap: at most this many of a program's schedules (0: all).
  size_t cap = 0;
  int run();

private:
  void checkFile(const std::string &path);
  void checkTuned(const ir::Module &module, const std::string &path,
                  const std::string &diagText);
  void checkSchedule(const ir::Program &program, const ir::Program &candidate,
                     Row &row, const std::string &path);
  /// Sets up `options` for one run; false after reporting a failure.
  bool inputsFor(const ir::Program &program, sim::SimOptions &options,
                 std::string &error);
  /// The size unit of a mesh configuration (see the file comment), or 0.
  int64_t sizeUnit(const ir::Program &program, const ir::Program &candidate,
                   const ir::DimEnv &mesh, int64_t ranks, std::string &error);
  void reportFailure(const Row &row, const std::string &path,
                     const sim::SimOptions &options, const std::string &what);

  std::mt19937_64 rng{0xC0C0DE5EEDULL};
  size_t tunedSeen = 0;
  std::vector<Row> rows;
  llvm::StringSet<> seen;
  unsigned totalCases = 0, totalRuns = 0, totalFailures = 0;
};

bool Suite::inputsFor(const ir::Program &program, sim::SimOptions &options,
                      std::string &error) {
  options.inputTensors.clear();
  const ir::Stage *v = program.findStage("v");
  if (!v || !v->isParam() || v->type.isScalar() || !ir::isFloat(v->type.dtype))
    return true;
  llvm::SmallVector<int64_t, 4> shape;
  for (const ir::Dim &d : v->type.shape) {
    auto value = d.evaluate(options.sizes);
    if (!value) {
      error = "cannot evaluate the shape of 'v'";
      return false;
    }
    shape.push_back(*value);
  }
  if (v->type.layout.isLocalAnywhere())
    return true; // not a second moment
  sim::Tensor t =
      sim::generateInput(*v, shape, options.seed, 0, options.inputKind);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, std::fabs(t.get(i)));
  options.inputTensors["v"] = std::move(t);
  return true;
}

int64_t Suite::sizeUnit(const ir::Program &program,
                        const ir::Program &candidate, const ir::DimEnv &mesh,
                        int64_t ranks, std::string &error) {
  llvm::SmallVector<int64_t, 8> units = {4,         8,         ranks,
                                         2 * ranks, 4 * ranks, 8 * ranks};
  llvm::sort(units);
  units.erase(std::unique(units.begin(), units.end()), units.end());
  // At least 4 elements along every dimension.
  llvm::erase_if(units, [](int64_t u) { return u < 4; });
  for (int64_t unit : units) {
    sim::SimOptions options;
    options.sizes = mesh;
    for (const std::string &name : program.sizeNames)
      options.sizes.try_emplace(name, unit);
    if (!inputsFor(program, options, error))
      return 0;
    bool uneven = false;
    for (const ir::Program *p : {&program, &candidate}) {
      auto r = sim::simulate(*p, options);
      if (r)
        continue;
      std::string message = llvm::toString(r.takeError());
      // Sizes too small for the unit: uneven slices, or a topk's k past
      // its dimension (samples/moe_layer.coco's top 8 of E).
      if (llvm::StringRef(message).contains("divisible") ||
          llvm::StringRef(message).contains("multiple of") ||
          llvm::StringRef(message).contains("which has only")) {
        uneven = true;
        break;
      }
      error = message;
      return 0;
    }
    if (!uneven)
      return unit;
  }
  error = "no size unit divides evenly";
  return 0;
}

void Suite::reportFailure(const Row &row, const std::string &path,
                          const sim::SimOptions &options,
                          const std::string &what) {
  ++totalFailures;
  llvm::errs() << "FAIL: " << row.program << ", schedule " << row.schedule
               << ", seed " << options.seed
               << (options.inputKind == sim::InputKind::Wide ? " (wide)" : "")
               << ", sizes";
  std::string sizes;
  for (const auto &[name, value] : options.sizes)
    sizes += (sizes.empty() ? "" : ",") + name + "=" + std::to_string(value);
  llvm::errs() << ' ' << sizes << ":\n" << what;
  llvm::errs() << "  reproduce: coconetc sim --verify-each --schedule "
               << row.schedule << " --compare-unscheduled --program "
               << row.program << " --seed " << options.seed
               << (options.inputKind == sim::InputKind::Wide ? " --inputs=wide"
                                                             : "")
               << " --size " << sizes << ' ' << path
               << (options.inputTensors.empty()
                       ? ""
                       : "  (the suite makes 'v' non-negative: add "
                         "--set v=0.001)")
               << "\n";
}

void Suite::checkSchedule(const ir::Program &program,
                          const ir::Program &candidate, Row &row,
                          const std::string &path) {
  const ir::Mesh &mesh = program.mesh;
  llvm::ArrayRef<int64_t> rankCounts = kRankCounts;
  if (tuned)
    rankCounts = kTunedRankCounts;
  for (int64_t ranks : rankCounts) {
    ++row.cases;
    ++totalCases;
    std::vector<llvm::SmallVector<int64_t, 2>> meshes;
    llvm::SmallVector<int64_t, 2> prefix;
    factorisations(ranks, mesh.size(), prefix, meshes);
    for (const auto &axisSizes : meshes) {
      ir::DimEnv meshSizes;
      for (unsigned a = 0; a < mesh.size(); ++a)
        meshSizes[mesh.axes[a].size] = axisSizes[a];
      std::string error;
      int64_t unit = sizeUnit(program, candidate, meshSizes, ranks, error);
      if (!unit) {
        sim::SimOptions options;
        options.sizes = meshSizes;
        reportFailure(row, path, options, "  " + error + "\n");
        ++row.failures;
        continue;
      }
      for (int draw = 0; draw < (tuned ? 1 : kSizeDraws); ++draw) {
        sim::SimOptions options;
        options.sizes = meshSizes;
        for (const std::string &name : program.sizeNames)
          if (!options.sizes.count(name))
            options.sizes[name] = unit * static_cast<int64_t>(1 + rng() % 3);
        for (int s = 0; s < 2 * kSeedsPerDraw; ++s) {
          // Each seed with uniform inputs, then with wide ones.
          if (s % 2 == 0) {
            options.seed = 1 + rng() % 1000000;
            options.inputKind = sim::InputKind::Uniform;
          } else {
            options.inputKind = sim::InputKind::Wide;
          }
          ++row.runs;
          ++totalRuns;
          if (!inputsFor(program, options, error)) {
            reportFailure(row, path, options, "  " + error + "\n");
            ++row.failures;
            continue;
          }
          auto cmp = verify::comparePrograms(program, candidate, options);
          if (!cmp) {
            reportFailure(row, path, options,
                          "  " + llvm::toString(cmp.takeError()) + "\n");
            ++row.failures;
            continue;
          }
          if (!cmp->bitwise)
            row.tolerance = true;
          bool differs = false;
          for (const verify::ResultDiff &d : cmp->results) {
            row.maxUlps = std::max(row.maxUlps, d.maxUlps);
            differs |= d.differing != 0;
          }
          row.runsNotBitwise += differs;
          row.wideNotBitwise += differs && s % 2;
          if (!cmp->ok()) {
            std::string text;
            llvm::raw_string_ostream os(text);
            cmp->print(os);
            reportFailure(row, path, options, text);
            ++row.failures;
          }
        }
      }
    }
  }
}

void Suite::checkFile(const std::string &path) {
  llvm::SourceMgr sourceMgr;
  std::string diagText;
  llvm::raw_string_ostream diagOs(diagText);
  DiagnosticEngine diags(sourceMgr, diagOs);
  sema::SemaOptions semaOptions;
  semaOptions.stdlibDir = COCONET_SOURCE_DIR "/stdlib";
  std::unique_ptr<ir::Module> module =
      sema::compileFile(sourceMgr, diags, path, semaOptions);
  if (!module || diags.errorCount()) {
    ++totalFailures;
    llvm::errs() << "FAIL: " << path << " does not compile:\n" << diagText;
    return;
  }
  if (tuned) {
    checkTuned(*module, path, diagText);
    return;
  }
  // Each program with the cleanups alone, then each of its schedules;
  // programs and schedules of imported modules are checked once.
  for (const auto &program : module->programs) {
    std::vector<const ir::Schedule *> schedules = {nullptr};
    for (const ir::Schedule &s : module->schedules)
      if (s.program == program->name)
        schedules.push_back(&s);
    for (const ir::Schedule *schedule : schedules) {
      Row row;
      row.program = program->name;
      row.schedule = schedule ? schedule->name : "(cleanups only)";
      if (!seen.insert(row.program + "/" + row.schedule).second)
        continue;
      auto start = std::chrono::steady_clock::now();
      passes::PassOptions passOptions;
      passOptions.verifyEach = true;
      std::unique_ptr<ir::Program> candidate = passes::scheduleProgram(
          *module, *program, schedule, diags, passOptions);
      if (!candidate) {
        ++totalFailures;
        ++row.failures;
        llvm::errs() << "FAIL: " << path << ": schedule " << row.schedule
                     << " of " << row.program << " is refused:\n"
                     << diagText;
      } else {
        checkSchedule(*program, *candidate, row, path);
      }
      row.ms = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count();
      rows.push_back(std::move(row));
    }
  }
}

void Suite::checkTuned(const ir::Module &module, const std::string &path,
                       const std::string &diagText) {
  for (const auto &program : module.programs) {
    if (!seen.insert(program->name + "/(tuned)").second)
      continue;
    tune::SpaceOptions options;
    options.shardAll = true;
    options.chunks = {2, 4};
    tune::SpaceStats stats;
    std::vector<tune::Candidate> candidates =
        tune::enumerateSchedules(module, *program, options, stats);
    if (candidates.empty() || stats.truncated) {
      ++totalFailures;
      llvm::errs() << "FAIL: " << path << ": the tuner offers "
                   << candidates.size() << " schedules of " << program->name
                   << (stats.truncated ? " (stopped at its limit)" : "") << "\n"
                   << diagText;
      continue;
    }
    const size_t n = candidates.size();
    for (size_t i = 0; i < n; ++i) {
      // Evenly spaced: i is kept where i * cap / n steps up (the first
      // always; cap of them, as i * cap / n runs over 0 .. cap - 1).
      if (cap && n > cap && i > 0 && i * cap / n == (i - 1) * cap / n)
        continue;
      if ((tunedSeen++ + every - offset % every) % every != 0)
        continue;
      const tune::Candidate &c = candidates[i];
      Row row;
      row.program = program->name;
      row.schedule = "tuned#" + std::to_string(i);
      auto start = std::chrono::steady_clock::now();
      std::string verifyError = ir::verifyProgram(*c.program);
      // The schedule text it offers must make the program it priced.
      ir::Schedule text =
          tune::makeSchedule(row.schedule, *program, nullptr, c.directives);
      llvm::SourceMgr sm;
      std::string replayDiags;
      llvm::raw_string_ostream replayOs(replayDiags);
      DiagnosticEngine replayEngine(sm, replayOs);
      passes::PassOptions verifying;
      verifying.verifyEach = true;
      std::unique_ptr<ir::Program> replayed = passes::scheduleProgram(
          module, *program, &text, replayEngine, verifying);
      std::string want, got;
      llvm::raw_string_ostream wantOs(want), gotOs(got);
      ir::printProgram(*c.program, wantOs);
      if (replayed)
        ir::printProgram(*replayed, gotOs);
      if (!verifyError.empty() || !replayed || want != got) {
        ++totalFailures;
        ++row.failures;
        llvm::errs() << "FAIL: " << path << ": " << row.schedule << " of "
                     << program->name
                     << (!verifyError.empty() ? " is invalid IR: " + verifyError
                         : !replayed
                             ? " is refused when applied again:\n" + replayDiags
                             : std::string(" makes another program "
                                           "than its schedule text"))
                     << "\n"
                     << tune::scheduleText("t", *program, nullptr,
                                           c.directives);
      } else {
        unsigned before = totalFailures;
        checkSchedule(*program, *c.program, row, path);
        if (totalFailures != before)
          llvm::errs() << "  the schedule (" << row.schedule << "):\n"
                       << tune::scheduleText(row.schedule.substr(0, 5) +
                                                 std::to_string(i),
                                             *program, nullptr, c.directives);
      }
      row.ms = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count();
      rows.push_back(std::move(row));
    }
  }
}

int Suite::run() {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> files = sourceFiles();
  if (files.empty()) {
    llvm::errs() << "FAIL: no .coco files under " COCONET_SOURCE_DIR "\n";
    return 1;
  }
  for (const std::string &path : files)
    checkFile(path);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  llvm::outs() << llvm::formatv("{0,-22} {1,-17} {2,5} {3,5} {4,-9} {5,8} "
                                "{6,8} {7,8}\n",
                                "program", "schedule", "cases", "runs",
                                "compare", "not-bit", "max-ulps", "ms");
  unsigned schedules = 0;
  for (const Row &r : rows) {
    schedules += r.schedule != "(cleanups only)";
    llvm::outs() << llvm::formatv(
        "{0,-22} {1,-17} {2,5} {3,5} {4,-9} {5,8} {6,8:f2} {7,8:f0}{8}\n",
        r.program, r.schedule, r.cases, r.runs,
        r.tolerance ? "tolerance" : "bitwise",
        std::to_string(r.runsNotBitwise - r.wideNotBitwise) + "/" +
            std::to_string(r.wideNotBitwise),
        r.maxUlps, r.ms, r.failures ? "  FAILED" : "");
  }
  llvm::outs() << "(cases: rank counts; runs: mesh shapes x sizes x seeds x "
                  "inputs uniform and wide; compare: bitwise, or tolerance "
                  "when the schedule records a reassociation; not-bit: runs "
                  "with some bits different, uniform/wide; "
                  "max-ulps: the largest difference in units of the result "
                  "type's precision)\n";
  llvm::outs() << llvm::formatv(
      "{0} files, {1} schedules (+ cleanups only per program): {2} (program, "
      "schedule, ranks) cases, {3} (program, schedule, ranks, sizes, seed, "
      "inputs) runs, {4} failures, {5:f2} s\n",
      files.size(), schedules, totalCases, totalRuns, totalFailures, seconds);
  return totalFailures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  Suite suite;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    unsigned long long value = 0;
    if (a == "--tuned") {
      suite.tuned = true;
    } else if ((a == "--every" || a == "--offset" || a == "--cap") &&
               i + 1 < argc &&
               !llvm::StringRef(argv[i + 1]).getAsInteger(10, value) &&
               (a == "--offset" || value > 0)) {
      (a == "--every" ? suite.every
       : a == "--cap" ? suite.cap
                      : suite.offset) = value;
      ++i;
    } else {
      llvm::errs() << "usage: coconet-diff-samples [--tuned [--every K] "
                      "[--offset I] [--cap N]]\n";
      return 2;
    }
  }
  return suite.run();
}
