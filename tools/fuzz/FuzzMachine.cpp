//===- FuzzMachine.cpp - libFuzzer target for machine files ---------------===//
//
// A machine file (coconetc tune --machine, --emit=report --machine) is
// parsed by tune::parseMachine, which reports each mistake at its line and
// column. The input is a machine file; every diagnostic is rendered as
// coconetc prints it. Checked besides the absence of crashes and sanitizer
// reports:
//   - what is printed is safe for a terminal (no control byte but the line
//     break) and bounded (a line of at most 1 KiB);
//   - an accepted machine has every value finite and within the ranges
//     docs/tuner.md states; printed (printMachine) it reads back, and
//     printed again it is the same text;
//   - its name as output shows it (shownName) is safe and at most 64
//     columns;
//   - it prices a small program (an allreduce and its update, on 2 and 8
//     ranks, sizes up to 2^40) at a finite time or says why not: never a
//     NaN, an infinity or a negative time.
//
//   build-fuzz/tools/coconet-fuzz-machine -dict=tools/fuzz/machine.dict
//       test/fuzz/corpus/machine
//
//===----------------------------------------------------------------------===//

#include "analysis/Report.h"
#include "parse/Parser.h"
#include "passes/PassManager.h"
#include "sema/Sema.h"
#include "tune/CostModel.h"
#include "tune/Machine.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace coconet;

namespace {

[[noreturn]] void bug(const std::string &what) {
  std::fprintf(stderr, "==== coconet-fuzz-machine: %s ====\n", what.c_str());
  std::abort();
}

void checkPrintable(const std::string &text, const char *what) {
  size_t line = 0;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      line = 0;
      continue;
    }
    if (u < 0x20 || u == 0x7f)
      bug(std::string(what) + ": a raw control byte " + std::to_string(u));
    if (++line > 1024)
      bug(std::string(what) + ": a line longer than 1 KiB");
  }
}

/// Parses `text` as a machine file; the rendered diagnostics into `*out`.
std::optional<tune::Machine> parseText(const std::string &text,
                                       std::string *out) {
  llvm::SourceMgr sm;
  llvm::raw_string_ostream os(*out);
  DiagnosticEngine diags(sm, os);
  std::optional<tune::Machine> m = tune::parseMachine(
      llvm::MemoryBuffer::getMemBufferCopy(text, "f.machine"), sm, diags);
  os.flush();
  if (m && diags.errorCount() != 0)
    bug("a machine accepted with errors");
  if (!m && diags.errorCount() == 0)
    bug("a machine refused without an error");
  return m;
}

void inRange(double v, double low, double high, const char *what) {
  if (!std::isfinite(v) || v < low || v > high)
    bug(std::string(what) + " out of its range: " + std::to_string(v));
}

void checkRanges(const tune::Machine &m) {
  if (m.ranksPerNode < 1 || m.ranksPerNode > 65536 || m.threadsPerRank < 1 ||
      m.threadsPerRank > 4096)
    bug("ranks-per-node or threads-per-rank out of range");
  inRange(m.kernelLaunch, 0, 1, "kernel-launch");
  inRange(m.memoryBandwidth, 1e3, 1e15, "memory-bandwidth");
  for (double t :
       {m.orderedSum, m.randomDraw, m.libmCall, m.rounding, m.matmulPack})
    inRange(t, 0, 1e-3, "a time per element");
  for (const auto &[type, rate] : m.matmulRate)
    inRange(rate, 1e6, 1e17, "a matmul rate");
  if (m.cacheSize != 0 || m.cacheBandwidth != 0) {
    inRange(m.cacheSize, 1e3, 1024.0 * 1024 * 1024 * 1024, "a cache size");
    inRange(m.cacheBandwidth, 1e3, 1e15, "a cache bandwidth");
  }
  for (const auto &[key, cost] : m.collectives) {
    inRange(cost.latency, 0, 1, "a latency");
    inRange(cost.bandwidth, 1e3, 1e15, "a bandwidth");
    if (cost.beyondCache != 0)
      inRange(cost.beyondCache, 1e3, 1e15, "a bandwidth beyond the cache");
  }
  const std::string shown = m.shownName();
  checkPrintable(shown, "the shown name");
  if (shown.size() > 4 * 64)
    bug("a shown name of " + std::to_string(shown.size()) + " bytes");
}

