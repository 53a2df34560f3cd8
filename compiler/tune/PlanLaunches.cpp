//===- PlanLaunches.cpp - the launches of a step as the plan runs them ----===//

#include "tune/PlanLaunches.h"

#include "diag/Diagnostic.h"
#include "ir/Program.h"
#include "lower/Lower.h"
#include "lower/Plan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <utility>

namespace coconet::tune {
namespace {

using analysis::LaunchCost;
using analysis::Monomial;
using analysis::Polynomial;

/// The bytes of a buffer's block: the product of its extents, each a
/// global size over the sizes of the axes slicing it, times the element's.
Polynomial blockBytes(const lower::Plan &plan, const lower::Buffer &buffer) {
  Polynomial count(static_cast<int64_t>(ir::dtypeSize(buffer.dtype)));
  for (const lower::Extent &e : buffer.shape) {
    Monomial divisor;
    for (unsigned a : e.axes)
      --divisor[plan.mesh.axes[a].size];
    count = count * Polynomial::fromDim(e.global) *
            Polynomial::term(1, std::move(divisor));
  }
  return count;
}

/// A step the lowering adds: it computes no stage of the program.
bool isAdded(const lower::Step &step) {
  return std::holds_alternative<lower::CopyCall>(step.body) ||
         std::holds_alternative<lower::PackKernel>(step.body) ||
         std::holds_alternative<lower::StoreScalarCall>(step.body);
}

/// The launch of an added copy or pack: a kernel that reads its input
/// block and writes its output block, which it does not read.
LaunchCost addedLaunch(const ir::Program &program, const lower::Plan &plan,
                       const lower::Step &step) {
  LaunchCost l;
  l.kind = LaunchCost::Kind::Kernel;
  l.description = step.name + " (the lowering's): " + step.summary;
  for (unsigned b : step.reads) {
    Polynomial bytes = blockBytes(plan, plan.buffers[b]);
    l.read += bytes;
    if (const ir::Stage *s = program.findStage(plan.buffers[b].value))
      l.touched.push_back({s, bytes});
  }
  for (unsigned b : step.writes) {
    Polynomial bytes = blockBytes(plan, plan.buffers[b]);
    l.write += bytes;
    l.fresh += bytes;
    if (const ir::Stage *s = program.findStage(plan.buffers[b].value))
      l.touched.push_back({s, bytes});
  }
  return l;
}

/// The first line of what the lowering reported, without its label.
std::string firstMessage(llvm::StringRef text) {
  llvm::StringRef line = text.split('\n').first.trim();
  if (size_t at = line.find("error: "); at != llvm::StringRef::npos)
    line = line.drop_front(at + 7);
  return line.empty() ? "it reported no reason" : line.str();
}

} // namespace

llvm::Expected<StepLaunches> planLaunches(const ir::Program &program,
                                          bool sequential) {
  llvm::SourceMgr sm;
  std::string text;
  llvm::raw_string_ostream os(text);
  DiagnosticEngine diags(sm, os);
  lower::LowerOptions options;
  options.sequential = sequential;
  std::unique_ptr<lower::Plan> plan =
      lower::lowerProgram(program, "", diags, options);
  if (!plan)
    return llvm::createStringError("the lowering refuses it: " +
                                   firstMessage(text));

  // The plan's fused collectives are the program's kernels that hold a
  // collective, in order (lower/Plan.h).
  llvm::DenseMap<const ir::Kernel *, bool> inSequence;
  unsigned f = 0;
  for (const ir::Kernel &k : program.kernels)
    if (k.isFusedCollective() && f < plan->fusedCollectives.size())
      inSequence[&k] = !plan->fusedCollectives[f++].fused();
  StepLaunches out;
  std::vector<LaunchCost> stages = analysis::analyzeLaunches(
      program, [&](const ir::Kernel &k) { return inSequence.lookup(&k); });

  // The step that computes each stage, and the added steps the plan runs.
  llvm::StringMap<unsigned> stepOf;
  for (unsigned i = 0; i < plan->steps.size(); ++i) {
    const lower::Step &step = plan->steps[i];
    if (isAdded(step))
      continue;
    if (const auto *k = std::get_if<lower::ElementwiseKernel>(&step.body))
      for (const auto &m : k->members)
        stepOf.try_emplace(m.name, i);
    for (unsigned b : step.writes)
      stepOf.try_emplace(plan->buffers[b].value, i);
  }
  // Added steps a fused kernel or an overlap's parts make themselves.
  llvm::DenseSet<unsigned> madeInside;
  for (const lower::FusedCollective &fc : plan->fusedCollectives)
    if (fc.fused())
      madeInside.insert(fc.steps.begin(), fc.steps.end());
  for (const lower::OverlapGroup &o : plan->overlaps) {
    out.overlapInParts.push_back(o.inChunks());
    if (o.inChunks() && o.packStep)
      madeInside.insert(*o.packStep);
  }

  // In the plan's order (which runs a fuse group where all its members'
  // operands are ready, not at its first member's place in the program): a
  // stage's launch at its first member's step, an added one at its own.
  struct Entry {
    unsigned key;
    LaunchCost launch;
    StepLaunches::Lone lone;
  };
  std::vector<Entry> entries;
  unsigned key = 0;
  for (LaunchCost &l : stages) {
    unsigned first = ~0u;
    for (const ir::Stage *m : l.members)
      if (auto it = stepOf.find(m->name); it != stepOf.end())
        first = std::min(first, it->second);
    key = first == ~0u ? key : first;
    StepLaunches::Lone lone;
    if (l.kind == LaunchCost::Kind::Collective && l.members.size() == 1) {
      auto it = stepOf.find(l.members.front()->name);
      const auto *call = it == stepOf.end()
                             ? nullptr
                             : std::get_if<lower::CollectiveCall>(
                                   &plan->steps[it->second].body);
      if (call) {
        const lower::Buffer &o = plan->buffers[call->output];
        if (o.loneInput)
          lone = {program.findStage(plan->buffers[*o.loneInput].value),
                  o.loneAxis};
      }
    }
    entries.push_back({key, std::move(l), lone});
  }
  for (unsigned i = 0; i < plan->steps.size(); ++i) {
    const lower::Step &step = plan->steps[i];
    // A stored scalar is one element: no launch worth a price.
    if (!isAdded(step) || madeInside.contains(i) ||
        std::holds_alternative<lower::StoreScalarCall>(step.body))
      continue;
    entries.push_back({i, addedLaunch(program, *plan, step), {}});
    ++out.added;
  }
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const Entry &a, const Entry &b) { return a.key < b.key; });
  for (Entry &e : entries) {
    out.launches.push_back(std::move(e.launch));
    out.lone.push_back(e.lone);
  }
  return out;
}

} // namespace coconet::tune
