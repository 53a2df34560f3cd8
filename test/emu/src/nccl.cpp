//===- nccl.cpp - NCCL's host API on MPI, with exact collectives ----------===//
//
// The NCCL calls the CUDA runtime library and generated code make, against
// the real nccl.h: every rank is an MPI process, a communicator is an MPI
// communicator, and a collective is the CPU runtime's exact collective
// (coconet::rt::cpu::Mesh: rank-order combination, one rounding), so that
// results equal the simulator's bit for bit (real NCCL combines in its own
// order).
//
// A collective runs when its stream reaches it: the call waits for the
// stream's earlier tasks (and so for the events the stream waits on), then
// runs on the calling thread, so MPI is only ever called from the host
// thread. Between ncclGroupStart and ncclGroupEnd calls are kept and run
// at ncclGroupEnd, sends and receives together (nonblocking), so that a
// group of a send and a receive cannot deadlock.
//
// A communicator also knows its LSA team (NCCL's: the ranks on one node),
// found when it is made, for the device API (nccl_device.cpp), where
// ncclTeamLsa must stay a local call.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"
#include "coconet/emu/device.h"
#include "emu_internal.h"

#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

using coconet::rt::DType;
using coconet::rt::ReduceOp;

ncclComm::~ncclComm() = default;

namespace {

ncclResult_t lastResult = ncclSuccess;

/// The last failure's message (ncclGetLastError).
std::string lastMessage;

ncclResult_t fail(ncclResult_t r, const std::string &what) {
  std::fprintf(stderr, "nccl emulation: %s\n", what.c_str());
  lastResult = r;
  lastMessage = what;
  return r;
}

ncclResult_t check(const coconet::rt::Status &s) {
  if (s.ok())
    return ncclSuccess;
  return fail(ncclSystemError, s.message());
}

bool dtypeOf(ncclDataType_t t, DType *out) {
  switch (t) {
  case ncclFloat16:
    *out = DType::F16;
    return true;
  case ncclBfloat16:
    *out = DType::BF16;
    return true;
  case ncclFloat32:
    *out = DType::F32;
    return true;
  case ncclFloat64:
    *out = DType::F64;
    return true;
  case ncclInt32:
    *out = DType::I32;
    return true;
  case ncclInt64:
    *out = DType::I64;
    return true;
  case ncclUint64:
    *out = DType::U64;
    return true;
  case ncclUint8:
    *out = DType::Bool;
    return true;
  default:
    return false;
  }
}

bool opOf(ncclRedOp_t op, ReduceOp *out) {
  switch (op) {
  case ncclSum:
    *out = ReduceOp::Sum;
    return true;
  case ncclProd:
    *out = ReduceOp::Prod;
    return true;
  case ncclMax:
    *out = ReduceOp::Max;
    return true;
  case ncclMin:
    *out = ReduceOp::Min;
    return true;
  case ncclAvg:
    *out = ReduceOp::Avg;
    return true;
  default:
    return false;
  }
}

/// NCCL's LSA team of `c` (every rank calls it): ranks on one node
/// (MPI_COMM_TYPE_SHARED) in contiguous blocks; the team's size is the
/// greatest common divisor of the blocks' sizes.
void findLsaTeam(ncclComm &c) {
  MPI_Comm node;
  MPI_Comm_split_type(c.comm, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL,
                      &node);
  int leader = c.rank; // the node's first rank in the communicator
  MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(static_cast<size_t>(c.size));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, c.comm);
  int lsaSize = 0, run = 0;
  for (int r = 0; r < c.size; ++r) {
    ++run;
    if (r + 1 == c.size || leaders[r + 1] != leaders[r]) {
      lsaSize = std::gcd(lsaSize, run);
      run = 0;
    }
  }
  c.lsaSize = lsaSize;
  c.lsaRank = c.rank % lsaSize;
}

ncclResult_t makeComm(MPI_Comm comm, ncclComm_t *out) {
  auto c = std::make_unique<ncclComm>();
  c->comm = comm;
  MPI_Comm_rank(comm, &c->rank);
  MPI_Comm_size(comm, &c->size);
  findLsaTeam(*c);
  if (ncclResult_t r = check(coconet::rt::cpu::Mesh::create(
          coconet::rt::cpu::Communicator(comm), {c->size}, &c->mesh));
      r != ncclSuccess)
    return r;
  *out = c.release();
  return ncclSuccess;
}

