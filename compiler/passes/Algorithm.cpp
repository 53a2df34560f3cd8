//===- Algorithm.cpp - how collectives move their data --------------------===//
//
// `algorithm(s1, ..., sn, NAME)` records that the collectives s1..sn move
// their data with algorithm NAME: `library` (the communication library's
// own collectives: MPI's on the CPU target, NCCL's on CUDA), `oneshot`
// (every member reads every other member's whole input from memory they
// share, and combines; allreduce, reducescatter, allgather, alltoall) or
// `twoshot`
// (a one-shot reducescatter, then a one-shot allgather; allreduce). Every
// algorithm combines the members in ascending order, as the simulator
// does, so no value changes. A collective in a fused kernel moves its data
// with the kernel, and an overlapped one moves its parts with the
// library's collectives: both are refused. `split` passes the choice on
// (a one- or two-shot allreduce becomes a one-shot reducescatter and
// allgather).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

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
    // The checker made sure the last argument is an algorithm's name.
    const unsigned last = static_cast<unsigned>(directive.args.size()) - 1;
    const ir::CollectiveAlgorithm algorithm =
        ir::parseCollectiveAlgorithm(directive.args[last])
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
                     "allgather and alltoall");
        return failure();
      }
      if (algorithm != ir::CollectiveAlgorithm::Library && s->axis < 0 &&
          program.mesh.size() > 1) {
        refuse(diags, static_cast<int>(i), DiagId::AlgorithmUnsupported,
               s->name, describeKind(*s),
               ir::collectiveAlgorithmName(algorithm),
               "it runs over every axis of the mesh; one- and two-shot "
               "algorithms run over one");
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
    for (Stage *s : stages)
      s->algorithm = algorithm;
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createAlgorithmPass(Directive d, AppliedStack from) {
  return std::make_unique<AlgorithmPass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