/// The program every machine prices, scheduled two ways.
struct Priced {
  llvm::SourceMgr sm;
  std::unique_ptr<ir::Module> module;
  std::vector<std::unique_ptr<ir::Program>> programs;
  std::vector<tune::StepLaunches> launches;

  Priced() {
    const char *source = R"(program sgd(g: f16[N] local, w: f32[N] replicated,
            x: f32[B, N] replicated, v: f32[N, B] replicated, lr: f32) {
    gs = allreduce(sum, g);
    y = matmul(x, v);
    w1 = update(w, w - lr * f32(gs));
    return y;
}
schedule fused for sgd {
    (rs, ag) = split(gs);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}
)";
    std::string sink;
    llvm::raw_string_ostream os(sink);
    DiagnosticEngine diags(sm, os);
    unsigned id = sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "p.coco"), llvm::SMLoc());
    auto ast = parse::parseBuffer(sm, id, diags);
    if (!ast)
      bug("the priced program does not parse: " + sink);
    module = sema::checkModule(*ast, diags);
    if (!module || diags.errorCount())
      bug("the priced program does not check: " + sink);
    const ir::Program &program = *module->programs.front();
    programs.push_back(program.clone());
    passes::PassOptions options;
    programs.push_back(passes::scheduleProgram(
        *module, program, module->findSchedule("fused"), diags, options));
    if (!programs.back())
      bug("the priced schedule does not apply: " + sink);
    for (const auto &p : programs) {
      auto planned = tune::planLaunches(*p);
      if (!planned)
        bug("the priced program does not lower: " +
            llvm::toString(planned.takeError()));
      launches.push_back(std::move(*planned));
    }
  }
};

void checkPrices(const tune::Machine &m) {
  static Priced priced;
  for (size_t k = 0; k < priced.programs.size(); ++k)
    for (int64_t p : {2, 8})
      for (int64_t n : {int64_t(8), int64_t(1) << 40}) {
        const ir::DimEnv sizes{{"P", p}, {"N", n}, {"B", 16}};
        for (bool staging : {false, true}) {
          auto t = tune::predictStep(*priced.programs[k], priced.launches[k], m,
                                     sizes, staging);
          if (!t) {
            const std::string why = llvm::toString(t.takeError());
            if (why.empty())
              bug("a price refused without a reason");
            continue;
          }
          if (!std::isfinite(t->seconds) || t->seconds < 0)
            bug("a step priced at " + std::to_string(t->seconds) + " s");
          for (const tune::LaunchTime &l : t->launches)
            if (!std::isfinite(l.seconds) || l.seconds < 0)
              bug("a launch priced at " + std::to_string(l.seconds) + " s");
        }
      }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  std::string rendered;
  std::optional<tune::Machine> m = parseText(text, &rendered);
  checkPrintable(rendered, "the diagnostics");
  if (!m)
    return 0;
  checkRanges(*m);
  // Printed, read back, printed again: the same text.
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    tune::printMachine(*m, "", os);
  }
  std::string again;
  std::optional<tune::Machine> back = parseText(printed, &again);
  if (!back)
    bug("a printed machine is refused:\n" + printed + again);
  checkRanges(*back);
  std::string twice;
  {
    llvm::raw_string_ostream os(twice);
    tune::printMachine(*back, "", os);
  }
  if (twice != printed)
    bug("a machine printed twice differs:\n" + printed + "---\n" + twice);
  checkPrices(*m);
  return 0;
}
