//===- emu_internal.h - between the emulation's source files ----*- C++ -*-===//

#ifndef COCONET_EMU_INTERNAL_H
#define COCONET_EMU_INTERNAL_H

#include <cuda_runtime.h>

#include <functional>

namespace coconet::emu {

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
