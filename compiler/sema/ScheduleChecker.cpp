//===- ScheduleChecker.cpp - names and shapes of schedules ----------------===//
//
// Checks schedule blocks: the program exists, each directive is a known
// transformation with the right number of names, every name is a stage or
// parameter of the program or a name bound by an earlier directive (of this
// schedule or of one it applies), and `apply` has no cycles. Applying the
// transformations is the pass manager's job.
//
//===----------------------------------------------------------------------===//

#include "sema/ProgramChecker.h"
#include "sema/Sema.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace coconet::sema {

using Directive = ir::Schedule::Directive;

namespace {
struct Shape {
  Directive::Kind kind;
  unsigned minArgs, maxArgs; ///< maxArgs 0: no limit
  unsigned results;          ///< 0: no results; otherwise optional count
  const char *argText;
};

std::optional<Shape> lookupTransform(llvm::StringRef name) {
  using K = Directive::Kind;
  return llvm::StringSwitch<std::optional<Shape>>(name)
      .Case("split", Shape{K::Split, 1, 1, 2, "1 stage (an allreduce)"})
      .Case("hierarchical",
            Shape{K::Hierarchical, 1, 1, 3,
                  "1 stage (an allreduce over both axes of a two-axis "
                  "mesh)"})
      .Case("reorder",
            Shape{K::Reorder, 2, 0, 0,
                  "an allgather and at least 1 stage to move it past"})
      .Case("shard", Shape{K::Shard, 1, 0, 0, "at least 1 parameter"})
      .Case("fuse", Shape{K::Fuse, 1, 0, 0, "at least 1 stage"})
      .Case("overlap",
            Shape{K::Overlap, 2, 2, 0, "2 stages (a producer and a consumer)"})
      .Case("algorithm", Shape{K::Algorithm, 2, 0, 0,
                               "at least 1 collective and then an algorithm"})
      .Default(std::nullopt);
}

} // namespace