/// Ops kept between ncclGroupStart and ncclGroupEnd.
int groupDepth = 0;
std::vector<std::function<ncclResult_t()>> grouped;
struct PointToPoint {
  bool send;
  void *buffer;
  size_t bytes;
  int peer;
  ncclComm_t comm;
};
std::vector<PointToPoint> pointToPoint;

/// Waits for `stream`'s earlier work; then runs `op` (now, or at the end
/// of the group).
ncclResult_t submit(cudaStream_t stream, std::function<ncclResult_t()> op) {
  auto run = [stream, op = std::move(op)]() -> ncclResult_t {
    if (cudaStreamSynchronize(stream) != cudaSuccess)
      return fail(ncclUnhandledCudaError, "an earlier task on the stream "
                                          "failed");
    return op();
  };
  if (groupDepth > 0) {
    grouped.push_back(std::move(run));
    return ncclSuccess;
  }
  return run();
}

/// The checks every call makes: a communicator, a data type the
/// emulation has, an operator (when `op` is given) and device buffers
/// (those given).
ncclResult_t checkCall(const char *call, ncclComm_t comm, ncclDataType_t t,
                       DType *dtype, const ncclRedOp_t *op = nullptr,
                       ReduceOp *reduce = nullptr, const void *in = nullptr,
                       const void *out = nullptr) {
  const std::string name = call;
  if (!comm)
    return fail(ncclInvalidArgument, name + ": a null communicator");
  if (!dtypeOf(t, dtype))
    return fail(ncclInvalidArgument,
                name + ": a data type the emulation does not have");
  if (op && !opOf(*op, reduce))
    return fail(ncclInvalidArgument, name + ": an unknown operator");
  for (const void *p : {in, out})
    if (p && !coconet::emu::isDevicePointer(p))
      return fail(ncclInvalidArgument,
                  name + ": a buffer that is not device memory (a host "
                         "pointer?)");
  return ncclSuccess;
}

/// A send or a receive: kept for the group's end, where they all run at
/// once.
ncclResult_t pointToPointCall(const char *call, bool send, void *buffer,
                              size_t count, ncclDataType_t datatype, int peer,
                              ncclComm_t comm, cudaStream_t stream) {
  DType dtype;
  if (ncclResult_t r = checkCall(call, comm, datatype, &dtype);
      r != ncclSuccess)
    return r;
  if (groupDepth == 0)
    return fail(ncclInvalidUsage, std::string(call) +
                                      " outside a group: the emulation pairs "
                                      "sends and receives in groups");
  const size_t bytes = count * coconet::rt::dtypeSize(dtype);
  grouped.push_back([=]() -> ncclResult_t {
    if (cudaStreamSynchronize(stream) != cudaSuccess)
      return ncclUnhandledCudaError;
    pointToPoint.push_back({send, buffer, bytes, peer, comm});
    return ncclSuccess;
  });
  return ncclSuccess;
}

} // namespace

namespace coconet::emu {
ncclResult_t ncclFail(ncclResult_t result, const std::string &what) {
  return ::fail(result, what);
}
bool ncclInGroup() { return groupDepth > 0; }
} // namespace coconet::emu

