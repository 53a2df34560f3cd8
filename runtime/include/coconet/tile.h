//===- tile.h - the CPU kernels' tile ---------------------------*- C++ -*-===//
//
// The elements of a tile of the CPU target's kernels: what a generated
// elementwise or fused kernel computes at a time (its f16/bf16 tensors
// widened into float arrays of this many elements, one `omp simd` loop
// over them; compiler/codegen/CpuTarget.cpp prints this constant) and the
// most elements the runtime's combineTile takes and its own combinations
// work on at a time (src/cpu/combine.cpp). A tile's arrays stay in the
// first-level cache.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_TILE_H
#define COCONET_RUNTIME_TILE_H

#include <cstdint>

namespace coconet::rt {

constexpr int64_t kTile = 512;

} // namespace coconet::rt

#endif // COCONET_RUNTIME_TILE_H
