//===- cuda/overlap.h - an overlap's second stream and its events -*- C++
//-*-===//
//
// What a generated CUDA program's overlaps in parts run on (docs/codegen.md,
// "Overlaps"): a second stream beside the program's own. Each part's work
// goes on it after everything the main stream enqueued before (fork); a
// dispatch records when each part has arrived (arrived) and the main stream
// waits for that part alone (await); at the end the main stream waits for
// the whole second stream (join). Every call only enqueues: nothing here
// synchronises the host. The generated code names these operations; the
// streams and events are created once, in create(), and destroyed with the
// program.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_OVERLAP_H
#define COCONET_RUNTIME_CUDA_OVERLAP_H

#include "coconet/cuda/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace coconet::rt::cuda {

class SideStream {
public:
  SideStream() = default;
  SideStream(const SideStream &) = delete;
  SideStream &operator=(const SideStream &) = delete;
  ~SideStream() {
    for (cudaEvent_t e : arrived_)
      if (e)
        cudaEventDestroy(e);
    if (ready_)
      cudaEventDestroy(ready_);
    if (done_)
      cudaEventDestroy(done_);
    if (side_)
      cudaStreamDestroy(side_);
  }

  /// The stream and the events of fork and join (non-blocking, untimed).
  Status create() {
    COCONET_CUDA_CHECK(
        cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    COCONET_CUDA_CHECK(
        cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
    COCONET_CUDA_CHECK(
        cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    return Status();
  }
  /// One event per part of the longest dispatch (`parts` of them).
  Status addArrivals(int64_t parts) {
    arrived_.assign(static_cast<size_t>(parts), nullptr);
    for (cudaEvent_t &e : arrived_)
      COCONET_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return Status();
  }

  cudaStream_t stream() const { return side_; }
  /// The second stream runs what comes next after everything enqueued on
  /// `main` so far.
  Status fork(cudaStream_t main) {
    COCONET_CUDA_CHECK(cudaEventRecord(ready_, main));
    COCONET_CUDA_CHECK(cudaStreamWaitEvent(side_, ready_, 0));
    return Status();
  }
  /// Part `c` of a dispatch has arrived once what the second stream holds
  /// now has run.
  Status arrived(int64_t c) {
    COCONET_CUDA_CHECK(
        cudaEventRecord(arrived_[static_cast<size_t>(c)], side_));
    return Status();
  }
  /// `main` runs what comes next once part `c` has arrived.
  Status await(cudaStream_t main, int64_t c) {
    COCONET_CUDA_CHECK(
        cudaStreamWaitEvent(main, arrived_[static_cast<size_t>(c)], 0));
    return Status();
  }
  /// `main` runs what comes next once everything on the second stream has.
  Status join(cudaStream_t main) {
    COCONET_CUDA_CHECK(cudaEventRecord(done_, side_));
    COCONET_CUDA_CHECK(cudaStreamWaitEvent(main, done_, 0));
    return Status();
  }

private:
  cudaStream_t side_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  std::vector<cudaEvent_t> arrived_;
};

} // namespace coconet::rt::cuda

#endif // COCONET_RUNTIME_CUDA_OVERLAP_H
