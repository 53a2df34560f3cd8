//===- TuneCommand.cpp - `coconetc tune` and the machine options ----------===//
//
// `coconetc tune FILE --machine M --size ... --ranks R` enumerates the
// program's legal schedules, predicts each on the machine, prints them
// ranked and writes the fastest as schedule text. --machine also gives
// --emit=report its predicted times, and --schedule=auto is the tuner's
// choice.
//
//===----------------------------------------------------------------------===//

#include "driver/DriverOptions.h"
#include "driver/RangedOption.h"
#include "driver/SafeParser.h"

#include "analysis/Report.h"
#include "codegen/Codegen.h"
#include "diag/TerminalText.h"
#include "lower/Lower.h"
#include "lower/Plan.h"
#include "passes/PassManager.h"
#include "sema/Sema.h"
#include "support/Files.h"
#include "synth/AlgorithmFile.h"
#include "synth/Synthesize.h"
#include "tune/CostModel.h"
#include "tune/Measure.h"
#include "tune/Session.h"
#include "tune/Synthesis.h"
#include "tune/Table.h"
#include "tune/Tuner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <set>

#ifndef COCONET_MACHINES_DIR
#define COCONET_MACHINES_DIR ""
#endif

namespace cl = llvm::cl;

namespace coconet::driver {

cl::OptionCategory &tuneCategory() {
  static cl::OptionCategory cat("coconetc tune options (and --machine for "
                                "--emit=report and --schedule=auto)");
  return cat;
}

static cl::opt<std::string> machineOption(
    "machine",
    cl::desc("The machine file of the cost model: a path, or the name of an "
             "installed one (cpu-2x1, h100-sxm-8, ...; docs/tuner.md)"),
    cl::value_desc("file|name"), cl::cat(tuneCategory()));

static NumberOption<int64_t> top("top",
                                 "Rows of the ranked table (0: every "
                                 "schedule); default 10",
                                 0, INT64_MAX, 10, tuneCategory());

static cl::list<int64_t>
    chunkCounts("chunks",
                cl::desc("Part counts tried for each overlap (default "
                         "2,4,8)"),
                cl::value_desc("K,K"), cl::CommaSeparated,
                cl::cat(tuneCategory()));

static cl::list<std::string> shardable(
    "shard",
    cl::desc("Parameters the tuner may store sharded (each rank keeps its "
             "slice: the caller's interface changes); 'all' for any. "
             "Default: none"),
    cl::value_desc("name,name|all"), cl::CommaSeparated,
    cl::cat(tuneCategory()));

static cl::list<std::string> algorithmFileOption(
    "algorithms",
    cl::desc("Algorithm files (coconetc synth's output) the tuner may name "
             "for collectives of their kind and ranks, where one makes the "
             "step faster; written into the schedule as given (a path "
             "relative to the schedule's file, or absolute)"),
    cl::value_desc("file,file"), cl::CommaSeparated, cl::cat(tuneCategory()));

static cl::opt<std::string> synthesizeDir(
    "synthesize",
    cl::desc("Synthesise an algorithm (coconetc synth, docs/synth.md) for "
             "each collective of the program on the machine's topology "
             "(HubAndSpoke nodes of its ranks-per-node, chunks spread in a "
             "node through a switch and sent between nodes GPU to GPU), "
             "write each into this directory and offer it as --algorithms "
             "does"),
    cl::value_desc("dir"), cl::cat(tuneCategory()));

static cl::opt<bool, false, SafeParser<bool>> staging(
    "staging",
    cl::desc("Price the staging copies of fused collectives (the caller's "
             "tensors are not the program's symmetric memory; the driver's "
             "--staging)"),
    cl::cat(tuneCategory()));

static cl::opt<bool, false, SafeParser<bool>> measure(
    "measure",
    cl::desc("CPU machines: build the schedules of the table (--top) with "
             "the generated driver, time each on this machine, and print "
             "measured beside predicted"),
    cl::cat(tuneCategory()));

static NumberOption<int64_t>
    measureIterations("iterations",
                      "--measure: steps timed per run (after one warm-up); "
                      "default 5",
                      1, 1000000, 5, tuneCategory());

static NumberOption<int64_t> measureRunTime(
    "run-time",
    "--measure: milliseconds each run lasts at least: a first run of "
    "--iterations steps says a schedule's step time, and its runs take as many "
    "more steps as fill this (0: --iterations only); default 50",
    0, 1000000, 50, tuneCategory());

static NumberOption<int64_t> measureRounds(
    "rounds",
    "--measure: rounds over the schedules (each times every schedule once: "
    "odd rounds in rank order, even rounds in reverse); each one's fastest "
    "step kept; default 3",
    1, 1000, 3, tuneCategory());

static cl::opt<std::string>
    tunedName("name",
              cl::desc("The name of the schedule tune writes (default "
                       "'tuned')"),
              cl::value_desc("name"), cl::init("tuned"),
              cl::cat(tuneCategory()));

static cl::opt<bool, false, SafeParser<bool>> writeTable(
    "write-table",
    cl::desc("Write every row of the table (--top) as a schedule, NAME_1 "
             "(the fastest) to NAME_K, each with its predicted time, "
             "instead of the fastest alone"),
    cl::cat(tuneCategory()));

static cl::opt<std::string> csvPath(
    "csv",
    cl::desc("Also write the table's rows (--top) to this file as CSV for "
             "scripts: rank, predicted_s, measured_s (with --measure, else "
             "empty), memory_bytes, net_bytes, launches, collectives, "
             "schedule; seconds to 9 significant digits, where the table "
             "prints 3"),
    cl::value_desc("file"), cl::cat(tuneCategory()));

bool machineGiven() { return machineOption.getNumOccurrences() > 0; }

bool tuneOptionGiven(std::string &which,
                     llvm::ArrayRef<llvm::StringRef> allowed) {
  for (const auto &entry : cl::getRegisteredOptions()) {
    const cl::Option *o = entry.second;
    if (o->getNumOccurrences() &&
        llvm::is_contained(o->Categories, &tuneCategory()) &&
        !llvm::is_contained(allowed, o->ArgStr)) {
      which = o->ArgStr.str();
      return true;
    }
  }
  return false;
}

/// The installed machine files: COCONET_MACHINES_DIR relative to the
/// executable's directory.
static std::string machinesDir() {
  llvm::SmallString<256> dir(COCONET_MACHINES_DIR);
  if (llvm::sys::path::is_relative(dir)) {
    static int anchor;
    llvm::SmallString<256> exe(
        llvm::sys::fs::getMainExecutable("coconetc", &anchor));
    llvm::sys::path::remove_filename(exe);
    llvm::sys::path::append(exe, dir);
    llvm::sys::path::remove_dots(exe, /*remove_dot_dot=*/true);
    dir = exe;
  }
  return std::string(dir);
}

std::optional<tune::Machine> loadMachine(Compilation &c) {
  std::string path = machineOption;
  if (path.empty()) {
    reportToolError("no machine: give --machine FILE or the name of an "
                    "installed one (in " +
                    machinesDir() + ")");
    return std::nullopt;
  }
  if (!llvm::sys::fs::exists(path) && path.find('/') == std::string::npos) {
    llvm::SmallString<256> installed(machinesDir());
    llvm::sys::path::append(installed, path + ".machine");
    if (!llvm::sys::fs::exists(installed)) {
      std::error_code ec;
      std::vector<std::string> found;
      for (llvm::sys::fs::directory_iterator it(machinesDir(), ec), end;
           it != end && !ec; it.increment(ec))
        if (llvm::sys::path::extension(it->path()) == ".machine")
          found.push_back(llvm::sys::path::stem(it->path()).str());
      llvm::sort(found);
      std::string names = llvm::join(found, ", ");
      reportToolError("no machine file '" + path +
                      "' and no installed "
                      "machine of that name (installed: " +
                      (names.empty() ? std::string("none") : names) + ")");
      return std::nullopt;
    }
    path = std::string(installed);
  }
  // A regular file of at most 1 MiB (support/Files.h).
  support::ReadFile read =
      support::readUserFile(path, support::FileKind::Machine);
  if (!read.buffer) {
    reportToolError(read.message);
    return std::nullopt;
  }
  return tune::parseMachine(std::move(read.buffer), c.sourceMgr, *c.diags);
}

/// Every size name of `program` bound (P from --ranks), or report which
/// are not.
static bool allSizesBound(const ir::Program &program, ir::DimEnv &sizes,
                          llvm::StringRef why) {
  if (!reportSizes(&program, sizes))
    return false;
  llvm::SmallVector<std::string, 4> missing;
  for (const std::string &name : program.sizeNames)
    if (!sizes.count(name))
      missing.push_back(name);
  for (const auto &axis : program.mesh.axes)
    if (!sizes.count(axis.size) && !llvm::is_contained(missing, axis.size))
      missing.push_back(axis.size);
  if (missing.empty())
    return true;
  reportToolError((why + " needs every size of '" + program.name +
                   "' bound; not bound: " + llvm::join(missing, ", ") +
                   " (--size NAME=VALUE; --ranks for P)")
                      .str());
  return false;
}

/// --shard names parameters of `program` (or is 'all').
static bool checkShardable(const ir::Program &program) {
  for (const std::string &name : shardable) {
    if (name == "all")
      continue;
    const ir::Stage *s = program.findStage(name);
    if (s && s->isParam())
      continue;
    std::string params;
    for (const ir::Stage *p : program.getParams())
      params += (params.empty() ? "" : ", ") + p->name;
    reportToolError("--shard: '" + name + "' is not a parameter of '" +
                    program.name + "' (its parameters: " + params + ")");
    return false;
  }
  return true;
}

/// The tables of --algorithms, or nullopt after reporting why not.
static std::optional<std::vector<std::shared_ptr<const ir::AlgorithmTable>>>
loadAlgorithmFiles(Compilation &c) {
  std::vector<std::shared_ptr<const ir::AlgorithmTable>> tables;
  sema::AlgorithmFiles files;
  for (const std::string &path : algorithmFileOption) {
    auto table = files.loadPath(path, *c.diags);
    if (!table)
      return std::nullopt;
    if (!llvm::is_contained(tables, table))
      tables.push_back(std::move(table));
  }
  return tables;
}

/// --synthesize DIR: an algorithm for each collective of `program` (its
/// kind and its axis's ranks at `sizes`, each once; for an allreduce also
/// the reducescatter and allgather of its split) on the machine's
/// topology, written into DIR and appended to `tables`; false after
/// reporting why not.
static bool synthesizeForMachine(
    Compilation &c, const ir::Program &program, const ir::DimEnv &sizes,
    const tune::Machine &machine,
    std::vector<std::shared_ptr<const ir::AlgorithmTable>> &tables) {
  const std::string dir = synthesizeDir;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    reportToolError("--synthesize: cannot make the directory '" + dir +
                    "': " + ec.message());
    return false;
  }
  auto jobs = tune::synthesisJobs(program, sizes, machine);
  if (!jobs) {
    reportToolError("coconetc tune --synthesize: " +
                    llvm::toString(jobs.takeError()));
    return false;
  }
  sema::AlgorithmFiles files;
  for (const tune::SynthesisJob &job : *jobs) {
    const synth::Collective collective = job.collective;
    const int64_t ranks = job.ranks, perNode = job.perNode;
    const synth::Sketch &sketch = job.sketch;
    const synth::Topology &topology = job.topology;
    synth::SynthOptions options;
    options.seconds = 20;
    auto result = synth::synthesize(collective, topology, sketch, options);
    if (!result) {
      llvm::errs() << "coconetc tune: no " << synth::collectiveName(collective)
                   << " synthesised for " << ranks
                   << " ranks: " << llvm::toString(result.takeError()) << "\n";
      continue;
    }
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, synth::collectiveName(collective).str() +
                                      "-" + std::to_string(ranks) + ".alg");
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
      if (ec) {
        reportToolError("--synthesize: cannot write '" + std::string(path) +
                        "': " + ec.message());
        return false;
      }
      synth::writeAlgorithm(result->algorithm, topology.name, result->time, os);
    }
    llvm::errs() << "coconetc tune: synthesised "
                 << synth::collectiveName(collective) << " for " << ranks
                 << " ranks (" << sketch.nodes << " node"
                 << (sketch.nodes == 1 ? "" : "s") << " of " << perNode
                 << ") into " << path << ": " << result->algorithm.steps.size()
                 << (result->algorithm.steps.size() == 1 ? " step, "
                                                         : " steps, ")
                 << "" << llvm::format("%.4g", result->time)
                 << " us on the machine's links at 1 MiB\n";
    auto table = files.loadPath(path, *c.diags);
    if (!table)
      return false;
    if (!llvm::is_contained(tables, table))
      tables.push_back(std::move(table));
  }
  return true;
}

