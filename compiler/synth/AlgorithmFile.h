//===- AlgorithmFile.h - algorithms as files -------------------*- C++ -*-===//
//
// An algorithm written by `coconetc synth -o FILE` and read back by
// `--algorithm-file FILE` (docs/synth.md, "Algorithm files"). Reading
// checks the file's values (kinds, ranges, sizes, located); what the
// steps do is verifyAlgorithm's to check.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_ALGORITHMFILE_H
#define COCONET_SYNTH_ALGORITHMFILE_H

#include "synth/Algorithm.h"

#include "diag/Diagnostic.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace coconet::synth {

/// Writes `alg`, made for `topologyName`, taking `timeUs` there.
void writeAlgorithm(const Algorithm &alg, llvm::StringRef topologyName,
                    double timeUs, llvm::raw_ostream &os);

/// Reads an algorithm file; reports what is wrong, located.
std::optional<Algorithm>
parseAlgorithmFile(std::unique_ptr<llvm::MemoryBuffer> buffer,
                   llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags);

} // namespace coconet::synth

#endif // COCONET_SYNTH_ALGORITHMFILE_H
