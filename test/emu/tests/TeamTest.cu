//===- TeamTest.cu - the runtime's Team on the emulated NCCL device API ---===//
//
// An MPI program of Catch2 tests (CTests emu-team-np1, -np2, -np4): the
// CUDA runtime's Team (coconet/cuda/team.h, runtime/src/cuda/team.cpp),
// unchanged, on the emulation's NCCL symmetric memory and device API
// (src/nccl_device.cpp). Every rank runs every test case in the same order
// (they make collective calls); a check that must hold everywhere is
// agreed over MPI first, so that a failure on one rank does not leave the
// others waiting.
//
// The kernel is a fused all-reduce over a team, as a fused collective
// kernel of the CUDA target is: each member copies its input into its
// symmetric memory, an entry barrier, then each block reads its block of
// elements from every member in ascending order and sums them (float
// values whose sum depends on the order), stores the sum into every
// member's output, an exit barrier. A member made slow (a sleep inside
// its kernel: a GPU's blocks are not scheduled alike on every rank) shows
// that each barrier matters: without the entry barrier the others read its
// input before it wrote it, without the exit barrier they read their
// output before it stored its part.
//
//===----------------------------------------------------------------------===//

// (Catch2's implementation: test/catch/CatchImpl.cpp; main() below.)
#include <catch2/catch.hpp>

#include "CatchSession.h"

#include "coconet/cuda/kernels.h"
#include "coconet/cuda/team.h"

#include <dirent.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace coconet::rt;
using cuda::Team;
using cuda::kernels::cc_launch;
using cuda::kernels::cc_peer;
using cuda::kernels::cc_team;
using cuda::kernels::cc_team_sync;
using cuda::kernels::kThreads;

