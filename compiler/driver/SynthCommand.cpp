//===- SynthCommand.cpp - coconetc synth ----------------------------------===//
//
// `coconetc synth KIND COLLECTIVE --topology-file T --sketch-file S [-o F]`,
// as TACCL's `taccl solve` is called (docs/synth.md): reads and checks both
// files, synthesises the collective's algorithm for the topology they
// describe, verifies it and writes it (an algorithm file). With
// --algorithm-file A it checks A instead (the same verifier) and writes it
// back; --print-topology prints the topology and stops. --machine M takes
// the topology from a tuner's machine file instead (tune::profileOfMachine).
//
//===----------------------------------------------------------------------===//

#include "driver/DriverOptions.h"
#include "driver/RangedOption.h"
#include "support/Files.h"
#include "synth/Algorithm.h"
#include "synth/AlgorithmFile.h"
#include "synth/CppTable.h"
#include "synth/Json.h"
#include "synth/Msccl.h"
#include "synth/Synthesize.h"
#include "synth/Topology.h"
#include "tune/Machine.h"
#include "tune/Synthesis.h"

#include "diag/Diagnostic.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
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

static cl::opt<std::string> algorithmFile(
    "algorithm-file",
    cl::desc("coconetc synth: check this algorithm file (the verifier) and "
             "write it back, instead of synthesising one"),
    cl::value_desc("file"), cl::cat(synthCategory()));
static NonNegativeOption
    timeLimit("time-limit",
              "coconetc synth: seconds the routing MILP may take; the best "
              "routing found by then is used (default 60)",
              60, synthCategory());
static cl::opt<bool> solverLog(
    "solver-log",
    cl::desc("coconetc synth: print COIN-OR CBC's own log (standard output)"),
    cl::cat(synthCategory()));
static cl::opt<std::string> baseline(
    "baseline",
    cl::desc("coconetc synth: write the algorithm NCCL runs instead of "
             "synthesising: ring (on a cycle of the topology's links) or "
             "tree (AllReduce: a chain in each node, a double binary tree "
             "between nodes; docs/bench/synth.md)"),
    cl::value_desc("ring|tree"), cl::cat(synthCategory()));
static cl::opt<bool> printTopology(
    "print-topology",
    cl::desc("coconetc synth: print the topology the files describe and stop"),
    cl::cat(synthCategory()));

static NumberOption<int64_t> profileBytes(
    "profile-bytes",
    "coconetc synth --machine: the bytes of a rank's buffer the topology's "
    "costs are for (a TACCL profile is for one size); default 1048576",
    1, int64_t(1) << 40, int64_t(1) << 20, synthCategory());

/// The options that take their value as the next word (for the driver's
/// search of synth's two words).
bool synthOptionTakesValue(llvm::StringRef arg) {
  for (llvm::StringRef name : {"topology-file", "sketch-file", "algorithm-file",
                               "time-limit", "baseline", "profile-bytes"})
    if (arg == ("--" + name).str() || arg == ("-" + name).str())
      return true;
  return false;
}

/// Whether a synth option was given outside `coconetc synth`.
bool synthOptionGiven(std::string &which) {
  const std::pair<const char *, bool> given[] = {
      {"topology-file", topologyFile.getNumOccurrences() > 0},
      {"sketch-file", sketchFile.getNumOccurrences() > 0},
      {"algorithm-file", algorithmFile.getNumOccurrences() > 0},
      {"time-limit", timeLimit.given()},
      {"solver-log", solverLog.getNumOccurrences() > 0},
      {"print-topology", printTopology.getNumOccurrences() > 0},
      {"baseline", baseline.getNumOccurrences() > 0},
      {"profile-bytes", profileBytes.given()}};
  for (const auto &[name, on] : given)
    if (on) {
      which = name;
      return true;
    }
  return false;
}

const std::string &outputPath();

/// What `coconetc synth` writes (--emit).
enum class SynthEmit { Algorithm, Msccl, Dot, Cpp };

/// The algorithm's links as a Graphviz graph: an edge per link used, with
/// the chunks it carries and the steps it carries them in.
static void writeDot(const synth::Algorithm &alg, llvm::StringRef topology,
                     double timeUs, llvm::raw_ostream &os) {
  struct Use {
    unsigned chunks = 0, first = 0, last = 0;
    bool reduce = false;
  };
  std::map<std::pair<unsigned, unsigned>, Use> uses;
  for (size_t s = 0; s < alg.steps.size(); ++s)
    for (const synth::Transfer &t : alg.steps[s].transfers) {
      Use &u = uses[{t.src, t.dst}];
      if (u.chunks++ == 0)
        u.first = unsigned(s);
      u.last = unsigned(s);
      u.reduce = u.reduce || t.reduce;
    }
  os << "digraph " << llvm::json::Value(alg.name) << " {\n"
     << "  label="
     << llvm::json::Value(alg.name + " on " + topology.str() + ": " +
                          std::to_string(alg.steps.size()) +
                          (alg.steps.size() == 1 ? " step, " : " steps, ") +
                          synth::numberText(timeUs) + " us")
     << ";\n  node [shape=circle];\n";
  for (unsigned r = 0; r < alg.ranks; ++r)
    os << "  r" << r << " [label=\"" << r << "\"];\n";
  for (const auto &[link, u] : uses) {
    os << "  r" << link.first << " -> r" << link.second << " [label=\""
       << u.chunks << (u.chunks == 1 ? " chunk" : " chunks") << ", step";
    if (u.first == u.last)
      os << " " << u.first;
    else
      os << "s " << u.first << "-" << u.last;
    os << "\"" << (u.reduce ? ", style=dashed" : "") << "];\n";
  }
  os << "}\n";
}

