//===- Dot.cpp - Graphviz drawing of a (scheduled) program ----------------===//
// Placeholder until the emitter lands: an empty digraph.
#include "emit/Dot.h"
#include "llvm/Support/raw_ostream.h"
namespace coconet::emit {
void printDot(const ir::Program &program, llvm::StringRef title,
              llvm::raw_ostream &os) {
  (void)program;
  os << "digraph \"" << title << "\" {\n}\n";
}
} // namespace coconet::emit