bool checkSchedules(llvm::ArrayRef<const ast::Module *> modules,
                    ir::Module &module, DiagnosticEngine &diags) {
  bool ok = true;
  AlgorithmFiles algorithmFiles;
  llvm::StringSet<> astPrograms;
  for (const ast::Module *m : modules)
    for (const ast::Program &p : m->programs)
      astPrograms.insert(p.name.name);

  // First pass: declare every schedule (so `apply` may refer forward).
  llvm::StringMap<llvm::SMRange> declared;
  std::vector<const ast::Schedule *> order;
  for (const ast::Module *m : modules) {
    for (const ast::Schedule &s : m->schedules) {
      auto it = declared.find(s.name.name);
      if (it != declared.end()) {
        diags.report(s.name.range, DiagId::Redefinition, s.name.name)
            .note(it->second, DiagId::PreviousDefinition, s.name.name);
        ok = false;
        continue;
      }
      declared[s.name.name] = s.name.range;
      order.push_back(&s);
    }
  }
  llvm::StringMap<const ast::Schedule *> byName;
  for (const ast::Schedule *s : order)
    byName[s->name.name] = s;

  // Second pass: each schedule on its own.
  for (const ast::Schedule *s : order) {
    ir::Program *program = module.findProgram(s->program.name);
    if (!program) {
      if (!astPrograms.contains(s->program.name)) {
        diags.report(s->program.range, DiagId::ScheduleUnknownProgram,
                     s->name.name, s->program.name);
        ok = false;
      }
      continue; // the program had errors of its own
    }
    ir::Schedule schedule;
    schedule.name = s->name.name;
    schedule.program = program->name;
    schedule.loc = s->range;

    // Names usable in this schedule: the program's, plus those bound by
    // directives here or in applied schedules, in order.
    llvm::StringMap<llvm::SMRange> bound;
    bool scheduleOk = true;
    for (const ast::Directive &d : s->directives) {
      Directive out;
      out.loc = d.range;
      if (d.kind == ast::Directive::Kind::Apply) {
        out.kind = Directive::Kind::Apply;
        out.args.push_back(d.transform.name);
        out.argLocs.push_back(d.transform.range);
        auto it = byName.find(d.transform.name);
        if (it == byName.end()) {
          diags.report(d.transform.range, DiagId::ApplyUnknown,
                       d.transform.name);
          scheduleOk = false;
          continue;
        }
        const ast::Schedule *other = it->second;
        if (other->program.name != s->program.name) {
          diags.report(d.transform.range, DiagId::ApplyOtherProgram,
                       other->name.name, other->program.name, s->program.name);
          scheduleOk = false;
          continue;
        }
        // Walk the apply graph from `other` with a worklist: reaching `s`
        // is a cycle; every name bound on the way becomes usable here.
        llvm::SmallVector<std::pair<const ast::Schedule *, std::string>, 8>
            work{{other, other->name.name}};
        llvm::StringSet<> visited;
        bool cycle = false;
        while (!work.empty() && !cycle) {
          auto [cur, path] = work.pop_back_val();
          if (!visited.insert(cur->name.name).second)
            continue;
          for (const ast::Directive &inner : cur->directives) {
            for (const ast::Ident &r : inner.results)
              bound.try_emplace(r.name, r.range);
            if (inner.kind != ast::Directive::Kind::Apply)
              continue;
            if (inner.transform.name == s->name.name) {
              diags.report(d.transform.range, DiagId::ApplyCycle, s->name.name,
                           "'" + path + "'");
              cycle = true;
              break;
            }
            auto next = byName.find(inner.transform.name);
            if (next != byName.end())
              work.push_back(
                  {next->second, path + "' -> '" + next->second->name.name});
          }
        }
        if (cycle) {
          scheduleOk = false;
          continue;
        }
        schedule.directives.push_back(std::move(out));
        continue;
      }

      auto shape = lookupTransform(d.transform.name);
      if (!shape) {
        diags.report(d.transform.range, DiagId::UnknownTransformation,
                     d.transform.name);
        scheduleOk = false;
        continue;
      }
      out.kind = shape->kind;
      if (d.file && shape->kind != Directive::Kind::Algorithm) {
        diags.report(d.file->range, DiagId::FileNotAllowed);
        scheduleOk = false;
        continue;
      }
      unsigned n = d.args.size() + (d.file ? 1 : 0);
      if (n < shape->minArgs || (shape->maxArgs && n > shape->maxArgs)) {
        diags.report(d.range, DiagId::TransformArity, d.transform.name,
                     shape->argText, n);
        scheduleOk = false;
        continue;
      }
      if (!d.results.empty() && d.results.size() != shape->results) {
        diags.report(d.range, DiagId::TransformResults, d.transform.name,
                     shape->results == 0
                         ? std::string("no names")
                         : std::to_string(shape->results) +
                               " names (the reducescatter and the allgather)",
                     std::to_string(d.results.size()) +
                         (d.results.size() == 1 ? " name" : " names"));
        scheduleOk = false;
        continue;
      }
      if (d.chunks && shape->kind != Directive::Kind::Overlap) {
        diags.report(d.chunksRange, DiagId::ChunksNotAllowed);
        scheduleOk = false;
        continue;
      }
      if (shape->kind == Directive::Kind::Overlap) {
        if (!d.chunks) {
          diags.report(d.range, DiagId::ChunksRequired);
          scheduleOk = false;
          continue;
        }
        if (*d.chunks < 1) {
          diags.report(d.chunksRange, DiagId::ChunksPositive);
          scheduleOk = false;
          continue;
        }
        out.chunks = *d.chunks;
      }
      bool argsOk = true;
      llvm::ArrayRef<ast::Ident> stageArgs = d.args;
      if (shape->kind == Directive::Kind::Algorithm && d.file) {
        // Every name is a stage; the file is the algorithm.
        out.table = algorithmFiles.load(*d.file, diags);
        if (!out.table)
          argsOk = false;
      } else if (shape->kind == Directive::Kind::Algorithm) {
        // The last argument names the algorithm, not a stage.
        const ast::Ident &name = d.args.back();
        std::optional<ir::CollectiveAlgorithm> a =
            ir::parseCollectiveAlgorithm(name.name);
        if (!a || *a == ir::CollectiveAlgorithm::Auto) {
          diags.report(name.range, DiagId::UnknownAlgorithm, name.name);
          argsOk = false;
        }
        stageArgs = stageArgs.drop_back();
      }
      for (const ast::Ident &a : stageArgs) {
        if (program->findStage(a.name) || bound.contains(a.name)) {
          out.args.push_back(a.name);
          out.argLocs.push_back(a.range);
          continue;
        }
        if (program->findTable(a.name))
          diags.report(a.range, DiagId::ScheduleArgIsTable, a.name,
                       program->name);
        else
          diags.report(a.range, DiagId::ScheduleUnknownStage, program->name,
                       a.name);
        argsOk = false;
      }
      for (const ast::Ident &r : d.results) {
        if (program->findStage(r.name)) {
          diags.report(r.range, DiagId::ScheduleNameClash, r.name);
          argsOk = false;
          continue;
        }
        auto [it, fresh] = bound.try_emplace(r.name, r.range);
        if (!fresh) {
          diags.report(r.range, DiagId::Redefinition, r.name)
              .note(it->second, DiagId::PreviousDefinition, r.name);
          argsOk = false;
          continue;
        }
        out.results.push_back(r.name);
      }
      if (!argsOk) {
        scheduleOk = false;
        continue;
      }
      if (shape->kind == Directive::Kind::Algorithm && d.file) {
        out.args.push_back('"' + d.file->name + '"');
        out.argLocs.push_back(d.file->range);
      } else if (shape->kind == Directive::Kind::Algorithm) {
        out.args.push_back(d.args.back().name);
        out.argLocs.push_back(d.args.back().range);
      }
      schedule.directives.push_back(std::move(out));
    }
    if (!scheduleOk) {
      ok = false;
      continue;
    }
    module.schedules.push_back(std::move(schedule));
  }
  return ok;
}

} // namespace coconet::sema
