//===- algorithm_check.h - checking an algorithm table ----------*- C++ -*-===//
//
// The check every runtime makes of an algorithm table (coconet/algorithm.h)
// before it sends anything: the table on its own (ranks, chunks, steps,
// every transfer's chunk and ranks in range, no transfer to its own
// source, no reduction in an AllGather or AllToAll) and against a
// communicator's size. What the steps do was checked by the compiler's
// verifier when `coconetc synth` wrote the table.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_ALGORITHM_CHECK_H
#define COCONET_RUNTIME_ALGORITHM_CHECK_H

#include "coconet/algorithm.h"
#include "coconet/status.h"
#include "coconet/types.h"

#include <cstdint>

namespace coconet::rt::algorithm {

/// InvalidArgument naming `caller` and what is wrong, or success.
Status check(const Table &table, int worldSize, const char *caller);

/// The arguments of a run: a chunk size that is not negative and, for a
/// reduction, an operator the runtimes offer (not avg: its division would
/// need a step the algorithm does not have; bool has no sum or product).
Status checkRun(const Table &table, int64_t chunkElements, DType dtype,
                ReduceOp op, const char *caller);
/// What a generated program checks when it is created, for a collective
/// it runs with `table` among `members` ranks, `count` elements of this
/// rank's input: check() and checkRun(), and that the input cuts into
/// inputChunks(table) chunks; `*chunkElements` their size.
Status checkCall(const Table &table, int64_t members, int64_t count,
                 DType dtype, ReduceOp op, const char *caller,
                 int64_t *chunkElements);

} // namespace coconet::rt::algorithm

#endif // COCONET_RUNTIME_ALGORITHM_CHECK_H
