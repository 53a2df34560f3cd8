//===- cuda/algorithm.h - running a collective algorithm on NCCL -*- C++
//-*-===//
//
// Runs a collective algorithm table (coconet/algorithm.h, written by
// `coconetc synth --emit=cpp`) among the ranks of an NCCL communicator with
// NCCL's point-to-point calls, enqueued on a stream: per step, one
// ncclGroupStart/ncclGroupEnd holding an ncclRecv for every transfer this
// rank is the destination of and an ncclSend for every transfer it is the
// source of (two ranks' calls match in the order both make them: the
// step's order), then a kernel per reduction that combines what arrived
// into this rank's copy, in the step's order. Nothing waits on the host:
// run() only enqueues.
//
// The results are those of cpu::runAlgorithm (coconet/cpu/algorithm.h) bit
// for bit: the algorithm's order, the receiver's value first, combined by
// coconet/combine.h's rule and rounded to the element type at once. Avg is
// not offered.
//
// create() checks the table (coconet/algorithm_check.h) against the
// communicator's size and allocates the device memory a run needs (a
// ReduceScatter's working copy, an AllToAll's relayed chunks, arrivals
// that are combined or that land where this rank sends from in the same
// step) once; run() allocates nothing.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_ALGORITHM_H
#define COCONET_RUNTIME_CUDA_ALGORITHM_H

#include "coconet/algorithm.h"
#include "coconet/algorithm_check.h"
#include "coconet/cuda/runtime.h"
#include "coconet/status.h"
#include "coconet/types.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace coconet::rt::cuda {

class AlgorithmRunner {
public:
  /// For `table` on `comm` (this rank's place in it), chunks of
  /// `chunkElements` elements of `dtype`, reductions by `op`; on the
  /// current device.
  static Status create(const algorithm::Table &table, ncclComm_t comm,
                       int64_t chunkElements, DType dtype, ReduceOp op,
                       std::unique_ptr<AlgorithmRunner> *out);
  ~AlgorithmRunner();
  AlgorithmRunner(const AlgorithmRunner &) = delete;
  AlgorithmRunner &operator=(const AlgorithmRunner &) = delete;

  /// Enqueues the algorithm on `stream`: `in` holds inputChunks(table)
  /// chunks, `out` room for outputChunks(table) (device memory, not
  /// overlapping).
  Status run(const void *in, void *out, cudaStream_t stream);

private:
  AlgorithmRunner() = default;
  /// Where a transfer's chunk is on this rank.
  enum class Place : uint8_t { In, Out, Work, Arrived };
  struct Slot {
    Place place;
    uint64_t chunk; ///< the chunk's index in its place
  };
  struct Op {
    bool send;
    int peer;
    Slot slot;
  };
  /// After a step's group: combine (or copy) arrived chunk `from` into
  /// `to`.
  struct Land {
    Slot to;
    uint64_t from;
    bool reduce;
  };
  struct StepPlan {
    std::vector<Op> ops;
    std::vector<Land> lands;
  };
  void *address(Slot slot, const void *in, void *out) const;

  const algorithm::Table *table_ = nullptr;
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int64_t chunkElements_ = 0;
  size_t chunkBytes_ = 0;
  DType dtype_ = DType::F32;
  ReduceOp op_ = ReduceOp::Sum;
  std::vector<StepPlan> steps_;
  void *work_ = nullptr;    ///< a ReduceScatter's copy, an AllToAll's relays
  void *arrived_ = nullptr; ///< the arrivals of the step that has most
};

} // namespace coconet::rt::cuda

#endif // COCONET_RUNTIME_CUDA_ALGORITHM_H