static tune::SpaceOptions spaceOptions(const ir::Schedule *base,
                                       const ir::DimEnv &sizes) {
  tune::SpaceOptions options;
  options.base = base;
  options.sizes = sizes;
  options.staging = staging;
  if (!chunkCounts.empty())
    options.chunks.assign(chunkCounts.begin(), chunkCounts.end());
  for (const std::string &name : shardable)
    if (name == "all")
      options.shardAll = true;
    else
      options.shardable.push_back(name);
  return options;
}

/// tools/measure-cpu.sh where coconetc finds it (beside the machines).
static std::string measureScript() {
  llvm::SmallString<256> path(machinesDir());
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "measure-cpu.sh");
  return std::string(path);
}

/// How to run one schedule's driver: measure-cpu.sh's command line and the
/// log its output goes to.
struct MeasureRun {
  std::string bash;
  llvm::SmallVector<std::string, 12> args;
  std::string log;
  /// args[steps]: the steps a run times.
  size_t steps = 0;
};

/// Writes `scheduled` with its driver into `dir`; the command that builds
/// it (on its first run) and times one run of --iterations steps.
static llvm::Expected<MeasureRun>
prepareMeasure(Compilation &c, const ir::Program &scheduled,
               llvm::StringRef name, const ir::DimEnv &sizes, int64_t threads,
               llvm::StringRef dir) {
  auto plan = lower::lowerProgram(scheduled, name, *c.diags);
  if (!plan)
    return llvm::createStringError("cannot lower the schedule");
  codegen::EmitOptions options;
  options.target = codegen::TargetKind::Cpu;
  options.sourceName = "coconetc tune";
  options.driver = true;
  std::vector<codegen::File> files = codegen::emitProgram(*plan, options);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create " + dir + ": " +
                                   ec.message());
  for (const codegen::File &f : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, f.name);
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      return llvm::createStringError("cannot write " + path + ": " +
                                     ec.message());
    out << f.text;
  }
  MeasureRun run;
  run.bash = "/bin/bash";
  if (auto found = llvm::sys::findProgramByName("bash"))
    run.bash = *found;
  std::string sizeText;
  for (const auto &[n, v] : sizes)
    sizeText += (sizeText.empty() ? "" : ",") + n + "=" + std::to_string(v);
  // measure-cpu.sh DIR NAME RANKS THREADS ITERATIONS --size ...
  run.args = {run.bash,
              measureScript(),
              dir.str(),
              plan->name,
              std::to_string(tune::rankCount(scheduled, sizes)),
              std::to_string(threads)};
  run.steps = run.args.size();
  run.args.append(
      {std::to_string(*measureIterations), "--size", sizeText, "--step-times"});
  if (staging)
    run.args.push_back("--staging");
  llvm::SmallString<256> log(dir);
  llvm::sys::path::append(log, "measure.log");
  run.log = std::string(log);
  return run;
}