namespace {

int worldRank = 0, worldSize = 1;
std::unique_ptr<cuda::Communicator> world;

/// Does `ok` hold on every rank?
bool everywhere(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

long long sumOverWorld(long long mine) {
  long long all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/// The emulation's shared files (memfds) this process holds open: none
/// once everything made is released.
int sharedFilesOpen() {
  int count = 0;
  if (DIR *dir = opendir("/proc/self/fd")) {
    while (const dirent *entry = readdir(dir)) {
      char target[256] = {};
      const std::string link = std::string("/proc/self/fd/") + entry->d_name;
      if (readlink(link.c_str(), target, sizeof target - 1) > 0)
        count += std::strncmp(target, "/memfd:coconet-emu", 18) == 0;
    }
    closedir(dir);
  }
  return count;
}

/// Elements of each member's block: odd, and more than two passes of a
/// team's grid (the emulation's one multiprocessor x kTeamBlocksPerSM
/// blocks of kThreads).
constexpr int64_t kBlock = 2501;
static_assert(kBlock > 2 * cuda::kernels::kTeamBlocksPerSM * kThreads);

/// Member m's element i in `round`: member 0's are large, so the float sum
/// over the members depends on the order of addition.
float valueOf(int member, int64_t i, int round) {
  return member == 0 ? 1e8f + 64.0f * static_cast<float>(round)
                     : 0.75f + static_cast<float>((i + member + round) % 5);
}

enum Plant : int { kNone = 0, kNoEntryBarrier, kNoExitBarrier };
enum Delay : int { kAtStart = 0, kAfterEntry };

/// Member `slow` falls behind the others: thread 0 of each of its blocks
/// sleeps (emulated device code is host code).
__device__ void fallBehind(const cc_team &t, int slow) {
  if (t.rank != slow)
    return;
  if (threadIdx.x == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  __syncthreads();
}

/// out[b * kBlock + i] on every member = the sum over members q, in
/// ascending order, of q's src[b * kBlock + i], for each member's block b;
/// `in` and `out` are this member's symmetric memory (t.size * kBlock
/// floats each), `src` plain device memory.
__global__ void fusedAllReduce(cc_team t, const float *src, float *in,
                               float *out, int plant, int slow, int delay) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (delay == kAtStart)
    fallBehind(t, slow);
  // The elements the same block of every member reads.
  for (int64_t i = first; i < kBlock; i += stride)
    for (int q = 0; q < t.size; ++q)
      in[q * kBlock + i] = src[q * kBlock + i];
  if (plant != kNoEntryBarrier)
    cc_team_sync(t);
  if (delay == kAfterEntry)
    fallBehind(t, slow);
  const int64_t mine = static_cast<int64_t>(t.rank) * kBlock;
  for (int64_t i = first; i < kBlock; i += stride) {
    float sum = 0;
    for (int q = 0; q < t.size; ++q)
      sum = __fadd_rn(sum, cc_peer(t, q, in)[mine + i]);
    for (int q = 0; q < t.size; ++q)
      cc_peer(t, q, out)[mine + i] = sum;
  }
  if (plant != kNoExitBarrier)
    cc_team_sync(t);
}

/// Bytes of a team's symmetric memory: in, then out.
size_t teamBytes(int64_t members) {
  return 2 * static_cast<size_t>(members * kBlock) * sizeof(float);
}

/// Runs the kernel for `rounds` rounds (member round % size slow, at
/// `delay`); the wrong elements of this rank's results, or -1 when a call
/// failed.
long long runRounds(const Team &team, int rounds, Plant plant, Delay delay) {
  const int members = team.size(), me = team.rank();
  const int64_t n = members * kBlock;
  float *in = static_cast<float *>(team.local());
  float *out = in + n;
  float *src = nullptr;
  if (cudaMalloc(reinterpret_cast<void **>(&src), n * sizeof(float)) !=
      cudaSuccess)
    return -1;
  long long wrong = 0;
  std::vector<float> input(static_cast<size_t>(n)),
      result(static_cast<size_t>(n));
  for (int round = 0; round < rounds && wrong >= 0; ++round) {
    for (int64_t i = 0; i < n; ++i)
      input[static_cast<size_t>(i)] = valueOf(me, i, round);
    if (cudaMemcpy(src, input.data(), n * sizeof(float),
                   cudaMemcpyHostToDevice) != cudaSuccess) {
      wrong = -1;
      break;
    }
    MPI_Barrier(MPI_COMM_WORLD); // every member launches at once
    if (cc_launch(fusedAllReduce, team.blocks(), kThreads, 0, nullptr,
                  team.device(), static_cast<const float *>(src), in, out,
                  static_cast<int>(plant), round % members,
                  static_cast<int>(delay)) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(result.data(), out, n * sizeof(float),
                   cudaMemcpyDeviceToHost) != cudaSuccess) {
      wrong = -1;
      break;
    }
    for (int64_t i = 0; i < n; ++i) {
      float expected = 0;
      for (int q = 0; q < members; ++q)
        expected += valueOf(q, i, round);
      wrong += std::memcmp(&expected, &result[static_cast<size_t>(i)],
                           sizeof expected) != 0;
    }
  }
  cudaFree(src);
  return wrong;
}

/// A team over `axis` of `mesh`, checked; null when it could not be made
/// on some rank (a failed check).
std::unique_ptr<Team> makeTeam(const cuda::Mesh &mesh, int axis) {
  const int64_t members = axis < 0 ? mesh.size() : mesh.axisSize(axis);
  std::unique_ptr<Team> team;
  std::string why;
  const Status s = Team::create(mesh, axis, teamBytes(members), &team, &why);
  if (!s.ok())
    FAIL_CHECK("Team::create failed: " << s.message());
  else if (!team)
    FAIL_CHECK("no team: " << why);
  if (!everywhere(s.ok() && team))
    return nullptr;
  CHECK(team->size() == members);
  CHECK(team->rank() == (axis < 0 ? mesh.rank() : mesh.coord(axis)));
  // The emulation's one multiprocessor, kTeamBlocksPerSM blocks.
  CHECK(team->blocks() == cuda::kernels::kTeamBlocksPerSM);
  if (members > 1)
    CHECK(team->device().comm.lsaBarrier.nBarriers == team->blocks());
  else // a team of one: its own device memory, no window
    CHECK(team->device().window == nullptr);
  return team;
}

} // namespace

TEST_CASE("a team over a one-axis mesh reduces through its members' memory") {
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  for (int axis : {0, -1}) {
    INFO("axis " << axis);
    std::unique_ptr<Team> team = makeTeam(*mesh, axis);
    REQUIRE(everywhere(team != nullptr));
    // A slow member at either point: the barriers wait for it.
    for (Delay delay : {kAtStart, kAfterEntry}) {
      const long long wrong = runRounds(*team, 3, kNone, delay);
      CHECK(wrong == 0);
      CHECK(sumOverWorld(wrong) == 0);
    }
  }
  CHECK(everywhere(sharedFilesOpen() == 0));
}

TEST_CASE("a team of one member is its own memory, where NCCL refuses "
          "symmetric memory too") {
  // NCCL 2.28.3 refuses symmetric memory to a one-GPU communicator; the
  // emulation does so everywhere with COCONET_EMU_NO_SYMMETRIC.
  setenv("COCONET_EMU_NO_SYMMETRIC", "1", 1);
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {1, worldSize}, &mesh).ok()));
  {
    std::unique_ptr<Team> alone = makeTeam(*mesh, 0);
    REQUIRE(everywhere(alone != nullptr));
    CHECK(alone->size() == 1);
    CHECK(sharedFilesOpen() == 0); // plain device memory, nothing shared
    for (Delay delay : {kAtStart, kAfterEntry})
      CHECK(sumOverWorld(runRounds(*alone, 3, kNone, delay)) == 0);
  }
  if (worldSize > 1) {
    std::unique_ptr<Team> team;
    std::string why;
    const Status s = Team::create(*mesh, 1, teamBytes(worldSize), &team, &why);
    CHECK(s.ok());
    CHECK(team == nullptr);
    CHECK(why.find("NCCL refused symmetric memory") == 0);
  }
  unsetenv("COCONET_EMU_NO_SYMMETRIC");
  // COCONET_TEAM=off still sends a team of one to the fallback.
  setenv("COCONET_TEAM", "off", 1);
  std::unique_ptr<Team> off;
  std::string why;
  CHECK(Team::create(*mesh, 0, teamBytes(1), &off, &why).ok());
  unsetenv("COCONET_TEAM");
  CHECK(off == nullptr);
  CHECK(why == "COCONET_TEAM=off");
  CHECK(everywhere(sharedFilesOpen() == 0));
}

