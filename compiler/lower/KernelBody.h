//===- KernelBody.h - an elementwise kernel's body as data ------*- C++ -*-===//
//
// What one block of an elementwise kernel does, in order, whatever a block
// is on the target that prints it (a tile of elements, a vector, one
// element): the structured form of the kernel's body that one printer
// (codegen/ElementwiseCode.cpp) walks for every target, the target spelling
// each operation for each of its block forms. A fused collective's kernel
// is an elementwise kernel with more operations: the reduced block
// combined from every member's memory, the gathered block stored into every
// member's. Its semantics are here once; no target decides them.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_LOWER_KERNELBODY_H
#define COCONET_LOWER_KERNELBODY_H

#include "lower/Plan.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

namespace coconet::lower {

/// A value a block of the kernel holds.
struct BlockValue {
  enum class Kind {
    Reduced, ///< the reducing collective's result: every member's block
             ///< combined in the members' order
    Input,   ///< input `index` of the kernel
    Member,  ///< the value member `index` computes
  };
  Kind kind = Kind::Input;
  unsigned index = 0;
  bool operator==(const BlockValue &) const = default;
};

/// One operation on a block.
struct BlockOp {
  enum class Kind {
    TeamReduce,   ///< `value` (Reduced) combined from every member's block
                  ///< of the reducing collective's input
    Load,         ///< `value`'s (an input's) block read
    Compute,      ///< every member's element body, over the block's elements
    Store,        ///< `value` into `buffer` (this rank's) at the block
    StoreToPeers, ///< `value` into every member's block of `buffer` (the
                  ///< gathered output), but this member's own where
                  ///< `skipSelf` (a view of it: the value's own Store)
  };
  Kind kind = Kind::Compute;
  BlockValue value;
  unsigned buffer = 0;
  bool skipSelf = false;
};

/// The operations of one block of elementwise kernel `k`, extended by the
/// fused kernel `fused` (when it is one; `reducedOutput`/`gatheredOutput`
/// are its reducing collective's output and its allgather's output).
struct KernelBody {
  llvm::SmallVector<BlockOp, 12> ops;

  /// Is `value` stored into this rank's memory (a Store of it)?
  bool stored(BlockValue value) const;
  /// Is `value` stored into the peers' memory?
  bool storedToPeers(BlockValue value) const;
};

KernelBody kernelBody(const ElementwiseKernel &k,
                      const FusedKernelPlan *fused = nullptr,
                      std::optional<unsigned> reducedOutput = std::nullopt,
                      std::optional<unsigned> gatheredOutput = std::nullopt);

/// The body of fused collective `f`'s one kernel (f.oneKernel).
KernelBody fusedKernelBody(const Plan &plan, const FusedCollective &f);

/// "reduce; store reduced -> b3; load in0; compute; store m0 -> b2; ..."
/// (for tests and debugging).
void print(llvm::raw_ostream &os, const KernelBody &body);

} // namespace coconet::lower

#endif // COCONET_LOWER_KERNELBODY_H
