//===- RandomPrograms.cpp - random programs and schedules, checked --------===//
//
// coconet-random-programs --count N --seed S [--print] [--case-seed X]
//                         [--max-programs K] [--verbose] [--write-dir DIR]
//
// Generates files of random programs with random schedules
// (ProgramGenerator.h) until N programs were checked, and for each:
//   - sema must accept the programs (else: a generator bug);
//   - each program, with the cleanup passes only, must give the same
//     results as the unscheduled program on the simulator;
//   - each schedule is compiled with the programs and applied with the IR
//     verifier after every pass. A schedule that applies is compared with
//     the unscheduled program (verify::comparePrograms) on 1, 2, 3 and 4
//     ranks (a mesh program on a random factorisation of each) with sizes
//     that divide; a refused one must have reported an error, left the
//     program valid (ir::verifyProgram), and not crashed. Refusals are
//     counted per diagnostic kind: plausible schedules the compiler refuses
//     by design, and illegal ones against the kind the generator expected.
//     An illegal schedule that applies is a failure.
// At least 30% of the schedules must apply and change the program.
//
// Exit status 1 on any failure, generator bug or too few applied
// schedules. Every failure prints the case seed and the source; rerun one
// case with --case-seed X --print (and --max-programs K, as printed, for
// the last file of a batch, which may hold fewer programs). A crash prints
// them too.
//
// --write-dir DIR also writes each file sema accepts to DIR/case-<seed>.coco:
// its programs and the schedules that applied (each once; a schedule that
// `apply`s another comes after it), for test/codegen/run_codegen.py. Illegal
// schedules and the schedules the compiler refused are left out.
//
//===----------------------------------------------------------------------===//

#include "ProgramGenerator.h"

#include "diag/Diagnostic.h"
#include "ir/Program.h"
#include "parse/Parser.h"
#include "passes/PassManager.h"
#include "sema/Sema.h"
#include "sim/Simulator.h"
#include "verify/Differential.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace coconet;
using namespace coconet::randomtest;

namespace {

/// One compilation of source text, kept alive for later diagnostics.
struct Compiled {
  llvm::SourceMgr sourceMgr;
  std::string text;
  llvm::raw_string_ostream os{text};
  DiagnosticEngine diags{sourceMgr, os};
  std::unique_ptr<ir::Module> module;

  explicit Compiled(const std::string &source) {
    unsigned id = sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "random.coco"),
        llvm::SMLoc());
    auto ast = parse::parseBuffer(sourceMgr, id, diags);
    if (ast)
      module = sema::checkModule(*ast, diags);
  }
  /// The kinds of the errors reported so far, in order.
  std::vector<std::string> errorKinds() {
    os.flush();
    std::vector<std::string> kinds;
    llvm::StringRef rest(text);
    while (!rest.empty()) {
      auto [line, tail] = rest.split('\n');
      rest = tail;
      if (!line.contains(": error: "))
        continue;
      size_t open = line.rfind('['), close = line.rfind(']');
      if (open != llvm::StringRef::npos && close > open)
        kinds.push_back(line.slice(open + 1, close).str());
      else
        kinds.push_back("(no kind)");
    }
    return kinds;
  }
};

std::string printed(const ir::Program &program) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ir::printProgram(program, os);
  return text;
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// What the crash handler prints.
std::string crashContext;
void printCrashContext(void *) {
  llvm::errs() << "\ncoconet-random-programs crashed while checking:\n"
               << crashContext << '\n';
}

struct Options {
  unsigned count = 100;
  uint64_t seed = 1;
  bool print = false;
  bool verbose = false;
  bool oneCase = false;
  uint64_t caseSeed = 0;
  /// With --case-seed: at most this many programs in the file (1 to 3).
  unsigned maxPrograms = 3;
  /// Where to write the checked files ("": nowhere).
  std::string writeDir;
};

