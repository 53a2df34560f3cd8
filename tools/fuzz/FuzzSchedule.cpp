//===- FuzzSchedule.cpp - libFuzzer target for schedule application -------===//
//
// A valid program plus random schedule text. The first input byte's low 7
// bits pick a base file (kBaseFiles: the samples, the standard library, the
// code generators' regression cases, and the programs of the schedule lit
// tests, whose own schedules the passes refuse: the seed corpus reaches every
// refusal); the rest of the input is appended to it. The whole file is
// parsed and checked; every schedule the input declared is applied through
// the pass manager with the IR verifier after each pass (--verify-each;
// --no-cleanup when the first byte's high bit is set), and what applies is
// printed (IR, dot, report), lowered, and, when lowering succeeds, emitted
// for both targets with drivers, as `coconetc --emit=driver` would (and
// with --sequential). A schedule that applies is also run against the
// unscheduled program on the simulator (2 ranks per mesh axis, small
// sizes): the results must match.
//
// Bad schedules must only ever produce diagnostics: a crash, a sanitizer
// report, a hang, an "internal compiler error" or a differing result is a
// bug (this target aborts on the last two so that libFuzzer keeps the
// input).
//
//   build-fuzz/tools/coconet-fuzz-schedule -dict=tools/fuzz/schedule.dict
//       test/fuzz/corpus/schedule
//
//===----------------------------------------------------------------------===//

#include "analysis/Report.h"
#include "codegen/Codegen.h"
#include "emit/Dot.h"
#include "lower/Lower.h"
#include "parse/Parser.h"
#include "passes/PassManager.h"
#include "sema/Sema.h"
#include "verify/Differential.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef COCONET_SOURCE_DIR
#error "COCONET_SOURCE_DIR must name the source tree"
#endif

using namespace coconet;

