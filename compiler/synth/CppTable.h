//===- CppTable.h - algorithms as C++ tables --------------------*- C++ -*-===//
//
// `coconetc synth --emit=cpp` (docs/synth.md, "Running an algorithm"): a
// verified algorithm as a C++ header holding a coconet::rt::algorithm::Table
// (runtime/include/coconet/algorithm.h), which the runtimes run
// (coconet/cpu/algorithm.h: over MPI point-to-point).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_CPPTABLE_H
#define COCONET_SYNTH_CPPTABLE_H

#include "synth/Algorithm.h"

#include <string>

namespace llvm {
class raw_ostream;
}

namespace coconet::synth {

/// The C++ identifier the table of an algorithm named `name` gets: its
/// letters, digits and underscores, every other character an underscore,
/// an underscore first where it would start with a digit or be empty.
std::string tableIdentifier(llvm::StringRef name);

/// Writes the header: namespace coconet::generated::algorithms, an inline
/// constexpr Table named `identifier` (a tableIdentifier), and its arrays.
void writeCppTable(const Algorithm &alg, llvm::StringRef topologyName,
                   double timeUs, llvm::StringRef identifier,
                   llvm::raw_ostream &os);

} // namespace coconet::synth

#endif // COCONET_SYNTH_CPPTABLE_H
