//===- Driver.cpp - the coconetc command line -----------------------------===//
//
// Options, the compile step and --emit. The simulator subcommand lives in
// SimCommand.cpp.
//
//===----------------------------------------------------------------------===//

#include "driver/Driver.h"
#include "driver/DriverOptions.h"
#include "driver/RangedOption.h"
#include "driver/SafeParser.h"

#include "analysis/Report.h"
#include "ast/Ast.h"
#include "codegen/Codegen.h"
#include "diag/Diagnostic.h"
#include "diag/TerminalText.h"
#include "emit/Dot.h"
#include "lower/Lower.h"
#include "lower/Plan.h"
#include "passes/PassManager.h"
#include "sema/Sema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

#ifndef COCONET_VERSION
#define COCONET_VERSION "0.0.0"
#endif
#ifndef COCONET_STDLIB_DIR
#define COCONET_STDLIB_DIR ""
#endif

namespace cl = llvm::cl;

namespace coconet::driver {

llvm::cl::OptionCategory &simCategory();
llvm::cl::OptionCategory &tuneCategory();
llvm::cl::OptionCategory &synthCategory();
bool synthOptionTakesValue(llvm::StringRef arg);
bool synthOptionGiven(std::string &which);
int runSynth(llvm::StringRef kind, llvm::StringRef collective,
             const std::optional<std::string> &emit, Compilation &c);
bool simOptionGiven(std::string &which,
                    llvm::ArrayRef<llvm::StringRef> allowed = {});
bool tuneOptionGiven(std::string &which,
                     llvm::ArrayRef<llvm::StringRef> allowed = {});

static cl::OptionCategory &category() {
  static cl::OptionCategory cat("coconetc options");
  return cat;
}

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.coco>"),
                                      cl::cat(category()));

static cl::list<std::string>
    importDirs("I", cl::desc("Add a directory to the import search path"),
               cl::value_desc("dir"), cl::Prefix, cl::cat(category()));

static cl::opt<std::string> stdlibDir(
    "stdlib-dir",
    cl::desc("The standard library directory (default: $COCONET_STDLIB, "
             "else the one installed with coconetc)"),
    cl::value_desc("dir"), cl::cat(category()));

enum class ColorMode { Auto, Always, Never };
/// --color. LLVM's Support library registers a boolean `--color` of its own
/// (for WithColor) when the command line is first inspected; ours takes its
/// place, so it is created only after that one is removed.
static ColorMode colorMode() {
  static cl::opt<ColorMode, false, SafeParser<ColorMode>> *option = [] {
    auto &registered = cl::getRegisteredOptions(cl::SubCommand::getTopLevel());
    if (auto it = registered.find("color"); it != registered.end())
      it->second->removeArgument();
    return new cl::opt<ColorMode, false, SafeParser<ColorMode>>(
        "color", cl::desc("Colour diagnostics"), cl::init(ColorMode::Auto),
        cl::values(clEnumValN(ColorMode::Auto, "auto", "when writing to a tty"),
                   clEnumValN(ColorMode::Always, "always", "always"),
                   clEnumValN(ColorMode::Never, "never", "never")),
        cl::cat(category()));
  }();
  return *option;
}

static NumberOption<unsigned>
    errorLimit("error-limit", "Stop after this many errors (0: no limit)", 0,
               UINT32_MAX, 20, category());

static cl::opt<bool, false, SafeParser<bool>>
    warningsAsErrors("Werror", cl::desc("Treat warnings as errors"),
                     cl::cat(category()));

static cl::opt<std::string>
    programName("program",
                cl::desc("The program to emit or run (default: all for "
                         "--emit, the only one for sim)"),
                cl::value_desc("name"), cl::cat(category()));

