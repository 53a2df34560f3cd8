//===- Topology.h - machines and sketches for synthesis ---------*- C++ -*-===//
//
// What `coconetc synth` synthesises for (docs/synth.md): a topology of
// ranks joined by directed links, each with TACCL's alpha-beta cost of
// sending one chunk, and switches (groups of links that share one
// bandwidth, as an NVSwitch port or a NIC does), built from
//
//  - a node kind (NDv2's hybrid cube-mesh, DGX-2's NVSwitch, an H100
//    NVSwitch node, TACCL's HubAndSpoke, or a custom link matrix),
//  - a profile of its links: TACCL's topology file, read as it is
//    (INPUT_GUIDE.md: name, gpus_per_node, nics_per_node, alpha,
//    node_betas_list, node_invbws_list, remote_alpha, remote_beta,
//    remote_invbw; links, betas, invbws for a custom node), and
//  - the algorithm designer's communication sketch: TACCL's sketch file
//    (nnodes, intranode_sketch, internode_sketch, symmetry_offsets,
//    hyperparameters.input_chunkup): how many nodes, which links to use
//    between them (the logical topology), switch groups, the symmetry the
//    algorithm must have and how finely the input is cut.
//
// Costs are TACCL's: microseconds to send one chunk, kept as given (TACCL
// rounds them to integers; its guide asks users to scale them up so that
// the rounding does not matter here).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_TOPOLOGY_H
#define COCONET_SYNTH_TOPOLOGY_H

#include "diag/Diagnostic.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace coconet::synth {

/// The node kinds `coconetc synth` knows (TACCL's four and ours).
enum class NodeKind { NDv2, DGX2, HubAndSpoke, Custom, H100 };

/// A kind from its command-line name, case-insensitive ("ndv2", "DGX2",
/// "hubandspoke", "custom", "h100").
std::optional<NodeKind> parseNodeKind(llvm::StringRef name);
llvm::StringRef nodeKindName(NodeKind kind);
/// "NDv2, DGX2, HubAndSpoke, custom, H100".
std::string nodeKindNames();

/// The most ranks a topology may have, nodes a sketch may ask for, and
/// chunks an input may be cut into.
constexpr unsigned kMaxRanks = 1024;
constexpr unsigned kMaxGpusPerNode = 64;
constexpr unsigned kMaxNodes = 64;
constexpr unsigned kMaxChunkup = 64;

/// A topology file: a node's link profile.
struct NodeProfile {
  std::string name;
  unsigned gpusPerNode = 0;
  unsigned nicsPerNode = 1;
  double alpha = 0;
  /// One per link type (NDv2: the double-NVLink pairs', then the single
  /// ones'; others: one).
  llvm::SmallVector<double, 2> betas, invbws;
  double remoteAlpha = 0, remoteBeta = 0, remoteInvbw = 0;
  bool hasRemote = false;
  /// A custom node's matrices, [dst][src] as TACCL writes them.
  std::vector<std::vector<unsigned>> linkMatrix;
  std::vector<std::vector<double>> betaMatrix, invbwMatrix;
};

/// Reads a topology file for `kind`; reports what is wrong, located.
std::optional<NodeProfile>
parseTopologyFile(NodeKind kind, std::unique_ptr<llvm::MemoryBuffer> buffer,
                  llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags);

/// A communication sketch.
struct Sketch {
  unsigned nodes = 1;
  enum class Intra { None, Switch, MaxMin, MinMax } intra = Intra::None;
  /// Switch groups of a node's GPUs (local ids): each a set of GPUs joined
  /// by one switch; `fewestConnections` is TACCL's "uc-min" (else uc-max).
  struct SwitchGroup {
    llvm::SmallVector<unsigned, 16> gpus;
    bool fewestConnections = true;
    /// How many groups of the sketch list these same GPUs (TACCL merges
    /// them: the links' bandwidth times this).
    unsigned copies = 1;
  };
  std::vector<SwitchGroup> switches;
  /// The logical links between nodes: GPU `first` of every node sends to
  /// each GPU of `second` of every other node.
  std::map<unsigned, llvm::SmallVector<unsigned, 4>> internodeConn;
  /// gpus_to_sender_rev_map: the chunks of these GPUs leave their node
  /// only through the sender (empty: any).
  std::map<unsigned, llvm::SmallVector<unsigned, 16>> senderFor;
  bool enforceOrdering = false;
  /// Rotational symmetries: rank r maps to (r % size + offset) % size +
  /// (r / size) * size.
  llvm::SmallVector<std::pair<unsigned, unsigned>, 2> symmetryOffsets;
  unsigned inputChunkup = 1;
};

/// Reads a sketch file for nodes of `gpusPerNode` GPUs; reports what is
/// wrong, located.
std::optional<Sketch>
parseSketchFile(unsigned gpusPerNode,
                std::unique_ptr<llvm::MemoryBuffer> buffer,
                llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags);

/// A directed link and the cost of one chunk over it.
struct Link {
  unsigned src = 0, dst = 0;
  double alpha = 0, beta = 0;
  /// Time one chunk holds the link (TACCL's invbw: alpha + beta as the
  /// profile gives it).
  double cost = 0;
  bool remote = false; ///< between nodes
};

/// Links that share one bandwidth: a GPU's port into a switch (its sends
/// to, or its receives from, the others) or its NIC.
struct Switch {
  std::string name;
  llvm::SmallVector<unsigned, 16> srcs, dsts;
  double cost = 0; ///< per chunk through it
};

struct Topology {
  std::string name;
  NodeKind kind = NodeKind::Custom;
  unsigned gpusPerNode = 0, nodes = 1, nicsPerNode = 1;
  std::vector<Link> links;
  std::vector<Switch> switches;

  unsigned ranks() const { return gpusPerNode * nodes; }
  /// The link src -> dst, or null.
  const Link *link(unsigned src, unsigned dst) const;
  void print(llvm::raw_ostream &os) const;
};

/// The topology the sketch asks for: `sketch.nodes` copies of the node,
/// the sketch's inter-node links (their NIC's bandwidth shared among
/// them as TACCL shares it), switch groups and NICs as switches.
Topology buildTopology(NodeKind kind, const NodeProfile &profile,
                       const Sketch &sketch);

} // namespace coconet::synth

#endif // COCONET_SYNTH_TOPOLOGY_H
