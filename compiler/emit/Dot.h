//===- Dot.h - Graphviz drawing of a (scheduled) program --------*- C++ -*-===//
//
// --emit=dot: one digraph per program. Parameters, computation stages and
// communication stages are nodes of distinct shapes (labelled with name,
// operation and type); edges follow the dataflow; each kernel (fuse group)
// is a cluster; an overlap pair is a dashed, labelled edge. Deterministic:
// nodes and edges in program order.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_EMIT_DOT_H
#define COCONET_EMIT_DOT_H

#include "ir/Program.h"

#include "llvm/ADT/StringRef.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::emit {

/// Writes `program` as a Graphviz digraph titled `title` (e.g.
/// "adam, schedule rs_c_ag").
void printDot(const ir::Program &program, llvm::StringRef title,
              llvm::raw_ostream &os);

} // namespace coconet::emit

#endif // COCONET_EMIT_DOT_H
