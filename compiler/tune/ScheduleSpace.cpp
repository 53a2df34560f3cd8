//===- ScheduleSpace.cpp - the legal schedules of a program ---------------===//
//
// A depth-first walk over the phases of ScheduleSpace.h. Each state is a
// directive list and the program it made (without cleanups); a choice is
// tried on a copy by the directive's own pass, so legality is exactly what
// `coconetc --schedule` would decide.
//
//===----------------------------------------------------------------------===//

#include "tune/ScheduleSpace.h"

#include "analysis/Polynomial.h"
#include "diag/Diagnostic.h"
#include "passes/PassManager.h"
#include "passes/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace coconet::tune {
namespace {

using Directive = ir::Schedule::Directive;
using ir::Stage;
using ir::StageKind;

/// Can a schedule name this stage? Stages split out of an expression
/// (`h.1`) and made by transformations (`ag.m1`) cannot.
bool nameable(const Stage &s) {
  return !s.name.empty() && llvm::all_of(s.name, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
}

Directive make(Directive::Kind kind, llvm::ArrayRef<std::string> args,
               llvm::ArrayRef<std::string> results = {}, int64_t chunks = 0) {
  Directive d;
  d.kind = kind;
  d.args.assign(args.begin(), args.end());
  d.argLocs.resize(args.size());
  d.results.assign(results.begin(), results.end());
  d.chunks = chunks;
  return d;
}

struct State {
  std::vector<Directive> directives;
  std::unique_ptr<ir::Program> program;
};

class Enumerator {
public:
  Enumerator(const ir::Module &module, const ir::Program &program,
             const SpaceOptions &options, SpaceStats &stats)
      : module(module), original(program), options(options), stats(stats),
        diags(sourceMgr, silence) {}

  std::vector<Candidate> run();

private:
  /// `state` with `d` applied, or null when its pass refuses.
  std::optional<State> apply(const State &state, const Directive &d);
  bool budget() {
    if (stats.tried < options.limit)
      return true;
    stats.truncated = true;
    return false;
  }

  void splits(const State &s);
  void reorders(const State &s, std::set<std::string> decided);
  void shards(const State &s);
  void fuses(const State &s);
  void overlaps(const State &s, size_t next);
  void finish(const State &s);

  /// The elementwise stages of `s` outside kernels, in kernels that the
  /// fuse pass accepts, grown in program order.
  std::vector<llvm::SmallVector<const Stage *, 8>> fuseGroups(const State &s);

  const ir::Module &module;
  const ir::Program &original;
  const SpaceOptions &options;
  SpaceStats &stats;
  llvm::SourceMgr sourceMgr;
  llvm::raw_null_ostream silence;
  DiagnosticEngine diags;
  std::vector<Candidate> out;
  llvm::StringMap<size_t> seen; ///< printed program -> index in `out`
};

std::optional<State> Enumerator::apply(const State &state, const Directive &d) {
  ++stats.tried;
  std::unique_ptr<passes::Pass> pass;
  switch (d.kind) {
  case Directive::Kind::Split:
    pass = passes::createSplitPass(d, {});
    break;
  case Directive::Kind::Hierarchical:
    pass = passes::createHierarchicalPass(d, {});
    break;
  case Directive::Kind::Reorder:
    pass = passes::createReorderPass(d, {});
    break;
  case Directive::Kind::Shard:
    pass = passes::createShardPass(d, {});
    break;
  case Directive::Kind::Fuse:
    pass = passes::createFusePass(d, {});
    break;
  case Directive::Kind::Overlap:
    pass = passes::createOverlapPass(d, {});
    break;
  case Directive::Kind::Algorithm:
    pass = passes::createAlgorithmPass(d, {});
    break;
  case Directive::Kind::Apply:
    return std::nullopt;
  }
  State next{state.directives, state.program->clone()};
  if (failed(pass->run(*next.program, diags))) {
    ++stats.refused;
    return std::nullopt;
  }
  next.directives.push_back(d);
  return next;
}

//===-- split -------------------------------------------------------------===//

void Enumerator::splits(const State &s) {
  llvm::SmallVector<const Stage *, 6> allreduces;
  for (const auto &st : s.program->getStages())
    if (st->kind == StageKind::AllReduce && nameable(*st) &&
        !s.program->kernelOf(st.get()) && st->type.rank() > 0)
      allreduces.push_back(st.get());
  // At most 2^6 subsets; more allreduces are left whole.
  if (allreduces.size() > 6)
    allreduces.resize(6);
  for (uint64_t mask = 0; mask < (uint64_t(1) << allreduces.size()); ++mask) {
    if (!budget())
      return;
    State cur{s.directives, s.program->clone()};
    bool ok = true;
    for (size_t i = 0; i < allreduces.size() && ok; ++i) {
      if (!(mask & (uint64_t(1) << i)))
        continue;
      const std::string &name = allreduces[i]->name;
      bool alone = llvm::popcount(mask) == 1;
      std::string rs = alone ? "rs" : name + "_rs",
                  ar = alone ? "ar" : name + "_ar",
                  ag = alone ? "ag" : name + "_ag";
      while (cur.program->findStage(rs) || cur.program->findStage(ar) ||
             cur.program->findStage(ag)) {
        rs += "_";
        ar += "_";
        ag += "_";
      }
      // An allreduce over both axes of a two-axis mesh cannot be split; it
      // goes hierarchical (the inner axis, then the outer).
      const bool twoAxes =
          allreduces[i]->axis < 0 && cur.program->mesh.size() == 2;
      std::optional<State> next =
          twoAxes ? apply(cur, make(Directive::Kind::Hierarchical, {name},
                                    {rs, ar, ag}))
                  : apply(cur, make(Directive::Kind::Split, {name}, {rs, ag}));
      if (!next)
        ok = false;
      else
        cur = std::move(*next);
    }
    if (ok)
      reorders(cur, {});
  }
}

//===-- reorder -----------------------------------------------------------===//

void Enumerator::reorders(const State &s, std::set<std::string> decided) {
  // The first allgather or alltoall a schedule can name that is not
  // decided yet.
  const Stage *ag = nullptr;
  for (const auto &st : s.program->getStages())
    if ((st->kind == StageKind::AllGather || st->kind == StageKind::AllToAll) &&
        nameable(*st) && !s.program->kernelOf(st.get()) &&
        !decided.count(st->name)) {
      ag = st.get();
      break;
    }
  if (!ag) {
    shards(s);
    return;
  }
  // The chain: stages after `ag` that read it or an earlier chain member.
  llvm::DenseSet<const Stage *> reached{ag};
  llvm::SmallVector<std::string, 8> chain;
  for (const auto &st : s.program->getStages()) {
    if (st->id <= ag->id || !nameable(*st))
      continue;
    // Only elementwise stages move across an alltoall.
    bool kind =
        st->kind == StageKind::Elementwise ||
        (ag->kind == StageKind::AllGather &&
         (st->kind == StageKind::Reduction || st->kind == StageKind::SendRecv));
    if (kind && llvm::any_of(st->operands, [&](const Stage *o) {
          return reached.contains(o);
        })) {
      reached.insert(st.get());
      chain.push_back(st->name);
    }
  }
  // A reorder keeps the allgather's name on the gather it leaves last.
  decided.insert(ag->name);
  std::string agName = ag->name;
  // Without the reorder; then every prefix up to the first refused.
  reorders(s, decided);
  for (size_t k = 1; k <= chain.size(); ++k) {
    if (!budget())
      return;
    llvm::SmallVector<std::string, 8> args{agName};
    args.append(chain.begin(), chain.begin() + k);
    std::optional<State> n = apply(s, make(Directive::Kind::Reorder, args));
    if (!n)
      break;
    reorders(*n, decided);
  }
}

//===-- shard -------------------------------------------------------------===//

void Enumerator::shards(const State &s) {
  llvm::SmallVector<std::string, 4> legal;
  for (const Stage *p : s.program->getParams())
    if (!p->sharded && p->type.rank() > 0 && p->type.layout.isReplicated() &&
        (options.shardAll || llvm::is_contained(options.shardable, p->name)) &&
        budget() && apply(s, make(Directive::Kind::Shard, {p->name})))
      legal.push_back(p->name);
  // Every subset (at most 2^5; more parameters are sharded all or none).
  if (legal.size() > 5) {
    fuses(s);
    if (std::optional<State> n = apply(s, make(Directive::Kind::Shard, legal)))
      fuses(*n);
    return;
  }
  for (uint64_t mask = 0; mask < (uint64_t(1) << legal.size()); ++mask) {
    llvm::SmallVector<std::string, 4> names;
    for (size_t i = 0; i < legal.size(); ++i)
      if (mask & (uint64_t(1) << i))
        names.push_back(legal[i]);
    if (names.empty()) {
      fuses(s);
      continue;
    }
    if (!budget())
      return;
    if (std::optional<State> n = apply(s, make(Directive::Kind::Shard, names)))
      fuses(*n);
  }
}

//===-- fuse --------------------------------------------------------------===//

std::vector<llvm::SmallVector<const Stage *, 8>>
Enumerator::fuseGroups(const State &s) {
  std::vector<llvm::SmallVector<const Stage *, 8>> groups;
  for (const auto &st : s.program->getStages()) {
    const Stage *e = st.get();
    if (e->kind != StageKind::Elementwise || !nameable(*e) ||
        s.program->kernelOf(e))
      continue;
    // Join the first group it reads from (same loop) if the pass agrees.
    bool joined = false;
    for (auto &g : groups) {
      if (g.front()->type.shape != e->type.shape ||
          g.front()->type.layout != e->type.layout ||
          !llvm::any_of(e->operands, [&](const Stage *o) {
            return llvm::is_contained(g, o);
          }))
        continue;
      llvm::SmallVector<std::string, 8> names;
      for (const Stage *m : g)
        names.push_back(m->name);
      names.push_back(e->name);
      if (budget() && apply(s, make(Directive::Kind::Fuse, names))) {
        g.push_back(e);
        joined = true;
        break;
      }
    }
    if (!joined)
      groups.push_back({e});
  }
  return groups;
}

void Enumerator::fuses(const State &s) {
  overlaps(s, 0);
  std::vector<llvm::SmallVector<const Stage *, 8>> groups = fuseGroups(s);
  // 1: kernels of elementwise stages; 2: with the reducing collective
  // before; 3: with the allgather after; 4: both.
  for (int variant = 1; variant <= 4; ++variant) {
    State cur{s.directives, s.program->clone()};
    bool any = false;
    for (const auto &g : groups) {
      llvm::SmallVector<std::string, 8> names;
      for (const Stage *m : g)
        names.push_back(m->name);
      const Stage *reducing = nullptr, *gather = nullptr;
      if (variant == 2 || variant == 4)
        for (const Stage *m : g)
          for (const Stage *o : m->operands)
            if ((o->kind == StageKind::ReduceScatter ||
                 o->kind == StageKind::AllReduce) &&
                nameable(*o) && !reducing)
              reducing = o;
      if (variant == 3 || variant == 4)
        for (const auto &st : s.program->getStages())
          if (st->kind == StageKind::AllGather && nameable(*st) && !gather &&
              llvm::is_contained(g, st->operands[0]))
            gather = st.get();
      llvm::SmallVector<std::string, 8> full;
      if (reducing)
        full.push_back(reducing->name);
      full.append(names.begin(), names.end());
      if (gather)
        full.push_back(gather->name);
      if (full.size() < 2 || !budget())
        continue;
      if (std::optional<State> n =
              apply(cur, make(Directive::Kind::Fuse, full))) {
        cur = std::move(*n);
        any = true;
      } else if (names.size() >= 2 && full.size() != names.size()) {
        if (std::optional<State> n2 =
                apply(cur, make(Directive::Kind::Fuse, names))) {
          cur = std::move(*n2);
          any = true;
        }
      }
    }
    if (any)
      overlaps(cur, 0);
  }
}

//===-- overlap -----------------------------------------------------------===//

void Enumerator::overlaps(const State &s, size_t next) {
  llvm::SmallVector<std::pair<std::string, std::string>, 2> pairs;
  for (const auto &st : s.program->getStages()) {
    // An alltoall with the matmul that reads it (a dispatch).
    if (st->kind == StageKind::AllToAll && nameable(*st))
      for (const Stage *u : s.program->getUsers(st.get()))
        if (u->kind == StageKind::MatMul && nameable(*u))
          pairs.push_back({st->name, u->name});
    if (st->kind != StageKind::MatMul || !nameable(*st))
      continue;
    for (const Stage *u : s.program->getUsers(st.get()))
      if ((u->kind == StageKind::AllReduce ||
           u->kind == StageKind::ReduceScatter ||
           u->kind == StageKind::AllGather || u->kind == StageKind::AllToAll) &&
          nameable(*u))
        pairs.push_back({st->name, u->name});
  }
  if (next >= pairs.size()) {
    finish(s);
    return;
  }
  overlaps(s, next + 1);
  for (int64_t k : options.chunks) {
    if (!budget())
      return;
    if (std::optional<State> n =
            apply(s, make(Directive::Kind::Overlap,
                          {pairs[next].first, pairs[next].second}, {}, k)))
      overlaps(*n, next + 1);
  }
}

void Enumerator::finish(const State &s) {
  std::unique_ptr<ir::Program> done = s.program->clone();
  passes::PassManager pm({});
  passes::addCleanupPasses(pm);
  if (failed(pm.run(*done, diags))) {
    ++stats.refused;
    return;
  }
  if (!options.sizes.empty() && !sizeMisfit(*done, options.sizes).empty()) {
    ++stats.misfit;
    return;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  ir::printProgram(*done, os);
  auto [it, inserted] = seen.try_emplace(text, out.size());
  if (!inserted) {
    ++stats.duplicates;
    Candidate &old = out[it->second];
    if (s.directives.size() < old.directives.size())
      old.directives = s.directives;
    return;
  }
  Candidate c;
  c.directives = s.directives;
  c.program = std::move(done);
  out.push_back(std::move(c));
}

std::vector<Candidate> Enumerator::run() {
  State start{{}, original.clone()};
  if (options.base) {
    passes::PassManager pm({});
    passes::addSchedulePasses(pm, module, *options.base);
    if (failed(pm.run(*start.program, diags)))
      return {};
  }
  splits(start);
  // Summaries, once the directive lists are final.
  for (Candidate &c : out) {
    llvm::SmallVector<std::string, 6> parts;
    for (const Directive &d : c.directives) {
      std::string text = directiveText(d);
      if (d.kind == Directive::Kind::Split)
        text = "split(" + d.args[0] + ")";
      else if (d.args.size() > 3)
        text = text.substr(0, text.find('(') + 1) + d.args.front() + ", " +
               d.args[1] + " .. " + d.args.back() + ")" +
               (d.chunks ? " chunks " + std::to_string(d.chunks) : "");
      if (!text.empty() && text.back() == ';')
        text.pop_back();
      parts.push_back(text);
    }
    c.summary = parts.empty()
                    ? (options.base ? "(the base schedule)" : "(unscheduled)")
                    : llvm::join(parts, " ");
  }
  return std::move(out);
}

} // namespace

std::vector<Candidate> enumerateSchedules(const ir::Module &module,
                                          const ir::Program &program,
                                          const SpaceOptions &options,
                                          SpaceStats &stats) {
  return Enumerator(module, program, options, stats).run();
}

std::string directiveText(const Directive &d) {
  std::string args = llvm::join(d.args, ", ");
  switch (d.kind) {
  case Directive::Kind::Split:
    return (d.results.empty() ? ""
                              : "(" + llvm::join(d.results, ", ") + ") = ") +
           "split(" + args + ");";
  case Directive::Kind::Hierarchical:
    return (d.results.empty() ? ""
                              : "(" + llvm::join(d.results, ", ") + ") = ") +
           "hierarchical(" + args + ");";
  case Directive::Kind::Reorder:
    return "reorder(" + args + ");";
  case Directive::Kind::Shard:
    return "shard(" + args + ");";
  case Directive::Kind::Fuse:
    return "fuse(" + args + ");";
  case Directive::Kind::Overlap:
    return "overlap(" + args + ") chunks " + std::to_string(d.chunks) + ";";
  case Directive::Kind::Algorithm:
    return "algorithm(" + args + ");";
  case Directive::Kind::Apply:
    return "apply " + args + ";";
  }
  return "";
}

std::string scheduleText(llvm::StringRef name, const ir::Program &program,
                         const ir::Schedule *base,
                         llvm::ArrayRef<Directive> directives) {
  std::string s = ("schedule " + name + " for " + program.name + " {\n").str();
  if (base)
    s += "    apply " + base->name + ";\n";
  for (const Directive &d : directives)
    s += "    " + directiveText(d) + "\n";
  return s + "}\n";
}

std::string sizeMisfit(const ir::Program &program, const ir::DimEnv &sizes) {
  auto axisSize = [&](unsigned a) -> int64_t {
    auto it = sizes.find(program.mesh.axes[a].size);
    return it == sizes.end() ? 1 : it->second;
  };
  // Each rank's extent of dimension `d` of `s`, or -1 when it does not
  // divide.
  auto localExtent = [&](const Stage &s, int d) -> int64_t {
    std::optional<int64_t> extent = s.type.shape[d].evaluate(sizes);
    if (!extent)
      return 0; // unbound: nothing to check
    int64_t parts = 1;
    for (unsigned a = 0; a < s.type.layout.size(); ++a)
      if (s.type.layout[a].state == ir::AxisState::Sliced &&
          s.type.layout[a].dim == d)
        parts *= axisSize(a);
    return *extent % parts ? -1 : *extent / parts;
  };
  for (const auto &st : program.getStages())
    for (unsigned d = 0; d < st->type.rank(); ++d)
      if (localExtent(*st, static_cast<int>(d)) < 0)
        return "dimension " + std::to_string(d) + " of '" + st->name + "' (" +
               st->type.shape[d].str() +
               ") does not divide among the ranks that slice it";
  for (const ir::Overlap &o : program.overlaps) {
    int64_t extent = localExtent(*o.producer, o.dim);
    int64_t blocks = 1;
    if (o.consumer->kind == StageKind::ReduceScatter)
      blocks = axisSize(o.consumer->axis < 0 ? 0 : o.consumer->axis);
    if (extent > 0 && extent % (blocks * o.chunks))
      return "'" + o.producer->name + "' overlapped in " +
             std::to_string(o.chunks) + " parts: dimension " +
             std::to_string(o.dim) + " (" + std::to_string(extent) +
             " per rank) is not a multiple of " +
             std::to_string(blocks * o.chunks);
  }
  return "";
}

} // namespace coconet::tune