enum class EmitKind { None, Ast, Ir, Dot, Report, Plan, Code, Driver, Python };
static cl::opt<EmitKind, false, SafeParser<EmitKind>> emit(
    "emit", cl::desc("What to print"), cl::init(EmitKind::Ir),
    cl::values(
        clEnumValN(EmitKind::None, "none", "nothing: only check"),
        clEnumValN(EmitKind::Ast, "ast", "the syntax tree"),
        clEnumValN(EmitKind::Ir, "ir",
                   "the typed IR (scheduled with --schedule; else with the "
                   "program's schedules listed)"),
        clEnumValN(EmitKind::Dot, "dot",
                   "a Graphviz drawing of the (scheduled) program"),
        clEnumValN(EmitKind::Report, "report",
                   "the kernels and collectives of each schedule and the "
                   "bytes each rank moves"),
        clEnumValN(EmitKind::Plan, "plan",
                   "the kernel-level plan code generation prints: buffers, "
                   "steps, results"),
        clEnumValN(EmitKind::Code, "code",
                   "the generated program for --target: NAME.h and NAME.cu "
                   "(cuda) or NAME.cpp (cpu), into the directory -o"),
        clEnumValN(EmitKind::Driver, "driver",
                   "--emit=code plus NAME_main.cu/.cpp, a main that runs one "
                   "step as the simulator does and writes the results"),
        clEnumValN(EmitKind::Python, "python",
                   "--emit=code plus NAME_python.cu/.cpp (C entry points), "
                   "NAME.py and NAME.pyi: a Python module (docs/python.md)")),
    cl::cat(category()));

static cl::opt<codegen::TargetKind, false, SafeParser<codegen::TargetKind>>
    target(
        "target",
        cl::desc("The target of --emit=code, --emit=driver and --emit=python"),
        cl::init(codegen::TargetKind::Cuda),
        cl::values(clEnumValN(codegen::TargetKind::Cuda, "cuda",
                              "CUDA kernels on NCCL and cuBLAS (the default)"),
                   clEnumValN(codegen::TargetKind::Cpu, "cpu",
                              "C++ with OpenMP loops on MPI, bit for bit the "
                              "simulator's results")),
        cl::cat(category()));

static cl::opt<std::string> scheduleName(
    "schedule",
    cl::desc("Apply this schedule (without it, programs run unscheduled)"),
    cl::value_desc("name"), cl::cat(category()));

static cl::opt<bool, false, SafeParser<bool>>
    verifyEach("verify-each", cl::desc("Run the IR verifier after every pass"),
               cl::cat(category()));

static cl::opt<bool, false, SafeParser<bool>>
    printAfterAll("print-after-all",
                  cl::desc("Print the IR after every pass (to stderr)"),
                  cl::cat(category()));

/// --print-after's help, from the pass registry.
static const std::string &printAfterHelp() {
  static const std::string help = "Print the IR after each pass of this "
                                  "name: " +
                                  passes::passNameList() + " (to stderr)";
  return help;
}

static cl::list<std::string>
    printAfter("print-after", cl::desc(printAfterHelp()),
               cl::value_desc("pass"), cl::CommaSeparated, cl::cat(category()));

static cl::opt<bool, false, SafeParser<bool>>
    timePasses("time-passes",
               cl::desc("Print the time each pass took (to stderr)"),
               cl::cat(category()));

static cl::opt<bool, false, SafeParser<bool>> sequential(
    "sequential",
    cl::desc("Generate fused collectives as their steps in sequence and "
             "overlaps as the matmul then the collective (for comparison); "
             "--emit=report: what that form moves"),
    cl::cat(category()));

static cl::opt<bool, false, SafeParser<bool>> noCleanup(
    "no-cleanup",
    cl::desc("Skip the cleanup passes (constant folding, CSE, dead stages)"),
    cl::cat(category()));

