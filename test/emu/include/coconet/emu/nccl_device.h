//===- emu/nccl_device.h - NCCL 2.28's device API, emulated -----*- C++ -*-===//
//
// The device side of NCCL's symmetric memory under the emulation: what
// runtime/include/coconet/cuda/team.h calls where nvcc would call
// ncclGetLsaPointer and ncclLsaBarrierSession. The host side is NCCL's own
// API (nccl.h, nccl_device/core.h), defined by src/nccl_device.cpp:
//
//   ncclMemAlloc / ncclMemFree        memory (a memfd) that every rank of
//                                     the node can map
//   ncclCommWindowRegister / ...Deregister   (NCCL_WIN_COLL_SYMMETRIC)
//                                     every member maps every peer's window
//   ncclDevCommCreate / ...Destroy    rank, LSA team, and lsaBarrierCount
//                                     LSA barriers: counters in memory
//                                     every member maps
//   ncclTeamLsa(ncclComm_t), ncclTeamWorld(ncclComm_t)
//
// A peer's window is real memory (a mapping of the peer's), so loads and
// stores through lsaPointer reach it, and a barrier is real atomics.
// Included by prelude.h; needs neither nccl.h nor mpi.h.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_EMU_NCCL_DEVICE_H
#define COCONET_EMU_NCCL_DEVICE_H

#include <cstddef>

struct ncclWindow_vidmem; // nccl.h: typedef ncclWindow_vidmem *ncclWindow_t
struct ncclDevComm;

namespace coconet::emu {

/// ncclGetLsaPointer(w, offset, peer): byte `offset` of LSA peer `peer`'s
/// part of window `w` (the peer itself: the registered buffer). A peer
/// outside [0, lsaSize) or an offset past the window's size is a device
/// fault: a message on stderr and abort (on a GPU, an illegal address).
void *lsaPointer(ncclWindow_vidmem *w, size_t offset, int peer);

/// ncclLsaBarrierSession(cta, comm, ncclTeamTagLsa(), index).sync(cta,
/// acq_rel), called by one thread of the block (team.h puts
/// __syncthreads on both sides): this member's arrival at LSA barrier
/// `index` of `comm` (a release), then a wait until every member of the
/// LSA team has arrived as often (an acquire). An index outside the
/// device communicator's barriers, a destroyed device communicator, or a
/// barrier some member never reaches (60 s) is a device fault: a message
/// on stderr and abort.
void lsaBarrierSync(const ncclDevComm &comm, unsigned index);

} // namespace coconet::emu

#endif // COCONET_EMU_NCCL_DEVICE_H
