//===- cuda/team.h - the members of a mesh axis, from inside a kernel -----===//
//
// What a fused collective kernel of the CUDA target uses to reach its
// peers (the CUDA counterpart of cpu/team.h): the members of one mesh axis
// with symmetric memory (the same number of bytes on each, registered as
// one NCCL window) that a kernel loads from and stores into directly, and
// a barrier across the team. On a GPU it is NCCL 2.28's device API:
// memory from ncclMemAlloc registered with ncclCommWindowRegister(...,
// NCCL_WIN_COLL_SYMMETRIC), a device communicator (ncclDevCommCreate) with
// one LSA barrier per block, ncclGetLsaPointer and ncclLsaBarrierSession.
// Under the tests' CPU emulation of CUDA (test/emu/) the same host calls
// go to the emulation's NCCL (shared memory between the ranks' processes)
// and the device side to its counterparts of the two device functions.
//
//   host:   Team::create(mesh, axis, bytes, &team, &why)   collective
//           team->local()                                  this rank's bytes
//           team->device()                                 to a kernel
//   kernel: cc_peer(t, member, p)        p (in local()) in member's memory
//           cc_team_sync(t)              every thread of the block calls it
//
// When the device path is unavailable (the axis's members do not all
// reach each other's memory, NCCL is not the version this was compiled
// against, symmetric memory is off, or COCONET_TEAM=off), every member is
// told there is no team and why, and takes the fallback: NCCL collectives
// and separate kernels.
//
// A team of one member (a mesh axis of size 1, one rank on one GPU) needs
// no peer: its memory is cudaMalloc'd, cc_peer gives back the pointer and
// cc_team_sync is the block's barrier, so the fused kernels run without
// NCCL's symmetric memory (which NCCL 2.28.3 refuses for a one-GPU
// communicator). Only COCONET_TEAM=off sends it to the fallback.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_TEAM_H
#define COCONET_RUNTIME_CUDA_TEAM_H

#include "coconet/combine.h"
#include "coconet/cuda/runtime.h"
#include "coconet/numeric.h"
#include "coconet/types.h"
#if defined(__CUDACC__) || defined(COCONET_EMU_PRELUDE_H)
#include "coconet/cuda/kernels.h"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>
// NCCL's device headers leave parameters unused (-Wextra in our builds).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
#include <nccl_device.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace coconet::rt::cuda {