/// Writes `alg` to -o (default: standard output) as `emit` asks; false
/// after reporting.
static bool writeOut(SynthEmit emit, const synth::Algorithm &alg,
                     llvm::StringRef topology, double timeUs) {
  std::error_code ec;
  llvm::ToolOutputFile out(outputPath(), ec, llvm::sys::fs::OF_Text);
  if (ec) {
    reportToolError("cannot write '" + outputPath() + "': " + ec.message());
    return false;
  }
  switch (emit) {
  case SynthEmit::Algorithm:
    synth::writeAlgorithm(alg, topology, timeUs, out.os());
    break;
  case SynthEmit::Msccl:
    synth::writeMscclXml(alg, synth::lowerToMsccl(alg), out.os());
    break;
  case SynthEmit::Dot:
    writeDot(alg, topology, timeUs, out.os());
    break;
  case SynthEmit::Cpp:
    // Named after the file it goes to (ndv2_ag.h: ndv2_ag), as xxd -i
    // names its arrays; on standard output after the algorithm.
    synth::writeCppTable(
        alg, topology, timeUs,
        synth::tableIdentifier(outputPath() == "-"
                                   ? llvm::StringRef(alg.name)
                                   : llvm::sys::path::stem(outputPath())),
        out.os());
    break;
  }
  out.keep();
  return true;
}

