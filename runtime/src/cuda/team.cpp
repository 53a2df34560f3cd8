//===- team.cpp - a mesh axis's members on NCCL's symmetric memory --------===//
//
// The members vote before any collective setup call: the device path needs
// every member's NCCL to be the version this file was compiled against
// (2.28's device structs change between minor versions), every member of
// the axis in NCCL's LSA team (load/store reachable: one node), symmetric
// memory not switched off, and COCONET_TEAM not "off" (a team of one
// member needs none of these but the last: it is plain device memory and
// the block's own barrier, team.h). The vote is an
// ncclAllReduce (max) of each member's first reason against, and of the
// negated count of blocks (multiprocessors x blocks per multiprocessor:
// every fused grid has the smallest count, the same on every member); a
// COCONET_TEAM_BLOCKS_PER_SM out of range on any member is an error on
// every member, after the vote. Only when all agree do they
// allocate (ncclMemAlloc), register the window and create the device
// communicator, which are collective; NCCL may still refuse symmetric
// memory there (agreeOnSetup), which is a reason for the fallback too.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/team.h"
#include "coconet/environment.h"

#include <cstdlib>
#include <cstring>

namespace coconet::rt::cuda {

namespace {

/// Reasons against the device path, in the order they are checked; the
/// vote keeps the largest any member has.
enum Reason : int {
  None = 0,
  Forced,
  Version,
  NotReachable,
  SymmetricOff,
  TooMany,
  /// Not a reason for the fallback: an error on every member.
  BadBlocksPerSM,
};

static_assert(kMaxDeviceMembers == 512, "TooMany's text names the limit");

const char *reasonText(int reason) {
  switch (reason) {
  case Forced:
    return "COCONET_TEAM=off";
  case Version:
    return "a member's NCCL is not the 2.28 this program was compiled "
           "against (its device API changes between minor versions)";
  case NotReachable:
    return "the members of the axis do not all reach each other's memory "
           "(NCCL's LSA team is smaller than the axis)";
  case SymmetricOff:
    return "symmetric memory is off (NCCL_WIN_ENABLE=0 or "
           "NCCL_CUMEM_ENABLE=0)";
  case TooMany:
    return "the axis has more than 512 members (the most a fused kernel "
           "combines: coconet/combine.h)";
  default:
    return "";
  }
}

bool envIs(const char *name, const char *value) {
  const char *v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

/// COCONET_TEAM_BLOCKS_PER_SM: 1 to kTeamBlocksPerSM (the default; more
/// could not all be resident under the kernels' launch bounds). Another
/// value leaves `*error` saying why.
int blocksPerProcessor(std::string *error) {
  std::string why;
  const uint64_t n = wholeNumberFromEnv(
      "COCONET_TEAM_BLOCKS_PER_SM", 1,
      static_cast<uint64_t>(kernels::kTeamBlocksPerSM),
      static_cast<uint64_t>(kernels::kTeamBlocksPerSM), &why);
  if (!why.empty()) {
    // A value set but refused is an error here, not the default.
    *error = why.substr(0, why.find("; the default"));
    return 1;
  }
  return static_cast<int>(n);
}

/// The largest of each member's `values` over `comm` (a collective that
/// synchronises the host: setup only).
Status allMax(ncclComm_t comm, int *values, int count) {
  cudaStream_t stream = nullptr;
  int *device = nullptr;
  COCONET_CUDA_CHECK(cudaStreamCreate(&stream));
  Status st = [&]() -> Status {
    const size_t bytes = sizeof(int) * static_cast<size_t>(count);
    COCONET_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&device), bytes));
    COCONET_CUDA_CHECK(
        cudaMemcpy(device, values, bytes, cudaMemcpyHostToDevice));
    COCONET_NCCL_CHECK(
        ncclAllReduce(device, device, count, ncclInt32, ncclMax, comm, stream));
    COCONET_CUDA_CHECK(cudaStreamSynchronize(stream));
    COCONET_CUDA_CHECK(
        cudaMemcpy(values, device, bytes, cudaMemcpyDeviceToHost));
    return Status::success();
  }();
  if (device)
    cudaFree(device);
  cudaStreamDestroy(stream);
  return st;
}

/// After a collective setup call: every member learns the worst outcome
/// (0 made, 1 NCCL refused symmetric memory, 2 failed). A refusal sets
/// `why` (the fallback's reason); a failure is an error on every member.
Status agreeOnSetup(ncclComm_t comm, ncclResult_t result, bool noWindow,
                    const char *call, std::string *why) {
  int outcome = result == ncclSuccess        ? (noWindow ? 1 : 0)
                : result == ncclInvalidUsage ? 1
                                             : 2;
  int worst = outcome;
  COCONET_RETURN_IF_ERROR(allMax(comm, &worst, 1));
  if (outcome == 2)
    return ncclStatus(result, call, __FILE__, __LINE__);
  if (worst == 2)
    return Status::error(StatusCode::NcclError,
                         std::string(call) + " failed on another member of "
                                             "the team");
  if (worst == 1) {
    // NCCL's own words where this member was refused ("Communicator does
    // not support symmetric memory!").
    std::string detail = outcome == 1 && !noWindow && ncclGetLastError(comm)
                             ? ncclGetLastError(comm)
                             : "";
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' '))
      detail.pop_back();
    *why = "NCCL refused symmetric memory on this communicator: " +
           (detail.empty() ? std::string(call) + " on a member" : detail);
  }
  return Status::success();
}

} // namespace

