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

/// Its geometry parameter; a ranged kernel's elements [begin, end).
inline constexpr llvm::StringLiteral kGeometry = "cc_g";
inline constexpr llvm::StringLiteral kBegin = "cc_begin", kEnd = "cc_end";
/// An element's flat index in the domain, and its lane in a block.
inline constexpr llvm::StringLiteral kIndex = "cc_i", kLane = "cc_j";
/// A block's first element (CPU: the tile's; CUDA: the thread's first
/// vector or element), and a CPU tile's index and length.
inline constexpr llvm::StringLiteral kFirst = "cc_first";
inline constexpr llvm::StringLiteral kTileIndex = "cc_tile", kLength = "cc_len";
/// A CUDA block's vector index.
inline constexpr llvm::StringLiteral kVectorIndex = "cc_v";

/// Input `i`'s element value, and its block (a widened tile, a vector).
inline std::string inputValue(unsigned i) { return "cc_in" + std::to_string(i); }
inline std::string inputBlock(unsigned i) { return "cc_l" + std::to_string(i); }
/// Member `m`'s block of results (a tile, a vector).
inline std::string memberBlock(unsigned m) { return "cc_s" + std::to_string(m); }

// --- A fused kernel's team ----------------------------------------------

/// This member, the team's size, and the member a loop stores into.
inline constexpr llvm::StringLiteral kMe = "cc_me", kMembers = "cc_members",
                                     kPeer = "cc_q";
/// The members' memory of the reducing collective's input and of the
/// allgather's output, and where this kernel's elements are in them.
inline constexpr llvm::StringLiteral kFrom = "cc_from", kTo = "cc_to";
inline constexpr llvm::StringLiteral kFromAt = "cc_from_at",
                                     kToAt = "cc_to_at";
/// The reduced value (CPU: the reduced tile; CUDA: the element).
inline constexpr llvm::StringLiteral kReduced = "cc_red";

} // namespace coconet::codegen::names

#endif // COCONET_CODEGEN_NAMES_H