extern "C" {

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclInvalidArgument:
    return "invalid argument (emulated NCCL)";
  case ncclInvalidUsage:
    return "invalid usage (emulated NCCL)";
  default:
    return "error (emulated NCCL)";
  }
}
const char *ncclGetLastError(ncclComm_t) { return lastMessage.c_str(); }

ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, sizeof id->internal, "coconet-emu");
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId,
                              int rank) {
  // The ranks of MPI_COMM_WORLD are the communicator's (the bootstrap
  // shares the id over the world).
  int worldRank = 0, worldSize = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (nranks != worldSize || rank != worldRank)
    return fail(ncclInvalidUsage,
                "ncclCommInitRank: the emulation makes communicators over "
                "MPI_COMM_WORLD (rank " +
                    std::to_string(rank) + " of " + std::to_string(nranks) +
                    " asked, " + std::to_string(worldRank) + " of " +
                    std::to_string(worldSize) + " there)");
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  return makeComm(dup, comm);
}

ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *) {
  if (ndev != 1)
    return fail(ncclInvalidUsage, "ncclCommInitAll: the emulation has one "
                                  "device");
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised)
    MPI_Init(nullptr, nullptr);
  MPI_Comm self;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  return makeComm(self, comm);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                           ncclComm_t *newcomm, ncclConfig_t *) {
  MPI_Comm split;
  MPI_Comm_split(comm->comm, color < 0 ? MPI_UNDEFINED : color, key, &split);
  if (split == MPI_COMM_NULL) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  return makeComm(split, newcomm);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm)
    return ncclSuccess;
  comm->mesh.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Comm_free(&comm->comm);
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  *count = comm->size;
  return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  DType dtype;
  ReduceOp reduce;
  if (ncclResult_t r = checkCall("ncclAllReduce", comm, datatype, &dtype, &op,
                                 &reduce, sendbuff, recvbuff);
      r != ncclSuccess)
    return r;
  return submit(stream, [=] {
    return check(comm->mesh->allReduce(
        sendbuff, recvbuff, static_cast<int64_t>(count), dtype, reduce, 0));
  });
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                               size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  DType dtype;
  ReduceOp reduce;
  if (ncclResult_t r = checkCall("ncclReduceScatter", comm, datatype, &dtype,
                                 &op, &reduce, sendbuff, recvbuff);
      r != ncclSuccess)
    return r;
  return submit(stream, [=] {
    return check(comm->mesh->reduceScatter(
        sendbuff, recvbuff, static_cast<int64_t>(recvcount), dtype, reduce, 0));
  });
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                           size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  DType dtype;
  if (ncclResult_t r = checkCall("ncclAllGather", comm, datatype, &dtype,
                                 nullptr, nullptr, sendbuff, recvbuff);
      r != ncclSuccess)
    return r;
  return submit(stream, [=] {
    return check(comm->mesh->allGather(
        sendbuff, recvbuff, static_cast<int64_t>(sendcount), dtype, 0));
  });
}

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  DType dtype;
  if (ncclResult_t r = checkCall("ncclAlltoAll", comm, datatype, &dtype,
                                 nullptr, nullptr, sendbuff, recvbuff);
      r != ncclSuccess)
    return r;
  return submit(stream, [=] {
    return check(comm->mesh->allToAll(sendbuff, recvbuff,
                                      static_cast<int64_t>(count), dtype, 0));
  });
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  DType dtype;
  if (ncclResult_t r = checkCall("ncclBroadcast", comm, datatype, &dtype,
                                 nullptr, nullptr, nullptr, recvbuff);
      r != ncclSuccess)
    return r;
  return submit(stream, [=] {
    return check(comm->mesh->broadcast(
        sendbuff, recvbuff, static_cast<int64_t>(count), dtype, root, 0));
  });
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  DType dtype;
  ReduceOp reduce;
  if (ncclResult_t r =
          checkCall("ncclReduce", comm, datatype, &dtype, &op, &reduce);
      r != ncclSuccess)
    return r;
  return submit(stream, [=] {
    return check(comm->mesh->reduce(sendbuff, recvbuff,
                                    static_cast<int64_t>(count), dtype, reduce,
                                    root, 0));
  });
}

ncclResult_t ncclSend(const void *sendbuff, size_t count,
                      ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return pointToPointCall("ncclSend", true, const_cast<void *>(sendbuff), count,
                          datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
                      int peer, ncclComm_t comm, cudaStream_t stream) {
  return pointToPointCall("ncclRecv", false, recvbuff, count, datatype, peer,
                          comm, stream);
}

ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--groupDepth > 0)
    return ncclSuccess;
  auto ops = std::move(grouped);
  grouped.clear();
  ncclResult_t result = ncclSuccess;
  for (auto &op : ops)
    if (ncclResult_t r = op(); r != ncclSuccess && result == ncclSuccess)
      result = r;
  // The group's sends and receives, all at once.
  std::vector<MPI_Request> requests;
  for (const PointToPoint &p : pointToPoint) {
    MPI_Request request;
    if (p.send)
      MPI_Isend(p.buffer, static_cast<int>(p.bytes), MPI_BYTE, p.peer, 0,
                p.comm->comm, &request);
    else
      MPI_Irecv(p.buffer, static_cast<int>(p.bytes), MPI_BYTE, p.peer, 0,
                p.comm->comm, &request);
    requests.push_back(request);
  }
  pointToPoint.clear();
  if (!requests.empty())
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                MPI_STATUSES_IGNORE);
  return result;
}

} // extern "C"