static cl::opt<std::string> outputFile("o",
                                       cl::desc("Write output here (for "
                                                "--emit=code/driver: the "
                                                "directory of the files; '-' "
                                                "prints them all)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category()));

static const char *programPath = "coconetc"; // argv[0]

const std::string &outputPath() { return outputFile; }

/// --stdlib-dir, else $COCONET_STDLIB, else COCONET_STDLIB_DIR: relative to
/// the executable's directory (installed: PREFIX/share/coconet/stdlib; in
/// a build tree, share/coconet/stdlib links to the sources' stdlib/).
static std::string resolveStdlibDir() {
  if (!stdlibDir.empty())
    return stdlibDir;
  if (const char *env = std::getenv("COCONET_STDLIB"))
    return env;
  llvm::SmallString<256> dir(COCONET_STDLIB_DIR);
  if (llvm::sys::path::is_relative(dir)) {
    static int anchor;
    llvm::SmallString<256> exe(
        llvm::sys::fs::getMainExecutable(programPath, &anchor));
    llvm::sys::path::remove_filename(exe);
    llvm::sys::path::append(exe, dir);
    llvm::sys::path::remove_dots(exe, /*remove_dot_dot=*/true);
    dir = exe;
  }
  return std::string(dir);
}

static bool useColors() {
  switch (colorMode()) {
  case ColorMode::Always:
    return true;
  case ColorMode::Never:
    return false;
  case ColorMode::Auto:
    return llvm::errs().has_colors();
  }
  return false;
}

static std::unique_ptr<Compilation> newCompilation() {
  auto c = std::make_unique<Compilation>();
  c->diags = std::make_unique<DiagnosticEngine>(c->sourceMgr, llvm::errs());
  c->diags->setShowColors(useColors());
  c->diags->setErrorLimit(errorLimit);
  c->diags->setWarningsAsErrors(warningsAsErrors);
  return c;
}

static sema::SemaOptions semaOptions() {
  sema::SemaOptions options;
  options.importDirs.assign(importDirs.begin(), importDirs.end());
  options.stdlibDir = resolveStdlibDir();
  return options;
}

/// Reports a driver-level problem with the `coconetc: ` banner.
/// (The message may quote what the user typed or a file holds: escaped
/// for a terminal as diagnostics are, diag/TerminalText.h.)
static void reportDriverError(const llvm::Twine &message) {
  reportToolError(message.str());
}

static bool checkInputGiven() {
  if (!inputFile.empty())
    return true;
  reportDriverError("no input file (try --help)");
  return false;
}

std::unique_ptr<Compilation> compile(const std::string &path) {
  auto c = newCompilation();
  c->module = sema::compileFile(c->sourceMgr, *c->diags, path, semaOptions());
  return c;
}

const ir::Program *selectProgram(const ir::Module &module,
                                 const std::string &name, bool requireUnique) {
  if (!name.empty()) {
    if (const ir::Program *p = module.findProgram(name))
      return p;
    reportDriverError("no program named '" + name + "' in " + inputFile);
    return nullptr;
  }
  if (module.programs.empty()) {
    reportDriverError(inputFile + " defines no program");
    return nullptr;
  }
  if (requireUnique && module.programs.size() > 1) {
    std::string names;
    for (const auto &p : module.programs)
      names += (names.empty() ? "" : ", ") + p->name;
    reportDriverError(inputFile + " defines several programs (" + names +
                      "); choose one with --program");
    return nullptr;
  }
  return module.programs.front().get();
}

passes::PassOptions passOptions() {
  passes::PassOptions options;
  options.verifyEach = verifyEach;
  options.printAfterAll = printAfterAll;
  options.printAfter.assign(printAfter.begin(), printAfter.end());
  options.timePasses = timePasses;
  options.cleanup = !noCleanup;
  return options;
}

const ir::Schedule *selectSchedule(const ir::Module &module,
                                   const ir::Program *&program) {
  if (scheduleName.empty())
    return nullptr;
  const ir::Schedule *s = module.findSchedule(scheduleName);
  if (!s) {
    std::string known;
    for (const ir::Schedule &other : module.schedules)
      if (!program || other.program == program->name)
        known += (known.empty() ? "" : ", ") + other.name;
    reportDriverError("no schedule named '" + scheduleName + "' in " +
                      inputFile +
                      (known.empty() ? std::string(" (it defines none)")
                                     : " (schedules: " + known + ")"));
    return nullptr;
  }
  if (program && program->name != s->program) {
    reportDriverError("schedule '" + s->name + "' is for program '" +
                      s->program + "', not '" + program->name + "'");
    return nullptr;
  }
  program = module.findProgram(s->program);
  return s;
}

bool scheduleRequested() { return !scheduleName.empty(); }

bool selectProgramAndSchedule(const ir::Module &module,
                              const std::string &programName,
                              const ir::Program *&program,
                              const ir::Schedule *&schedule) {
  program = nullptr;
  schedule = nullptr;
  if (!programName.empty() || !scheduleRequested()) {
    program = selectProgram(module, programName, true);
    if (!program)
      return false;
  }
  if (scheduleRequested()) {
    schedule = selectSchedule(module, program);
    if (!schedule)
      return false;
  }
  return true;
}

std::unique_ptr<ir::Program> applySchedule(Compilation &c,
                                           const ir::Program &program,
                                           const ir::Schedule *schedule) {
  return passes::scheduleProgram(*c.module, program, schedule, *c.diags,
                                 passOptions());
}

/// Writes generated files into `dir` (created if needed).
static int writeFiles(const std::vector<codegen::File> &files,
                      const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    reportDriverError("cannot create '" + dir + "': " + ec.message());
    return 2;
  }
  for (const codegen::File &f : files) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, f.name);
    std::error_code ec;
    llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      reportDriverError("cannot write '" + path.str() + "': " + ec.message());
      return 2;
    }
    out.os() << f.text;
    out.keep();
  }
  return 0;
}

