//===- Topology.cpp - node kinds, topology files, the built topology ------===//

#include "synth/Topology.h"

#include "synth/Json.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace coconet::synth {

namespace {

struct KindName {
  NodeKind kind;
  llvm::StringRef name;
};
constexpr KindName kKinds[] = {{NodeKind::NDv2, "NDv2"},
                               {NodeKind::DGX2, "DGX2"},
                               {NodeKind::HubAndSpoke, "HubAndSpoke"},
                               {NodeKind::Custom, "custom"},
                               {NodeKind::H100, "H100"}};

/// The largest cost a profile may give: an hour in microseconds.
constexpr double kMaxCost = 3.6e9;

/// NDv2's hybrid cube-mesh (TACCL's generic.ndv2): 0 no link, 1 a
/// double-NVLink pair (the profile's first beta and invbw), 2 a single one
/// (the second). Symmetric; [dst][src].
constexpr unsigned char kNDv2[8][8] = {
    {0, 1, 2, 2, 1, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
    {2, 2, 0, 1, 0, 0, 1, 0}, {2, 1, 1, 0, 0, 0, 0, 2},
    {1, 0, 0, 0, 0, 1, 2, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 2, 2, 0, 1}, {0, 0, 0, 2, 2, 1, 1, 0}};

/// The node's GPUs every kind but custom has, when the file does not say
/// (NDv2's is fixed).
unsigned defaultGpus(NodeKind kind) {
  switch (kind) {
  case NodeKind::NDv2:
  case NodeKind::H100:
    return 8;
  case NodeKind::DGX2:
    return 16;
  case NodeKind::HubAndSpoke:
  case NodeKind::Custom:
    return 0;
  }
  return 0;
}

/// How many link types (betas) a kind's profile lists.
unsigned linkTypes(NodeKind kind) { return kind == NodeKind::NDv2 ? 2 : 1; }

/// Reads a matrix of `n` x `n` numbers at `path`; `integral` for links.
template <typename T>
std::optional<std::vector<std::vector<T>>>
readMatrix(JsonReader &r, const JsonPath &path, unsigned n, double lo,
           double hi, bool integral) {
  const llvm::json::Array *rows = r.array(path, n);
  if (!rows)
    return std::nullopt;
  if (rows->size() != n) {
    r.invalid(path, "'" + path.name() + "' needs " + std::to_string(n) +
                        " rows (gpus_per_node); it has " +
                        std::to_string(rows->size()));
    return std::nullopt;
  }
  std::vector<std::vector<T>> out(n);
  bool ok = true;
  for (unsigned d = 0; d < n; ++d) {
    JsonPath row = path.index(d);
    const llvm::json::Array *cols = r.array(row, n);
    if (!cols) {
      ok = false;
      continue;
    }
    if (cols->size() != n) {
      r.invalid(row, "row " + std::to_string(d) + " of '" + path.name() +
                         "' needs " + std::to_string(n) + " entries; it has " +
                         std::to_string(cols->size()));
      ok = false;
      continue;
    }
    for (unsigned s = 0; s < n; ++s) {
      if (integral) {
        std::optional<int64_t> v =
            r.integer(row.index(s), int64_t(lo), int64_t(hi));
        ok &= v.has_value();
        out[d].push_back(v ? T(*v) : T());
      } else {
        std::optional<double> v = r.number(row.index(s), lo, hi);
        ok &= v.has_value();
        out[d].push_back(v ? T(*v) : T());
      }
    }
  }
  if (!ok)
    return std::nullopt;
  return out;
}

} // namespace

std::optional<NodeKind> parseNodeKind(llvm::StringRef name) {
  for (const KindName &k : kKinds)
    if (name.equals_insensitive(k.name))
      return k.kind;
  return std::nullopt;
}

llvm::StringRef nodeKindName(NodeKind kind) {
  for (const KindName &k : kKinds)
    if (k.kind == kind)
      return k.name;
  return "?";
}

std::string nodeKindNames() {
  std::string out;
  for (const KindName &k : kKinds)
    out += (out.empty() ? "" : ", ") + k.name.str();
  return out;
}

std::optional<NodeProfile>
parseTopologyFile(NodeKind kind, std::unique_ptr<llvm::MemoryBuffer> buffer,
                  llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags) {
  std::optional<JsonDocument> doc =
      JsonDocument::parse(std::move(buffer), sourceMgr, diags);
  if (!doc)
    return std::nullopt;
  JsonReader r(*doc, diags, "the topology file");
  JsonPath root;
  const bool custom = kind == NodeKind::Custom;
  llvm::SmallVector<llvm::StringRef, 12> keys = {
      "name",         "gpus_per_node", "nics_per_node", "alpha",
      "remote_alpha", "remote_beta",   "remote_invbw"};
  if (custom)
    keys.append({"links", "betas", "invbws"});
  else
    keys.append({"node_betas_list", "node_invbws_list"});
  if (!r.object(root, keys))
    return std::nullopt;

  NodeProfile p;
  auto need = [&](llvm::StringRef key, llvm::StringRef why) {
    return r.require(root, key, why);
  };
  if (need("name", "the topology's name, part of the algorithm's"))
    if (auto s = r.string(root.key("name"), 256))
      p.name = *s;
  p.gpusPerNode = defaultGpus(kind);
  if (r.has(root, "gpus_per_node")) {
    if (auto g = r.integer(root.key("gpus_per_node"), 1, kMaxGpusPerNode)) {
      if (kind == NodeKind::NDv2 && *g != 8)
        r.invalid(root.key("gpus_per_node"),
                  "an NDv2 node has 8 GPUs (its hybrid cube-mesh); this file "
                  "says " +
                      std::to_string(*g));
      p.gpusPerNode = unsigned(*g);
    }
  } else if (p.gpusPerNode == 0) {
    r.missing(root, "gpus_per_node", "the GPUs of one node");
  }
  if (r.has(root, "nics_per_node"))
    if (auto n = r.integer(root.key("nics_per_node"), 1, kMaxGpusPerNode))
      p.nicsPerNode = unsigned(*n);
  if (need("alpha", "the latency of a link inside a node, in microseconds"))
    if (auto a = r.number(root.key("alpha"), 0, kMaxCost))
      p.alpha = *a;

  if (custom) {
    if (p.gpusPerNode &&
        need("links", "links[dst][src]: how many links "
                      "go from src to dst") &&
        need("betas", "betas[dst][src]: microseconds a chunk") &&
        need("invbws", "invbws[dst][src]: alpha + beta")) {
      if (auto m = readMatrix<unsigned>(r, root.key("links"), p.gpusPerNode, 0,
                                        64, true))
        p.linkMatrix = std::move(*m);
      if (auto m = readMatrix<double>(r, root.key("betas"), p.gpusPerNode, 0,
                                      kMaxCost, false))
        p.betaMatrix = std::move(*m);
      if (auto m = readMatrix<double>(r, root.key("invbws"), p.gpusPerNode, 0,
                                      kMaxCost, false))
        p.invbwMatrix = std::move(*m);
      for (unsigned d = 0; d < p.linkMatrix.size(); ++d)
        if (p.linkMatrix[d][d] != 0)
          r.invalid(root.key("links").index(d).index(d),
                    "links[" + std::to_string(d) + "][" + std::to_string(d) +
                        "] must be 0: a GPU has no link to itself");
    }
  } else {
    unsigned types = linkTypes(kind);
    auto list = [&](llvm::StringRef key, llvm::SmallVector<double, 2> &out) {
      if (!need(key, types == 2 ? "two values: the double-NVLink pairs', "
                                  "then the single links'"
                                : "one value, the node's links'"))
        return;
      JsonPath path = root.key(key);
      const llvm::json::Array *a = r.array(path, 8);
      if (!a)
        return;
      if (a->size() != types) {
        r.invalid(path, "'" + key.str() + "' needs " + std::to_string(types) +
                            (types == 1 ? " value" : " values") + " for " +
                            nodeKindName(kind).str() + "; it has " +
                            std::to_string(a->size()));
        return;
      }
      for (unsigned i = 0; i < types; ++i)
        if (auto v = r.number(path.index(i), 0, kMaxCost))
          out.push_back(*v);
    };
    list("node_betas_list", p.betas);
    list("node_invbws_list", p.invbws);
  }

  // The links between nodes: all three or none (a one-node topology).
  bool any = r.has(root, "remote_alpha") || r.has(root, "remote_beta") ||
             r.has(root, "remote_invbw");
  if (any && need("remote_alpha", "the latency of a link between nodes") &&
      need("remote_beta", "microseconds a chunk between nodes") &&
      need("remote_invbw", "remote_alpha + remote_beta")) {
    auto a = r.number(root.key("remote_alpha"), 0, kMaxCost);
    auto b = r.number(root.key("remote_beta"), 0, kMaxCost);
    auto c = r.number(root.key("remote_invbw"), 0, kMaxCost);
    if (a && b && c) {
      p.remoteAlpha = *a;
      p.remoteBeta = *b;
      p.remoteInvbw = *c;
      p.hasRemote = true;
    }
  }
  if (r.hadError())
    return std::nullopt;
  return p;
}

const Link *Topology::link(unsigned src, unsigned dst) const {
  for (const Link &l : links)
    if (l.src == src && l.dst == dst)
      return &l;
  return nullptr;
}

Topology buildTopology(NodeKind kind, const NodeProfile &profile,
                       const Sketch &sketch) {
  Topology t;
  t.kind = kind;
  t.gpusPerNode = profile.gpusPerNode;
  t.nodes = sketch.nodes;
  t.nicsPerNode = profile.nicsPerNode;
  t.name = nodeKindName(kind).str() + "-" + profile.name;
  const unsigned g = t.gpusPerNode;

  // A node's links: [dst][src] -> (present, beta, cost).
  struct Local {
    bool present = false;
    double beta = 0, cost = 0;
  };
  std::vector<std::vector<Local>> local(g, std::vector<Local>(g));
  for (unsigned d = 0; d < g; ++d)
    for (unsigned s = 0; s < g; ++s) {
      if (s == d)
        continue;
      Local &l = local[d][s];
      switch (kind) {
      case NodeKind::NDv2:
        if (unsigned type = kNDv2[d][s]) {
          l = {true, profile.betas[type - 1], profile.invbws[type - 1]};
        }
        break;
      case NodeKind::DGX2:
      case NodeKind::H100:
      case NodeKind::HubAndSpoke:
        l = {true, profile.betas[0], profile.invbws[0]};
        break;
      case NodeKind::Custom:
        if (profile.linkMatrix[d][s])
          l = {true, profile.betaMatrix[d][s], profile.invbwMatrix[d][s]};
        break;
      }
    }
  // A switch sketch: a group listed k times has k times the bandwidth, and
  // a chunk costs alpha + beta / k (TACCL's parse_and_get_topo).
  for (const Sketch::SwitchGroup &group : sketch.switches)
    for (unsigned a : group.gpus)
      for (unsigned b : group.gpus)
        if (a != b && local[b][a].present)
          local[b][a].cost =
              profile.alpha + local[b][a].beta / double(group.copies);

  for (unsigned node = 0; node < t.nodes; ++node)
    for (unsigned s = 0; s < g; ++s)
      for (unsigned d = 0; d < g; ++d)
        if (local[d][s].present)
          t.links.push_back({node * g + s, node * g + d, profile.alpha,
                             local[d][s].beta, local[d][s].cost, false});

  // Between nodes: every sender's links to the other nodes share the
  // node's NICs (TACCL: beta times senders x destinations / NICs).
  if (t.nodes > 1) {
    unsigned pairs = 0;
    for (const auto &[src, dsts] : sketch.internodeConn)
      pairs += dsts.size();
    double share = double(pairs) / double(std::max(1u, t.nicsPerNode));
    double beta = profile.remoteBeta * std::max(1.0, share);
    for (unsigned i = 0; i < t.nodes; ++i)
      for (unsigned j = 0; j < t.nodes; ++j) {
        if (i == j)
          continue;
        for (const auto &[src, dsts] : sketch.internodeConn)
          for (unsigned dst : dsts)
            t.links.push_back({i * g + src, j * g + dst, profile.remoteAlpha,
                               beta, profile.remoteAlpha + beta, true});
      }
  }
  llvm::sort(t.links, [](const Link &a, const Link &b) {
    return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
  });

  // Switches: each GPU's port into each switch group, out and in; a
  // GPU's links to other nodes through its NIC, out and in.
  for (unsigned node = 0; node < t.nodes; ++node) {
    for (size_t gi = 0; gi < sketch.switches.size(); ++gi) {
      const Sketch::SwitchGroup &group = sketch.switches[gi];
      for (unsigned n : group.gpus) {
        Switch out, in;
        out.name = "node" + std::to_string(node) + ".switch" +
                   std::to_string(gi) + ".gpu" + std::to_string(n) + ".out";
        in.name = out.name.substr(0, out.name.size() - 3) + "in";
        out.srcs.push_back(node * g + n);
        in.dsts.push_back(node * g + n);
        for (unsigned o : group.gpus)
          if (o != n) {
            out.dsts.push_back(node * g + o);
            in.srcs.push_back(node * g + o);
            if (const Link *l = t.link(node * g + n, node * g + o))
              out.cost = in.cost = l->cost;
          }
        if (!out.dsts.empty()) {
          t.switches.push_back(std::move(out));
          t.switches.push_back(std::move(in));
        }
      }
    }
  }
  for (unsigned r = 0; r < t.ranks(); ++r) {
    Switch out, in;
    out.name = "rank" + std::to_string(r) + ".nic.out";
    in.name = "rank" + std::to_string(r) + ".nic.in";
    out.srcs.push_back(r);
    in.dsts.push_back(r);
    double cost = 0;
    for (const Link &l : t.links) {
      if (!l.remote)
        continue;
      if (l.src == r) {
        out.dsts.push_back(l.dst);
        cost = l.cost;
      }
      if (l.dst == r) {
        in.srcs.push_back(l.src);
        cost = l.cost;
      }
    }
    out.cost = in.cost = cost;
    if (out.dsts.size() > 1)
      t.switches.push_back(std::move(out));
    if (in.srcs.size() > 1)
      t.switches.push_back(std::move(in));
  }
  return t;
}

void Topology::print(llvm::raw_ostream &os) const {
  os << "topology " << name << ": " << nodes << " node"
     << (nodes == 1 ? "" : "s") << " of " << gpusPerNode << " GPUs ("
     << nodeKindName(kind) << "), " << ranks() << " ranks, " << links.size()
     << " links, " << switches.size() << " switches\n";
  for (const Link &l : links)
    os << "  link " << l.src << " -> " << l.dst << (l.remote ? " remote" : "")
       << ": alpha " << numberText(l.alpha) << " beta " << numberText(l.beta)
       << " cost " << numberText(l.cost) << " us/chunk\n";
  for (const Switch &s : switches) {
    os << "  switch " << s.name << ": {";
    llvm::interleaveComma(s.srcs, os);
    os << "} -> {";
    llvm::interleaveComma(s.dsts, os);
    os << "} cost " << numberText(s.cost) << " us/chunk\n";
  }
}

} // namespace coconet::synth