/// Splits schedule text into its `schedule NAME for P { ... }` blocks, as
/// (name, block) in order.
std::vector<std::pair<std::string, std::string>>
scheduleBlocks(llvm::StringRef text) {
  std::vector<std::pair<std::string, std::string>> blocks;
  llvm::StringRef rest = text;
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line.starts_with("schedule "))
      blocks.push_back({line.drop_front(9).split(' ').first.str(), ""});
    if (!blocks.empty())
      blocks.back().second += line.str() + "\n";
  }
  return blocks;
}

class Runner {
public:
  explicit Runner(const Options &options)
      : options(options), rng(mix(options.seed ^ 0x5EED)) {}
  int run();

private:
  void checkFile(const GeneratedFile &file);
  void checkSchedule(const GeneratedFile &file, const GeneratedProgram &gp,
                     const GeneratedSchedule &gs, const std::string &baseline);
  /// Compares `candidate` with `reference` on `ranks` ranks.
  void differential(const GeneratedFile &file, const GeneratedProgram &gp,
                    const ir::Program &reference, const ir::Program &candidate,
                    int64_t ranks, const std::string &what,
                    const std::string &scheduleText);
  void fail(const GeneratedFile &file, const std::string &what,
            const std::string &scheduleText, const std::string &details);
  /// Writes `file` with the schedules in `applied` to options.writeDir.
  void writeFile(const GeneratedFile &file);
  /// The options that generate `file` again ("--case-seed X ...").
  std::string rerunArgs(const GeneratedFile &file) const;

  Options options;
  std::mt19937_64 rng;

  unsigned files = 0, programs = 0, meshPrograms = 0;
  unsigned plausible = 0, illegal = 0;
  unsigned appliedChanged = 0, appliedUnchanged = 0;
  std::map<std::string, unsigned> plausibleRefused;
  std::map<std::string, unsigned> illegalRefused;
  std::map<std::string, unsigned> illegalOtherKind; ///< "expected -> got"
  std::map<std::string, unsigned> intents;
  unsigned runs = 0, wideRuns = 0, toleranceRuns = 0, notBitwiseRuns = 0;
  /// The largest difference of a reassociated value, as a share of its
  /// bound (verify::reassociationBound).
  double maxOfBound = 0;
  unsigned failures = 0, generatorBugs = 0;
  std::map<std::string, std::string> firstRefusal; ///< kind -> example
  /// The programs at most of the file being checked (fewer for the last
  /// file of a batch).
  unsigned maxPrograms = 3;
  /// The text of the legal schedules of the current file that applied.
  std::vector<std::string> applied;
  unsigned written = 0;
};

std::string Runner::rerunArgs(const GeneratedFile &file) const {
  return "--case-seed " + std::to_string(file.seed) +
         (maxPrograms < 3 ? " --max-programs " + std::to_string(maxPrograms)
                          : "");
}

void Runner::writeFile(const GeneratedFile &file) {
  std::string text =
      "// coconet-random-programs " + rerunArgs(file) + "\n" + file.source();
  std::vector<std::string> names;
  for (const std::string &schedule : applied)
    for (const auto &[name, block] : scheduleBlocks(schedule))
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
        text += block;
      }
  std::string path =
      options.writeDir + "/case-" + std::to_string(file.seed) + ".coco";
  std::ofstream out(path);
  out << text;
  if (!out) {
    llvm::errs() << "coconet-random-programs: cannot write " << path << "\n";
    std::exit(2);
  }
  ++written;
}

void Runner::fail(const GeneratedFile &file, const std::string &what,
                  const std::string &scheduleText, const std::string &details) {
  llvm::errs() << "FAIL: " << what << " (case seed " << file.seed
               << "; rerun: coconet-random-programs " << rerunArgs(file)
               << " --print)\n"
               << "---- source ----\n"
               << file.source() << scheduleText << "---- details ----\n"
               << details << "\n";
}

