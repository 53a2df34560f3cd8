//===- Driver.cpp - the coconetc command line -----------------------------===//
//
// Options, the compile step and --emit. The simulator subcommand lives in
// SimCommand.cpp.
//
//===----------------------------------------------------------------------===//

#include "driver/Driver.h"
#include "driver/DriverOptions.h"

#include "ast/Ast.h"
#include "sema/Sema.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
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
bool simOptionGiven(std::string &which);

static cl::OptionCategory &category() {
  static cl::OptionCategory cat("coconetc options");
  return cat;
}

static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<input.coco>"),
              cl::cat(category()));

static cl::list<std::string>
    importDirs("I", cl::desc("Add a directory to the import search path"),
               cl::value_desc("dir"), cl::Prefix,
               cl::cat(category()));

static cl::opt<std::string> stdlibDir(
    "stdlib-dir",
    cl::desc("The standard library directory (default: $COCONET_STDLIB, "
             "else the one built in)"),
    cl::value_desc("dir"),     cl::cat(category()));

enum class ColorMode { Auto, Always, Never };
/// --color. LLVM's Support library registers a boolean `--color` of its own
/// (for WithColor) when the command line is first inspected; ours takes its
/// place, so it is created only after that one is removed.
static ColorMode colorMode() {
  static cl::opt<ColorMode> *option = [] {
    auto &registered = cl::getRegisteredOptions(cl::SubCommand::getTopLevel());
    if (auto it = registered.find("color"); it != registered.end())
      it->second->removeArgument();
    return new cl::opt<ColorMode>(
        "color", cl::desc("Colour diagnostics"), cl::init(ColorMode::Auto),
        cl::values(
            clEnumValN(ColorMode::Auto, "auto", "when writing to a tty"),
            clEnumValN(ColorMode::Always, "always", "always"),
            clEnumValN(ColorMode::Never, "never", "never")),
        cl::cat(category()));
  }();
  return *option;
}

static cl::opt<unsigned>
    errorLimit("error-limit",
               cl::desc("Stop after this many errors (0: no limit)"),
               cl::init(20),                cl::cat(category()));

static cl::opt<bool> warningsAsErrors("Werror",
                                      cl::desc("Treat warnings as errors"),
                                                                            cl::cat(category()));

static cl::opt<std::string>
    programName("program",
                cl::desc("The program to emit or run (default: all for "
                         "--emit, the only one for sim)"),
                cl::value_desc("name"),                 cl::cat(category()));

enum class EmitKind { None, Ast, Ir };
static cl::opt<EmitKind> emit(
    "emit", cl::desc("What to print"), cl::init(EmitKind::Ir),
    cl::values(clEnumValN(EmitKind::None, "none", "nothing: only check"),
               clEnumValN(EmitKind::Ast, "ast", "the syntax tree"),
               clEnumValN(EmitKind::Ir, "ir",
                          "the typed IR and the checked schedules")),
    cl::cat(category()));

static cl::opt<std::string> outputFile("o", cl::desc("Write output here"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category()));

static std::string resolveStdlibDir() {
  if (!stdlibDir.empty())
    return stdlibDir;
  if (const char *env = std::getenv("COCONET_STDLIB"))
    return env;
  return COCONET_STDLIB_DIR;
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
static void reportDriverError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "coconetc") << message << '\n';
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
                                 const std::string &name,
                                 bool requireUnique) {
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

static int runEmit() {
  if (emit == EmitKind::Ast) {
    auto c = newCompilation();
    auto modules = sema::loadModules(c->sourceMgr, *c->diags, inputFile,
                                     semaOptions());
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
  if (emit == EmitKind::None)
    return 0;
  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    reportDriverError("cannot write '" + outputFile + "': " + ec.message());
    return 2;
  }
  const ir::Program *only = nullptr;
  if (!programName.empty()) {
    only = selectProgram(*c->module, programName, false);
    if (!only)
      return 2;
  }
  bool first = true;
  for (const auto &p : c->module->programs) {
    if (only && p.get() != only)
      continue;
    if (!first)
      out.os() << '\n';
    first = false;
    ir::printProgram(*p, out.os());
    for (const auto &s : c->module->schedules)
      if (s.program == p->name)
        ir::printSchedule(s, out.os());
  }
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
  cl::SetVersionPrinter(printVersion);
  (void)colorMode(); // registers --color
  cl::HideUnrelatedOptions({&category(), &simCategory()});
  // `sim` selects the simulator. It may follow options that take no
  // separate value (`coconetc --color=never sim x.coco`).
  llvm::SmallVector<char *, 16> args(argv, argv + argc);
  bool sim = false;
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    if (a == "sim") {
      args.erase(args.begin() + i);
      sim = true;
      break;
    }
    if (!a.starts_with("-") || a == "-I" || a == "-o" || a == "--")
      break;
  }
  if (!cl::ParseCommandLineOptions(
          static_cast<int>(args.size()), args.data(),
          "coconetc: the CoCoNet compiler\n\n"
          "  coconetc [options] FILE.coco      check FILE and print its "
          "typed IR\n"
          "  coconetc sim [options] FILE.coco  run a program on the "
          "reference simulator (the 'coconetc sim options' below)\n",
          &llvm::errs()))
    return 2;
  if (!checkInputGiven())
    return 2;
  if (sim)
    return runSim(inputFile, programName);
  std::string which;
  if (simOptionGiven(which)) {
    reportDriverError("--" + which + " is an option of 'coconetc sim'");
    return 2;
  }
  return runEmit();
}

} // namespace coconet::driver
