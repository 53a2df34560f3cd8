//===- Msccl.cpp - algorithms as MSCCL's XML ------------------------------===//

#include "synth/Msccl.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace coconet::synth {

namespace {

/// Where a rank keeps its copy of a chunk.
struct Slot {
  char buf;
  int off;
  bool operator<(const Slot &o) const {
    return std::pair(buf, off) < std::pair(o.buf, o.off);
  }
};

/// A step of a thread block: (gpu's tb index, step index).
using StepRef = std::pair<int, int>;

class Lowering {
public:
  explicit Lowering(const Algorithm &alg)
      : alg(alg), R(alg.ranks), k(alg.chunksPerRank), gpus(alg.ranks) {
    for (MscclGpu &g : gpus) {
      switch (alg.collective) {
      case Collective::AllGather:
        g.inputChunks = k;
        g.outputChunks = R * k;
        break;
      case Collective::AllReduce:
        g.inputChunks = g.outputChunks = R * k;
        break;
      case Collective::ReduceScatter:
        g.inputChunks = R * k;
        g.outputChunks = k;
        break;
      case Collective::AllToAll:
        g.inputChunks = g.outputChunks = R * k;
        break;
      }
    }
  }

  std::vector<MscclGpu> run() {
    // AllToAll: what a rank sends itself is a local copy.
    if (alg.collective == Collective::AllToAll)
      for (unsigned r = 0; r < R; ++r) {
        MscclThreadBlock tb;
        for (unsigned i = 0; i < k; ++i) {
          MscclStep op;
          op.type = MscclStep::Copy;
          op.srcBuf = 'i';
          op.srcOff = int(r * k + i);
          op.dstBuf = 'o';
          op.dstOff = int(r * k + i);
          tb.steps.push_back(op);
        }
        gpus[r].tbs.push_back(tb);
      }
    for (const Step &step : alg.steps) {
      // A step's transfers read the state before it: every send first.
      for (const Transfer &t : step.transfers)
        send(t);
      for (const Transfer &t : step.transfers)
        receive(t);
    }
    return std::move(gpus);
  }

private:
  Slot slotOf(unsigned rank, unsigned chunk) {
    switch (alg.collective) {
    case Collective::AllGather:
      return {'o', int(chunk)};
    case Collective::AllReduce:
    case Collective::ReduceScatter:
      return {'i', int(chunk)};
    case Collective::AllToAll: {
      unsigned s = chunk / (R * k), d = (chunk / k) % R, i = chunk % k;
      if (rank == s)
        return {'i', int(d * k + i)};
      if (rank == d)
        return {'o', int(s * k + i)};
      auto [it, added] =
          scratch.try_emplace({rank, chunk}, int(gpus[rank].scratchChunks));
      if (added)
        ++gpus[rank].scratchChunks;
      return {'s', it->second};
    }
    }
    return {'o', int(chunk)};
  }

  int tbOf(unsigned rank, unsigned peer, bool isSend) {
    auto [it, added] = tbs.try_emplace(std::tuple(rank, peer, isSend),
                                       int(gpus[rank].tbs.size()));
    if (added) {
      MscclThreadBlock tb;
      (isSend ? tb.send : tb.recv) = int(peer);
      gpus[rank].tbs.push_back(tb);
    }
    return it->second;
  }

  /// Appends `op` to thread block `tb` of `rank` after what it must wait
  /// for (`deps`, other blocks' steps): the first in the step itself, each
  /// other in a nop before it. Returns the step.
  StepRef append(unsigned rank, int tb, MscclStep op,
                 const std::set<StepRef> &deps) {
    // Per other block only its latest step matters (a block runs in order).
    std::map<int, int> latest;
    for (const StepRef &d : deps)
      if (d.first != tb)
        latest[d.first] = std::max(latest[d.first], d.second);
    std::vector<MscclStep> &steps = gpus[rank].tbs[tb].steps;
    bool first = true;
    for (const auto &[depTb, depStep] : latest) {
      gpus[rank].tbs[depTb].steps[depStep].hasDep = true;
      if (first) {
        op.depTb = depTb;
        op.depStep = depStep;
        first = false;
        continue;
      }
      MscclStep nop;
      nop.depTb = depTb;
      nop.depStep = depStep;
      steps.push_back(nop);
    }
    // The nops go before the op; its own dependency stays with it.
    steps.push_back(op);
    return {tb, int(steps.size() - 1)};
  }

  void send(const Transfer &t) {
    Slot here = slotOf(t.src, t.chunk), there = slotOf(t.dst, t.chunk);
    MscclStep op;
    op.type = MscclStep::Send;
    op.srcBuf = here.buf;
    op.srcOff = here.off;
    op.dstBuf = there.buf;
    op.dstOff = there.off;
    std::set<StepRef> deps;
    if (auto w = writer.find({t.src, here}); w != writer.end())
      deps.insert(w->second);
    StepRef at = append(t.src, tbOf(t.src, t.dst, true), op, deps);
    readers[{t.src, here}].push_back(at);
  }

