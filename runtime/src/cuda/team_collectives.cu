//===- team_collectives.cu - one- and two-shot collectives ----------------===//
//
// cuda/team_collectives.h: the kernels and their host side. Every kernel
// runs the team's grid (Team::blocks(): every block resident, so that block
// b of every member meets at barrier b) as a grid-stride loop. A member's
// part of the work maps element offset k to the same block on every
// member, so the barrier between a member's writes and another's reads of
// the same elements is the one their block shares.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/team_collectives.h"

#include "coconet/cuda/kernels.h"
#include "coconet/cuda/team.h"
#include "coconet/sizes.h"

#include "with_type.h"

#include <algorithm>
#include <string>
#include <type_traits>

namespace coconet::rt::cuda {

namespace {

using namespace kernels;

/// Element offsets [lo, hi) of block `j` of `n` split into `p` blocks.
__host__ __device__ __forceinline__ int64_t blockStart(int64_t n, int64_t p,
                                                       int64_t j) {
  return n / p * j + (j < n % p ? j : n % p);
}

/// One shot: out[i] = every member's window[i], combined.
template <typename T, ReduceOp Op>
__global__ void __launch_bounds__(kThreads, kTeamBlocksPerSM)
    oneShotAllReduce(const cc_team t, const T *window, T *out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  cc_team_sync(t); // every member's input is in its window
  for (int64_t i = first; i < n; i += stride)
    out[i] = cc_team_reduce<Op>(t, window, i);
  cc_team_sync(t); // no member still reads this one's window
}

/// Two shot: block j of the elements combined by member j into its own
/// window, then every block read from the member that combined it.
template <typename T, ReduceOp Op>
__global__ void __launch_bounds__(kThreads, kTeamBlocksPerSM)
    twoShotAllReduce(const cc_team t, T *window, T *out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  cc_team_sync(t);
  {
    const int64_t lo = blockStart(n, t.size, t.rank),
                  hi = blockStart(n, t.size, t.rank + 1);
    // Element i of this block is read by this thread alone on every
    // member (the others read their own blocks): combined in place.
    for (int64_t k = first; lo + k < hi; k += stride)
      window[lo + k] = cc_team_reduce<Op>(t, window, lo + k);
  }
  cc_team_sync(t); // every block is combined
  for (int j = 0; j < t.size; ++j) {
    const int64_t lo = blockStart(n, t.size, j),
                  hi = blockStart(n, t.size, j + 1);
    const T *from = cc_peer(t, j, window);
    for (int64_t k = first; lo + k < hi; k += stride)
      out[lo + k] = from[lo + k];
  }
  cc_team_sync(t);
}

/// Reduce-scatter of one piece: every member's window holds `c` elements
/// of each of the P blocks (block j's at j * c); this member combines its
/// own block's `c` into out.
template <typename T, ReduceOp Op>
__global__ void __launch_bounds__(kThreads, kTeamBlocksPerSM)
    oneShotReduceScatter(const cc_team t, const T *window, T *out, int64_t c) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  cc_team_sync(t);
  const T *mine = window + static_cast<int64_t>(t.rank) * c;
  for (int64_t i = first; i < c; i += stride)
    out[i] = cc_team_reduce<Op>(t, mine, i);
  cc_team_sync(t);
}

/// All-gather of one piece: every member's window holds its `c` elements;
/// member j's go to out + j * outStride.
template <typename T>
__global__ void __launch_bounds__(kThreads, kTeamBlocksPerSM)
    oneShotAllGather(const cc_team t, const T *window, T *out, int64_t c,
                     int64_t outStride) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  cc_team_sync(t);
  for (int j = 0; j < t.size; ++j) {
    const T *from = cc_peer(t, j, window);
    for (int64_t i = first; i < c; i += stride)
      out[static_cast<int64_t>(j) * outStride + i] = from[i];
  }
  cc_team_sync(t);
}

/// All-to-all of one piece: every member's window holds `c` elements of
/// each of the P blocks (block j's at j * c); member j's block for this
/// member goes to out + j * outStride.
template <typename T>
__global__ void __launch_bounds__(kThreads, kTeamBlocksPerSM)
    oneShotAllToAll(const cc_team t, const T *window, T *out, int64_t c,
                    int64_t outStride) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  cc_team_sync(t);
  for (int j = 0; j < t.size; ++j) {
    const T *from = cc_peer(t, j, window) + static_cast<int64_t>(t.rank) * c;
    for (int64_t i = first; i < c; i += stride)
      out[static_cast<int64_t>(j) * outStride + i] = from[i];
  }
  cc_team_sync(t);
}