static int runEmit() {
  if (emit == EmitKind::Ast) {
    auto c = newCompilation();
    auto modules =
        sema::loadModules(c->sourceMgr, *c->diags, inputFile, semaOptions());
    if (modules.empty())
      return 1;
    std::error_code ec;
    llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      reportDriverError("cannot write '" + outputFile + "': " + ec.message());
      return 2;
    }
    for (const auto &m : modules)
      ast::printModule(*m, out.os());
    out.keep();
    return 0;
  }
  auto c = compile(inputFile);
  if (!c->module)
    return 1;
  const ir::Program *only = nullptr;
  if (!programName.empty()) {
    only = selectProgram(*c->module, programName, false);
    if (!only)
      return 2;
  }
  const ir::Schedule *schedule = nullptr;
  // --schedule=auto (unless the file has a schedule of that name): the
  // tuner's choice for the one program.
  std::optional<ir::Schedule> tuned;
  if (scheduleName == "auto" && !c->module->findSchedule("auto")) {
    if (!only && !(only = selectProgram(*c->module, "", true)))
      return 2;
    tuned = autoSchedule(*c, *only);
    if (!tuned)
      return c->diags->hadError() ? 1 : 2;
    schedule = &*tuned;
  } else if (scheduleRequested()) {
    schedule = selectSchedule(*c->module, only);
    if (!schedule)
      return 2;
  }
  ir::DimEnv sizes;
  if (emit == EmitKind::Report && !reportSizes(only, sizes))
    return 2;
  std::optional<tune::Machine> machine;
  if (emit == EmitKind::Report && machineGiven() &&
      !(machine = loadMachine(*c)))
    return c->diags->hadError() ? 1 : 2;

  // Every (program, schedule) pair to show; null: unscheduled.
  struct Job {
    const ir::Program *program;
    const ir::Schedule *schedule;
  };
  std::vector<Job> jobs;
  for (const auto &p : c->module->programs) {
    if (only && p.get() != only)
      continue;
    if (schedule) {
      jobs.push_back({p.get(), schedule});
      continue;
    }
    jobs.push_back({p.get(), nullptr});
    if (emit == EmitKind::Report)
      for (const ir::Schedule &s : c->module->schedules)
        if (s.program == p->name)
          jobs.push_back({p.get(), &s});
  }
  // A file with no program (only imports, or empty): nothing to generate
  // is an error (no empty directory is written), nothing to print a
  // warning; checking it (--emit=none, ir) is fine.
  if (jobs.empty()) {
    const std::string none = inputFile + " defines no program";
    if (emit == EmitKind::Code || emit == EmitKind::Driver ||
        emit == EmitKind::Python) {
      reportDriverError(none + ": nothing to emit");
      return 1;
    }
    if (emit == EmitKind::Plan || emit == EmitKind::Report ||
        emit == EmitKind::Dot)
      reportToolWarning(none + ": nothing to print");
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  std::vector<codegen::File> files;
  bool first = true;
  for (const Job &job : jobs) {
    auto scheduled = applySchedule(*c, *job.program, job.schedule);
    if (!scheduled)
      return 1;
    if (emit == EmitKind::None)
      continue;
    if (!first)
      os << '\n';
    first = false;
    std::string title = job.program->name;
    if (job.schedule)
      title += ", schedule " + job.schedule->name;
    switch (emit) {
    case EmitKind::Ir:
      if (job.schedule)
        os << "// " << title << '\n';
      ir::printProgram(*scheduled, os);
      if (!job.schedule)
        for (const auto &s : c->module->schedules)
          if (s.program == job.program->name)
            ir::printSchedule(s, os);
      break;
    case EmitKind::Dot:
      emit::printDot(*scheduled, title, os);
      break;
    case EmitKind::Report: {
      // The launches the plan runs; where the lowering refuses the
      // program, the stages as the IR states them, and no times.
      std::vector<std::string> times;
      std::string total;
      auto planned = tune::planLaunches(*scheduled, sequential);
      std::vector<analysis::LaunchCost> launches;
      if (planned) {
        if (machine)
          times = predictedTimes(*scheduled, *planned, *machine, sizes, total);
        launches = std::move(planned->launches);
      } else {
        std::string why = llvm::toString(planned.takeError());
        reportToolWarning(title + ": " + why +
                          "; the report counts its stages as written");
        if (machine)
          total = "not predicted: " + why;
        launches = analysis::analyzeLaunches(*scheduled, sequential);
      }
      analysis::printReport(*scheduled, launches,
                            job.schedule ? llvm::StringRef(job.schedule->name)
                                         : llvm::StringRef("unscheduled"),
                            sizes, os, times, total);
      break;
    }
    case EmitKind::Plan:
    case EmitKind::Code:
    case EmitKind::Driver:
    case EmitKind::Python: {
      lower::LowerOptions lowerOptions;
      lowerOptions.sequential = sequential;
      auto plan = lower::lowerProgram(
          *scheduled, job.schedule ? llvm::StringRef(job.schedule->name) : "",
          *c->diags, lowerOptions);
      if (!plan)
        return 1;
      if (emit == EmitKind::Plan) {
        lower::printPlan(*plan, os);
        break;
      }
      codegen::EmitOptions options;
      options.target = target;
      // The name is printed into comments of the generated files: a
      // newline in it must not start a line of code there.
      options.sourceName =
          escapeForTerminal(llvm::sys::path::filename(inputFile));
      options.driver = emit == EmitKind::Driver;
      options.python = emit == EmitKind::Python;
      for (codegen::File &f : codegen::emitProgram(*plan, options))
        files.push_back(std::move(f));
      break;
    }
    case EmitKind::None:
    case EmitKind::Ast:
      break;
    }
  }
  if (emit == EmitKind::None)
    return 0;
  if ((emit == EmitKind::Code || emit == EmitKind::Driver ||
       emit == EmitKind::Python) &&
      outputFile != "-")
    return writeFiles(files, outputFile);
  for (const codegen::File &f : files)
    os << "// ===== " << f.name << " =====\n" << f.text;
  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    reportDriverError("cannot write '" + outputFile + "': " + ec.message());
    return 2;
  }
  out.os() << text;
  out.keep();
  return 0;
}

