//===- KernelBody.cpp - the operations of an elementwise kernel's block ---===//
//
// The order is the kernel's semantics: the reduced block first (stored and
// gathered as it is, where the plan says so), then the inputs, then the
// members computed, then their stores, the gathered member's last (into its
// own buffer where the plan keeps it, then into every member's block of the
// gathered output). Every input is read before any output is stored, so an
// update may overwrite the parameter it reads.
//
//===----------------------------------------------------------------------===//

#include "lower/KernelBody.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace coconet::lower {

KernelBody kernelBody(const ElementwiseKernel &k, const FusedKernelPlan *fused,
                      std::optional<unsigned> reducedOutput,
                      std::optional<unsigned> gatheredOutput) {
  KernelBody body;
  auto add = [&](BlockOp::Kind kind, BlockValue value, unsigned buffer = 0,
                 bool skipSelf = false) {
    BlockOp op;
    op.kind = kind;
    op.value = value;
    op.buffer = buffer;
    op.skipSelf = skipSelf;
    body.ops.push_back(op);
  };
  const BlockValue reduced{BlockValue::Kind::Reduced, 0};
  if (fused && reducedOutput &&
      (fused->reducedInput || fused->storeReduced || fused->gatherReduced)) {
    add(BlockOp::Kind::TeamReduce, reduced, *reducedOutput);
    if (fused->storeReduced)
      add(BlockOp::Kind::Store, reduced, *reducedOutput);
    if (fused->gatherReduced && gatheredOutput)
      add(BlockOp::Kind::StoreToPeers, reduced, *gatheredOutput,
          fused->selfInView);
  }
  for (unsigned i = 0; i < k.inputs.size(); ++i)
    if (!k.inputs[i].isScalar())
      add(BlockOp::Kind::Load, {BlockValue::Kind::Input, i});
  add(BlockOp::Kind::Compute, {});
  const std::optional<unsigned> gathered =
      fused && gatheredOutput ? fused->gatheredMember : std::nullopt;
  for (unsigned m = 0; m < k.members.size(); ++m)
    if (k.members[m].output && gathered != m)
      add(BlockOp::Kind::Store, {BlockValue::Kind::Member, m},
          *k.members[m].output);
  if (gathered) {
    const BlockValue member{BlockValue::Kind::Member, *gathered};
    if (fused->storeGatheredLocally)
      add(BlockOp::Kind::Store, member, *k.members[*gathered].output);
    add(BlockOp::Kind::StoreToPeers, member, *gatheredOutput,
        fused->selfInView);
  }
  return body;
}

KernelBody fusedKernelBody(const Plan &plan, const FusedCollective &f) {
  const FusedKernelPlan &k = *f.oneKernel;
  auto output = [&](std::optional<unsigned> step) -> std::optional<unsigned> {
    if (!step)
      return std::nullopt;
    return std::get<CollectiveCall>(plan.steps[*step].body).output;
  };
  return kernelBody(k.kernel(), &k, output(f.reducing), output(f.gather));
}

bool KernelBody::stored(BlockValue value) const {
  return llvm::any_of(ops, [&](const BlockOp &op) {
    return op.kind == BlockOp::Kind::Store && op.value == value;
  });
}

bool KernelBody::storedToPeers(BlockValue value) const {
  return llvm::any_of(ops, [&](const BlockOp &op) {
    return op.kind == BlockOp::Kind::StoreToPeers && op.value == value;
  });
}

namespace {

void printValue(llvm::raw_ostream &os, BlockValue v) {
  switch (v.kind) {
  case BlockValue::Kind::Reduced:
    os << "reduced";
    return;
  case BlockValue::Kind::Input:
    os << "in" << v.index;
    return;
  case BlockValue::Kind::Member:
    os << "m" << v.index;
    return;
  }
}

} // namespace

void print(llvm::raw_ostream &os, const KernelBody &body) {
  llvm::ListSeparator sep("; ");
  for (const BlockOp &op : body.ops) {
    os << sep;
    switch (op.kind) {
    case BlockOp::Kind::TeamReduce:
      os << "team-reduce";
      break;
    case BlockOp::Kind::Load:
      os << "load ";
      printValue(os, op.value);
      break;
    case BlockOp::Kind::Compute:
      os << "compute";
      break;
    case BlockOp::Kind::Store:
      os << "store ";
      printValue(os, op.value);
      os << " -> b" << op.buffer;
      break;
    case BlockOp::Kind::StoreToPeers:
      os << "store ";
      printValue(os, op.value);
      os << " -> every member's b" << op.buffer
         << (op.skipSelf ? " but its own" : "");
      break;
    }
  }
}

} // namespace coconet::lower