void Runner::differential(const GeneratedFile &file, const GeneratedProgram &gp,
                          const ir::Program &reference,
                          const ir::Program &candidate, int64_t ranks,
                          const std::string &what,
                          const std::string &scheduleText) {
  sim::SimOptions sim;
  if (gp.meshSizes.size() == 1) {
    sim.sizes[gp.meshSizes[0]] = ranks;
  } else {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= ranks; ++d)
      if (ranks % d == 0)
        divisors.push_back(d);
    int64_t d = divisors[rng() % divisors.size()];
    sim.sizes[gp.meshSizes[0]] = d;
    sim.sizes[gp.meshSizes[1]] = ranks / d;
  }
  for (const std::string &name : gp.sizeNames)
    sim.sizes[name] =
        ranks * gp.sizeFactor * static_cast<int64_t>(1 + rng() % 2);
  sim.seed = 1 + rng() % 100000;
  // Half the runs draw inputs whose sums depend on their order, so that a
  // reassociated reduction differs and the bound is what is checked.
  const bool wide = rng() % 2;
  sim.inputKind = wide ? sim::InputKind::Wide : sim::InputKind::Uniform;
  ++runs;
  auto cmp = verify::comparePrograms(reference, candidate, sim);
  std::string config;
  for (const auto &[name, value] : sim.sizes)
    config += (config.empty() ? "" : ",") + name + "=" + std::to_string(value);
  config = "program " + reference.name + ": --size " + config + " --seed " +
           std::to_string(sim.seed) + (wide ? " --inputs=wide" : "");
  if (!cmp) {
    ++failures;
    fail(file, what + ": simulator error", scheduleText,
         config + "\n" + llvm::toString(cmp.takeError()));
    return;
  }
  wideRuns += wide;
  if (!cmp->bitwise)
    ++toleranceRuns;
  bool differs = false;
  for (const verify::ResultDiff &d : cmp->results)
    differs |= d.differing != 0;
  for (const verify::ReassociatedValue &r : cmp->reassociated)
    maxOfBound = std::max(maxOfBound, r.maxOfBound);
  notBitwiseRuns += differs;
  if (!cmp->ok()) {
    ++failures;
    std::string text;
    llvm::raw_string_ostream os(text);
    cmp->print(os);
    fail(file, what + ": results differ", scheduleText,
         config + "\n" + text + "\nscheduled IR:\n" + printed(candidate));
  }
}

void Runner::checkSchedule(const GeneratedFile &file,
                           const GeneratedProgram &gp,
                           const GeneratedSchedule &gs,
                           const std::string &baseline) {
  (gs.legal ? plausible : illegal)++;
  ++intents[gs.intent];
  std::string source = file.source() + gs.text;
  crashContext = "case seed " + std::to_string(file.seed) + "\n" + source;
  Compiled c(source);
  auto record = [&](const std::vector<std::string> &kinds) {
    std::string kind = kinds.empty() ? "(none)" : kinds.front();
    if (options.verbose && !firstRefusal.count(kind))
      firstRefusal[kind] = gs.text + c.text;
    if (gs.legal) {
      ++plausibleRefused[kind];
    } else if (kind == gs.expectedKind) {
      ++illegalRefused[kind];
    } else {
      ++illegalOtherKind[gs.expectedKind + " -> " + kind];
    }
  };
  if (!c.module) {
    std::vector<std::string> kinds = c.errorKinds();
    if (kinds.empty()) {
      ++failures;
      fail(file, "sema failed without an error", gs.text, c.text);
      return;
    }
    if (gs.legal) {
      ++generatorBugs;
      fail(file, "generator bug: sema rejects a plausible schedule", gs.text,
           c.text);
      return;
    }
    record(kinds);
    return;
  }
  const ir::Program *program = c.module->findProgram(gp.name);
  const ir::Schedule *schedule = c.module->findSchedule(gs.name);
  if (!program || !schedule) {
    ++generatorBugs;
    fail(file, "generator bug: program or schedule missing", gs.text, c.text);
    return;
  }
  passes::PassOptions passOptions;
  passOptions.verifyEach = true;
  std::unique_ptr<ir::Program> candidate = passes::scheduleProgram(
      *c.module, *program, schedule, c.diags, passOptions);
  if (!candidate) {
    std::vector<std::string> kinds = c.errorKinds();
    if (c.diags.errorCount() == 0 || kinds.empty()) {
      ++failures;
      fail(file, "schedule refused without an error", gs.text, c.text);
      return;
    }
    for (const std::string &k : kinds)
      if (k == "internal-verifier-error") {
        ++failures;
        fail(file, "the IR verifier failed after a pass", gs.text, c.text);
        return;
      }
    if (std::string problem = ir::verifyProgram(*program); !problem.empty()) {
      ++failures;
      fail(file, "the program is invalid after a refusal", gs.text, problem);
      return;
    }
    record(kinds);
    return;
  }
  if (!gs.legal) {
    ++failures;
    fail(file,
         "an illegal schedule (expected [" + gs.expectedKind +
             "]) was accepted",
         gs.text, printed(*candidate));
  }
  bool changed = printed(*candidate) != baseline;
  (changed ? appliedChanged : appliedUnchanged)++;
  if (gs.legal)
    applied.push_back(gs.text);
  for (int64_t ranks = 1; ranks <= 4; ++ranks)
    differential(file, gp, *program, *candidate, ranks, "schedule " + gs.name,
                 gs.text);
}

