//===- SynthCommand.cpp - coconetc synth ----------------------------------===//
//
// `coconetc synth KIND COLLECTIVE --topology-file T --sketch-file S`, as
// TACCL's `taccl solve` is called (docs/synth.md). Today it reads and
// checks both files and prints the topology they describe; the synthesis
// of an algorithm for it is issue 50's next part.
//
//===----------------------------------------------------------------------===//

#include "support/Files.h"
#include "synth/Algorithm.h"
#include "synth/Topology.h"

#include "diag/Diagnostic.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace coconet::driver {

cl::OptionCategory &synthCategory() {
  static cl::OptionCategory cat("coconetc synth options");
  return cat;
}

static cl::opt<std::string>
    topologyFile("topology-file",
                 cl::desc("coconetc synth: TACCL's topology file (the "
                          "node's link profile)"),
                 cl::value_desc("file"), cl::cat(synthCategory()));
static cl::opt<std::string>
    sketchFile("sketch-file",
               cl::desc("coconetc synth: TACCL's communication sketch"),
               cl::value_desc("file"), cl::cat(synthCategory()));

/// The options that take their value as the next word (for the driver's
/// search of synth's two words).
bool synthOptionTakesValue(llvm::StringRef arg) {
  return arg == "--topology-file" || arg == "-topology-file" ||
         arg == "--sketch-file" || arg == "-sketch-file";
}

/// Whether a synth option was given outside `coconetc synth`.
bool synthOptionGiven(std::string &which) {
  if (topologyFile.getNumOccurrences())
    which = "topology-file";
  else if (sketchFile.getNumOccurrences())
    which = "sketch-file";
  else
    return false;
  return true;
}

int runSynth(llvm::StringRef kindName, llvm::StringRef collectiveName,
             llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags) {
  std::optional<synth::NodeKind> kind = synth::parseNodeKind(kindName);
  if (!kind) {
    reportToolError("coconetc synth: unknown node kind '" + kindName.str() +
                    "'; expected one of " + synth::nodeKindNames());
    return 2;
  }
  std::optional<synth::Collective> collective =
      synth::parseCollective(collectiveName);
  if (!collective) {
    reportToolError("coconetc synth: unknown collective '" +
                    collectiveName.str() +
                    "'; expected Allgather, Alltoall, ReduceScatter or "
                    "Allreduce");
    return 2;
  }
  if (topologyFile.empty() || sketchFile.empty()) {
    reportToolError(std::string("coconetc synth needs --") +
                    (topologyFile.empty() ? "topology-file" : "sketch-file") +
                    " FILE");
    return 2;
  }
  support::ReadFile topo =
      support::readUserFile(topologyFile, support::FileKind::Topology);
  if (!topo.buffer) {
    reportToolError(topo.message);
    return 1;
  }
  support::ReadFile sketch =
      support::readUserFile(sketchFile, support::FileKind::Sketch);
  if (!sketch.buffer) {
    reportToolError(sketch.message);
    return 1;
  }
  std::optional<synth::NodeProfile> profile =
      synth::parseTopologyFile(*kind, std::move(topo.buffer), sourceMgr, diags);
  if (!profile)
    return 1;
  std::optional<synth::Sketch> sk = synth::parseSketchFile(
      profile->gpusPerNode, std::move(sketch.buffer), sourceMgr, diags);
  if (!sk)
    return 1;
  synth::Topology t = synth::buildTopology(*kind, *profile, *sk);
  llvm::outs() << synth::collectiveName(*collective) << " over " << t.ranks()
               << " ranks, " << sk->inputChunkup << " chunk"
               << (sk->inputChunkup == 1 ? "" : "s") << " a rank\n";
  t.print(llvm::outs());
  return 0;
}

} // namespace coconet::driver