/// Elements [at, at + c) of each of the `p` blocks of `in` (`count` apart)
/// into the window, block j's at j * c: a reducescatter's or an alltoall's
/// piece copied in, on the stream.
template <typename T>
Status blocksIntoWindow(T *window, const T *in, int64_t p, int64_t count,
                        int64_t at, int64_t c, cudaStream_t stream) {
  for (int64_t j = 0; j < p; ++j)
    COCONET_CUDA_CHECK(cudaMemcpyAsync(window + j * c, in + j * count + at,
                                       c * sizeof(T), cudaMemcpyDeviceToDevice,
                                       stream));
  return Status::success();
}

/// Calls `f` with std::integral_constant<ReduceOp, op>.
template <typename F> Status withOp(ReduceOp op, F &&f) {
  switch (op) {
#define REDUCE_OP(Name, Printed)                                               \
  case ReduceOp::Name:                                                         \
    return f(std::integral_constant<ReduceOp, ReduceOp::Name>());
#include "coconet/reduce_ops.def"
  }
  return Status::error(StatusCode::InvalidArgument, "unknown reduce op");
}

Status badArgument(const std::string &what) {
  return Status::error(StatusCode::InvalidArgument, "TeamCollectives: " + what);
}

} // namespace

Status TeamCollectives::create(const Mesh &mesh, const std::vector<int> &axes,
                               size_t windowBytes,
                               std::unique_ptr<TeamCollectives> *out) {
  out->reset();
  std::unique_ptr<TeamCollectives> c(new TeamCollectives());
  c->mesh_ = &mesh;
  c->windowBytes_ = windowBytes ? windowBytes : teamAlgorithmWindowBytes();
  for (int axis : axes) {
    std::unique_ptr<Team> team;
    std::string why;
    COCONET_RETURN_IF_ERROR(
        Team::create(mesh, axis, c->windowBytes_, &team, &why));
    c->axes_.push_back(axis);
    c->teams_.push_back(std::move(team));
    c->why_.push_back(why);
  }
  *out = std::move(c);
  return Status::success();
}

TeamCollectives::~TeamCollectives() = default;

Team *TeamCollectives::team(int axis) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i] == axis)
      return teams_[i].get();
  return nullptr;
}

std::string TeamCollectives::path(int axis) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i] == axis)
      return teams_[i] ? "a team of " + std::to_string(teams_[i]->size()) +
                             (teams_[i]->size() == 1 ? " member" : " members")
                       : "NCCL's collectives (" + why_[i] + ")";
  return "NCCL's collectives (no team was made for this axis)";
}

Status TeamCollectives::allReduce(const void *in, void *out, int64_t count,
                                  DType dtype, ReduceOp op, int axis,
                                  Algorithm algorithm, cudaStream_t stream) {
  if (count < 0)
    return badArgument("allReduce of a negative count");
  Team *t = team(axis);
  if (!t) {
    COCONET_NCCL_CHECK(ncclAllReduce(in, out, static_cast<size_t>(count),
                                     ncclType(dtype), ncclOp(op),
                                     mesh_->axisComm(axis), stream));
    return Status::success();
  }
  const size_t size = dtypeSize(dtype);
  const int64_t piece = static_cast<int64_t>(windowBytes_ / size);
  return withType(dtype, [&](auto zero) -> Status {
    using T = decltype(zero);
    return withOp(op, [&](auto opc) -> Status {
      constexpr ReduceOp Op = decltype(opc)::value;
      T *window = static_cast<T *>(t->local());
      for (int64_t at = 0; at < count; at += piece) {
        const int64_t n = std::min(piece, count - at);
        COCONET_CUDA_CHECK(
            cudaMemcpyAsync(window, static_cast<const T *>(in) + at, n * size,
                            cudaMemcpyDeviceToDevice, stream));
        T *to = static_cast<T *>(out) + at;
        if (algorithm == Algorithm::OneShot)
          COCONET_CUDA_CHECK(cc_launch(oneShotAllReduce<T, Op>, t->blocks(),
                                       kThreads, 0, stream, t->device(), window,
                                       to, n));
        else
          COCONET_CUDA_CHECK(cc_launch(twoShotAllReduce<T, Op>, t->blocks(),
                                       kThreads, 0, stream, t->device(), window,
                                       to, n));
      }
      return Status::success();
    });
  });
}