TEST_CASE("a two-axis mesh has a team per axis") {
  const int rows = worldSize % 2 == 0 ? 2 : 1;
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(
      cuda::Mesh::create(*world, {rows, worldSize / rows}, &mesh).ok()));
  // Both at once: two windows and two device communicators.
  std::unique_ptr<Team> first = makeTeam(*mesh, 0);
  std::unique_ptr<Team> second = makeTeam(*mesh, 1);
  REQUIRE(everywhere(first && second));
  for (const Team *team : {first.get(), second.get(), first.get()}) {
    const long long wrong = runRounds(*team, 3, kNone, kAfterEntry);
    CHECK(wrong == 0);
    CHECK(sumOverWorld(wrong) == 0);
  }
}

TEST_CASE("without the entry barrier a member reads a slow peer's stale "
          "input") {
  if (worldSize < 2)
    return; // one member: nobody to wait for
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  std::unique_ptr<Team> team = makeTeam(*mesh, 0);
  REQUIRE(everywhere(team != nullptr));
  const long long wrong = runRounds(*team, 3, kNoEntryBarrier, kAtStart);
  REQUIRE(everywhere(wrong >= 0));
  const long long all = sumOverWorld(wrong);
  INFO(all << " wrong elements over 3 rounds on " << worldSize << " ranks");
  CHECK(all > 0);
  // The same kernel with its barrier: right.
  CHECK(sumOverWorld(runRounds(*team, 3, kNone, kAtStart)) == 0);
}