void Runner::checkFile(const GeneratedFile &file) {
  ++files;
  // Sizes and input seeds depend on the case only, so --case-seed
  // reproduces a run exactly.
  rng.seed(mix(file.seed ^ 0x5EED));
  std::string source = file.source();
  if (options.print) {
    llvm::outs() << "// ===== case seed " << file.seed << " =====\n" << source;
    for (const GeneratedProgram &p : file.programs)
      for (const GeneratedSchedule &s : p.schedules)
        llvm::outs() << "// " << s.intent
                     << (s.legal ? "" : " [" + s.expectedKind + "]")
                     << (s.text.find("apply ") != std::string::npos
                             ? " (with the schedule it applies)"
                             : "")
                     << "\n"
                     << s.text;
    llvm::outs().flush();
  }
  crashContext = "case seed " + std::to_string(file.seed) + "\n" + source;
  Compiled c(source);
  if (!c.module) {
    ++generatorBugs;
    fail(file, "generator bug: sema rejects the program", "", c.text);
    return;
  }
  applied.clear();
  for (const GeneratedProgram &gp : file.programs) {
    ++programs;
    meshPrograms += gp.meshSizes.size() > 1;
    const ir::Program *program = c.module->findProgram(gp.name);
    if (!program) {
      ++generatorBugs;
      fail(file, "generator bug: no program " + gp.name, "", c.text);
      continue;
    }
    if (std::string problem = ir::verifyProgram(*program); !problem.empty()) {
      ++failures;
      fail(file, "the program does not verify", "", problem);
      continue;
    }
    passes::PassOptions passOptions;
    passOptions.verifyEach = true;
    std::unique_ptr<ir::Program> cleaned = passes::scheduleProgram(
        *c.module, *program, nullptr, c.diags, passOptions);
    if (!cleaned) {
      ++failures;
      fail(file, "the cleanup passes fail on " + gp.name, "", c.text);
      continue;
    }
    differential(file, gp, *program, *cleaned,
                 static_cast<int64_t>(1 + rng() % 4), "cleanups of " + gp.name,
                 "");
    std::string baseline = printed(*cleaned);
    for (const GeneratedSchedule &gs : gp.schedules)
      checkSchedule(file, gp, gs, baseline);
  }
  if (!options.writeDir.empty())
    writeFile(file);
}

void printCounts(llvm::StringRef title,
                 const std::map<std::string, unsigned> &counts) {
  if (counts.empty())
    return;
  llvm::outs() << title << ":\n";
  for (const auto &[kind, n] : counts)
    llvm::outs() << llvm::formatv("  {0,6}  {1}\n", n, kind);
}

