//===- Fuse.cpp - group stages into one kernel ----------------------------===//
//
// `fuse(s1, ..., sn)` records that the stages run as one kernel: a chain
// of elementwise stages over one loop (same shape and layout), optionally
// fed by one reducescatter or allreduce and feeding one allgather (a fused
// collective, which code generation turns into a single kernel). The group
// must be connected and convex (no path leaves it and comes back, which
// would be a cycle between the kernel and the outside), and may grow an
// existing kernel only by containing all of it. A gather may start such a
// chain (no collective then): the kernel reads its data through its index
// where the group's stages read it, and the gather itself is never stored.
// Fusion changes no values.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

namespace coconet::passes {
namespace {

using ir::Stage;
using ir::StageKind;

bool isReducing(const Stage *s) {
  return s->kind == StageKind::AllReduce || s->kind == StageKind::ReduceScatter;
}

class FusePass : public DirectivePass {
public:
  using DirectivePass::DirectivePass;
  llvm::StringRef getName() const override { return "fuse"; }
  std::string describe() const override {
    std::string text = "fuse(";
    for (size_t i = 0; i < directive.args.size(); ++i)
      text += (i ? ", " : "") + directive.args[i];
    return text + ")";
  }

  LogicalResult run(ir::Program &program, DiagnosticEngine &diags) override {
    llvm::SmallVector<Stage *, 8> members;
    llvm::DenseSet<Stage *> group;
    llvm::DenseMap<Stage *, int> argOf;
    for (unsigned i = 0; i < directive.args.size(); ++i) {
      Stage *s = lookup(program, diags, i);
      if (!s)
        return failure();
      if (!group.insert(s).second) {
        refuse(diags, static_cast<int>(i), DiagId::ListedTwice, s->name);
        return failure();
      }
      argOf[s] = static_cast<int>(i);
      members.push_back(s);
    }
    llvm::sort(members, [](Stage *x, Stage *y) { return x->id < y->id; });

    // Kinds, and at most one collective of each role in its place.
    Stage *reducing = nullptr, *gather = nullptr;
    for (Stage *s : members) {
      int arg = argOf[s];
      bool fusable = s->kind == StageKind::Elementwise || isReducing(s) ||
                     s->kind == StageKind::AllGather ||
                     s->kind == StageKind::Gather;
      if (!fusable || (isCommunication(s->kind) && s->axis < 0 &&
                       program.mesh.size() > 1)) {
        refuse(diags, arg, DiagId::FuseNotFusable, s->name,
               fusable ? "a collective over every mesh axis" : describeKind(*s))
            .note(s->loc, DiagId::StageDefinedHere, s->name);
        return failure();
      }
      Stage *&slot = isReducing(s) ? reducing : gather;
      if (isCommunication(s->kind)) {
        if (slot) {
          refuse(diags, arg, DiagId::FuseTwoCollectives, slot->name, s->name,
                 isReducing(s) ? "reducescatter or allreduce" : "allgather");
          return failure();
        }
        slot = s;
      }
    }
    if (reducing && group.contains(reducing->operands[0])) {
      refuse(diags, argOf[reducing], DiagId::FuseCollectivePlace,
             reducing->name,
             "a reducescatter or allreduce must start the kernel, but it "
             "reads '" +
                 reducing->operands[0]->name + "' of the group");
      return failure();
    }
    if (gather)
      for (Stage *u : program.getUsers(gather))
        if (group.contains(u)) {
          refuse(diags, argOf[gather], DiagId::FuseCollectivePlace,
                 gather->name,
                 "an allgather must end the kernel, but '" + u->name +
                     "' of the group reads it");
          return failure();
        }

    for (Stage *s : members)
      if (s->kind == StageKind::Gather &&
          !checkGather(program, diags, s, group, argOf[s],
                       reducing ? reducing : gather))
        return failure();

    // One loop: the shape and layout each member computes over.
    auto loopType = [](const Stage *s) {
      return s->kind == StageKind::AllGather ? s->operands[0]->type : s->type;
    };
    auto loopText = [&](const Stage *s) {
      ir::TensorType t = loopType(s);
      return ir::shapeStr(t.shape) + " " + t.layout.str(program.mesh);
    };
    for (Stage *s : members) {
      ir::TensorType a = loopType(members[0]), b = loopType(s);
      if (a.shape != b.shape || a.layout != b.layout) {
        refuse(diags, argOf[s], DiagId::FuseShapes, s->name, loopText(s),
               members[0]->name, loopText(members[0]));
        return failure();
      }
    }

    // Connected through direct edges inside the group.
    llvm::DenseSet<Stage *> reached{members[0]};
    for (bool grew = true; grew;) {
      grew = false;
      for (Stage *s : members)
        for (Stage *o : s->operands)
          if (group.contains(o) &&
              (reached.contains(s) != reached.contains(o))) {
            reached.insert(s);
            reached.insert(o);
            grew = true;
          }
    }
    for (Stage *s : members)
      if (!reached.contains(s)) {
        refuse(diags, argOf[s], DiagId::FuseNotConnected, s->name);
        return failure();
      }

    // Convex: a stage outside that depends on a member must not feed one.
    llvm::DenseMap<Stage *, Stage *> origin; // outside stage -> member
    for (const auto &ptr : program.getStages()) {
      Stage *s = ptr.get();
      if (group.contains(s)) {
        for (Stage *o : s->operands)
          if (Stage *from = origin.lookup(o)) {
            refuse(diags, argOf[s], DiagId::FuseCycle, from->name, s->name,
                   o->name);
            return failure();
          }
        continue;
      }
      for (Stage *o : s->operands) {
        Stage *from = group.contains(o) ? o : origin.lookup(o);
        if (from) {
          origin[s] = from;
          break;
        }
      }
    }

    for (Stage *s : members)
      if (s->algorithm != ir::CollectiveAlgorithm::Auto) {
        refuse(diags, argOf[s], DiagId::FuseAlgorithm, s->name,
               ir::collectiveAlgorithmName(s->algorithm));
        return failure();
      }
    // Existing kernels are absorbed whole, or not at all.
    for (Stage *s : members)
      if (ir::Kernel *k = program.kernelOf(s)) {
        for (Stage *m : k->stages)
          if (!group.contains(m)) {
            refuse(diags, argOf[s], DiagId::FusePartial, s->name, m->name);
            return failure();
          }
      }
    llvm::erase_if(program.kernels, [&](const ir::Kernel &k) {
      return llvm::any_of(k.stages,
                          [&](Stage *m) { return group.contains(m); });
    });
    ir::Kernel kernel;
    kernel.stages = members;
    kernel.loc = directive.loc;
    program.kernels.push_back(std::move(kernel));
    llvm::sort(program.kernels, [](const ir::Kernel &x, const ir::Kernel &y) {
      return x.stages[0]->id < y.stages[0]->id;
    });
    return success();
  }

private:
  /// A gather starts the kernel, only the group reads it (the kernel never
  /// stores it), and the kernel holds no collective.
  bool checkGather(const ir::Program &program, DiagnosticEngine &diags,
                   Stage *s, const llvm::DenseSet<Stage *> &group, int arg,
                   Stage *collective) {
    auto fail = [&](const std::string &why) {
      refuse(diags, arg, DiagId::FuseGather, s->name, why)
          .note(s->loc, DiagId::StageDefinedHere, s->name);
      return false;
    };
    if (collective)
      return fail("a kernel that reads a gather through its index holds no "
                  "collective, but the group holds '" +
                  collective->name + "'");
    for (Stage *o : s->operands)
      if (group.contains(o))
        return fail("a gather must start the kernel, but it reads '" + o->name +
                    "' of the group");
    if (program.isResult(s))
      return fail("it is a result of the program, and the kernel never "
                  "stores a gather (it reads its data through its index)");
    // (A gather nothing reads is dead: no schedule names it.)
    for (Stage *u : program.getUsers(s))
      if (!group.contains(u))
        return fail("'" + u->name +
                    "' reads it outside the group, and the kernel never "
                    "stores a gather (it reads its data through its index)");
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createFusePass(Directive d, AppliedStack from) {
  return std::make_unique<FusePass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