/// One run of `run` for `steps` steps; an error says what failed.
static llvm::Expected<tune::RunTime> measureOnce(MeasureRun &run,
                                                 int64_t steps) {
  run.args[run.steps] = std::to_string(steps);
  llvm::SmallVector<llvm::StringRef, 12> argRefs(run.args.begin(),
                                                 run.args.end());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(run.log), llvm::StringRef(run.log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(run.bash, argRefs, std::nullopt, redirects,
                                     0, 0, &error);
  auto text = llvm::MemoryBuffer::getFile(run.log);
  llvm::StringRef out = text ? (*text)->getBuffer() : "";
  // "NAME: K steps on R ranks, X ms per step, fastest Y ms"
  if (rc != 0 || out.find(" ms per step, fastest ") == llvm::StringRef::npos)
    return llvm::createStringError(
        "measuring failed (" +
        (error.empty() ? "exit " + std::to_string(rc) : error) + "): " +
        run.args[1] + " " + llvm::join(llvm::drop_begin(run.args, 2), " ") +
        "\n" + out.take_back(2000).str());
  return tune::parseTimingLine(out);
}

int runTune(const std::string &path, const std::string &programName) {
  auto c = compile(path);
  if (!c->module)
    return 1;
  // A schedule given is the base every candidate applies first.
  const ir::Program *program = nullptr;
  const ir::Schedule *base = nullptr;
  if (!selectProgramAndSchedule(*c->module, programName, program, base))
    return 2;
  for (int64_t k : chunkCounts)
    if (k < 2) {
      reportToolError("--chunks: a part count must be at least 2, got " +
                      std::to_string(k));
      return 2;
    }
  ir::DimEnv sizes;
  if (!allSizesBound(*program, sizes, "coconetc tune") ||
      !checkShardable(*program))
    return 2;
  std::optional<tune::Machine> machine = loadMachine(*c);
  if (!machine)
    return c->diags->hadError() ? 1 : 2;
  auto tables = loadAlgorithmFiles(*c);
  if (!tables)
    return 1;
  if (!synthesizeDir.empty() &&
      !synthesizeForMachine(*c, *program, sizes, *machine, *tables))
    return 1;

  tune::SessionOptions options;
  options.base = base;
  options.space = spaceOptions(base, sizes);
  options.space.algorithmFiles = std::move(*tables);
  options.top = static_cast<size_t>(*top);
  options.tunedName = tunedName;
  options.writeTable = writeTable;
  if (measure) {
    if (machine->target != "cpu") {
      reportToolError("--measure times the CPU target on this machine; "
                      "machine '" +
                      machine->shownName() + "' is for " + machine->target);
      return 2;
    }
    llvm::SmallString<128> tmp;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("coconet-tune", tmp)) {
      reportToolError("cannot create a directory for --measure: " +
                      ec.message());
      return 2;
    }
    options.measure = true;
    options.measureDir = std::string(tmp);
    options.policy.iterations = *measureIterations;
    options.policy.runTimeMs = *measureRunTime;
    options.policy.rounds = *measureRounds;
  }
  // --measure: row i's program written with its driver under DIR/rI.
  auto prepare = [&](size_t i, const ir::Program &scheduled,
                     llvm::StringRef name) -> llvm::Expected<tune::RowRunner> {
    llvm::SmallString<128> dir(options.measureDir);
    llvm::sys::path::append(dir, "r" + std::to_string(i + 1));
    auto run = prepareMeasure(*c, scheduled, name, sizes,
                              machine->threadsPerRank, dir);
    if (!run)
      return run.takeError();
    return [run = std::move(*run)](int64_t steps) mutable {
      return measureOnce(run, steps);
    };
  };
  llvm::raw_ostream &os = llvm::outs();
  auto session = tune::runSession(*c->module, *program, *machine, sizes,
                                  options, prepare, os, llvm::errs());
  if (!session) {
    reportToolError(llvm::toString(session.takeError()));
    return 1;
  }
  const tune::Session &s = **session;
  if (!csvPath.empty()) {
    std::error_code ec;
    llvm::ToolOutputFile csv(csvPath, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      reportToolError("cannot write '" + csvPath + "': " + ec.message());
      return 2;
    }
    tune::writeCsv(csv.os(), s.result, s.view);
    csv.keep();
  }
  const std::string &out = outputPath();
  if (out == "-") {
    os << "\n" << s.what << ", as schedule text:\n" << s.schedule;
    return 0;
  }
  std::error_code ec;
  llvm::ToolOutputFile file(out, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    reportToolError("cannot write '" + out + "': " + ec.message());
    return 2;
  }
  file.os() << s.fileComment << s.schedule;
  file.keep();
  os << "\n" << s.what << " written to " << out << " " << s.names << "\n";
  return 0;
}

