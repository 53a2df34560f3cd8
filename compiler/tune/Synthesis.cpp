//===- Synthesis.cpp - the algorithms the tuner synthesises ---------------===//

#include "tune/Synthesis.h"

#include "ir/Program.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace coconet::tune {

llvm::Expected<synth::NodeProfile>
profileOfMachine(const Machine &m, synth::NodeKind kind, double bytes) {
  if (m.ranksPerNode < 1 ||
      m.ranksPerNode > static_cast<int64_t>(synth::kMaxGpusPerNode))
    return llvm::createStringError(
        "machine '" + m.shownName() + "' has " +
        std::to_string(m.ranksPerNode) + " ranks a node; a topology has 1 to " +
        std::to_string(synth::kMaxGpusPerNode) + " GPUs a node");
  auto line = [&](Level level) {
    const LinkCost *c =
        m.find(Collective::AllGather, Algorithm::Ring, level, ir::DType::F32);
    return c ? c
             : m.find(Collective::AllGather, Algorithm::Library, level,
                      ir::DType::F32);
  };
  if (kind == synth::NodeKind::NDv2 && m.ranksPerNode != 8)
    return llvm::createStringError(
        "an NDv2 node has 8 GPUs (its hybrid cube-mesh); machine '" +
        m.shownName() + "' has " + std::to_string(m.ranksPerNode) +
        " ranks a node");
  const LinkCost *node = line(Level::Node);
  if (!node || node->bandwidth <= 0)
    return llvm::createStringError(
        "machine '" + m.shownName() +
        "' prices no allgather ring (or library) on the node level: "
        "nothing to give its links");
  synth::NodeProfile p;
  p.name = m.name;
  p.gpusPerNode = static_cast<unsigned>(m.ranksPerNode);
  p.nicsPerNode = p.gpusPerNode;
  p.alpha = node->latency * 1e6;
  const double beta = bytes / node->bandwidth * 1e6;
  // (NDv2 lists its two link types; the machine has one.)
  p.betas = {beta, beta};
  p.invbws = {p.alpha + beta, p.alpha + beta};
  if (const LinkCost *net = line(Level::Network); net && net->bandwidth > 0) {
    p.hasRemote = true;
    p.remoteAlpha = net->latency * 1e6;
    p.remoteBeta = bytes / net->bandwidth * 1e6;
    p.remoteInvbw = p.remoteAlpha + p.remoteBeta;
  }
  if (kind != synth::NodeKind::NDv2)
    p.betas.resize(1), p.invbws.resize(1);
  return p;
}

llvm::Expected<std::vector<SynthesisJob>>
synthesisJobs(const ir::Program &program, const ir::DimEnv &sizes,
              const Machine &m) {
  auto axisRanks = [&](int axis) {
    int64_t n = 1;
    for (unsigned a = 0; a < program.mesh.size(); ++a)
      if (axis < 0 || static_cast<unsigned>(axis) == a) {
        auto it = sizes.find(program.mesh.axes[a].size);
        n *= it == sizes.end() ? 1 : it->second;
      }
    return n;
  };
  // Each collective of the program, and for an allreduce the
  // reducescatter and allgather a split makes of it.
  std::vector<std::pair<synth::Collective, int64_t>> wanted;
  for (const auto &stage : program.getStages()) {
    if (stage->axis < 0 && program.mesh.size() > 1)
      continue;
    const int64_t ranks = axisRanks(stage->axis);
    // (Not a switch: every other stage kind synthesises nothing.)
    const ir::StageKind k = stage->kind;
    if (k == ir::StageKind::AllGather)
      wanted.push_back({synth::Collective::AllGather, ranks});
    else if (k == ir::StageKind::AllToAll)
      wanted.push_back({synth::Collective::AllToAll, ranks});
    else if (k == ir::StageKind::ReduceScatter)
      wanted.push_back({synth::Collective::ReduceScatter, ranks});
    else if (k == ir::StageKind::AllReduce)
      for (synth::Collective c :
           {synth::Collective::AllReduce, synth::Collective::ReduceScatter,
            synth::Collective::AllGather})
        wanted.push_back({c, ranks});
  }
  std::vector<SynthesisJob> jobs;
  std::set<std::pair<synth::Collective, int64_t>> done;
  // The machine's profile, made once a job needs it.
  std::optional<synth::NodeProfile> machineProfile;
  for (const auto &[collective, ranks] : wanted) {
    const int64_t perNode = std::min(ranks, m.ranksPerNode);
    if (ranks < 2 || ranks > synth::kMaxRanks || perNode < 1 ||
        perNode > synth::kMaxGpusPerNode || ranks % perNode != 0 ||
        ranks / perNode > synth::kMaxNodes ||
        !done.insert({collective, ranks}).second)
      continue;
    if (!machineProfile) {
      auto made = profileOfMachine(m, synth::NodeKind::HubAndSpoke,
                                   static_cast<double>(1 << 20));
      if (!made)
        return made.takeError();
      machineProfile = std::move(*made);
    }
    std::optional<synth::NodeProfile> profile = machineProfile;
    profile->gpusPerNode = profile->nicsPerNode =
        static_cast<unsigned>(perNode);
    SynthesisJob job;
    job.collective = collective;
    job.ranks = ranks;
    job.perNode = perNode;
    synth::Sketch &sketch = job.sketch;
    sketch.nodes = static_cast<unsigned>(ranks / perNode);
    sketch.intra = synth::Sketch::Intra::Switch;
    synth::Sketch::SwitchGroup group;
    for (unsigned g = 0; g < perNode; ++g)
      group.gpus.push_back(g);
    sketch.switches.push_back(group);
    if (sketch.nodes > 1) {
      if (!profile->hasRemote)
        continue; // no network line: nothing to give the links between nodes
      for (unsigned g = 0; g < perNode; ++g)
        sketch.internodeConn[g] = {g};
      sketch.symmetryOffsets.push_back(
          {static_cast<unsigned>(perNode), static_cast<unsigned>(ranks)});
    }
    job.topology =
        synth::buildTopology(synth::NodeKind::HubAndSpoke, *profile, sketch);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

} // namespace coconet::tune
