//===- NarrowReductions.cpp - reductions read the narrow value ------------===//
//
// A reduction of an exact widening cast — `norm(f32(g))` of an f16 or bf16
// g, or an f64 cast of an f32 — reads g itself: every term is the same
// value (a reduction holds its terms in f64), so its result does not
// change by a bit, and the cast needs no memory when nothing else reads it
// outside a kernel (AdamW with gradient clipping reads the f16 gradients
// for the norm, then again in its one fused pass, instead of writing and
// reading an f32 copy; a `fuse` of the cast with the clipping that depends
// on the norm is no cycle). The result keeps its type.
//
//===----------------------------------------------------------------------===//

#include "ir/Program.h"

namespace coconet::ir {
namespace {

/// Does every value of `from` convert to `to` exactly?
bool widensExactly(DType from, DType to) {
  switch (from) {
  case DType::F16:
  case DType::BF16:
    return to == DType::F32 || to == DType::F64;
  case DType::F32:
    return to == DType::F64;
  case DType::F64:
  case DType::I32:
  case DType::I64:
  case DType::U64:
  case DType::Bool:
    return false;
  }
  return false;
}

} // namespace

void narrowReductions(Program &program) {
  for (const auto &s : program.getStages()) {
    if (s->kind != StageKind::Reduction)
      continue;
    const Stage *x = s->operands[0];
    if (x->kind != StageKind::Elementwise || !x->body ||
        x->body->op != ScalarOp::Cast ||
        x->body->args[0]->op != ScalarOp::Operand)
      continue;
    Stage *from = x->operands[x->body->args[0]->operandIndex];
    // The same elements where they are: no broadcast, no other layout.
    if (!widensExactly(from->type.dtype, x->type.dtype) ||
        from->type.shape != x->type.shape ||
        from->type.layout != x->type.layout ||
        from->type.segments != x->type.segments)
      continue;
    s->operands[0] = from;
  }
}

} // namespace coconet::ir