namespace {

/// The base files, by index (the first input byte's low 7 bits modulo their
/// number).
/// Append only: the seed corpus's first bytes refer to these positions.
constexpr const char *kBaseFiles[] = {
    "samples/adam.coco",
    "samples/lamb.coco",
    "samples/megatron_mlp.coco",
    "samples/pipeline_stage.coco",
    "samples/sgd.coco",
    "stdlib/nn/bias_dropout_residual.coco",
    "stdlib/optim/momentum.coco",
    "test/codegen/cases/copy-kernels.coco",
    "test/codegen/cases/coverage-integers.coco",
    "test/codegen/cases/coverage-mesh-3d.coco",
    "test/codegen/cases/coverage-overlap-parts.coco",
    "test/codegen/cases/coverage-scalars.coco",
    "test/codegen/cases/fused-scalar.coco",
    "test/codegen/cases/int-limits.coco",
    "test/codegen/cases/norms.coco",
    "test/codegen/cases/overlap-one-chunk.coco",
    "test/codegen/cases/reduction-names.coco",
    "test/codegen/cases/reserved-names.coco",
    "test/codegen/cases/row-tiles.coco",
    "test/codegen/cases/self-compare.coco",
    "test/codegen/cases/step-names.coco",
    "test/codegen/cases/uniform-values.coco",
    "test/codegen/cases/unused-scalar.coco",
    "test/lit/passes/fail-fuse-collective-place-gather.coco",
    "test/lit/passes/fail-fuse-collective-place.coco",
    "test/lit/passes/fail-fuse-cycle.coco",
    "test/lit/passes/fail-fuse-not-connected.coco",
    "test/lit/passes/fail-fuse-not-fusable.coco",
    "test/lit/passes/fail-fuse-partial.coco",
    "test/lit/passes/fail-fuse-shapes.coco",
    "test/lit/passes/fail-fuse-two-collectives.coco",
    "test/lit/passes/fail-listed-twice-reorder.coco",
    "test/lit/passes/fail-listed-twice.coco",
    "test/lit/passes/fail-overlap-consumer.coco",
    "test/lit/passes/fail-overlap-indivisible.coco",
    "test/lit/passes/fail-overlap-not-consumer.coco",
    "test/lit/passes/fail-overlap-producer.coco",
    "test/lit/passes/fail-overlap-twice.coco",
    "test/lit/passes/fail-reorder-independent.coco",
    "test/lit/passes/fail-reorder-layout-mismatch-fused.coco",
    "test/lit/passes/fail-reorder-layout-mismatch.coco",
    "test/lit/passes/fail-reorder-local-operand.coco",
    "test/lit/passes/fail-reorder-not-all-gather.coco",
    "test/lit/passes/fail-reorder-not-connected.coco",
    "test/lit/passes/fail-reorder-send-same-axis.coco",
    "test/lit/passes/fail-reorder-stage-kind.coco",
    "test/lit/passes/fail-shard-full-use.coco",
    "test/lit/passes/fail-shard-mixed-slices.coco",
    "test/lit/passes/fail-shard-not-param.coco",
    "test/lit/passes/fail-shard-not-replicated-tensor-scalar.coco",
    "test/lit/passes/fail-shard-not-replicated-tensor.coco",
    "test/lit/passes/fail-shard-unused.coco",
    "test/lit/passes/fail-shard-update-full.coco",
    "test/lit/passes/fail-shard-update-read.coco",
    "test/lit/passes/fail-shard-update-shared.coco",
    "test/lit/passes/fail-split-all-axes.coco",
    "test/lit/passes/fail-split-fused.coco",
    "test/lit/passes/fail-split-no-free-dim.coco",
    "test/lit/passes/fail-split-not-all-reduce.coco",
    "test/lit/passes/fail-split-overlap-indivisible.coco",
    "test/lit/passes/fail-split-scalar.coco",
    "test/lit/passes/no-cleanup.coco",
    "test/lit/passes/overlap-then-split.coco",
    "test/lit/passes/reorder-already-sliced.coco",
    "test/lit/passes/reorder-max-signed-zero.coco",
    "test/lit/schedules/fail-applied-here.coco",
    "test/lit/schedules/fail-schedule-option.coco",
    "test/lit/schedules/fail-schedule-stage-gone.coco",
};
constexpr size_t kNumBaseFiles = sizeof(kBaseFiles) / sizeof(kBaseFiles[0]);

std::vector<std::string> &baseTexts() {
  static std::vector<std::string> texts;
  return texts;
}

/// The differential run's bounds: ranks (2 per mesh axis), overlap chunks,
/// and the product of the sizes (each ranks x chunks x kSizeUnit).
constexpr int64_t kMaxDiffRanks = 8;
constexpr int64_t kMaxChunks = 8;
constexpr int64_t kSizeUnit = 4;
constexpr int64_t kMaxElements = int64_t(1) << 16;

[[noreturn]] void bug(const char *what, const std::string &details) {
  std::fprintf(stderr, "==== coconet-fuzz-schedule: %s ====\n%s\n", what,
               details.c_str());
  std::abort();
}

/// Runs the unscheduled and the scheduled program on the simulator and
/// aborts when their results differ. Skipped for configurations the
/// simulator cannot run (too many ranks or chunks).
void differential(const ir::Program &reference, const ir::Program &candidate) {
  sim::SimOptions options;
  int64_t ranks = 1;
  for (const ir::Mesh::Axis &axis : reference.mesh.axes) {
    options.sizes[axis.size] = 2;
    ranks *= 2;
  }
  int64_t chunks = 1;
  for (const ir::Overlap &o : candidate.overlaps)
    chunks = std::max(chunks, o.chunks);
  if (ranks > kMaxDiffRanks || chunks > kMaxChunks)
    return;
  const int64_t value = ranks * chunks * kSizeUnit;
  int64_t elements = 1;
  for (const std::string &name : reference.sizeNames)
    if (options.sizes.try_emplace(name, value).second &&
        (elements *= value) > kMaxElements)
      return;
  auto cmp = verify::comparePrograms(reference, candidate, options);
  if (!cmp) {
    // The simulator refuses configurations it cannot run (sizes a
    // schedule cannot divide); that is no miscompilation.
    llvm::consumeError(cmp.takeError());
    return;
  }
  if (!cmp->ok()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    cmp->print(os);
    bug("the schedule changed the results", text);
  }
}

/// Applies `schedule` and takes what applies through every later phase.
void applyOne(const ir::Module &module, const ir::Schedule &schedule,
              bool cleanup, DiagnosticEngine &diags, const std::string &log) {
  const ir::Program *program = module.findProgram(schedule.program);
  if (!program)
    return;
  passes::PassOptions options;
  options.verifyEach = true;
  options.cleanup = cleanup;
  auto scheduled =
      passes::scheduleProgram(module, *program, &schedule, diags, options);
  if (log.find("internal compiler error") != std::string::npos)
    bug("internal compiler error", log);
  if (!scheduled)
    return;

  llvm::raw_null_ostream sink;
  ir::printProgram(*scheduled, sink);
  emit::printDot(*scheduled, schedule.name, sink);
  analysis::printReport(*scheduled, analysis::analyzeLaunches(*scheduled),
                        schedule.name, {}, sink);
  analysis::printReport(*scheduled,
                        analysis::analyzeLaunches(*scheduled,
                                                  /*sequential=*/true),
                        schedule.name, {}, sink);

  for (bool sequential : {false, true}) {
    lower::LowerOptions lowerOptions;
    lowerOptions.sequential = sequential;
    auto plan =
        lower::lowerProgram(*scheduled, schedule.name, diags, lowerOptions);
    if (log.find("internal compiler error") != std::string::npos)
      bug("internal compiler error", log);
    if (!plan)
      break;
    lower::printPlan(*plan, sink);
    for (codegen::TargetKind target :
         {codegen::TargetKind::Cpu, codegen::TargetKind::Cuda}) {
      codegen::EmitOptions emitOptions;
      emitOptions.target = target;
      emitOptions.sourceName = "fuzz.coco";
      emitOptions.driver = true;
      (void)codegen::emitProgram(*plan, emitOptions);
    }
  }
  differential(*program, *scheduled);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  for (const char *file : kBaseFiles) {
    std::string path = std::string(COCONET_SOURCE_DIR) + "/" + file;
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      std::fprintf(stderr, "coconet-fuzz-schedule: cannot read %s\n",
                   path.c_str());
      std::exit(1);
    }
    baseTexts().push_back((*buffer)->getBuffer().str() + "\n");
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const std::string &base = baseTexts()[(data[0] & 0x7f) % kNumBaseFiles];
  const bool cleanup = (data[0] & 0x80) == 0;
  std::string text =
      base + std::string(reinterpret_cast<const char *>(data + 1), size - 1);

  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.coco");
  const char *appended = buffer->getBufferStart() + base.size();
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::string log;
  llvm::raw_string_ostream logStream(log);
  DiagnosticEngine diags(sourceMgr, logStream);
  auto ast = parse::parseBuffer(sourceMgr, id, diags);
  if (!ast)
    return 0;
  auto module = sema::checkModule(*ast, diags);
  if (!module)
    return 0;
  // Only the schedules the input declared: the base file's own were
  // checked by the test suite.
  for (const ir::Schedule &schedule : module->schedules)
    if (schedule.loc.Start.getPointer() >= appended)
      applyOne(*module, schedule, cleanup, diags, log);
  return 0;
}