Status TeamCollectives::reduceScatter(const void *in, void *out,
                                      int64_t countPerRank, DType dtype,
                                      ReduceOp op, int axis, Algorithm,
                                      cudaStream_t stream) {
  if (countPerRank < 0)
    return badArgument("reduceScatter of a negative count");
  Team *t = team(axis);
  if (!t) {
    COCONET_NCCL_CHECK(ncclReduceScatter(
        in, out, static_cast<size_t>(countPerRank), ncclType(dtype), ncclOp(op),
        mesh_->axisComm(axis), stream));
    return Status::success();
  }
  const size_t size = dtypeSize(dtype);
  const int64_t p = t->size();
  const int64_t piece =
      std::max<int64_t>(1, static_cast<int64_t>(windowBytes_ / size) / p);
  return withType(dtype, [&](auto zero) -> Status {
    using T = decltype(zero);
    return withOp(op, [&](auto opc) -> Status {
      constexpr ReduceOp Op = decltype(opc)::value;
      T *window = static_cast<T *>(t->local());
      for (int64_t at = 0; at < countPerRank; at += piece) {
        const int64_t c = std::min(piece, countPerRank - at);
        COCONET_RETURN_IF_ERROR(blocksIntoWindow(window,
                                                 static_cast<const T *>(in), p,
                                                 countPerRank, at, c, stream));
        COCONET_CUDA_CHECK(cc_launch(oneShotReduceScatter<T, Op>, t->blocks(),
                                     kThreads, 0, stream, t->device(), window,
                                     static_cast<T *>(out) + at, c));
      }
      return Status::success();
    });
  });
}

Status TeamCollectives::allGather(const void *in, void *out,
                                  int64_t countPerRank, DType dtype, int axis,
                                  Algorithm, cudaStream_t stream) {
  if (countPerRank < 0)
    return badArgument("allGather of a negative count");
  Team *t = team(axis);
  if (!t) {
    COCONET_NCCL_CHECK(ncclAllGather(in, out, static_cast<size_t>(countPerRank),
                                     ncclType(dtype), mesh_->axisComm(axis),
                                     stream));
    return Status::success();
  }
  const size_t size = dtypeSize(dtype);
  const int64_t piece = static_cast<int64_t>(windowBytes_ / size);
  return withType(dtype, [&](auto zero) -> Status {
    using T = decltype(zero);
    T *window = static_cast<T *>(t->local());
    for (int64_t at = 0; at < countPerRank; at += piece) {
      const int64_t c = std::min(piece, countPerRank - at);
      COCONET_CUDA_CHECK(
          cudaMemcpyAsync(window, static_cast<const T *>(in) + at, c * size,
                          cudaMemcpyDeviceToDevice, stream));
      COCONET_CUDA_CHECK(cc_launch(
          oneShotAllGather<T>, t->blocks(), kThreads, 0, stream, t->device(),
          window, static_cast<T *>(out) + at, c, countPerRank));
    }
    return Status::success();
  });
}

Status TeamCollectives::allToAll(const void *in, void *out,
                                 int64_t countPerRank, DType dtype, int axis,
                                 Algorithm, cudaStream_t stream) {
  if (countPerRank < 0)
    return badArgument("allToAll of a negative count");
  Team *t = team(axis);
  if (!t) {
    COCONET_NCCL_CHECK(ncclAlltoAll(in, out, static_cast<size_t>(countPerRank),
                                    ncclType(dtype), mesh_->axisComm(axis),
                                    stream));
    return Status::success();
  }
  const size_t size = dtypeSize(dtype);
  const int64_t p = t->size();
  const int64_t piece =
      std::max<int64_t>(1, static_cast<int64_t>(windowBytes_ / size) / p);
  return withType(dtype, [&](auto zero) -> Status {
    using T = decltype(zero);
    T *window = static_cast<T *>(t->local());
    for (int64_t at = 0; at < countPerRank; at += piece) {
      const int64_t c = std::min(piece, countPerRank - at);
      COCONET_RETURN_IF_ERROR(blocksIntoWindow(
          window, static_cast<const T *>(in), p, countPerRank, at, c, stream));
      COCONET_CUDA_CHECK(cc_launch(
          oneShotAllToAll<T>, t->blocks(), kThreads, 0, stream, t->device(),
          window, static_cast<T *>(out) + at, c, countPerRank));
    }
    return Status::success();
  });
}

} // namespace coconet::rt::cuda
