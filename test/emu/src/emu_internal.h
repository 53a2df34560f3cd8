//===- emu_internal.h - between the emulation's source files ----*- C++ -*-===//

#ifndef COCONET_EMU_INTERNAL_H
#define COCONET_EMU_INTERNAL_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <functional>
#include <memory>
#include <string>

namespace coconet::rt::cpu {
class Mesh;
} // namespace coconet::rt::cpu

/// An emulated NCCL communicator (src/nccl.cpp): an MPI communicator.
struct ncclComm {
  MPI_Comm comm = MPI_COMM_NULL; // owned
  int rank = 0, size = 1;
  /// NCCL's LSA team (the ranks that reach each other's memory): the
  /// contiguous blocks of ranks on one node (MPI_COMM_TYPE_SHARED), of the
  /// greatest size that divides every such block, as NCCL computes it.
  int lsaRank = 0, lsaSize = 1;
  std::unique_ptr<coconet::rt::cpu::Mesh> mesh; // one axis: the whole comm
  ~ncclComm();
};

namespace coconet::emu {

/// Prints "nccl emulation: WHAT" to stderr and returns `result` (what
/// every emulated NCCL call does when it refuses).
ncclResult_t ncclFail(ncclResult_t result, const std::string &what);

/// Is a group (ncclGroupStart) open?
bool ncclInGroup();

/// Queues `task` on `stream` (0: the legacy default stream); the error it
/// returns is kept by the stream for its next synchronisation.
void enqueueTask(cudaStream_t stream, std::function<cudaError_t()> task);

/// Adds memory allocated elsewhere (a shared-memory window) to the
/// registry of device memory, and takes it out.
void registerDeviceMemory(void *p, size_t bytes);
void unregisterDeviceMemory(void *p);

/// In the stream-race mode (COCONET_EMU_RACE=SEED), a random pause before a
/// stream's task, so that streams interleave differently from run to run;
/// nothing otherwise.
void raceDelay();

} // namespace coconet::emu

#endif // COCONET_EMU_INTERNAL_H