Status Team::create(const Mesh &mesh, int axis, size_t bytes,
                    std::unique_ptr<Team> *out, std::string *why) {
  out->reset();
  why->clear();
  ncclComm_t comm = mesh.axisComm(axis);
  int rank = 0, size = 1;
  COCONET_NCCL_CHECK(ncclCommUserRank(comm, &rank));
  COCONET_NCCL_CHECK(ncclCommCount(comm, &size));

  // This member's vote.
  int version = 0, device = 0, processors = 1;
  COCONET_NCCL_CHECK(ncclGetVersion(&version));
  COCONET_CUDA_CHECK(cudaGetDevice(&device));
  COCONET_CUDA_CHECK(cudaDeviceGetAttribute(
      &processors, cudaDevAttrMultiProcessorCount, device));
  std::string badSetting;
  const int perProcessor = blocksPerProcessor(&badSetting);
  // A team of one reaches no peer: NCCL's version, its LSA team and
  // symmetric memory do not matter to it.
  const bool alone = size == 1;
  int reason = None;
  if (!badSetting.empty())
    reason = BadBlocksPerSM;
  else if (envIs("COCONET_TEAM", "off"))
    reason = Forced;
  else if (alone)
    reason = None;
  else if (version / 100 != NCCL_VERSION_CODE / 100)
    reason = Version;
  else if (ncclTeamLsa(comm).nRanks != size)
    reason = NotReachable;
  else if (envIs("NCCL_WIN_ENABLE", "0") || envIs("NCCL_CUMEM_ENABLE", "0"))
    reason = SymmetricOff;
  else if (size > kMaxDeviceMembers)
    reason = TooMany;
  int vote[2] = {reason, -processors * perProcessor};
  COCONET_RETURN_IF_ERROR(allMax(comm, vote, 2));
  // A bad setting is an error on every member (after the vote, so that
  // none waits in it for the one that stopped).
  if (vote[0] == BadBlocksPerSM)
    return Status::error(StatusCode::InvalidArgument,
                         badSetting.empty()
                             ? "COCONET_TEAM_BLOCKS_PER_SM is not a whole "
                               "number from 1 to " +
                                   std::to_string(kernels::kTeamBlocksPerSM) +
                                   " on another member of the team"
                             : badSetting);
  if (vote[0] != None) {
    *why = reasonText(vote[0]);
    return Status::success();
  }

  std::unique_ptr<Team> team(new Team());
  team->comm_ = comm;
  team->blocks_ = -vote[1] < 1 ? 1 : -vote[1];
  team->device_.rank = rank;
  team->device_.size = size;
  if (alone) {
    void *memory = nullptr;
    COCONET_CUDA_CHECK(cudaMalloc(&memory, bytes < 1 ? 1 : bytes));
    team->alone_ = true;
    team->device_.base = static_cast<char *>(memory);
    *out = std::move(team);
    return Status::success();
  }
  // NCCL rounds the allocation up to its granularity; the window is all
  // of it (it must start at the allocation's start).
  void *memory = nullptr;
  const size_t allocation = bytes < 1 ? 1 : bytes;
  COCONET_NCCL_CHECK(ncclMemAlloc(&memory, allocation));
  team->device_.base = static_cast<char *>(memory);

  // NCCL decides when the communicator is made whether it has symmetric
  // memory (every pair of local ranks CUDA P2P reachable, cuMem usable)
  // and says so only here, alike on every member: ncclInvalidUsage ("does
  // not support symmetric memory", seen on one H200 with NCCL 2.28.3), or
  // a window that is null. That refusal is the fallback's reason; any
  // other failure is an error. The members vote after each collective
  // call, so that none goes on to the next while another stopped; the
  // Team's destructor releases what was made.
  ncclResult_t result = ncclCommWindowRegister(
      comm, memory, allocation, &team->device_.window, NCCL_WIN_COLL_SYMMETRIC);
  team->registered_ = result == ncclSuccess;
  const bool noWindow = result == ncclSuccess && !team->device_.window;
  COCONET_RETURN_IF_ERROR(
      agreeOnSetup(comm, result, noWindow, "ncclCommWindowRegister(...)", why));
  if (!why->empty())
    return Status::success();
  ncclDevCommRequirements requirements;
  std::memset(&requirements, 0, sizeof(requirements));
  requirements.lsaBarrierCount = team->blocks_;
  result = ncclDevCommCreate(comm, &requirements, &team->device_.comm);
  team->devComm_ = result == ncclSuccess;
  COCONET_RETURN_IF_ERROR(
      agreeOnSetup(comm, result, false, "ncclDevCommCreate(...)", why));
  if (!why->empty())
    return Status::success();
  *out = std::move(team);
  return Status::success();
}

Team::~Team() {
  // No kernel of the team may still run.
  cudaDeviceSynchronize();
  if (devComm_)
    ncclDevCommDestroy(comm_, &device_.comm);
  if (registered_)
    ncclCommWindowDeregister(comm_, device_.window);
  if (device_.base && alone_)
    cudaFree(device_.base);
  else if (device_.base)
    ncclMemFree(device_.base);
}

} // namespace coconet::rt::cuda