TEST_CASE("without the exit barrier a member reads its output before a slow "
          "peer stored into it") {
  if (worldSize < 2)
    return;
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  std::unique_ptr<Team> team = makeTeam(*mesh, 0);
  REQUIRE(everywhere(team != nullptr));
  const long long wrong = runRounds(*team, 3, kNoExitBarrier, kAfterEntry);
  REQUIRE(everywhere(wrong >= 0));
  const long long all = sumOverWorld(wrong);
  INFO(all << " wrong elements over 3 rounds on " << worldSize << " ranks");
  CHECK(all > 0);
  CHECK(sumOverWorld(runRounds(*team, 3, kNone, kAfterEntry)) == 0);
}

TEST_CASE("COCONET_TEAM=off: no team on any member, and why") {
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  // Set on every rank, then on rank 0 only: the members vote.
  for (bool onlyRankZero : {false, true}) {
    if (!onlyRankZero || worldRank == 0)
      setenv("COCONET_TEAM", "off", 1);
    std::unique_ptr<Team> team;
    std::string why;
    const Status s = Team::create(*mesh, 0, teamBytes(worldSize), &team, &why);
    unsetenv("COCONET_TEAM");
    CHECK(s.ok());
    CHECK(team == nullptr);
    CHECK(why == "COCONET_TEAM=off");
    CHECK(everywhere(s.ok() && !team && why == "COCONET_TEAM=off"));
  }
}

TEST_CASE("COCONET_TEAM_BLOCKS_PER_SM: the fewest any member asks for; a "
          "bad value an error on every member") {
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  // Rank 0 asks for 1 block a multiprocessor, the others for 2.
  setenv("COCONET_TEAM_BLOCKS_PER_SM", worldRank == 0 ? "1" : "2", 1);
  {
    std::unique_ptr<Team> team;
    std::string why;
    const Status s = Team::create(*mesh, 0, teamBytes(worldSize), &team, &why);
    REQUIRE(everywhere(s.ok() && team != nullptr));
    CHECK(team->blocks() == 1); // one multiprocessor, one block
    if (worldSize > 1)
      CHECK(team->device().comm.lsaBarrier.nBarriers == 1);
    // The team's grid still reduces (fewer blocks, more items each).
    CHECK(sumOverWorld(runRounds(*team, 2, kNone, kAtStart)) == 0);
  }
  // Out of range on the last rank only: every member fails, none waits.
  // (strtol took " 2" and "+2" for 2: digits only now.)
  for (const char *bad : {"0", "5", "2x", " 2", "+2", "-1"}) {
    INFO("COCONET_TEAM_BLOCKS_PER_SM=" << bad);
    if (worldRank == worldSize - 1)
      setenv("COCONET_TEAM_BLOCKS_PER_SM", bad, 1);
    std::unique_ptr<Team> team;
    std::string why;
    const Status s = Team::create(*mesh, 0, teamBytes(worldSize), &team, &why);
    CHECK(everywhere(!s.ok() && !team));
    if (worldRank == worldSize - 1)
      CHECK(s.message().find(std::string("COCONET_TEAM_BLOCKS_PER_SM='") + bad +
                             "' is ") != std::string::npos);
    else
      CHECK(s.message().find("on another member") != std::string::npos);
  }
  unsetenv("COCONET_TEAM_BLOCKS_PER_SM");
}