namespace kernels {

/// Blocks per multiprocessor of a team's grid (a fused kernel's, a team
/// collective's): every block of such a grid must be resident while the
/// team's barriers wait, which `__launch_bounds__(kThreads,
/// kTeamBlocksPerSM)` on those kernels guarantees (at most 64 registers a
/// thread). One block per multiprocessor kept too few loads in flight to
/// reach HBM bandwidth (a third of it on an H200);
/// COCONET_TEAM_BLOCKS_PER_SM asks for fewer (Team::blocks()).
constexpr int kTeamBlocksPerSM = 4;

/// A kernel's view of a team: passed by value. A team of one member
/// (size 1) has neither a device communicator nor a window: its memory is
/// plain device memory and its barrier the block's.
struct cc_team {
  ncclDevComm comm;
  ncclWindow_t window;
  /// This member's symmetric memory (the window's first byte).
  char *base;
  int rank, size;
};

// The device side: NCCL's device API under nvcc, the emulation's under a
// host compiler with its prelude (test/emu/); a plain host compiler (the
// runtime's own .cpp files, an application's) sees only cc_team.
#if defined(__CUDACC__) || defined(COCONET_EMU_PRELUDE_H)

using ::coconet::rt::ReduceOp;

/// Where `p` (inside this member's symmetric memory) is in `member`'s.
template <typename T>
__device__ __forceinline__ T *cc_peer(const cc_team &t, int member, T *p) {
  if (t.size == 1) // a team of one: its own memory, no window
    return p;
  const size_t offset = static_cast<size_t>(reinterpret_cast<const char *>(p) -
                                            static_cast<const char *>(t.base));
#if defined(__CUDACC__)
  return static_cast<T *>(ncclGetLsaPointer(t.window, offset, member));
#else
  return static_cast<T *>(::coconet::emu::lsaPointer(t.window, offset, member));
#endif
}

/// A barrier of this block with the blocks of the same index on every
/// member (release before, acquire after): what a member's block wrote
/// before it, the same block of every member reads after it. Every thread
/// of the block calls it; every member's grid has the same blocks.
__device__ __forceinline__ void cc_team_sync(const cc_team &t) {
  if (t.size == 1) { // a team of one: the block's own barrier
    __syncthreads();
    return;
  }
#if defined(__CUDACC__)
  ncclCoopCta cta;
  ncclLsaBarrierSession<ncclCoopCta> barrier(cta, t.comm, ncclTeamTagLsa(),
                                             blockIdx.x);
  barrier.sync(cta, ::cuda::memory_order_acq_rel);
#else
  __syncthreads();
  if (threadIdx.x == 0)
    ::coconet::emu::lsaBarrierSync(t.comm, blockIdx.x);
  __syncthreads();
#endif
}

/// How a fused kernel holds and combines the members' elements: the one
/// rule of coconet/combine.h (the simulator's and the CPU runtime's), with
/// the CUDA types of f16 and bf16.
template <typename T> struct cc_acc : ::coconet::rt::Element<T> {};
template <> struct cc_acc<__half> {
  using Acc = double;
  static constexpr bool kFloat = true;
  __device__ __forceinline__ static Acc load(__half v) {
    return __half2float(v);
  }
  __device__ __forceinline__ static __half store(Acc a) {
    return __double2half(a);
  }
};
template <> struct cc_acc<__nv_bfloat16> {
  using Acc = double;
  static constexpr bool kFloat = true;
  __device__ __forceinline__ static Acc load(__nv_bfloat16 v) {
    return __bfloat162float(v);
  }
  __device__ __forceinline__ static __nv_bfloat16 store(Acc a) {
    return __double2bfloat16(a);
  }
};

/// `a` combined with `b` by `Op` (Avg sums; cc_finish divides).
template <ReduceOp Op, typename T>
__device__ __forceinline__ typename cc_acc<T>::Acc
cc_combine(typename cc_acc<T>::Acc a, typename cc_acc<T>::Acc b) {
  if constexpr (cc_acc<T>::kFloat)
    return ::coconet::rt::combineFloat<Op>(a, b);
  else
    return ::coconet::rt::combineInt<Op, cc_acc<T>::kUnsigned>(a, b);
}

/// The combined value rounded to the element type (avg: divided first).
template <ReduceOp Op, typename T>
__device__ __forceinline__ T cc_finish(typename cc_acc<T>::Acc a, int members) {
  if constexpr (Op == ReduceOp::Avg && cc_acc<T>::kFloat)
    a = __ddiv_rn(a, static_cast<double>(members));
  return cc_acc<T>::store(a);
}

/// Element `i` of `p` (in this member's symmetric memory) combined over
/// every member of the team, in the members' order (coconet/combine.h's
/// combineMembersInOrder).
template <ReduceOp Op, typename T>
__device__ __forceinline__ T cc_team_reduce(const cc_team &t, const T *p,
                                            int64_t i) {
  using Acc = cc_acc<T>;
  const typename Acc::Acc acc = ::coconet::rt::combineMembersInOrder(
      t.size, [&](int64_t m) { return Acc::load(cc_peer(t, m, p)[i]); },
      [](typename Acc::Acc a, typename Acc::Acc b) {
        return cc_combine<Op, T>(a, b);
      });
  return cc_finish<Op, T>(acc, t.size);
}

/// H accumulators of a vector's lanes: one value for the members' order.
template <typename A, int H> struct cc_lanes {
  A v[H];
};

/// Vector `v` of `p` (W elements, one aligned load per member) combined
/// over every member of the team, lane by lane, as cc_team_reduce: the
/// members' tree unrolled (at most 8 members) over vectors of at most 4
/// lanes, so that its pending left values stay in registers (8 lanes of
/// f16 at once took the fused kernels to 64 registers and spills); one
/// element at a time on a larger team.
template <ReduceOp Op, int W, typename T>
__device__ __forceinline__ cc_vec<T, W>
cc_team_reduce_vec(const cc_team &t, const T *p, int64_t v) {
  using Acc = cc_acc<T>;
  cc_vec<T, W> out;
  if (t.size > ::coconet::rt::kFewMembers) {
#pragma unroll 1
    for (int j = 0; j < W; ++j)
      out.v[j] = cc_team_reduce<Op>(t, p, v * W + j);
    return out;
  }
  constexpr int H = W > 4 ? 4 : W;
  using Lanes = cc_lanes<typename Acc::Acc, H>;
#pragma unroll
  for (int h = 0; h < W; h += H) {
    auto load = [&](int64_t m) {
      const cc_vec<T, H> x = reinterpret_cast<const cc_vec<T, H> *>(
          cc_peer(t, m, p))[(v * W + h) / H];
      Lanes l;
#pragma unroll
      for (int j = 0; j < H; ++j)
        l.v[j] = Acc::load(x.v[j]);
      return l;
    };
    auto combine = [](Lanes a, const Lanes &b) {
#pragma unroll
      for (int j = 0; j < H; ++j)
        a.v[j] = cc_combine<Op, T>(a.v[j], b.v[j]);
      return a;
    };
    const Lanes acc =
        ::coconet::rt::combineFewMembersInOrder(t.size, load, combine);
#pragma unroll
    for (int j = 0; j < H; ++j)
      out.v[h + j] = cc_finish<Op, T>(acc.v[j], t.size);
  }
  return out;
}

#endif // __CUDACC__ || COCONET_EMU_PRELUDE_H

} // namespace kernels

class Team {
public:
  /// Collective over the members of `axis` (-1: the world) of `mesh`:
  /// `bytes` of symmetric memory on each (the same on every member) and a
  /// device communicator with a barrier per block of blocks(). When the
  /// device path is unavailable, `*out` is null and `*why` says why, on
  /// every member (they vote first); a failure of a call is an error.
  /// Synchronises the host (setup, not a step).
  static Status create(const Mesh &mesh, int axis, size_t bytes,
                       std::unique_ptr<Team> *out, std::string *why);
  /// Waits for the device, then releases the window, the device
  /// communicator and the memory (local calls).
  ~Team();
  Team(const Team &) = delete;
  Team &operator=(const Team &) = delete;

  int rank() const { return device_.rank; }
  int size() const { return device_.size; }
  /// This member's symmetric memory.
  void *local() const { return device_.base; }
  /// What a kernel is given.
  const kernels::cc_team &device() const { return device_; }
  /// The blocks of every fused kernel's grid: the same on every member
  /// (the smallest number of multiprocessors among them times
  /// kTeamBlocksPerSM, or COCONET_TEAM_BLOCKS_PER_SM from 1 to that, the
  /// smallest any member asks for; the kernels' launch bounds keep every
  /// block of such a grid resident while the team's barriers wait).
  int blocks() const { return blocks_; }

private:
  Team() = default;
  ncclComm_t comm_ = nullptr;
  kernels::cc_team device_{};
  bool registered_ = false, devComm_ = false;
  /// A team of one member: memory from cudaMalloc, no NCCL resources.
  bool alone_ = false;
  int blocks_ = 1;
};

} // namespace coconet::rt::cuda

#endif // COCONET_RUNTIME_CUDA_TEAM_H