static void printVersion(llvm::raw_ostream &os) {
  os << "coconetc version " << COCONET_VERSION << "\n"
     << "  the CoCoNet compiler: computation and communication in one "
        "program\n"
     << "  built with LLVM " << LLVM_VERSION_STRING << "\n";
}

int runDriver(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  programPath = argv[0];
  cl::SetVersionPrinter(printVersion);
  (void)colorMode(); // registers --color
  cl::HideUnrelatedOptions(
      {&category(), &simCategory(), &tuneCategory(), &synthCategory()});
  // `sim` selects the simulator, `tune` the tuner. Either may follow
  // options that take no separate value (`coconetc --color=never sim
  // x.coco`).
  llvm::SmallVector<char *, 16> args(argv, argv + argc);
  bool sim = false, tune = false, synth = false;
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    if (a == "sim" || a == "tune" || a == "synth") {
      args.erase(args.begin() + i);
      (a == "sim" ? sim : a == "tune" ? tune : synth) = true;
      break;
    }
    if (!a.starts_with("-") || a == "-I" || a == "-o" || a == "--")
      break;
  }
  // `synth` takes two words, a node kind and a collective (TACCL's `taccl
  // solve NDv2 Allgather ...`), where the others take one file.
  // Its --emit (algorithm, msccl, dot, cpp) is its own, not the compiler's.
  llvm::SmallVector<std::string, 2> synthWords;
  std::optional<std::string> synthEmit;
  if (synth) {
    for (size_t i = 1; i < args.size();) {
      llvm::StringRef a = args[i];
      if (a == "--emit" || a == "-emit") {
        synthEmit = i + 1 < args.size() ? args[i + 1] : "";
        args.erase(args.begin() + i,
                   args.begin() + std::min(i + 2, args.size()));
        continue;
      }
      if (a.consume_front("--emit=") || a.consume_front("-emit=")) {
        synthEmit = a.str();
        args.erase(args.begin() + i);
        continue;
      }
      if (a.starts_with("-")) {
        i += synthOptionTakesValue(a) ? 2 : 1;
        continue;
      }
      if (synthWords.size() == 2) {
        ++i;
        continue;
      }
      synthWords.push_back(a.str());
      args.erase(args.begin() + i);
    }
  }
  // cl::opt's own errors quote what was typed (an unknown option's name):
  // they are collected and printed escaped and cut, like every other
  // message that echoes user text.
  std::string parseErrors;
  llvm::raw_string_ostream parseErrorStream(parseErrors);
  const bool parsed = cl::ParseCommandLineOptions(
      static_cast<int>(args.size()), args.data(),
      "coconetc: the CoCoNet compiler\n\n"
      "  coconetc [options] FILE.coco      check FILE and print its "
      "typed IR\n"
      "  coconetc sim [options] FILE.coco  run a program on the "
      "reference simulator (the 'coconetc sim options' below)\n"
      "  coconetc tune [options] FILE.coco rank the program's legal "
      "schedules by\n"
      "                                    predicted time on --machine and "
      "write the fastest\n"
      "  coconetc synth KIND COLLECTIVE --topology-file T --sketch-file S "
      "[-o ALG]\n"
      "                                    synthesise the collective's "
      "algorithm for TACCL's\n"
      "                                    topology and sketch files, verify "
      "it and write it\n"
      "                                    (docs/synth.md)\n\n"
      "  --schedule=NAME applies a schedule of FILE to its program in "
      "both forms.\n",
      &parseErrorStream);
  llvm::SmallVector<llvm::StringRef, 4> errorLines;
  llvm::StringRef(parseErrors).split(errorLines, '\n', -1, false);
  for (llvm::StringRef line : errorLines)
    llvm::errs() << safeMessage(line) << '\n';
  if (!parsed)
    return 2;
  if (!checkNumberOptions())
    return 2;
  std::string which;
  if (synth) {
    if (synthWords.size() < 2 || !inputFile.empty()) {
      reportDriverError("coconetc synth takes a node kind and a collective: "
                        "coconetc synth KIND COLLECTIVE --topology-file T "
                        "--sketch-file S");
      return 2;
    }
    // (--machine: a tuner's machine file as the topology.)
    static const llvm::StringRef kMachine[] = {"machine"};
    if (simOptionGiven(which) || tuneOptionGiven(which, kMachine)) {
      reportDriverError("--" + which +
                        " is not an option of 'coconetc "
                        "synth'");
      return 2;
    }
    std::unique_ptr<Compilation> c = newCompilation();
    return runSynth(synthWords[0], synthWords[1], synthEmit, *c);
  }
  if (synthOptionGiven(which)) {
    reportDriverError("--" + which + " is an option of 'coconetc synth'");
    return 2;
  }
  if (!checkInputGiven())
    return 2;
  for (const std::string &name : printAfter)
    if (!passes::findPass(name)) {
      reportDriverError("--print-after: unknown pass '" + name +
                        "'; the passes are " + passes::passNameList());
      return 2;
    }
  if (sim) {
    if (tuneOptionGiven(which)) {
      reportDriverError("--" + which + " is an option of 'coconetc tune'");
      return 2;
    }
    return runSim(inputFile, programName);
  }
  const bool sized = emit == EmitKind::Report || scheduleName == "auto";
  static const llvm::StringRef kSizes[] = {"size", "ranks"};
  if (simOptionGiven(which, tune || sized
                                ? llvm::ArrayRef<llvm::StringRef>(kSizes)
                                : llvm::ArrayRef<llvm::StringRef>())) {
    reportDriverError("--" + which + " is an option of 'coconetc sim'");
    return 2;
  }
  if (tune)
    return runTune(inputFile, programName);
  static const llvm::StringRef kMachine[] = {"machine", "shard", "chunks"};
  llvm::ArrayRef<llvm::StringRef> allowed;
  if (scheduleName == "auto")
    allowed = kMachine;
  else if (emit == EmitKind::Report)
    allowed = llvm::ArrayRef(kMachine).take_front(1);
  if (tuneOptionGiven(which, allowed)) {
    reportDriverError("--" + which + " is an option of 'coconetc tune'" +
                      (which == "machine"
                           ? std::string(" (and of --emit=report and "
                                         "--schedule=auto)")
                       : which == "shard" || which == "chunks"
                           ? std::string(" (and of --schedule=auto)")
                           : std::string()));
    return 2;
  }
  return runEmit();
}

} // namespace coconet::driver