std::optional<ir::Schedule> autoSchedule(Compilation &c,
                                         const ir::Program &program) {
  ir::DimEnv sizes;
  if (!allSizesBound(program, sizes, "--schedule=auto") ||
      !checkShardable(program))
    return std::nullopt;
  std::optional<tune::Machine> machine = loadMachine(c);
  if (!machine)
    return std::nullopt;
  auto tables = loadAlgorithmFiles(c);
  if (!tables)
    return std::nullopt;
  if (!synthesizeDir.empty() &&
      !synthesizeForMachine(c, program, sizes, *machine, *tables))
    return std::nullopt;
  tune::SpaceOptions space = spaceOptions(nullptr, sizes);
  space.algorithmFiles = std::move(*tables);
  auto result = tune::tuneProgram(*c.module, program, space, *machine);
  if (!result) {
    reportToolError(llvm::toString(result.takeError()));
    return std::nullopt;
  }
  if (result->ranked.empty()) {
    reportToolError("--schedule=auto: " + tune::noSchedule(program, *result));
    return std::nullopt;
  }
  const tune::Ranked &best = result->ranked.front();
  // The unscheduled program as it runs (the library's collectives).
  double unscheduled = best.time.seconds;
  {
    llvm::SourceMgr sm;
    llvm::raw_null_ostream silent;
    DiagnosticEngine quiet(sm, silent);
    if (auto plain = passes::scheduleProgram(*c.module, program, nullptr, quiet,
                                             passes::PassOptions{})) {
      auto t = tune::priceStep(*plain, *machine, sizes, staging);
      if (t)
        unscheduled = t->seconds;
      else
        llvm::consumeError(t.takeError());
    }
  }
  llvm::errs() << "coconetc: --schedule=auto for '" << program.name
               << "' on machine " << machine->shownName() << ": "
               << best.candidate.summary << " (predicted "
               << tune::formatSeconds(best.time.seconds)
               << " per step; unscheduled " << tune::formatSeconds(unscheduled)
               << "; " << result->ranked.size() << " schedules compared)\n";
  return tune::makeSchedule("auto", program, nullptr,
                            best.candidate.directives);
}

