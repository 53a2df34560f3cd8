//===- Synthesis.h - the algorithms the tuner synthesises -------*- C++ -*-===//
//
// `coconetc tune --synthesize DIR` and `coconetc synth --machine M`: a
// machine file's links as a TACCL node profile, and for a program the
// collectives worth an algorithm of their own, each with the default
// sketch (a switch inside a node, GPU to GPU between nodes) on the
// machine's topology (docs/synth.md). The driver writes and loads the
// files.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TUNE_SYNTHESIS_H
#define COCONET_TUNE_SYNTHESIS_H

#include "ir/Types.h"
#include "synth/Algorithm.h"
#include "synth/Topology.h"
#include "tune/Machine.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace coconet::ir {
class Program;
} // namespace coconet::ir

namespace coconet::tune {

/// The node profile of machine `m` for a topology of `kind`, its costs for
/// buffers of `bytes`: links inside a node on the node level's allgather
/// ring (or library) line, links between nodes on the network level's, one
/// NIC per GPU. An error says what the machine lacks.
llvm::Expected<synth::NodeProfile>
profileOfMachine(const Machine &m, synth::NodeKind kind, double bytes);

/// One algorithm to synthesise: a collective over `ranks` ranks, `perNode`
/// a node, with its sketch and topology.
struct SynthesisJob {
  synth::Collective collective;
  int64_t ranks = 0;
  int64_t perNode = 0;
  synth::Sketch sketch;
  synth::Topology topology;
};

/// The jobs --synthesize makes for `program` at `sizes` on `m`: each
/// collective's kind at its axis's ranks (and for an allreduce also the
/// reducescatter and allgather of its split), each once; none where the
/// ranks are fewer than 2 or past the synthesiser's bounds, or span nodes
/// the machine states no network for. An error says what the machine
/// lacks.
llvm::Expected<std::vector<SynthesisJob>>
synthesisJobs(const ir::Program &program, const ir::DimEnv &sizes,
              const Machine &m);

} // namespace coconet::tune

#endif // COCONET_TUNE_SYNTHESIS_H
