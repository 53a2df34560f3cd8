//===- reduce_pieces.h - what one reduction step reduces --------*- C++ -*-===//
//
// A reduction step of a generated program computes one value per piece:
// per segment of a table (the part of the segment in this rank's block),
// per output of a reduction along a dimension, or one for the whole block.
// Its pieces and their blocks of terms (coconet/reduce_order.h) are known
// once the program object is created; both targets' Reducer keeps them.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_REDUCE_PIECES_H
#define COCONET_RUNTIME_REDUCE_PIECES_H

#include "coconet/status.h"

#include <cstdint>
#include <vector>

namespace coconet::rt {

/// What a reduction computes (the compiler's ir::ReductionKind).
enum class ReductionKind { Sum, Max, Min, Norm, SumSquares };

/// Piece s holds the terms at begin[s] + k * stride of the input, k <
/// length[s], in that order; its blocks of terms are firstBlock[s] ..
/// firstBlock[s + 1] - 1 of all pieces' blocks.
struct ReductionPieces {
  std::vector<int64_t> begin, length, firstBlock{0};
  int64_t stride = 1;

  int64_t pieces() const { return static_cast<int64_t>(begin.size()); }
  int64_t blocks() const { return firstBlock.back(); }

  /// Per segment of a flat tensor whose segment s is [ends[s - 1],
  /// ends[s]) (ends[-1] = 0; ends == nullptr: one segment holding the whole
  /// input), of which the input holds elements [offset, offset + count):
  /// each segment's part there, from its own first element (none where
  /// the segment lies outside). `what` names the reduction in errors.
  static Status ofSegments(const int64_t *ends, int64_t segments, int64_t count,
                           int64_t offset, const char *what,
                           ReductionPieces *out);
  /// Along a dimension: the input is [outer, reduced, inner]; output o *
  /// inner + i reduces input[o, :, i].
  static Status along(int64_t outer, int64_t reduced, int64_t inner,
                      const char *what, ReductionPieces *out);
};

} // namespace coconet::rt

#endif // COCONET_RUNTIME_REDUCE_PIECES_H
