//===- alltoallv.cpp - the CUDA target's dropless mixture of experts ------===//
//
// AllToAllV and groupedMatmul (cuda/runtime.h), host code calling CUDA and
// NCCL: the semantics, and the table of rows, of the CPU target's
// Mesh::allToAllV and groupedMatmul (../alltoallv_plan.h), so that both
// targets give the same bits. Both copy their counts to the host and wait
// for the stream: NCCL's sends and receives, and cuBLAS's extents, take
// their counts from the host.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/runtime.h"

#include "../alltoallv_plan.h"

#include <algorithm>
#include <climits>
#include <string>

namespace coconet::rt::cuda {

namespace {

Status invalid(const char *what, const std::string &why) {
  return Status::error(StatusCode::InvalidArgument,
                       std::string(what) + ": " + why);
}

/// Part `part` of `parts` of every block this member sends and receives
/// (all of them: 0 of 1): its own by a device copy, the others in one
/// NCCL group.
Status moveRows(const detail::AllToAllVPlan &plan, const int32_t *records,
                int64_t me, int64_t members, ncclComm_t comm, const void *in,
                void *out, int64_t rowBytes, int64_t rowElems, DType dtype,
                int64_t part, int64_t parts, cudaStream_t stream) {
  const auto *from = static_cast<const uint8_t *>(in);
  auto *to = static_cast<uint8_t *>(out);
  int64_t offset = 0, length = 0;
  // This member's own rows (this part of them).
  const size_t self = plan.at(me, me);
  plan.partOf(records, me, me, part, parts, &offset, &length);
  if (length > 0)
    COCONET_CUDA_CHECK(
        cudaMemcpyAsync(to + (plan.recvStart[self] + offset) * rowBytes,
                        from + (plan.sendStart[self] + offset) * rowBytes,
                        static_cast<size_t>(length * rowBytes),
                        cudaMemcpyDeviceToDevice, stream));
  if (members == 1)
    return Status::success();
  // Whole rows to and from every peer, in one group.
  const ncclDataType_t type = ncclType(dtype);
  COCONET_NCCL_CHECK(ncclGroupStart());
  for (int64_t peer = 0; peer < members; ++peer) {
    if (peer == me)
      continue;
    const size_t s = plan.at(me, peer), r = plan.at(peer, me);
    ncclResult_t rc = ncclSuccess;
    const char *call = "ncclSend";
    plan.partOf(records, me, peer, part, parts, &offset, &length);
    if (length > 0)
      rc = ncclSend(from + (plan.sendStart[s] + offset) * rowBytes,
                    static_cast<size_t>(length * rowElems), type,
                    static_cast<int>(peer), comm, stream);
    plan.partOf(records, peer, me, part, parts, &offset, &length);
    if (rc == ncclSuccess && length > 0) {
      call = "ncclRecv";
      rc = ncclRecv(to + (plan.recvStart[r] + offset) * rowBytes,
                    static_cast<size_t>(length * rowElems), type,
                    static_cast<int>(peer), comm, stream);
    }
    if (rc != ncclSuccess) {
      (void)ncclGroupEnd();
      return ncclStatus(rc, call, __FILE__, __LINE__);
    }
  }
  COCONET_NCCL_CHECK(ncclGroupEnd());
  return Status::success();
}

} // namespace

AllToAllV::~AllToAllV() {
  if (memory_ != nullptr)
    allocator_->deallocate(memory_, bytes_);
}

Status AllToAllV::create(const Mesh &mesh, int axis, int64_t groups,
                         Allocator &allocator) {
  const char *what = "AllToAllV::create";
  if (memory_ != nullptr)
    return Status::error(StatusCode::Internal, "an AllToAllV created twice");
  if (axis < -1 || axis >= static_cast<int>(mesh.numAxes()))
    return invalid(what, "axis " + std::to_string(axis) +
                             " is not an axis of the " +
                             std::to_string(mesh.numAxes()) + "-axis mesh");
  const unsigned a = static_cast<unsigned>(axis);
  const int64_t members = axis < 0 ? mesh.size() : mesh.axisSize(a);
  if (groups <= 0 || groups % members != 0 ||
      groups > INT_MAX - detail::kAllToAllVExtraWords)
    return invalid(what, std::to_string(groups) +
                             " groups do not divide among the axis's " +
                             std::to_string(members) + " members");
  const int64_t stride = groups + detail::kAllToAllVExtraWords;
  // This member's record, then every member's.
  const size_t bytes =
      static_cast<size_t>(stride * (members + 1)) * sizeof(int32_t);
  void *memory = nullptr;
  COCONET_RETURN_IF_ERROR(allocator.allocate(bytes, &memory));
  allocator_ = &allocator;
  memory_ = memory;
  bytes_ = bytes;
  record_ = static_cast<int32_t *>(memory);
  gathered_ = record_ + stride;
  comm_ = mesh.axisComm(axis);
  members_ = members;
  position_ = axis < 0 ? mesh.rank() : mesh.coord(a);
  groups_ = groups;
  extra_.assign(detail::kAllToAllVExtraWords, 0);
  records_.assign(static_cast<size_t>(stride * members), 0);
  outCounts_.assign(static_cast<size_t>(groups), 0);
  return Status::success();
}

Status AllToAllV::run(const void *in, int64_t inRows, const int32_t *counts,
                      void *out, int64_t outRows, int32_t *outCounts,
                      int64_t rowElems, DType dtype, cudaStream_t stream) {
  return runPart(in, inRows, counts, out, outRows, outCounts, rowElems, dtype,
                 0, 1, stream);
}

Status AllToAllV::runPart(const void *in, int64_t inRows, const int32_t *counts,
                          void *out, int64_t outRows, int32_t *outCounts,
                          int64_t rowElems, DType dtype, int64_t part,
                          int64_t parts, cudaStream_t stream) {
  const char *what = parts == 1 ? "AllToAllV::run" : "AllToAllV::runPart";
  if (memory_ == nullptr)
    return Status::error(StatusCode::Internal,
                         "an AllToAllV run before create");
  int64_t rowBytes = 0;
  COCONET_RETURN_IF_ERROR(
      detail::checkAllToAllV(what, in, inRows, counts, groups_, out, outRows,
                             outCounts, rowElems, dtype, members_, &rowBytes));
  COCONET_RETURN_IF_ERROR(
      detail::checkAllToAllVPart(what, groups_, members_, part, parts));
  if (part != 0 && part != nextPart_)
    return invalid(what, "part " + std::to_string(part) + " after part " +
                             std::to_string(nextPart_ - 1) +
                             " (parts run in order)");
  nextPart_ = part + 1 == parts ? 0 : part + 1;
  const int64_t stride = groups_ + detail::kAllToAllVExtraWords;
  const size_t countBytes = static_cast<size_t>(groups_) * sizeof(int32_t);
  detail::AllToAllVPlan plan;
  if (part > 0) {
    // The records part 0 gathered.
    plan.compute(records_.data(), members_, groups_);
    if (rowBytes == 0)
      return Status::success();
    return moveRows(plan, records_.data(), position_, members_, comm_, in, out,
                    rowBytes, rowElems, dtype, part, parts, stream);
  }

  // Every member's record on the host.
  if (members_ == 1) {
    COCONET_CUDA_CHECK(cudaMemcpyAsync(records_.data(), counts, countBytes,
                                       cudaMemcpyDeviceToHost, stream));
    detail::writeAllToAllVExtra(inRows, outRows, records_.data() + groups_);
  } else {
    detail::writeAllToAllVExtra(inRows, outRows, extra_.data());
    COCONET_CUDA_CHECK(cudaMemcpyAsync(record_, counts, countBytes,
                                       cudaMemcpyDeviceToDevice, stream));
    COCONET_CUDA_CHECK(
        cudaMemcpyAsync(record_ + groups_, extra_.data(),
                        detail::kAllToAllVExtraWords * sizeof(int32_t),
                        cudaMemcpyHostToDevice, stream));
    COCONET_NCCL_CHECK(ncclAllGather(record_, gathered_,
                                     static_cast<size_t>(stride), ncclInt32,
                                     comm_, stream));
    COCONET_CUDA_CHECK(cudaMemcpyAsync(records_.data(), gathered_,
                                       records_.size() * sizeof(int32_t),
                                       cudaMemcpyDeviceToHost, stream));
  }
  // The one wait of a step: the table needs the counts on the host.
  COCONET_CUDA_CHECK(cudaStreamSynchronize(stream));
  plan.compute(records_.data(), members_, groups_);

  if (outCounts) {
    plan.outCounts(records_.data(), position_, outCounts_.data());
    COCONET_CUDA_CHECK(cudaMemcpyAsync(outCounts, outCounts_.data(), countBytes,
                                       cudaMemcpyHostToDevice, stream));
  }
  if (rowBytes == 0)
    return Status::success();
  auto *to = static_cast<uint8_t *>(out);
  // What nothing lands in: the gaps (rows past a sender's inRows) and the
  // tail.
  Status zeroed = Status::success();
  plan.forEachGap(position_, [&](int64_t begin, int64_t end) {
    const cudaError_t err =
        cudaMemsetAsync(to + begin * rowBytes, 0,
                        static_cast<size_t>((end - begin) * rowBytes), stream);
    if (err != cudaSuccess && zeroed.ok())
      zeroed = cudaStatus(err, "cudaMemsetAsync", __FILE__, __LINE__);
  });
  COCONET_RETURN_IF_ERROR(zeroed);
  return moveRows(plan, records_.data(), position_, members_, comm_, in, out,
                  rowBytes, rowElems, dtype, part, parts, stream);
}

Status groupedMatmul(cublasHandle_t handle, cudaStream_t stream, DType dtype,
                     int64_t rows, int64_t n, int64_t k, const void *a,
                     const void *b, int64_t groups, int64_t localGroups,
                     const int32_t *counts, int32_t *hostCounts, void *c) {
  return groupedMatmulPart(handle, stream, dtype, rows, n, k, a, b, groups,
                           localGroups, counts, hostCounts, c, 0, 1);
}

Status groupedMatmulPart(cublasHandle_t handle, cudaStream_t stream,
                         DType dtype, int64_t rows, int64_t n, int64_t k,
                         const void *a, const void *b, int64_t groups,
                         int64_t localGroups, const int32_t *counts,
                         int32_t *hostCounts, void *c, int64_t part,
                         int64_t parts) {
  const char *what = parts == 1 ? "groupedMatmul" : "groupedMatmulPart";
  if (rows < 0 || n < 0 || k < 0 || groups < 0)
    return invalid(what, "negative rows, n, k or groups");
  if (localGroups < 1)
    return invalid(what, "localGroups must be positive, not " +
                             std::to_string(localGroups));
  if (parts < 1 || part < 0 || part >= parts || localGroups % parts != 0)
    return invalid(what, "part " + std::to_string(part) + " of " +
                             std::to_string(parts) + " of " +
                             std::to_string(localGroups) + " groups");
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (size == 0)
    return invalid(what, "unknown element type");
  // The bytes of A, B and C must have a size.
  auto fits = [size](int64_t x, int64_t y) {
    return y == 0 || x <= INT64_MAX / y / size;
  };
  if (!fits(rows, k) || !fits(rows, n) || !fits(k, n) ||
      !fits(localGroups, k * n))
    return invalid(what, "sizes that overflow a 64-bit byte count");
  if (groups > 0 && (counts == nullptr || hostCounts == nullptr))
    return invalid(what, "null counts or hostCounts");
  if ((c == nullptr && rows * n > 0) || (a == nullptr && rows * k > 0) ||
      (b == nullptr && k * n > 0 && groups > 0))
    return invalid(what, "a null matrix");
  if (groups > 0 && part == 0) {
    COCONET_CUDA_CHECK(cudaMemcpyAsync(
        hostCounts, counts, static_cast<size_t>(groups) * sizeof(int32_t),
        cudaMemcpyDeviceToHost, stream));
    COCONET_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  const auto *as = static_cast<const uint8_t *>(a);
  const auto *bs = static_cast<const uint8_t *>(b);
  auto *cs = static_cast<uint8_t *>(c);
  const int64_t per = localGroups / parts, first = part * per;
  int64_t start = 0;
  for (int64_t j = 0; j < groups && start < rows; ++j) {
    const int64_t len =
        std::min<int64_t>(std::max(hostCounts[j], 0), rows - start);
    const int64_t g = j % localGroups;
    if (len > 0 && g >= first && g < first + per)
      COCONET_RETURN_IF_ERROR(
          matmul(handle, stream, dtype, 1, len, n, k, as + start * k * size, 0,
                 bs + g * k * n * size, 0, cs + start * n * size, 0));
    start += len;
  }
  if (start < rows && n > 0 && part == 0)
    COCONET_CUDA_CHECK(cudaMemsetAsync(
        cs + start * n * size, 0,
        static_cast<size_t>((rows - start) * n * size), stream));
  return Status::success();
}

} // namespace coconet::rt::cuda