std::vector<std::string> predictedTimes(const ir::Program &scheduled,
                                        const tune::StepLaunches &launches,
                                        const tune::Machine &machine,
                                        const ir::DimEnv &sizes,
                                        std::string &total) {
  auto step = tune::predictStep(scheduled, launches, machine, sizes);
  std::vector<std::string> lines(launches.launches.size());
  if (!step) {
    total = "not predicted: " + llvm::toString(step.takeError());
    return lines;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const tune::LaunchTime &t = step->launches[i];
    std::string s = tune::formatSeconds(t.seconds);
    llvm::SmallVector<std::string, 4> parts;
    if (t.memorySeconds > 0)
      parts.push_back("memory " + tune::formatSeconds(t.memorySeconds));
    if (t.computeSeconds > 0)
      parts.push_back("compute " + tune::formatSeconds(t.computeSeconds));
    if (t.packSeconds > 0)
      parts.push_back("packing " + tune::formatSeconds(t.packSeconds));
    for (const tune::CollectiveTime &ct : t.collectives) {
      std::string c = ct.stage->name + ": " +
                      (ct.file.empty() ? tune::algorithmName(ct.algorithm).str()
                                       : "'" + ct.file + "'") +
                      " " + tune::formatSeconds(ct.seconds) + " over " +
                      std::to_string(ct.members) + " ranks (" +
                      tune::levelName(ct.level).str() + ")";
      if (!ct.alternatives.empty())
        c += "; " + ct.alternatives;
      parts.push_back(c);
    }
    if (!parts.empty())
      s += " (" + llvm::join(parts, ", ") + ")";
    if (t.overlapWith >= 0)
      s += t.overlapped > 0
               ? "; overlapped with launch " +
                     std::to_string(t.overlapWith + 1) + " in " +
                     std::to_string(t.chunks) + " parts: the pair " +
                     tune::formatSeconds(t.overlapped)
               : "; counted with launch " + std::to_string(t.overlapWith + 1);
    lines[i] = s;
  }
  total = tune::formatSeconds(step->seconds) + " per step on machine " +
          machine.shownName();
  // Where the machine states a cache: whether the step's kernels were
  // priced at its bandwidth (docs/tuner.md, the memory of a kernel).
  if (machine.cacheSize > 0)
    total += llvm::formatv("; its buffers {0} a rank, {1:P0} of them held "
                           "by the {2} cache",
                           tune::bytesText(step->footprint), step->cacheHits,
                           tune::bytesText(machine.cacheSize))
                 .str();
  return lines;
}

} // namespace coconet::driver
