//===- Names.h - the generated code's own identifiers -----------*- C++ -*-===//
//
// Every identifier generated code declares itself starts with `cc_`, which
// no user name does (sema renames names the generated code uses: see
// lower/Names.cpp), so the two never clash. This header declares the
// scheme of the names that more than one emitter shares: the sizes as each
// scope sees them, and the names of an elementwise kernel's block (the
// operations of lower/KernelBody.h), which the one printer
// (ElementwiseCode.cpp) and every target's spelling of a block share.
// A name is one thing on every target.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_CODEGEN_NAMES_H
#define COCONET_CODEGEN_NAMES_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace coconet::codegen::names {

// --- Sizes -----------------------------------------------------------------

/// A size name inside create() (its `sizes` parameter), inside operator()
/// and the State's methods (the State's copy), and in the driver.
inline std::string createSize(llvm::StringRef name) {
  return "sizes." + name.str();
}
inline std::string stateSize(llvm::StringRef name) {
  return "cc_s.sizes." + name.str();
}
inline std::string driverSize(llvm::StringRef name) {
  return "cc_sizes." + name.str();
}

// --- A kernel --------------------------------------------------------------
//
// Inside a kernel (Kernels.cpp, ElementwiseCode.cpp, the targets' blocks):
//   cc_g               its geometry parameter (Geometry.cpp's fields)
//   cc_begin, cc_end   a ranged kernel's elements (an overlap's part)
//   cc_i, cc_j         an element's flat index; its lane in a block
//   cc_first           a block's first element (CPU: the tile's; CUDA: the
//                      thread's first vector or element, then grid-stride)
//   cc_tile, cc_len    a CPU tile's index and length (kTile at most)
//   cc_v, W            a CUDA vector's index and width (16 bytes)
//   cc_in<i>           input i's value at the element
//   cc_l<i>, cc_s<m>   input i's block and member m's block of results
//                      (a widened tile, a vector)
//   cc_u<n>, cc_e<n>   hoisted uniform values; a body's temporaries
// A fused kernel's team:
//   cc_t               CUDA: the team (cc_team); the CPU passes cc_team
//   cc_me, cc_members  this member and the team's size
//   cc_q               the member a loop stores into
//   cc_from, cc_to     the members' memory of the reducing collective's
//                      input and of the allgather's output;
//   cc_from_at, cc_to_at  where this kernel's elements are in them
//   cc_red             the reduced value (CPU: a tile; CUDA: an element)
//
// The names the one printer and the targets' block operations share:

/// This member, the team's size, and the member a loop stores into.
inline constexpr llvm::StringLiteral kMe = "cc_me";
inline constexpr llvm::StringLiteral kMembers = "cc_members";
inline constexpr llvm::StringLiteral kPeer = "cc_q";

} // namespace coconet::codegen::names

#endif // COCONET_CODEGEN_NAMES_H
