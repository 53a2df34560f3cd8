//===- Shard.cpp - replicated parameters become sliced storage ------------===//
//
// `shard(p, ...)`: a replicated tensor parameter whose every use reads only
// the rank's slice (elementwise stages computing on slices, after a
// reorder) is stored sliced: each rank keeps 1/P of it. Its update, if it
// is an allgather of a value sliced the same way that exists only to
// rebuild the full parameter, disappears: the slice is written in place.
// The program's interface changes (the parameter is marked sharded and the
// generated API takes the rank's slice); the values do not: the sliced
// parameter holds exactly the elements its uses read.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::passes {
namespace {

using ir::AxisState;
using ir::Stage;
using ir::StageKind;

class ShardPass : public DirectivePass {
public:
  using DirectivePass::DirectivePass;
  llvm::StringRef getName() const override { return "shard"; }
  std::string describe() const override {
    std::string text = "shard(";
    for (size_t i = 0; i < directive.args.size(); ++i)
      text += (i ? ", " : "") + directive.args[i];
    return text + ")";
  }

  LogicalResult run(ir::Program &program, DiagnosticEngine &diags) override {
    struct Plan {
      Stage *param;
      ir::Layout layout;
      Stage *gather; ///< the update's allgather to remove, or null
    };
    llvm::SmallVector<Plan, 4> plans;
    for (unsigned i = 0; i < directive.args.size(); ++i) {
      Stage *p = lookup(program, diags, i);
      if (!p)
        return failure();
      auto plan = planParam(program, diags, p, static_cast<int>(i));
      if (!plan)
        return failure();
      if (llvm::any_of(plans, [&](const Plan &q) { return q.param == p; })) {
        refuse(diags, static_cast<int>(i), DiagId::ListedTwice, p->name);
        return failure();
      }
      plans.push_back({p, plan->first, plan->second});
    }
    for (Plan &plan : plans) {
      plan.param->type.layout = plan.layout;
      plan.param->sharded = true;
      if (Stage *g = plan.gather) {
        Stage *slice = g->operands[0];
        slice->updates = plan.param;
        g->updates = nullptr;
        program.replaceResult(g, slice);
        program.eraseStage(g);
      }
    }
    return success();
  }

private:
  /// The layout `p` gets and the allgather to remove, or nullopt after a
  /// refusal.
  std::optional<std::pair<ir::Layout, Stage *>>
  planParam(ir::Program &program, DiagnosticEngine &diags, Stage *p,
            int arg) const {
    const ir::Mesh &mesh = program.mesh;
    if (!p->isParam()) {
      refuse(diags, arg, DiagId::ShardNotParam, p->name, describeKind(*p));
      return std::nullopt;
    }
    if (p->type.isScalar() || !p->type.layout.isReplicated()) {
      refuse(diags, arg, DiagId::ShardNotReplicatedTensor, p->name,
             p->type.isScalar() ? std::string("a scalar")
                                : p->type.layout.str(mesh))
          .note(p->loc, DiagId::StageDefinedHere, p->name);
      return std::nullopt;
    }
    auto users = program.getUsers(p);
    if (users.empty()) {
      refuse(diags, arg, DiagId::ShardUnused, p->name);
      return std::nullopt;
    }
    std::optional<ir::Layout> layout;
    Stage *first = nullptr;
    for (Stage *u : users) {
      auto l = sliceRead(mesh, *p, *u);
      if (!l) {
        std::string who = "'" + u->name + "' ";
        std::string why = u->kind != StageKind::Elementwise
                              ? who + "is " + describeKind(*u) +
                                    ", which needs the whole tensor"
                          : u->type.layout.isSlicedAnywhere()
                              ? who + "broadcasts '" + p->name +
                                    "' along its sliced dimension"
                              : who + "is " + u->type.layout.str(mesh);
        refuse(diags, arg, DiagId::ShardFullUse, p->name, u->name, why)
            .note(u->loc, DiagId::StageDefinedHere, u->name);
        return std::nullopt;
      }
      if (layout && *layout != *l) {
        refuse(diags, arg, DiagId::ShardMixedSlices, p->name, first->name,
               layout->str(mesh), u->name, l->str(mesh));
        return std::nullopt;
      }
      layout = l;
      first = u;
    }
    Stage *gather = nullptr;
    if (Stage *update = program.findUpdateOf(p)) {
      if (update->kind != StageKind::AllGather ||
          update->operands[0]->type.layout != *layout) {
        refuse(diags, arg, DiagId::ShardUpdateFull, p->name, update->name)
            .note(update->loc, DiagId::StageDefinedHere, update->name);
        return std::nullopt;
      }
      auto readers = program.getUsers(update);
      if (!readers.empty()) {
        Stage *reader = readers.front();
        refuse(diags, arg, DiagId::ShardUpdateRead, p->name, update->name,
               reader->name)
            .note(reader->loc, DiagId::StageDefinedHere, reader->name);
        return std::nullopt;
      }
      // The slice is then written into p: it must not already be written
      // into another parameter, be a parameter, or be a result itself.
      Stage *slice = update->operands[0];
      std::string why;
      if (slice->updates)
        why = "already updates '" + slice->updates->name + "'";
      else if (slice->isParam())
        why = "is a parameter";
      else if (program.isResult(slice) ||
               llvm::count(program.getResults(), update) != 1)
        why = "is also a result of the program";
      if (!why.empty()) {
        refuse(diags, arg, DiagId::ShardUpdateShared, p->name, slice->name, why)
            .note(slice->loc, DiagId::StageDefinedHere, slice->name);
        return std::nullopt;
      }
      gather = update;
    }
    return std::make_pair(*layout, gather);
  }

  /// The layout `p` would have if `u` read only its slice, or nullopt when
  /// `u` reads all of it.
  static std::optional<ir::Layout> sliceRead(const ir::Mesh &mesh,
                                             const Stage &p, const Stage &u) {
    if (u.kind != StageKind::Elementwise || !u.type.layout.isSlicedAnywhere())
      return std::nullopt;
    ir::Layout out = ir::Layout::replicated(mesh.size());
    const int lead =
        static_cast<int>(u.type.rank()) - static_cast<int>(p.type.rank());
    for (unsigned a = 0; a < mesh.size(); ++a) {
      const ir::AxisLayout &x = u.type.layout[a];
      if (x.state != AxisState::Sliced)
        continue; // every rank of the axis reads the same elements of p
      int d = x.dim - lead;
      if (d < 0 || p.type.shape[d] != u.type.shape[x.dim])
        return std::nullopt;
      out[a] = {AxisState::Sliced, d};
    }
    return out;
  }
};

} // namespace

std::unique_ptr<Pass> createShardPass(Directive d, AppliedStack from) {
  return std::make_unique<ShardPass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