TEST_CASE("a window is refused on every rank when one rank's is wrong") {
  ncclComm_t comm = world->comm();
  void *memory = nullptr;
  REQUIRE(everywhere(ncclMemAlloc(&memory, 3 * 4096 + 100) == ncclSuccess));
  char *base = static_cast<char *>(memory);
  auto refusedEverywhere = [&](void *buff, size_t size, int flags) {
    ncclWindow_t window = nullptr;
    const ncclResult_t r =
        ncclCommWindowRegister(comm, buff, size, &window, flags);
    if (r == ncclSuccess)
      ncclCommWindowDeregister(comm, window);
    return everywhere(r != ncclSuccess && window == nullptr);
  };
  // Sizes that differ between ranks.
  if (worldSize > 1)
    CHECK(refusedEverywhere(base, worldRank == 0 ? 8192 : 4096,
                            NCCL_WIN_COLL_SYMMETRIC));
  // One rank's offset is not a multiple of 4096.
  CHECK(refusedEverywhere(base + (worldRank == worldSize - 1 ? 256 : 0), 4096,
                          NCCL_WIN_COLL_SYMMETRIC));
  // Past the allocation's end (the bytes asked for, not the rounding).
  CHECK(refusedEverywhere(base + 4096, 3 * 4096, NCCL_WIN_COLL_SYMMETRIC));
  // Not symmetric.
  CHECK(refusedEverywhere(base, 4096, NCCL_WIN_DEFAULT));
  // Memory from cudaMalloc.
  void *plain = nullptr;
  REQUIRE(cudaMalloc(&plain, 8192) == cudaSuccess);
  CHECK(refusedEverywhere(plain, 4096, NCCL_WIN_COLL_SYMMETRIC));
  cudaFree(plain);
  // Nothing was left half made: the same memory registers now.
  ncclWindow_t window = nullptr;
  REQUIRE(everywhere(ncclCommWindowRegister(comm, base, 4096, &window,
                                            NCCL_WIN_COLL_SYMMETRIC) ==
                     ncclSuccess));
  CHECK(ncclMemFree(memory) == ncclInvalidUsage); // still registered
  CHECK(ncclCommWindowDeregister(comm, window) == ncclSuccess);
  CHECK(ncclCommWindowDeregister(comm, window) == ncclInvalidArgument);
  CHECK(ncclMemFree(memory) == ncclSuccess);
  CHECK(ncclMemFree(memory) == ncclInvalidArgument);
  CHECK(everywhere(sharedFilesOpen() == 0));
}

