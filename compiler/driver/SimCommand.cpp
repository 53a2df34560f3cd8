//===- SimCommand.cpp - `coconetc sim`: the reference simulator -----------===//
//
// Binds the program's size names from the command line, runs the simulator
// on all ranks and prints a summary of every result (and writes .npy files
// with --output-dir).
//
//===----------------------------------------------------------------------===//

#include "driver/DriverOptions.h"
#include "driver/RangedOption.h"
#include "driver/SafeParser.h"

#include "diag/Diagnostic.h"
#include "diag/TerminalText.h"
#include "sim/Inputs.h"
#include "sim/Simulator.h"
#include "verify/Differential.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace coconet::driver {

cl::OptionCategory &simCategory() {
  static cl::OptionCategory cat("coconetc sim options");
  return cat;
}

/// Ranks are MPI ranks: an int. (The simulator runs at most 1024 per axis
/// and says so; --emit=report evaluates its formulas for any count.)
static NumberOption<int64_t>
    ranks("ranks",
          "Number of ranks of a program without a mesh (its size name P); "
          "default 4",
          1, INT32_MAX, 0, simCategory());

static cl::list<std::string>
    sizes("size",
          cl::desc("Bind a size name, e.g. --size N=1024 (mesh axis sizes "
                   "too: --size T=2)"),
          cl::value_desc("NAME=VALUE"), cl::CommaSeparated,
          cl::cat(simCategory()));

static NumberOption<int64_t> defaultSize(
    "default-size",
    "Value of size names not bound by --size (default: 4 x the number of "
    "ranks, so every slice divides evenly)",
    1, INT64_MAX, 0, simCategory());

static NumberOption<uint64_t> seed("seed", "Seed of the generated inputs", 0,
                                   UINT64_MAX, 1, simCategory());

static cl::opt<sim::InputKind, false, SafeParser<sim::InputKind>> inputKind(
    "inputs", cl::desc("How generated inputs are drawn (sim/Inputs.h)"),
    cl::values(clEnumValN(sim::InputKind::Uniform, "uniform",
                          "24-bit values in [-1, 1) (default)"),
               clEnumValN(sim::InputKind::Wide, "wide",
                          "values whose sums depend on the order of the "
                          "terms: full-precision f64, +-2^54")),
    cl::init(sim::InputKind::Uniform), cl::cat(simCategory()));

static cl::list<std::string>
    scalarSets("set",
               cl::desc("Give a parameter a value, e.g. --set lr=0.01 (a "
                        "tensor gets it in every element)"),
               cl::value_desc("NAME=VALUE"), cl::cat(simCategory()));

static cl::list<std::string>
    inputs("input",
           cl::desc("Read a tensor parameter from a .npy file (global tensor; "
                    "local ones stacked over ranks)"),
           cl::value_desc("NAME=FILE"), cl::cat(simCategory()));

static cl::list<std::string> segmentFiles(
    "segments",
    cl::desc("Read a segment table from a file: lengths separated by white "
             "space or commas (# comments), or a 1-D integer .npy; a table "
             "not given is generated from the seed and its count's --size"),
    cl::value_desc("TABLE=FILE"), cl::cat(simCategory()));

static cl::opt<std::string>
    outputDir("output-dir", cl::desc("Write every result to DIR/<name>.npy"),
              cl::value_desc("dir"), cl::cat(simCategory()));

static cl::opt<bool, false, SafeParser<bool>> compareUnscheduled(
    "compare-unscheduled",
    cl::desc("With --schedule: also run the unscheduled program on the same "
             "inputs and compare every result (bitwise, or within the "
             "stated tolerance where the schedule reassociates); exit 1 on "
             "a difference"),
    cl::cat(simCategory()));

static cl::opt<std::string> checkOutputs(
    "check-outputs",
    cl::desc("Compare every result with DIR/<name>.npy (what a generated "
             "driver writes) and print the largest difference; exit 1 on a "
             "difference"),
    cl::value_desc("dir"), cl::cat(simCategory()));

static NonNegativeOption checkUlps(
    "check-ulps",
    "With --check-outputs: accept differences up to this many units of each "
    "type's precision (default 0: bitwise)",
    0, simCategory());

bool simOptionGiven(std::string &which,
                    llvm::ArrayRef<llvm::StringRef> allowed) {
  for (const auto &entry : cl::getRegisteredOptions()) {
    const cl::Option *o = entry.second;
    if (o->getNumOccurrences() &&
        llvm::is_contained(o->Categories, &simCategory()) &&
        !llvm::is_contained(allowed, o->ArgStr)) {
      which = o->ArgStr.str();
      return true;
    }
  }
  return false;
}

