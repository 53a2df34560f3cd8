//===- ElementwiseCode.cpp - the one printer of elementwise kernel loops --===//
//
// An elementwise kernel's loops, for any target: for each block form the
// target runs it in (CPU: tiles, or tiles within rows; CUDA: vectors, then
// the elements of the tail), one loop over blocks whose body is the
// operations lower/KernelBody.h lists, in its order. The target spells
// each operation for a form; what a fused kernel reduces, stores and
// gathers, and in which order, is decided once, there, and its loop over
// the members a gathered block is stored into is printed once, here.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

namespace coconet::codegen {

using namespace lower;

void emitElementwiseBlocks(CodeWriter &w, const Target &t, const Plan &plan,
                           const Step &step, const ElementwiseKernel &k,
                           const UniformValues &uniform,
                           const FusedKernel *fused, bool ranged) {
  const KernelBody body =
      fused ? fusedKernelBody(plan, *fused->f) : kernelBody(k);
  const BlockContext c{plan, step, k, body, uniform, fused, ranged};
  for (ElementForm form : k.flat ? t.info.flatBlocks : t.info.otherBlocks) {
    t.openBlocks(w, form, c);
    for (const BlockOp &op : body.ops) {
      if (op.kind != BlockOp::Kind::StoreToPeers) {
        t.emitBlockOp(w, form, c, op);
        continue;
      }
      // Into every member's block, in member order.
      const std::string q = names::kPeer.str();
      w.open("for (int64_t " + q + " = 0; " + q + " < " + names::kMembers +
             "; ++" + q + ")");
      if (op.skipSelf)
        w.line("if (" + q + " == " + names::kMe + ")")
            .line("  continue; // this member's own block");
      t.emitBlockOp(w, form, c, op);
      w.close();
    }
    t.closeBlocks(w, form, c);
  }
}

} // namespace coconet::codegen