TEST_CASE("memory registers on several communicators and peers see it") {
  ncclComm_t comm = world->comm();
  ncclComm_t reversed = nullptr; // the world's ranks in reverse order
  REQUIRE(everywhere(ncclCommSplit(comm, 0, worldSize - 1 - worldRank,
                                   &reversed, nullptr) == ncclSuccess));
  const ncclTeam_t lsa = ncclTeamLsa(comm);
  CHECK(lsa.nRanks == worldSize);
  CHECK(lsa.rank == worldRank);
  CHECK(lsa.stride == 1);
  void *memory = nullptr;
  REQUIRE(everywhere(ncclMemAlloc(&memory, 2 * 4096) == ncclSuccess));
  // Device memory for the emulation's checks, with the bytes asked for.
  const int64_t mine[2] = {worldRank, 1000 + worldRank};
  CHECK(cudaMemcpy(static_cast<char *>(memory) + 4096, mine, sizeof mine,
                   cudaMemcpyHostToDevice) == cudaSuccess);
  // The second page: one window on each communicator at once.
  ncclWindow_t first = nullptr, second = nullptr;
  REQUIRE(everywhere(
      ncclCommWindowRegister(comm, static_cast<char *>(memory) + 4096, 4096,
                             &first, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess &&
      ncclCommWindowRegister(reversed, static_cast<char *>(memory) + 4096, 4096,
                             &second, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess));
  CHECK(sharedFilesOpen() == 1); // this rank's memory; the peers' are mapped
  MPI_Barrier(MPI_COMM_WORLD);
  // The device side's pointers (host code here), by each one's ranks.
  for (int p = 0; p < worldSize; ++p) {
    int64_t seen[2];
    std::memcpy(seen, coconet::emu::lsaPointer(first, 0, p), sizeof seen);
    CHECK(seen[0] == p);
    CHECK(seen[1] == 1000 + p);
    std::memcpy(seen, coconet::emu::lsaPointer(second, 8, p), sizeof seen[0]);
    CHECK(seen[0] == 1000 + (worldSize - 1 - p));
  }
  CHECK(coconet::emu::lsaPointer(first, 0, worldRank) ==
        static_cast<char *>(memory) + 4096);
  CHECK(ncclCommWindowDeregister(comm, first) == ncclSuccess);
  CHECK(ncclCommWindowDeregister(reversed, second) == ncclSuccess);
  CHECK(ncclMemFree(memory) == ncclSuccess);
  CHECK(ncclCommDestroy(reversed) == ncclSuccess);
  CHECK(sharedFilesOpen() == 0);
}

TEST_CASE("a device communicator has the LSA barriers asked for") {
  ncclComm_t comm = world->comm();
  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof reqs);
  reqs.lsaBarrierCount = 3;
  reqs.barrierCount = 5;
  ncclDevComm dev;
  REQUIRE(everywhere(ncclDevCommCreate(comm, &reqs, &dev) == ncclSuccess));
  CHECK(dev.rank == worldRank);
  CHECK(dev.nRanks == worldSize);
  CHECK(dev.lsaRank == worldRank);
  CHECK(dev.lsaSize == worldSize);
  CHECK(dev.lsaBarrier.nBarriers == 5);
  CHECK(dev.ginContextCount == 0);
  CHECK(ncclDevCommDestroy(comm, &dev) == ncclSuccess);
  CHECK(ncclDevCommDestroy(comm, &dev) == ncclInvalidArgument);
  // What the emulation does not have (asked for on rank 0 only), refused
  // on every rank.
  ncclDevComm unused;
  reqs.ginSignalCount = worldRank == 0 ? 1 : 0;
  CHECK(
      everywhere(ncclDevCommCreate(comm, &reqs, &unused) == ncclInvalidUsage));
  reqs.ginSignalCount = 0;
  reqs.lsaMultimem = true;
  CHECK(
      everywhere(ncclDevCommCreate(comm, &reqs, &unused) == ncclInvalidUsage));
  reqs.lsaMultimem = false;
  if (worldSize > 1) {
    reqs.barrierCount = 0;
    reqs.lsaBarrierCount = worldRank == 0 ? 4 : 2;
    CHECK(everywhere(ncclDevCommCreate(comm, &reqs, &unused) ==
                     ncclInvalidArgument));
  }
  CHECK(everywhere(sharedFilesOpen() == 0));
}

namespace {

/// Device faults, one per run (COCONET_TEAM_TEST_FAULT; CTests
/// emu-team-fault-*, which look for the emulation's message).
__global__ void faultyKernel(cc_team t, float *in, int fault) {
  if (fault == 0 && threadIdx.x == 0) // a member past the team
    cc_peer(t, t.size, in)[0] = 1;
  if (fault == 1 && threadIdx.x == 0) // past the window's end
    cc_peer(t, 0, in + teamBytes(t.size) / sizeof(float))[0] = 1;
  if (fault == 2 || (fault == 3 && t.rank != 1)) // more blocks than
    cc_team_sync(t);                             // barriers; a member skips
}

int runFault(const char *name) {
  const char *names[] = {"peer", "offset", "blocks", "skip"};
  int fault = 0;
  while (fault < 4 && std::strcmp(names[fault], name) != 0)
    ++fault;
  std::unique_ptr<cuda::Mesh> mesh;
  std::unique_ptr<Team> team;
  std::string why;
  if (fault == 4 || !cuda::Mesh::create(*world, {worldSize}, &mesh).ok() ||
      !Team::create(*mesh, 0, teamBytes(worldSize), &team, &why).ok() ||
      !team) {
    std::fprintf(stderr, "no fault to run: %s\n", name);
    return 1;
  }
  const int blocks = team->blocks() + (fault == 2 ? 1 : 0);
  cc_launch(faultyKernel, blocks, kThreads, 0, nullptr, team->device(),
            static_cast<float *>(team->local()), fault);
  cudaDeviceSynchronize();
  MPI_Barrier(MPI_COMM_WORLD); // a member that did not fault waits here
  std::fprintf(stderr, "the fault did not stop the program\n");
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  int result = 0;
  const Status s = cuda::Communicator::fromMpi(MPI_COMM_WORLD, &world);
  if (!s.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", worldRank, s.message().c_str());
    result = 1;
  } else if (const char *fault = std::getenv("COCONET_TEAM_TEST_FAULT")) {
    result = runFault(fault);
  } else {
    result = coconet::test::runCatchSession(argc, argv);
  }
  world.reset();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
