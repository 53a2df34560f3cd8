//===- Algorithm.cpp - how collectives move their data --------------------===//
//
// `algorithm(s1, ..., sn, NAME)` records that the collectives s1..sn move
// their data with algorithm NAME: `library` (the communication library's
// own collectives: MPI's on the CPU target, NCCL's on CUDA), `oneshot`
// (every member reads every other member's whole input from memory they
// share, and combines; allreduce, reducescatter, allgather, alltoall,
// alltoallv on the CPU target) or
// `twoshot`
// (a one-shot reducescatter, then a one-shot allgather; allreduce). Every
// algorithm combines the members in ascending order, as the simulator
// does, so no value changes. A collective in a fused kernel moves its data
// with the kernel, and an overlapped one moves its parts with the
// library's collectives: both are refused. `split` passes the choice on
// (a one- or two-shot allreduce becomes a one-shot reducescatter and
// allgather).
//
// `algorithm(s1, ..., sn, "file.alg")` runs them with the algorithm in an
// algorithm file (ir/AlgorithmTable.h), which sema has read and checked:
// each collective must be the algorithm's (an allgather for an AllGather
// algorithm, ...), over one axis (or a one-axis mesh), and combine by an
// operator the algorithm can apply two values at a time (not avg, not a
// float product, not a boolean sum or product). Its ranks must be the
// axis's size and its chunks must divide the data: both known only once
// the sizes are bound, so the simulator and the generated program check
// them. A reduction
// combines in the algorithm's order, not the members' (a float sum is
// recorded as a reassociation, verify/Differential.h); a gather or an
// all-to-all moves values and changes none.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/AlgorithmTable.h"

#include "llvm/ADT/DenseSet.h"

namespace coconet::passes {
namespace {

using ir::Stage;

class AlgorithmPass : public DirectivePass {
public:
  using DirectivePass::DirectivePass;
  llvm::StringRef getName() const override { return "algorithm"; }
  std::string describe() const override {
    std::string text = "algorithm(";
    for (size_t i = 0; i < directive.args.size(); ++i)
      text += (i ? ", " : "") + directive.args[i];
    return text + ")";
  }

  LogicalResult run(ir::Program &program, DiagnosticEngine &diags) override {
    // The checker made sure the last argument is an algorithm's name, or
    // read the file it names.
    const unsigned last = static_cast<unsigned>(directive.args.size()) - 1;
    const ir::AlgorithmTable *table = directive.table.get();
    const ir::CollectiveAlgorithm algorithm =
        table ? ir::CollectiveAlgorithm::Synthesized
              : ir::parseCollectiveAlgorithm(directive.args[last])
                    .value_or(ir::CollectiveAlgorithm::Library);
    llvm::SmallVector<Stage *, 4> stages;
    llvm::DenseSet<Stage *> seen;
    for (unsigned i = 0; i < last; ++i) {
      Stage *s = lookup(program, diags, i);
      if (!s)
        return failure();
      if (!seen.insert(s).second) {
        refuse(diags, static_cast<int>(i), DiagId::ListedTwice, s->name);
        return failure();
      }
      if (!ir::isCommunication(s->kind)) {
        refuse(diags, static_cast<int>(i), DiagId::AlgorithmNotCollective,
               s->name, describeKind(*s))
            .note(s->loc, DiagId::StageDefinedHere, s->name);
        return failure();
      }
      if (!ir::algorithmImplements(algorithm, s->kind)) {
        refuse(diags, static_cast<int>(i), DiagId::AlgorithmUnsupported,
               s->name, describeKind(*s),
               ir::collectiveAlgorithmName(algorithm),
               algorithm == ir::CollectiveAlgorithm::TwoShot
                   ? "two-shot is an allreduce (a one-shot reducescatter, "
                     "then a one-shot allgather)"
                   : "one-shot implements allreduce, reducescatter, "
                     "allgather, alltoall and alltoallv");
        return failure();
      }
      if (table) {
        if (std::string why = refuseTable(*table, *s); !why.empty()) {
          refuse(diags, static_cast<int>(i), DiagId::AlgorithmUnsupported,
                 s->name, describeKind(*s), "'" + table->file + "'", why);
          return failure();
        }
      }
      if (algorithm != ir::CollectiveAlgorithm::Library && s->axis < 0 &&
          program.mesh.size() > 1) {
        refuse(diags, static_cast<int>(i), DiagId::AlgorithmUnsupported,
               s->name, describeKind(*s),
               table ? "'" + table->file + "'"
                     : ir::collectiveAlgorithmName(algorithm).str(),
               table ? "it runs over every axis of the mesh; an algorithm "
                       "file's ranks are the members of one axis"
                     : "it runs over every axis of the mesh; one- and "
                       "two-shot algorithms run over one");
        return failure();
      }
      if (program.kernelOf(s)) {
        refuse(diags, static_cast<int>(i), DiagId::AlgorithmFused, s->name);
        return failure();
      }
      for (const ir::Overlap &o : program.overlaps)
        if (o.consumer == s || o.producer == s) {
          refuse(diags, static_cast<int>(i), DiagId::AlgorithmOverlapped,
                 s->name, (o.consumer == s ? o.producer : o.consumer)->name);
          return failure();
        }
      stages.push_back(s);
    }
    for (Stage *s : stages) {
      s->algorithm = algorithm;
      s->table = table ? directive.table : nullptr;
      // A float sum combined in the algorithm's order, rounded at each of
      // its combines (two members always meet in one rounding: exact).
      if (table && table->ranks > 2 && s->reduceOp == ir::ReduceOp::Sum &&
          ir::isFloat(s->type.dtype) &&
          (s->kind == ir::StageKind::AllReduce ||
           s->kind == ir::StageKind::ReduceScatter)) {
        program.reassociatedCollectives.push_back(s->valueName().str());
        program.reassociations.push_back(
            "'" + s->valueName().str() +
            "' (sum) adds in the order of the "
            "algorithm in '" +
            table->file + "', rounding to " +
            ir::dtypeName(s->type.dtype).str() + " at each of its " +
            std::to_string(table->ranks - 1) + " combines");
      }
    }
    return success();
  }

private:
  /// Why `table` cannot run collective `s`, or "".
  static std::string refuseTable(const ir::AlgorithmTable &table,
                                 const Stage &s) {
    if (ir::stageKindOf(table.collective) != s.kind) {
      const std::string kind =
          ir::stageKindName(ir::stageKindOf(table.collective)).str();
      return "the algorithm '" + table.name + "' is " +
             (kind.front() == 'a' ? "an " : "a ") + kind;
    }
    const bool reducing = s.kind == ir::StageKind::AllReduce ||
                          s.kind == ir::StageKind::ReduceScatter;
    if (reducing && s.reduceOp == ir::ReduceOp::Avg)
      return "an algorithm combines two values at a time; avg needs a "
             "division by the member count that it does not have";
    if (reducing && s.reduceOp == ir::ReduceOp::Prod &&
        ir::isFloat(s.type.dtype))
      return "a float product in the algorithm's order would need another "
             "bound than a sum's (as for hierarchical)";
    if (reducing && s.type.dtype == ir::DType::Bool &&
        (s.reduceOp == ir::ReduceOp::Sum || s.reduceOp == ir::ReduceOp::Prod))
      return "a boolean sum or product is a count, which an algorithm "
             "cannot hold in a boolean between its combines";
    return "";
  }
};

} // namespace

std::unique_ptr<Pass> createAlgorithmPass(Directive d, AppliedStack from) {
  return std::make_unique<AlgorithmPass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
