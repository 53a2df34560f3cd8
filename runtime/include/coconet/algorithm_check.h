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

namespace coconet::rt::algorithm {

/// InvalidArgument naming `caller` and what is wrong, or success.
Status check(const Table &table, int worldSize, const char *caller);

} // namespace coconet::rt::algorithm

#endif // COCONET_RUNTIME_ALGORITHM_CHECK_H
