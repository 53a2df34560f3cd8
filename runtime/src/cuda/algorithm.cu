//===- algorithm.cu - running a collective algorithm on NCCL --------------===//
//
// cuda/algorithm.h: the plan made once (create) and its run on a stream.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/algorithm.h"

#include "coconet/cuda/kernels.h"
#include "coconet/cuda/team.h"

#include "with_type.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace coconet::rt::cuda {

namespace {

using namespace kernels;
using algorithm::Collective;
using algorithm::Table;
using algorithm::Transfer;

/// to[i] = to[i] (+) from[i]: the receiver's value first, combine.h's rule.
template <typename T, ReduceOp Op>
__global__ void combineInto(T *to, const T *from, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride) {
    using Acc = cc_acc<T>;
    to[i] = cc_finish<Op, T>(
        cc_combine<Op, T>(Acc::load(to[i]), Acc::load(from[i])), 1);
  }
}

Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument,
                       "AlgorithmRunner: " + message);
}

} // namespace

Status AlgorithmRunner::create(const Table &t, ncclComm_t comm,
                               int64_t chunkElements, DType dtype, ReduceOp op,
                               std::unique_ptr<AlgorithmRunner> *out) {
  out->reset();
  int rank = 0, size = 0;
  COCONET_NCCL_CHECK(ncclCommUserRank(comm, &rank));
  COCONET_NCCL_CHECK(ncclCommCount(comm, &size));
  COCONET_RETURN_IF_ERROR(algorithm::check(t, size, "AlgorithmRunner"));
  COCONET_RETURN_IF_ERROR(
      algorithm::checkRun(t, chunkElements, dtype, op, "AlgorithmRunner"));
  std::unique_ptr<AlgorithmRunner> r(new AlgorithmRunner());
  r->table_ = &t;
  r->comm_ = comm;
  r->rank_ = rank;
  r->chunkElements_ = chunkElements;
  r->chunkBytes_ = static_cast<size_t>(chunkElements) * dtypeSize(dtype);
  r->dtype_ = dtype;
  r->op_ = op;

  const uint32_t me = static_cast<uint32_t>(rank);
  const uint64_t k = t.chunksPerRank, rk = uint64_t{t.ranks} * k;
  std::unordered_map<uint32_t, uint64_t> relays;
  auto slot = [&](uint32_t chunk) -> Slot {
    switch (t.collective) {
    case Collective::AllGather:
    case Collective::AllReduce:
      return {Place::Out, chunk};
    case Collective::ReduceScatter:
      return {Place::Work, chunk};
    case Collective::AllToAll:
      break;
    }
    const uint64_t s = chunk / rk, d = (chunk / k) % t.ranks, i = chunk % k;
    if (s == me)
      return {Place::In, d * k + i};
    if (d == me)
      return {Place::Out, s * k + i};
    auto [it, added] = relays.emplace(chunk, relays.size());
    return {Place::Work, it->second};
  };
  uint64_t mostArrived = 0;
  std::vector<uint32_t> sending;
  for (uint32_t s = 0; s < t.numSteps; ++s) {
    StepPlan plan;
    const Transfer *first = t.transfers + t.stepBegin[s];
    const Transfer *last = t.transfers + t.stepBegin[s + 1];
    sending.clear();
    for (const Transfer *x = first; x != last; ++x)
      if (x->src == me)
        sending.push_back(x->chunk);
    std::sort(sending.begin(), sending.end());
    uint64_t arrived = 0;
    // Receives first, then sends, each in the step's order (as the CPU
    // runtime posts them); a group starts them all at once.
    for (const Transfer *x = first; x != last; ++x) {
      if (x->dst != me)
        continue;
      const Slot to = slot(x->chunk);
      if (x->reduce ||
          std::binary_search(sending.begin(), sending.end(), x->chunk)) {
        plan.ops.push_back(
            {false, static_cast<int>(x->src), {Place::Arrived, arrived}});
        plan.lands.push_back({to, arrived, x->reduce != 0});
        ++arrived;
      } else {
        plan.ops.push_back({false, static_cast<int>(x->src), to});
      }
    }
    for (const Transfer *x = first; x != last; ++x)
      if (x->src == me)
        plan.ops.push_back({true, static_cast<int>(x->dst), slot(x->chunk)});
    mostArrived = std::max(mostArrived, arrived);
    r->steps_.push_back(std::move(plan));
  }
  uint64_t workChunks = 0;
  if (t.collective == Collective::ReduceScatter)
    workChunks = algorithm::numChunks(t);
  else if (t.collective == Collective::AllToAll)
    workChunks = relays.size();
  if (workChunks && r->chunkBytes_)
    COCONET_CUDA_CHECK(cudaMalloc(&r->work_, workChunks * r->chunkBytes_));
  if (mostArrived && r->chunkBytes_)
    COCONET_CUDA_CHECK(cudaMalloc(&r->arrived_, mostArrived * r->chunkBytes_));
  *out = std::move(r);
  return Status::success();
}

