//===- Inputs.h - the simulator's parameters --------------------*- C++ -*-===//
//
// Every parameter is a block of one *assembled* tensor:
//   - a value replicated or sliced on every axis has the global tensor as
//     its assembled form;
//   - a value local on some axes has different contents per group of ranks
//     that share coordinates on those axes; its assembled form stacks the
//     global tensors of all ranks: shape [ranks, global shape...], where
//     entry r is what rank r's local group sees.
// .npy input files hold the assembled form.
//
// Generated inputs are a pure function of (seed, parameter index, local
// group, global element index), using support::uniformInput with stream
// (parameter index << 32) | local group, where the local group is the
// row-major index of the rank's coordinates on the axes where the value is
// local. With u = uniformInput(...) in [-1, 1):
//   f16/bf16/f32/f64 tensors   u rounded to the element type
//   i32/i64/u64 tensors        floor((u + 1) * 8)  (0 .. 15)
//   bool tensors               u >= 0
//   float scalars              0.05 + 0.45 * (u + 1)   (0.05 .. 0.95), rounded
//   i32/i64 scalars            1 + floor((u + 1) * 4)   (1 .. 8)
//   u64 scalars                uniformInputBits(...)    (any 64-bit value)
//   bool scalars               u >= 0
// So replicated inputs are equal on all ranks and sliced inputs are blocks
// of one global tensor.
//
// InputKind::Wide (--inputs=wide) draws float tensors so that the order in
// which a sum adds its terms changes its bits (24-bit values in [-1, 1)
// add exactly in f64 in any order, so they cannot show it). With
// b = uniformInputBits(...) (words 1 and 2, independent of u) and the sign
// s = -1 if b & 4, else +1:
//   f32/bf16/f64 tensors, b & 3 == 0   s * 2^54 (a quarter of them): the
//                                      sum of 2^54, -2^54 and 0.3 is 0.3
//                                      or 0 depending on the order
//   f64 tensors, otherwise             s * (1 + (b >> 12) * 2^-52): all 53
//                                      bits random, in [1, 2)
//   f32/bf16 tensors, otherwise        u, rounded
//   f16 tensors                        u, rounded (no order of a few f16
//                                      terms changes an f64 sum, and 2^54
//                                      is no f16)
// Every other parameter (integers, bools, scalars) as above. The generated
// drivers' --inputs=wide draws the same values (runtime/src/driver/
// inputs.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SIM_INPUTS_H
#define COCONET_SIM_INPUTS_H

#include "ir/Program.h"
#include "sim/Simulator.h"
#include "sim/Tensor.h"

#include "llvm/Support/Error.h"

namespace coconet::sim {

/// The local group of `coords` for a value of `layout`.
int64_t localGroup(const ir::Layout &layout, const RankGrid &grid,
                   llvm::ArrayRef<int64_t> coords);

/// The generated global tensor of `param` for local group `group`.
Tensor generateInput(const ir::Stage &param,
                     llvm::ArrayRef<int64_t> globalShape, uint64_t seed,
                     int64_t group, InputKind kind = InputKind::Uniform);

/// Parses a scalar parameter's value given as text.
llvm::Expected<Tensor> parseScalar(const ir::Stage &param,
                                   llvm::StringRef text);

/// Converts a .npy file's array to `dtype` and checks its shape.
llvm::Expected<Tensor> readInputFile(const ir::Stage &param,
                                     llvm::ArrayRef<int64_t> assembledShape,
                                     llvm::StringRef path);

/// Copies the block described by `placement` out of a global tensor.
Tensor extractBlock(const Tensor &global, const Placement &placement);

} // namespace coconet::sim

#endif // COCONET_SIM_INPUTS_H
