//===- Passes.h - constructors of every pass --------------------*- C++ -*-===//
//
// One pass per file; docs/schedules.md describes each transformation's rule
// and why it preserves meaning.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_PASSES_PASSES_H
#define COCONET_PASSES_PASSES_H

#include "ir/Describe.h"
#include "passes/Pass.h"

#include <memory>

namespace coconet::passes {

using Directive = ir::Schedule::Directive;
using AppliedStack = llvm::SmallVector<AppliedFrom, 2>;

// Schedule transformations (one per directive).
std::unique_ptr<Pass> createSplitPass(Directive d, AppliedStack from);
std::unique_ptr<Pass> createHierarchicalPass(Directive d, AppliedStack from);
std::unique_ptr<Pass> createReorderPass(Directive d, AppliedStack from);
std::unique_ptr<Pass> createShardPass(Directive d, AppliedStack from);
std::unique_ptr<Pass> createFusePass(Directive d, AppliedStack from);
std::unique_ptr<Pass> createOverlapPass(Directive d, AppliedStack from);
std::unique_ptr<Pass> createAlgorithmPass(Directive d, AppliedStack from);

// Cleanups.
std::unique_ptr<Pass> createConstantFoldingPass();
std::unique_ptr<Pass> createCommonSubexpressionEliminationPass();
std::unique_ptr<Pass> createDeadStageEliminationPass();

/// "a reducescatter", "an elementwise stage", "a parameter", ...
using ir::describeKind;

} // namespace coconet::passes

#endif // COCONET_PASSES_PASSES_H