/// (Escaped for a terminal: messages quote values the user typed and text
/// read from files.)
static void fail(const llvm::Twine &message) { reportToolError(message.str()); }

static bool splitAssignment(llvm::StringRef text, llvm::StringRef what,
                            std::string &name, std::string &value) {
  auto [lhs, rhs] = text.split('=');
  if (lhs.empty() || rhs.empty() || !text.contains('=')) {
    fail("--" + what + " expects NAME=VALUE, got '" + text + "'");
    return false;
  }
  name = lhs.trim().str();
  value = rhs.trim().str();
  return true;
}

/// Parses --size into `out`, checking names against `program` if given.
static bool parseSizes(const ir::Program *program, ir::DimEnv &out) {
  for (const std::string &s : sizes) {
    std::string name, value;
    if (!splitAssignment(s, "size", name, value))
      return false;
    int64_t v = 0;
    if (llvm::StringRef(value).getAsInteger(10, v) || v <= 0) {
      fail("--size " + name + " expects an integer from 1 to 2^63-1, got '" +
           value + "'");
      return false;
    }
    if (program && !llvm::is_contained(program->sizeNames, name)) {
      fail("program '" + program->name + "' has no size named '" + name + "'");
      return false;
    }
    out[name] = v;
  }
  return true;
}

/// --set and --input name parameters of `program`, and no parameter is
/// given both ways (which would win is not a question a user should have
/// to ask).
static bool checkParameterNames(const ir::Program &program,
                                const sim::SimOptions &options) {
  std::string names;
  for (const ir::Stage *p : program.getParams())
    names += (names.empty() ? "" : ", ") + p->name;
  auto known = [&](llvm::StringRef option, const std::string &name) {
    const ir::Stage *s = program.findStage(name);
    if (s && s->isParam())
      return true;
    fail("--" + option + " " + name + ": program '" + program.name +
         "' has no parameter named '" + name + "' (its parameters: " + names +
         ")");
    return false;
  };
  for (const auto &[name, value] : options.scalarValues) {
    if (!known("set", name))
      return false;
    // The value must fit the parameter's type (coconet/values.h).
    if (auto v = sim::parseScalar(*program.findStage(name), value); !v) {
      fail(llvm::toString(v.takeError()));
      return false;
    }
  }
  for (const auto &[name, path] : options.inputFiles) {
    if (!known("input", name))
      return false;
    if (options.scalarValues.count(name)) {
      fail("parameter '" + name +
           "' is given by both --set and --input; "
           "give it one value");
      return false;
    }
  }
  return true;
}

bool reportSizes(const ir::Program *program, ir::DimEnv &out) {
  if (!parseSizes(program, out))
    return false;
  if (ranks > 0)
    out.try_emplace("P", ranks);
  return true;
}