int runSynth(llvm::StringRef kindName, llvm::StringRef collectiveName,
             const std::optional<std::string> &emitName, Compilation &c) {
  llvm::SourceMgr &sourceMgr = c.sourceMgr;
  DiagnosticEngine &diags = *c.diags;
  SynthEmit emit = SynthEmit::Algorithm;
  if (emitName) {
    if (*emitName == "algorithm")
      emit = SynthEmit::Algorithm;
    else if (*emitName == "msccl")
      emit = SynthEmit::Msccl;
    else if (*emitName == "dot")
      emit = SynthEmit::Dot;
    else if (*emitName == "cpp")
      emit = SynthEmit::Cpp;
    else {
      reportToolError("coconetc synth: --emit='" + *emitName +
                      "'; expected algorithm, msccl, dot or cpp");
      return 2;
    }
  }
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
  const bool fromMachine = machineGiven();
  if ((topologyFile.empty() && !fromMachine) || sketchFile.empty()) {
    reportToolError(std::string("coconetc synth needs --") +
                    (sketchFile.empty() ? "sketch-file FILE"
                                        : "topology-file FILE (or --machine)"));
    return 2;
  }
  if (fromMachine && !topologyFile.empty()) {
    reportToolError("coconetc synth: --topology-file and --machine both "
                    "give the topology; give one");
    return 2;
  }
  if (fromMachine && *kind == synth::NodeKind::Custom) {
    reportToolError("coconetc synth: a machine file gives no link matrix; "
                    "the 'custom' node kind needs --topology-file");
    return 2;
  }
  // The topology first (its file, or the machine), then the sketch.
  std::optional<synth::NodeProfile> profile;
  if (fromMachine) {
    std::optional<tune::Machine> machine = loadMachine(c);
    if (!machine)
      return diags.hadError() ? 1 : 2;
    auto made = tune::profileOfMachine(*machine, *kind,
                                       static_cast<double>(*profileBytes));
    if (!made) {
      reportToolError("coconetc synth: " + llvm::toString(made.takeError()));
      return 1;
    }
    profile = std::move(*made);
  }
  support::ReadFile topo;
  if (!fromMachine) {
    topo = support::readUserFile(topologyFile, support::FileKind::Topology);
    if (!topo.buffer) {
      reportToolError(topo.message);
      return 1;
    }
  }
  support::ReadFile sketch =
      support::readUserFile(sketchFile, support::FileKind::Sketch);
  if (!sketch.buffer) {
    reportToolError(sketch.message);
    return 1;
  }
  if (!fromMachine)
    profile = synth::parseTopologyFile(*kind, std::move(topo.buffer), sourceMgr,
                                       diags);
  if (!profile)
    return 1;
  std::optional<synth::Sketch> sk = synth::parseSketchFile(
      profile->gpusPerNode, std::move(sketch.buffer), sourceMgr, diags);
  if (!sk)
    return 1;
  synth::Topology t = synth::buildTopology(*kind, *profile, *sk);
  if (printTopology) {
    llvm::outs() << synth::collectiveName(*collective) << " over " << t.ranks()
                 << " ranks, " << sk->inputChunkup << " chunk"
                 << (sk->inputChunkup == 1 ? "" : "s") << " a rank\n";
    t.print(llvm::outs());
    return 0;
  }

  if (!algorithmFile.empty()) {
    support::ReadFile file =
        support::readUserFile(algorithmFile, support::FileKind::Algorithm);
    if (!file.buffer) {
      reportToolError(file.message);
      return 1;
    }
    std::optional<synth::Algorithm> alg =
        synth::parseAlgorithmFile(std::move(file.buffer), sourceMgr, diags);
    if (!alg)
      return 1;
    if (alg->collective != *collective) {
      reportToolError("the algorithm file '" + algorithmFile + "' is an " +
                      synth::collectiveName(alg->collective).str() +
                      ", not an " + synth::collectiveName(*collective).str());
      return 1;
    }
    if (alg->chunksPerRank != sk->inputChunkup) {
      reportToolError("the algorithm file '" + algorithmFile +
                      "' cuts a "
                      "rank's buffer into " +
                      std::to_string(alg->chunksPerRank) +
                      " chunks; the sketch's input_chunkup is " +
                      std::to_string(sk->inputChunkup));
      return 1;
    }
    if (std::optional<std::string> why = synth::verifyAlgorithm(*alg, t)) {
      reportToolError("the algorithm file '" + algorithmFile +
                      "' is refused: " + *why);
      return 1;
    }
    if (alg->name.empty())
      alg->name = synth::collectiveName(alg->collective).str() + "-" + t.name;
    return writeOut(emit, *alg, t.name, synth::algorithmTime(*alg, t)) ? 0 : 1;
  }

  if (baseline.getNumOccurrences()) {
    if (baseline != "ring" && baseline != "tree") {
      reportToolError("coconetc synth: --baseline='" + baseline +
                      "'; expected ring or tree");
      return 2;
    }
    std::optional<synth::Algorithm> base;
    synth::Topology on = t;
    if (baseline == "ring") {
      base = synth::ringAlgorithm(*collective, t, sk->inputChunkup);
      if (!base) {
        reportToolError("coconetc synth: no ring " +
                        synth::collectiveName(*collective).str() +
                        (*collective == synth::Collective::AllToAll
                             ? " (an AllToAll has no ring algorithm)"
                             : " on " + t.name +
                                   ": its links have no cycle through every "
                                   "rank"));
        return 1;
      }
    } else {
      if (*collective != synth::Collective::AllReduce) {
        reportToolError("coconetc synth: --baseline=tree: NCCL runs its tree "
                        "for an AllReduce only, not an " +
                        synth::collectiveName(*collective).str());
        return 1;
      }
      // NCCL's tree does not follow the sketch between nodes: GPU 0 of
      // every node is linked both ways to GPU 0 of every other.
      synth::Sketch direct = *sk;
      direct.internodeConn.clear();
      if (direct.nodes > 1)
        direct.internodeConn[0] = {0};
      direct.senderFor.clear();
      direct.enforceOrdering = false;
      on = synth::buildTopology(*kind, *profile, direct);
      base = synth::treeAllReduce(on, sk->inputChunkup);
      if (!base) {
        reportToolError("coconetc synth: no tree on " + t.name +
                        ": a node's links have no path through its GPUs "
                        "from GPU 0 with every link present both ways");
        return 1;
      }
    }
    if (std::optional<std::string> why = synth::verifyAlgorithm(*base, on)) {
      reportToolError("internal error: the " + baseline +
                      " fails its check: " + *why);
      return 1;
    }
    double time = synth::algorithmTime(*base, on);
    llvm::errs() << "coconetc synth: " << base->name << ": "
                 << base->steps.size()
                 << (base->steps.size() == 1 ? " step, " : " steps, ")
                 << llvm::format("%.6g", time)
                 << " us on the topology's costs\n";
    return writeOut(emit, *base, on.name, time) ? 0 : 1;
  }

  synth::SynthOptions options;
  options.seconds = timeLimit;
  options.solverLog = solverLog;
  options.progress = &llvm::errs();
  llvm::Expected<synth::Synthesis> result =
      synth::synthesize(*collective, t, *sk, options);
  if (!result) {
    reportToolError("coconetc synth: " + llvm::toString(result.takeError()));
    return 1;
  }
  llvm::errs() << "coconetc synth: " << result->algorithm.name << ": "
               << result->algorithm.steps.size()
               << (result->algorithm.steps.size() == 1 ? " step, " : " steps, ")
               << llvm::format("%.6g", result->time)
               << " us on the topology's costs; synthesised in "
               << llvm::format("%.2f", result->seconds) << " s\n";
  return writeOut(emit, result->algorithm, t.name, result->time) ? 0 : 1;
}

} // namespace coconet::driver
