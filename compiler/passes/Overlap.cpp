//===- Overlap.cpp - a matmul overlapped with a collective ----------------===//
//
// `overlap(producer, consumer) chunks K`: the producer (a matmul) and the
// collective that reads its result (allreduce, reducescatter, allgather or
// alltoall) run concurrently in K chunks, so communication of chunk c
// overlaps the computation of chunk c + 1. The other way round, the
// producer may be an alltoall and the consumer the matmul that reads it
// (a mixture-of-experts dispatch): part c + 1 arrives while the matmul
// computes part c, chunked along the dimension the alltoall scatters.
// Dropless, a grouped matmul and the alltoallv that feeds it or reads it
// overlap alike, in parts of the groups (experts) each member holds: part
// c is the row segments of groups [c G/K, (c + 1) G/K) of every block. The
// chunked dimension is the one the collective distributes (the scattered or
// gathered dimension: for an alltoall the one it gathers, the experts of a
// mixture-of-experts layer; dimension 0 for an allreduce), and each rank's
// block of it is cut into K parts, so the size must be a multiple of K (times
// the ranks of the axis for a reducescatter, allgather or alltoall): refused
// here when the size is a constant, checked by the simulator and the generated
// code otherwise. Every element is still computed and reduced exactly as
// before: no values change.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::passes {
namespace {

using ir::Stage;
using ir::StageKind;

class OverlapPass : public DirectivePass {
public:
  using DirectivePass::DirectivePass;
  llvm::StringRef getName() const override { return "overlap"; }
  std::string describe() const override {
    return "overlap(" + directive.args[0] + ", " + directive.args[1] +
           ") chunks " + std::to_string(directive.chunks);
  }

  LogicalResult run(ir::Program &program, DiagnosticEngine &diags) override {
    Stage *producer = lookup(program, diags, 0);
    if (!producer)
      return failure();
    Stage *consumer = lookup(program, diags, 1);
    if (!consumer)
      return failure();
    // An alltoall whose result a matmul reads (a mixture-of-experts
    // dispatch) overlaps the other way round: the matmul computes each part
    // as soon as it has arrived; dropless, an alltoallv's rows and the
    // grouped matmul that reads them.
    const bool rowsV =
        producer->kind == StageKind::AllToAllV && !producer->countsResult;
    const bool dispatch = producer->kind == StageKind::AllToAll || rowsV;
    const bool grouped = producer->kind == StageKind::GroupedMatMul;
    if (producer->kind != StageKind::MatMul && !dispatch && !grouped) {
      refuse(diags, 0, DiagId::OverlapProducer, producer->name,
             describeKind(*producer))
          .note(producer->loc, DiagId::StageDefinedHere, producer->name);
      return failure();
    }
    const bool collective = consumer->kind == StageKind::AllReduce ||
                            consumer->kind == StageKind::ReduceScatter ||
                            consumer->kind == StageKind::AllGather ||
                            consumer->kind == StageKind::AllToAll;
    if (dispatch) {
      const StageKind reader =
          rowsV ? StageKind::GroupedMatMul : StageKind::MatMul;
      if (consumer->kind != reader) {
        refuse(diags, 1, DiagId::OverlapDispatchConsumer, consumer->name,
               describeKind(*consumer), rowsV ? "alltoallv" : "alltoall",
               rowsV ? "grouped matmul" : "matmul")
            .note(consumer->loc, DiagId::StageDefinedHere, consumer->name);
        return failure();
      }
    } else if (grouped ? !(consumer->kind == StageKind::AllToAllV &&
                           !consumer->countsResult)
                       : !collective) {
      refuse(diags, 1,
             grouped ? DiagId::OverlapGroupedConsumer : DiagId::OverlapConsumer,
             consumer->name, describeKind(*consumer))
          .note(consumer->loc, DiagId::StageDefinedHere, consumer->name);
      return failure();
    }
    if (!llvm::is_contained(consumer->operands, producer)) {
      refuse(diags, 1, DiagId::OverlapNotConsumer, producer->name,
             consumer->name);
      return failure();
    }
    Stage *collectiveStage = dispatch ? producer : consumer;
    if (collectiveStage->algorithm != ir::CollectiveAlgorithm::Auto) {
      refuse(diags, dispatch ? 0 : 1, DiagId::OverlapAlgorithm,
             collectiveStage->name,
             ir::collectiveAlgorithmName(collectiveStage->algorithm));
      return failure();
    }
    for (const ir::Overlap &o : program.overlaps) {
      if (o.producer == producer || o.consumer == consumer) {
        Stage *taken = o.producer == producer ? producer : consumer;
        refuse(diags, o.producer == producer ? 0 : 1, DiagId::OverlapTwice,
               taken->name,
               o.producer == producer ? o.consumer->name : o.producer->name);
        return failure();
      }
    }
    // Dropless: the parts are groups of the experts each member holds (E /
    // P of the alltoallv's counts [P, E]), row segments along dimension 1.
    if (rowsV || grouped) {
      Stage *v = rowsV ? producer : consumer;
      const Stage *counts = v->operands[1];
      const ir::Dim &experts = counts->type.shape[1];
      if (experts.isConstant() &&
          experts.coefficient() % directive.chunks != 0) {
        refuse(diags, -1, DiagId::OverlapIndivisible, counts->name,
               directive.chunks, 1, experts.str());
        return failure();
      }
      return record(program, producer, consumer, 1);
    }
    int dim = 0;
    if (dispatch) {
      dim = producer->dim; // the experts it hands out
    } else if (consumer->kind == StageKind::ReduceScatter) {
      dim = consumer->dim;
    } else if (consumer->kind == StageKind::AllGather ||
               consumer->kind == StageKind::AllToAll) {
      int axis = consumer->axis < 0 ? 0 : consumer->axis;
      dim = producer->type.layout[axis].dim;
    }
    const ir::Dim &size = producer->type.shape[dim];
    if (size.isConstant() && size.coefficient() % directive.chunks != 0) {
      refuse(diags, -1, DiagId::OverlapIndivisible, producer->name,
             directive.chunks, dim, size.str());
      return failure();
    }
    return record(program, producer, consumer, dim);
  }

private:
  LogicalResult record(ir::Program &program, Stage *producer, Stage *consumer,
                       int dim) {
    ir::Overlap o;
    o.producer = producer;
    o.consumer = consumer;
    o.chunks = directive.chunks;
    o.dim = dim;
    o.loc = directive.loc;
    program.overlaps.push_back(o);
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createOverlapPass(Directive d, AppliedStack from) {
  return std::make_unique<OverlapPass>(std::move(d), std::move(from));
}

} // namespace coconet::passes