  void receive(const Transfer &t) {
    Slot here = slotOf(t.dst, t.chunk), there = slotOf(t.src, t.chunk);
    MscclStep op;
    op.type = t.reduce ? MscclStep::RecvReduceCopy : MscclStep::Recv;
    op.srcBuf = t.reduce ? here.buf : there.buf;
    op.srcOff = t.reduce ? here.off : there.off;
    op.dstBuf = here.buf;
    op.dstOff = here.off;
    std::set<StepRef> deps;
    if (auto w = writer.find({t.dst, here}); w != writer.end())
      deps.insert(w->second);
    auto r = readers.find({t.dst, here});
    if (r != readers.end())
      deps.insert(r->second.begin(), r->second.end());
    StepRef at = append(t.dst, tbOf(t.dst, t.src, false), op, deps);
    writer[{t.dst, here}] = at;
    if (r != readers.end())
      r->second.clear();
  }

  const Algorithm &alg;
  const unsigned R, k;
  std::vector<MscclGpu> gpus;
  std::map<std::pair<unsigned, unsigned>, int> scratch;
  std::map<std::tuple<unsigned, unsigned, bool>, int> tbs;
  std::map<std::pair<unsigned, Slot>, StepRef> writer;
  std::map<std::pair<unsigned, Slot>, std::vector<StepRef>> readers;
};

llvm::StringRef collName(Collective c) {
  switch (c) {
  case Collective::AllGather:
    return "allgather";
  case Collective::AllToAll:
    return "alltoall";
  case Collective::ReduceScatter:
    return "reduce_scatter";
  case Collective::AllReduce:
    return "allreduce";
  }
  return "custom";
}

llvm::StringRef typeName(MscclStep::Type t) {
  switch (t) {
  case MscclStep::Send:
    return "s";
  case MscclStep::Recv:
    return "r";
  case MscclStep::RecvReduceCopy:
    return "rrc";
  case MscclStep::Copy:
    return "cpy";
  case MscclStep::Nop:
    return "nop";
  }
  return "nop";
}

/// `text` as an XML attribute's value (quotes and markup escaped, control
/// characters replaced).
std::string attr(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) ? c : '_';
  }
  return out;
}

} // namespace

std::vector<MscclGpu> lowerToMsccl(const Algorithm &alg) {
  return Lowering(alg).run();
}

void writeMscclXml(const Algorithm &alg, const std::vector<MscclGpu> &gpus,
                   llvm::raw_ostream &os) {
  const unsigned R = alg.ranks, k = alg.chunksPerRank;
  // The old runtime keeps at most 63 characters of a name.
  std::string name = alg.name.substr(0, 63);
  os << "<algo name=\"" << attr(name)
     << "\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"" << R * k
     << "\" ngpus=\"" << R << "\" coll=\"" << collName(alg.collective)
     << "\" inplace=\"" << (alg.collective == Collective::AllToAll ? 0 : 1)
     << "\" outofplace=\"" << (alg.collective == Collective::AllToAll ? 1 : 0)
     << "\" minBytes=\"0\" maxBytes=\"2147483648\">\n";
  for (unsigned g = 0; g < gpus.size(); ++g) {
    const MscclGpu &gpu = gpus[g];
    os << "  <gpu id=\"" << g << "\" i_chunks=\"" << gpu.inputChunks
       << "\" o_chunks=\"" << gpu.outputChunks << "\" s_chunks=\""
       << gpu.scratchChunks << "\">\n";
    for (unsigned t = 0; t < gpu.tbs.size(); ++t) {
      const MscclThreadBlock &tb = gpu.tbs[t];
      os << "    <tb id=\"" << t << "\" send=\"" << tb.send << "\" recv=\""
         << tb.recv << "\" chan=\"0\">\n";
      for (unsigned s = 0; s < tb.steps.size(); ++s) {
        const MscclStep &st = tb.steps[s];
        os << "      <step s=\"" << s << "\" type=\"" << typeName(st.type)
           << "\" srcbuf=\"" << st.srcBuf << "\" srcoff=\"" << st.srcOff
           << "\" dstbuf=\"" << st.dstBuf << "\" dstoff=\"" << st.dstOff
           << "\" cnt=\"" << (st.type == MscclStep::Nop ? 0 : 1)
           << "\" depid=\"" << st.depTb << "\" deps=\"" << st.depStep
           << "\" hasdep=\"" << (st.hasDep ? 1 : 0) << "\"/>\n";
      }
      os << "    </tb>\n";
    }
    os << "  </gpu>\n";
  }
  os << "</algo>\n";
}

} // namespace coconet::synth
