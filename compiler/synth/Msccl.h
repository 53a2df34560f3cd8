//===- Msccl.h - algorithms as MSCCL's XML ----------------------*- C++ -*-===//
//
// `coconetc synth --emit=msccl` (docs/synth.md, "MSCCL XML"): an algorithm
// as the XML that the MSCCL runtime loads (the format of msccl-tools and
// TACCL's `ncclize`), so that it can be used outside this project.
//
// Each rank is a <gpu>; each peer it sends to and receives from gets a
// thread block of its own (<tb send=peer> or <tb recv=peer>, channel 0),
// whose <step>s are that connection's transfers in the algorithm's order
// (so both ends see one order). A chunk lives at one offset on every rank:
// AllGather in place in the output (o), AllReduce and ReduceScatter in
// place in the input (i), AllToAll from the input at the destination's
// offset to the output at the source's, through scratch (s) where it is
// relayed (a rank's chunk to itself: a local copy, in a thread block
// with no peer). A step that needs another thread block's step first (the chunk
// arrived, the slot read or written before) names it (depid, deps); a
// step with more than one such need is preceded by a nop per extra need.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_MSCCL_H
#define COCONET_SYNTH_MSCCL_H

#include "synth/Algorithm.h"

#include <vector>

namespace llvm {
class raw_ostream;
}

namespace coconet::synth {

/// One <step> of a thread block.
struct MscclStep {
  enum Type { Send, Recv, RecvReduceCopy, Copy, Nop } type = Nop;
  /// Buffers 'i', 'o' or 's' and chunk offsets: where the step reads
  /// (a send: here; a receive: the peer's) and writes (a send: the
  /// peer's; a receive: here). A receive-reduce-copy reads here too.
  char srcBuf = 'i', dstBuf = 'o';
  int srcOff = -1, dstOff = -1;
  int depTb = -1, depStep = -1;
  bool hasDep = false;
};

struct MscclThreadBlock {
  int send = -1, recv = -1;
  std::vector<MscclStep> steps;
};

struct MscclGpu {
  unsigned inputChunks = 0, outputChunks = 0, scratchChunks = 0;
  std::vector<MscclThreadBlock> tbs;
};

/// The MSCCL program of `alg` (verified).
std::vector<MscclGpu> lowerToMsccl(const Algorithm &alg);

/// Writes it as MSCCL's XML.
void writeMscclXml(const Algorithm &alg, const std::vector<MscclGpu> &gpus,
                   llvm::raw_ostream &os);

} // namespace coconet::synth

#endif // COCONET_SYNTH_MSCCL_H
