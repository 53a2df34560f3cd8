//===- LayoutRules.h - layout inference rules of the language --*- C++ -*-===//
//
// The layout rules of docs/language.md as pure functions, one per family of
// operations, applied axis by axis. Each returns the result layout, or
// nullopt with a hint that the caller turns into a located diagnostic.
// Layout dimensions always refer to the value's own dimensions. Sema infers
// layouts with them, passes build the stages they create with them, and
// the verifier checks every stage against them: one statement of the rules.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_IR_LAYOUTRULES_H
#define COCONET_IR_LAYOUTRULES_H

#include "ir/Program.h"

#include <optional>
#include <string>

namespace coconet::ir {

/// Renumbers sliced dimensions of a rank-`fromRank` value broadcast into a
/// rank-`toRank` result (trailing alignment).
Layout alignLayout(const Layout &layout, unsigned fromRank, unsigned toRank);

/// The elementwise join, axis by axis: R+X = X, L+L = L, S(d)+S(d) = S(d);
/// L+S and S(d)+S(e) are refused. Both layouts in result dimensions. A
/// dimension sliced over several axes in the result must be sliced in each
/// operand over a prefix (in mesh order) of those axes.
std::optional<Layout> joinLayouts(const Layout &a, const Layout &b,
                                  std::string &hint);

/// A reduction over all elements (dim < 0) or along `dim` of a rank-`rank`
/// value: slices of a reduced dimension become local partial values.
Layout reductionLayout(const Layout &in, unsigned rank, int dim);

/// matmul of a (rank ra, [..., M, K]) by b (rank rb, [K, N] or [..., K, N]);
/// result rank is ra.
std::optional<Layout> matmulLayout(const Layout &a, unsigned ra,
                                   const Layout &b, unsigned rb,
                                   std::string &hint);

/// Swaps dimensions a and b.
Layout transposeLayout(const Layout &in, int a, int b);

/// flatten (merging `dim` and `dim + 1` of a rank-`rank` value) or
/// unflatten (splitting `dim` in two): the elements keep their order, so a
/// rank's block is the same memory. A slice of `dim` stays on the outer
/// part, or goes to the inner one where the outer has size 1 (`outerIsOne`:
/// unflatten(x, 0, N) of an [N] is [1, N]); flatten of a sliced `dim + 1`
/// is refused unless `dim` has size 1 (the blocks would not be contiguous).
std::optional<Layout> reshapeLayout(const Layout &in, int dim, bool flatten,
                                    bool outerIsOne, std::string &hint);

/// topk and cumsum along `dim`: the input's layout; refused when `dim` is
/// sliced (each rank would see only its block of every row).
std::optional<Layout> alongLayout(const Layout &in, int dim, std::string &hint);

/// gather(x, index, dim) with an index of rank `indexRank` (x's leading
/// dimensions). Each rank reads whole blocks, so on every axis x and the
/// index are in the same state, or one is local and the other replicated
/// (local), or x is sliced along a dimension the index does not have and
/// the index is replicated; except where the index is sliced along `dim`
/// (each rank picks its own rows): x is local or replicated there and the
/// result sliced along `dim`. x sliced along `dim` is refused.
std::optional<Layout> gatherLayout(const Layout &x, const Layout &index,
                                   unsigned indexRank, int dim,
                                   std::string &hint);

/// scatter(into, index, x, dim): the source (x with its index, as for
/// gather) and `into` in the same state on every axis (as for gather),
/// except where the source is sliced along `dim` (each rank writes its own
/// rows into its copy): `into` is local or replicated there and the result
/// local. `into` sliced along `dim` is refused.
std::optional<Layout> scatterLayout(const Layout &into, const Layout &index,
                                    unsigned indexRank, const Layout &x,
                                    int dim, std::string &hint);

/// The result layout of a communication stage of `kind` over `axis` (-1:
/// every axis; an allgather over one axis of a dimension sliced over
/// several must gather the innermost), or nullopt with the requirement that
/// failed in `need`
/// ("a local or replicated input") and the offending state in `got`.
std::optional<Layout> communicationLayout(StageKind kind, const Layout &in,
                                          int axis, int dim, std::string &need,
                                          unsigned &badAxis);

} // namespace coconet::ir

#endif // COCONET_IR_LAYOUTRULES_H