int runSim(const std::string &path, const std::string &programName) {
  auto c = compile(path);
  if (!c->module)
    return 1;
  const ir::Program *program = nullptr;
  const ir::Schedule *schedule = nullptr;
  if (!selectProgramAndSchedule(*c->module, programName, program, schedule))
    return 2;
  if (!schedule && compareUnscheduled) {
    fail("--compare-unscheduled needs --schedule");
    return 2;
  }
  std::unique_ptr<ir::Program> scheduled =
      applySchedule(*c, *program, schedule);
  if (!scheduled)
    return 1;

  sim::SimOptions options;
  options.seed = *seed;
  options.inputKind = inputKind;
  if (!parseSizes(program, options.sizes))
    return 2;

  // Mesh axes: --ranks binds the world axis; every axis needs a size.
  int64_t worldSize = 1;
  for (const auto &axis : program->mesh.axes) {
    auto it = options.sizes.find(axis.size);
    if (it == options.sizes.end()) {
      if (program->mesh.isImplicit) {
        options.sizes[axis.size] = ranks > 0 ? ranks : 4;
        it = options.sizes.find(axis.size);
      } else {
        fail("give the size of mesh axis '" + axis.name + "' with --size " +
             axis.size + "=N");
        return 2;
      }
    } else if (program->mesh.isImplicit && ranks > 0 && it->second != ranks) {
      fail("--ranks=" + llvm::Twine(*ranks) + " disagrees with --size " +
           axis.size + "=" + llvm::Twine(it->second));
      return 2;
    }
    worldSize *= it->second;
  }
  if (!program->mesh.isImplicit && ranks > 0 && ranks != worldSize) {
    fail("--ranks=" + llvm::Twine(*ranks) +
         " disagrees with the mesh, which has " + llvm::Twine(worldSize) +
         " ranks");
    return 2;
  }
  for (const std::string &s : segmentFiles) {
    std::string name, value;
    if (!splitAssignment(s, "segments", name, value))
      return 2;
    options.segmentFiles[name] = value;
  }
  // A table read from a file binds its count.
  llvm::StringSet<> boundByTable;
  for (const ir::SegmentTableDecl &t : program->tables)
    if (options.segmentFiles.count(t.name))
      boundByTable.insert(t.count.symbols().front());
  int64_t fallback = defaultSize > 0 ? int64_t(defaultSize) : 4 * worldSize;
  for (const std::string &name : program->sizeNames)
    if (!boundByTable.contains(name))
      options.sizes.try_emplace(name, fallback);

  for (const std::string &s : scalarSets) {
    std::string name, value;
    if (!splitAssignment(s, "set", name, value))
      return 2;
    options.scalarValues[name] = value;
  }
  for (const std::string &s : inputs) {
    std::string name, value;
    if (!splitAssignment(s, "input", name, value))
      return 2;
    options.inputFiles[name] = value;
  }
  if (!checkParameterNames(*program, options))
    return 2;

  if (compareUnscheduled) {
    auto cmp = verify::comparePrograms(*program, *scheduled, options);
    if (!cmp) {
      fail(llvm::toString(cmp.takeError()));
      return 1;
    }
    llvm::outs() << "schedule " << schedule->name << " of " << program->name
                 << " against the unscheduled program on " << worldSize
                 << (worldSize == 1 ? " rank" : " ranks") << ", seed " << *seed
                 << ":\n";
    cmp->print(llvm::outs());
    llvm::outs() << (cmp->ok() ? "same results\n" : "DIFFERENT results\n");
    return cmp->ok() ? 0 : 1;
  }

  auto result = sim::simulate(*scheduled, options);
  if (!result) {
    fail(llvm::toString(result.takeError()));
    return 1;
  }
  program = scheduled.get();
  llvm::outs() << "program " << program->name;
  if (schedule)
    llvm::outs() << " (schedule " << schedule->name << ")";
  llvm::outs() << " on " << worldSize << (worldSize == 1 ? " rank" : " ranks")
               << ", seed " << *seed << ", sizes";
  for (const auto &[name, value] : result->getSizes())
    llvm::outs() << ' ' << name << '=' << value;
  llvm::outs() << '\n';
  for (const ir::SegmentTableDecl &t : program->tables) {
    const rt::SegmentTable &table = result->table(t.name);
    llvm::outs() << "table " << t.name << ": " << table.segments()
                 << " segments over " << table.elements() << " elements ("
                 << (options.segmentFiles.count(t.name) ? "read" : "generated")
                 << "), lengths";
    for (int64_t i = 0; i < table.segments() && i < 16; ++i)
      llvm::outs() << ' ' << table.length(i);
    llvm::outs() << (table.segments() > 16 ? " ...\n" : "\n");
  }
  sim::printSummary(*program, *result, llvm::outs());
  if (!outputDir.empty()) {
    if (auto err = sim::writeResults(*program, *result, outputDir)) {
      fail(llvm::toString(std::move(err)));
      return 2; // a file that cannot be written (docs/cli.md)
    }
  }
  if (!checkOutputs.empty()) {
    auto cmp =
        verify::compareWithFiles(*program, *result, checkOutputs, checkUlps);
    if (!cmp) {
      fail(llvm::toString(cmp.takeError()));
      return 1;
    }
    llvm::outs() << "results in " << checkOutputs
                 << " against the simulator:\n";
    cmp->print(llvm::outs());
    double maxAbs = 0, maxUlps = 0;
    for (const verify::ResultDiff &d : cmp->results) {
      maxAbs = std::max(maxAbs, d.maxAbs);
      maxUlps = std::max(maxUlps, d.maxUlps);
    }
    llvm::outs() << llvm::formatv(
        "max difference from the simulator: {0:e} ({1:f2} ulp): {2}\n", maxAbs,
        maxUlps, cmp->ok() ? "ok" : "FAILED");
    return cmp->ok() ? 0 : 1;
  }
  return 0;
}

} // namespace coconet::driver
