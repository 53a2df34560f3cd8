//===- Sketch.cpp - TACCL's communication sketch files --------------------===//
//
// A sketch file as TACCL's INPUT_GUIDE.md and taccl/cli/common.py read it;
// what TACCL asserts (or lets crash) is a located error here.
//
//===----------------------------------------------------------------------===//

#include "synth/Json.h"
#include "synth/Topology.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

namespace coconet::synth {

namespace {

/// Reads a list of distinct local GPU ids at `path`.
std::optional<llvm::SmallVector<unsigned, 16>>
gpuList(JsonReader &r, const JsonPath &path, unsigned gpusPerNode) {
  const llvm::json::Array *a = r.array(path, gpusPerNode);
  if (!a)
    return std::nullopt;
  llvm::SmallVector<unsigned, 16> out;
  bool ok = true;
  for (size_t i = 0; i < a->size(); ++i) {
    std::optional<int64_t> v =
        r.integer(path.index(i), 0, int64_t(gpusPerNode) - 1);
    if (!v) {
      ok = false;
      continue;
    }
    if (llvm::is_contained(out, unsigned(*v))) {
      r.invalid(path.index(i), "GPU " + std::to_string(*v) +
                                   " is listed twice in '" + path.name() + "'");
      ok = false;
    }
    out.push_back(unsigned(*v));
  }
  if (!ok)
    return std::nullopt;
  return out;
}

/// Reads an object of "GPU": [GPUs] at `path`.
std::optional<std::map<unsigned, llvm::SmallVector<unsigned, 16>>>
gpuMap(JsonReader &r, const JsonPath &path, unsigned gpusPerNode) {
  const llvm::json::Value *v = r.at(path);
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  if (!o) {
    r.invalid(path,
              "'" + path.name() + "' needs an object of \"GPU\": [GPUs, ...]");
    return std::nullopt;
  }
  std::map<unsigned, llvm::SmallVector<unsigned, 16>> out;
  bool ok = true;
  for (const auto &member : *o) {
    llvm::StringRef key = member.first;
    std::optional<int64_t> k =
        r.integerKey(path, key, 0, int64_t(gpusPerNode) - 1);
    auto list = gpuList(r, path.key(key), gpusPerNode);
    if (!k || !list) {
      ok = false;
      continue;
    }
    out[unsigned(*k)] = std::move(*list);
  }
  if (!ok)
    return std::nullopt;
  return out;
}

} // namespace

std::optional<Sketch>
parseSketchFile(unsigned gpusPerNode,
                std::unique_ptr<llvm::MemoryBuffer> buffer,
                llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags) {
  std::optional<JsonDocument> doc =
      JsonDocument::parse(std::move(buffer), sourceMgr, diags);
  if (!doc)
    return std::nullopt;
  JsonReader r(*doc, diags, "the sketch file");
  JsonPath root;
  if (!r.object(root, {"nnodes", "intranode_sketch", "internode_sketch",
                       "symmetry_offsets", "hyperparameters"}))
    return std::nullopt;
  Sketch sk;

  if (r.require(root, "nnodes", "how many nodes the algorithm spans"))
    if (auto n = r.integer(root.key("nnodes"), 1, kMaxNodes))
      sk.nodes = unsigned(*n);
  if (uint64_t(sk.nodes) * gpusPerNode > kMaxRanks) {
    r.invalid(root.key("nnodes"),
              std::to_string(sk.nodes) + " nodes of " +
                  std::to_string(gpusPerNode) + " GPUs are more than the " +
                  std::to_string(kMaxRanks) + " ranks synthesis takes");
    return std::nullopt;
  }
  const unsigned ranks = sk.nodes * gpusPerNode;

  // intranode_sketch: {strategy, switches, switch_hyperedge_strategy}.
  JsonPath intra = root.key("intranode_sketch");
  if (r.require(root, "intranode_sketch",
                "the links inside a node: {\"strategy\": \"none\"} for all") &&
      r.object(intra, {"strategy", "switches", "switch_hyperedge_strategy"}) &&
      r.require(intra, "strategy",
                "\"none\", \"switch\", \"maxmin\" or \"minmax\"")) {
    std::optional<std::string> strategy = r.string(intra.key("strategy"), 16);
    if (strategy && *strategy == "none")
      sk.intra = Sketch::Intra::None;
    else if (strategy && *strategy == "switch")
      sk.intra = Sketch::Intra::Switch;
    else if (strategy && *strategy == "maxmin")
      sk.intra = Sketch::Intra::MaxMin;
    else if (strategy && *strategy == "minmax")
      sk.intra = Sketch::Intra::MinMax;
    else if (strategy)
      r.invalid(intra.key("strategy"),
                "unknown intranode strategy \"" + *strategy +
                    "\"; expected \"none\", \"switch\", \"maxmin\" or "
                    "\"minmax\"");
    if (sk.intra == Sketch::Intra::Switch &&
        r.require(intra, "switches",
                  "the GPUs each switch joins: [[0, 1, ...]]") &&
        r.require(intra, "switch_hyperedge_strategy",
                  "one of \"uc-min\" or \"uc-max\" for each switch")) {
      const llvm::json::Array *groups =
          r.array(intra.key("switches"), gpusPerNode);
      const llvm::json::Array *kinds =
          r.array(intra.key("switch_hyperedge_strategy"), gpusPerNode);
      if (groups && kinds && groups->size() != kinds->size())
        r.invalid(intra.key("switch_hyperedge_strategy"),
                  "'switch_hyperedge_strategy' needs one entry for each of "
                  "the " +
                      std::to_string(groups->size()) +
                      " switches; it "
                      "has " +
                      std::to_string(kinds->size()));
      else if (groups && kinds)
        for (size_t i = 0; i < groups->size(); ++i) {
          auto gpus = gpuList(r, intra.key("switches").index(i), gpusPerNode);
          auto kind =
              r.string(intra.key("switch_hyperedge_strategy").index(i), 16);
          if (kind && *kind != "uc-min" && *kind != "uc-max")
            r.invalid(intra.key("switch_hyperedge_strategy").index(i),
                      "unknown switch hyperedge strategy \"" + *kind +
                          "\"; expected \"uc-min\" or \"uc-max\"");
          if (!gpus || !kind)
            continue;
          if (gpus->size() < 2) {
            r.invalid(intra.key("switches").index(i),
                      "a switch joins at least 2 GPUs");
            continue;
          }
          // The same GPUs listed again: one switch of more bandwidth.
          std::set<unsigned> these(gpus->begin(), gpus->end());
          bool merged = false;
          for (Sketch::SwitchGroup &g : sk.switches) {
            std::set<unsigned> those(g.gpus.begin(), g.gpus.end());
            if (those == these) {
              ++g.copies;
              merged = true;
              break;
            }
            for (unsigned x : these)
              if (those.count(x)) {
                r.invalid(intra.key("switches").index(i),
                          "switch " + std::to_string(i) + " shares GPU " +
                              std::to_string(x) +
                              " with an earlier switch but not all its "
                              "GPUs: switches are disjoint or the same");
                merged = true;
                break;
              }
            if (merged)
              break;
          }
          if (!merged)
            sk.switches.push_back({*gpus, *kind == "uc-min", 1});
        }
    }
  }

  // internode_sketch: {strategy: "relay", internode_conn, ...}.
  JsonPath inter = root.key("internode_sketch");
  if (sk.nodes > 1 &&
      r.require(root, "internode_sketch",
                "the links between nodes, as there is more than one")) {
    if (r.object(inter, {"strategy", "internode_conn", "gpus_to_sender_rev_map",
                         "enforce_ordering"}) &&
        r.require(inter, "strategy", "\"relay\"") &&
        r.require(inter, "internode_conn",
                  "which GPU of a node sends to which of another: "
                  "{\"0\": [1]}, \"fully-connected\" or \"direct-map\"")) {
      if (auto s = r.string(inter.key("strategy"), 16); s && *s != "relay")
        r.invalid(inter.key("strategy"), "unknown internode strategy \"" + *s +
                                             "\"; expected \"relay\"");
      JsonPath conn = inter.key("internode_conn");
      const llvm::json::Value *c = r.at(conn);
      if (std::optional<llvm::StringRef> word = c->getAsString()) {
        if (*word == "fully-connected") {
          for (unsigned a = 0; a < gpusPerNode; ++a)
            for (unsigned b = 0; b < gpusPerNode; ++b)
              sk.internodeConn[a].push_back(b);
        } else if (*word == "direct-map") {
          for (unsigned a = 0; a < gpusPerNode; ++a)
            sk.internodeConn[a].push_back(a);
        } else {
          r.invalid(conn, "unknown internode_conn \"" + word->str() +
                              "\"; expected an object, \"fully-connected\" "
                              "or \"direct-map\"");
        }
      } else if (auto m = gpuMap(r, conn, gpusPerNode)) {
        size_t fanout = m->empty() ? 0 : m->begin()->second.size();
        for (auto &[src, dsts] : *m) {
          if (dsts.empty() || dsts.size() != fanout) {
            r.invalid(conn, "every sender of 'internode_conn' needs the "
                            "same number of receivers, at least one (GPU " +
                                std::to_string(src) + " has " +
                                std::to_string(dsts.size()) + ", GPU " +
                                std::to_string(m->begin()->first) + " " +
                                std::to_string(fanout) + ")");
            break;
          }
          sk.internodeConn[src].assign(dsts.begin(), dsts.end());
        }
      }
      if (r.has(inter, "gpus_to_sender_rev_map"))
        if (auto m =
                gpuMap(r, inter.key("gpus_to_sender_rev_map"), gpusPerNode)) {
          for (const auto &[sender, gpus] : *m)
            if (!sk.internodeConn.count(sender))
              r.invalid(inter.key("gpus_to_sender_rev_map"),
                        "GPU " + std::to_string(sender) +
                            " is not a sender of 'internode_conn'");
          sk.senderFor = std::move(*m);
        }
      if (r.has(inter, "enforce_ordering"))
        if (auto b = r.boolean(inter.key("enforce_ordering"))) {
          sk.enforceOrdering = *b;
          if (*b && sk.senderFor.empty())
            r.invalid(inter.key("enforce_ordering"),
                      "'enforce_ordering' needs 'gpus_to_sender_rev_map' "
                      "(whose chunks a sender sends first)");
        }
    }
  }

  // symmetry_offsets: [[offset, size], ...].
  if (r.require(root, "symmetry_offsets",
                "the algorithm's rotational symmetries, [] for none")) {
    JsonPath sym = root.key("symmetry_offsets");
    if (const llvm::json::Array *a = r.array(sym, 8))
      for (size_t i = 0; i < a->size(); ++i) {
        JsonPath pair = sym.index(i);
        const llvm::json::Array *p = r.array(pair, 2);
        if (!p)
          continue;
        if (p->size() != 2) {
          r.invalid(pair, "a symmetry is [offset, size]");
          continue;
        }
        auto size = r.integer(pair.index(1), 2, ranks);
        auto offset = r.integer(pair.index(0), 1, size ? *size - 1 : ranks);
        if (!size || !offset)
          continue;
        if (ranks % *size != 0 || *size % *offset != 0) {
          r.invalid(pair, "symmetry [" + std::to_string(*offset) + ", " +
                              std::to_string(*size) +
                              "]: the size must divide the " +
                              std::to_string(ranks) +
                              " ranks and the offset the size");
          continue;
        }
        sk.symmetryOffsets.push_back({unsigned(*offset), unsigned(*size)});
      }
  }

  // hyperparameters: {input_chunkup}.
  JsonPath hyper = root.key("hyperparameters");
  if (r.require(root, "hyperparameters", "{\"input_chunkup\": N}") &&
      r.object(hyper, {"input_chunkup"}) &&
      r.require(hyper, "input_chunkup",
                "the chunks each rank's input is cut into"))
    if (auto c = r.integer(hyper.key("input_chunkup"), 1, kMaxChunkup))
      sk.inputChunkup = unsigned(*c);

  if (r.hadError())
    return std::nullopt;
  return sk;
}

} // namespace coconet::synth