int Runner::run() {
  auto start = std::chrono::steady_clock::now();
  GeneratorOptions gen;
  if (options.oneCase) {
    gen.maxPrograms = options.maxPrograms;
    maxPrograms = gen.maxPrograms;
    checkFile(generateFile(options.caseSeed, gen));
  } else {
    for (uint64_t i = 0; programs < options.count; ++i) {
      gen.maxPrograms = std::min(3u, options.count - programs);
      maxPrograms = gen.maxPrograms;
      checkFile(generateFile(mix(options.seed * 0x100000001B3ULL + i), gen));
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  unsigned schedules = plausible + illegal;
  unsigned refusedPlausible = 0;
  for (const auto &[k, n] : plausibleRefused)
    refusedPlausible += n;
  llvm::outs() << llvm::formatv(
      "{0} files, {1} programs ({2} with a 2-axis mesh), {3} schedules: {4} "
      "plausible, {5} illegal\n",
      files, programs, meshPrograms, schedules, plausible, illegal);
  llvm::outs() << llvm::formatv(
      "applied: {0} changed the program, {1} did not; plausible refused: "
      "{2}\n",
      appliedChanged, appliedUnchanged, refusedPlausible);
  printCounts("plausible schedules refused, by first diagnostic",
              plausibleRefused);
  printCounts("illegal schedules refused as expected, by diagnostic",
              illegalRefused);
  printCounts("illegal schedules refused with another diagnostic "
              "(expected -> got)",
              illegalOtherKind);
  if (options.verbose) {
    printCounts("schedules by intent", intents);
    for (const auto &[kind, example] : firstRefusal)
      llvm::outs() << "---- first refusal [" << kind << "] ----\n" << example;
  }
  double appliedShare =
      schedules ? static_cast<double>(appliedChanged) / schedules : 0;
  llvm::outs() << llvm::formatv(
      "differential runs: {0} ({1} with wide inputs, {2} reassociating, {3} "
      "not bitwise equal, reassociated values at most {4:f3} of their "
      "bound)\n",
      runs, wideRuns, toleranceRuns, notBitwiseRuns, maxOfBound);
  llvm::outs() << llvm::formatv(
      "{0} failures, {1} generator bugs, {2:f1}% of the schedules applied "
      "and changed the program, {3:f1} s\n",
      failures, generatorBugs, 100 * appliedShare, seconds);
  if (!options.writeDir.empty())
    llvm::outs() << llvm::formatv("{0} files written to {1}\n", written,
                                  options.writeDir);
  bool ok = failures == 0 && generatorBugs == 0;
  if (!options.oneCase && appliedShare < 0.3) {
    llvm::outs() << "FAIL: fewer than 30% of the schedules applied and "
                    "changed the program\n";
    ok = false;
  }
  return ok ? 0 : 1;
}

bool parseUnsigned(const char *text, uint64_t &out) {
  return !llvm::StringRef(text).getAsInteger(0, out);
}

} // namespace

int main(int argc, char **argv) {
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  llvm::sys::AddSignalHandler(printCrashContext, nullptr);
  Options options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    uint64_t value = 0;
    auto next = [&]() {
      if (i + 1 >= argc || !parseUnsigned(argv[i + 1], value)) {
        llvm::errs() << "coconet-random-programs: " << a << " needs a number\n";
        std::exit(2);
      }
      ++i;
    };
    if (a == "--count") {
      next();
      options.count = static_cast<unsigned>(value);
    } else if (a == "--seed") {
      next();
      options.seed = value;
    } else if (a == "--max-programs") {
      next();
      options.maxPrograms =
          static_cast<unsigned>(std::clamp<uint64_t>(value, 1, 3));
    } else if (a == "--case-seed") {
      next();
      options.caseSeed = value;
      options.oneCase = true;
    } else if (a == "--print") {
      options.print = true;
    } else if (a == "--verbose") {
      options.verbose = true;
    } else if (a == "--write-dir" && i + 1 < argc) {
      options.writeDir = argv[++i];
    } else {
      llvm::errs() << "usage: coconet-random-programs [--count N] [--seed S] "
                      "[--case-seed X] [--max-programs K] [--print] "
                      "[--verbose] [--write-dir DIR]\n";
      return 2;
    }
  }
  if (!options.writeDir.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.writeDir)) {
      llvm::errs() << "coconet-random-programs: cannot create "
                   << options.writeDir << ": " << ec.message() << "\n";
      return 2;
    }
  }
  Runner runner(options);
  return runner.run();
}