AlgorithmRunner::~AlgorithmRunner() {
  if (work_)
    cudaFree(work_);
  if (arrived_)
    cudaFree(arrived_);
}

void *AlgorithmRunner::address(Slot slot, const void *in, void *out) const {
  char *base = nullptr;
  switch (slot.place) {
  case Place::In:
    base = static_cast<char *>(const_cast<void *>(in));
    break;
  case Place::Out:
    base = static_cast<char *>(out);
    break;
  case Place::Work:
    base = static_cast<char *>(work_);
    break;
  case Place::Arrived:
    base = static_cast<char *>(arrived_);
    break;
  }
  return base + slot.chunk * chunkBytes_;
}

Status AlgorithmRunner::run(const void *in, void *out, cudaStream_t stream) {
  if (chunkBytes_ == 0)
    return Status::success();
  if (!in || !out)
    return invalid("a null buffer");
  const Table &t = *table_;
  const uint64_t k = t.chunksPerRank, me = static_cast<uint64_t>(rank_);
  const size_t bytes = chunkBytes_;
  switch (t.collective) {
  case Collective::AllGather:
    COCONET_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<char *>(out) + me * k * bytes, in,
                        k * bytes, cudaMemcpyDeviceToDevice, stream));
    break;
  case Collective::AllReduce:
    COCONET_CUDA_CHECK(cudaMemcpyAsync(out, in, algorithm::numChunks(t) * bytes,
                                       cudaMemcpyDeviceToDevice, stream));
    break;
  case Collective::ReduceScatter:
    COCONET_CUDA_CHECK(cudaMemcpyAsync(work_, in,
                                       algorithm::numChunks(t) * bytes,
                                       cudaMemcpyDeviceToDevice, stream));
    break;
  case Collective::AllToAll:
    COCONET_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<char *>(out) + me * k * bytes,
                        static_cast<const char *>(in) + me * k * bytes,
                        k * bytes, cudaMemcpyDeviceToDevice, stream));
    break;
  }
  for (const StepPlan &step : steps_) {
    if (!step.ops.empty()) {
      COCONET_NCCL_CHECK(ncclGroupStart());
      for (const Op &o : step.ops) {
        void *p = address(o.slot, in, out);
        const ncclResult_t rc =
            o.send ? ncclSend(p, bytes, ncclUint8, o.peer, comm_, stream)
                   : ncclRecv(p, bytes, ncclUint8, o.peer, comm_, stream);
        if (rc != ncclSuccess) {
          (void)ncclGroupEnd();
          return ncclStatus(rc, o.send ? "ncclSend" : "ncclRecv", __FILE__,
                            __LINE__);
        }
      }
      COCONET_NCCL_CHECK(ncclGroupEnd());
    }
    for (const Land &l : step.lands) {
      void *to = address(l.to, in, out);
      const void *from = address({Place::Arrived, l.from}, in, out);
      if (!l.reduce) {
        COCONET_CUDA_CHECK(
            cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
        continue;
      }
      const int64_t n = chunkElements_;
      const int blocks = static_cast<int>(
          std::min<int64_t>((n + kThreads - 1) / kThreads, 1024));
      COCONET_RETURN_IF_ERROR(withType(dtype_, [&](auto zero) -> Status {
        using T = decltype(zero);
        auto launch = [&](auto opc) -> Status {
          constexpr ReduceOp O = decltype(opc)::value;
          COCONET_CUDA_CHECK(cc_launch(combineInto<T, O>, blocks, kThreads, 0,
                                       stream, static_cast<T *>(to),
                                       static_cast<const T *>(from), n));
          return Status::success();
        };
        switch (op_) {
        case ReduceOp::Sum:
        case ReduceOp::Avg: // refused by create()
          return launch(std::integral_constant<ReduceOp, ReduceOp::Sum>());
        case ReduceOp::Prod:
          return launch(std::integral_constant<ReduceOp, ReduceOp::Prod>());
        case ReduceOp::Max:
          return launch(std::integral_constant<ReduceOp, ReduceOp::Max>());
        case ReduceOp::Min:
          return launch(std::integral_constant<ReduceOp, ReduceOp::Min>());
        }
        return invalid("unknown reduce op");
      }));
    }
  }
  if (t.collective == Collective::ReduceScatter)
    COCONET_CUDA_CHECK(
        cudaMemcpyAsync(out, static_cast<const char *>(work_) + me * k * bytes,
                        k * bytes, cudaMemcpyDeviceToDevice, stream));
  return Status::success();
}

} // namespace coconet::rt::cuda
