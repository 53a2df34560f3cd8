//===- TeamTest.cpp - a mesh axis's members sharing memory ----------------===//
//
// Run by CTest under mpirun (2 and 4 processes, see run-mpi.sh). For every
// axis of a one-axis mesh and, where the world size factors, of a two-axis
// mesh: a Team over the axis, its parts 64-byte aligned; every member fills its
// part of the window with OpenMP threads, meets the others at the barrier, and
// then reads every member's part with plain loads, an all-gather and a
// reduce-scatter in rank order of values whose float sum depends on the order;
// a second barrier before the parts are rewritten, three rounds. A barrier that
// a member misses gives up after its time limit and names that member. Then
// with COCONET_TEAM=off no team is made, on every member, with the reason.
// Exits 1 (after printing what failed) on a mismatch.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/team.h"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace coconet::rt;

namespace {

int failures = 0;
int worldRank = 0;

void fail(const std::string &what) {
  if (++failures <= 20)
    std::fprintf(stderr, "rank %d: FAILED: %s\n", worldRank, what.c_str());
}

constexpr int64_t kCount = 4099; // per member: not a multiple of anything

float valueOf(int member, int64_t i) {
  return member == 0 ? 1e8f : 0.75f + static_cast<float>((i + member) % 5);
}

void checkAxis(const cpu::Mesh &mesh, int axis, const std::string &name) {
  std::unique_ptr<cpu::Team> team;
  std::string why;
  const int64_t members = axis < 0 ? mesh.size() : mesh.axisSize(axis);
  Status s = cpu::Team::create(mesh, axis, members * kCount * sizeof(float),
                               &team, &why);
  if (!s.ok() || !team) {
    fail(name + ": no team: " + (s.ok() ? why : s.message()));
    return;
  }
  if (team->size() != members)
    fail(name + ": the team has " + std::to_string(team->size()) +
         " members, the axis " + std::to_string(members));
  // Every part on a cache line's boundary (a fused kernel's vector loads
  // and stores would split otherwise; MPI's windows are not aligned).
  for (int m = 0; m < team->size(); ++m)
    if (reinterpret_cast<uintptr_t>(team->part(m)) % 64 != 0)
      fail(name + ": member " + std::to_string(m) + "'s part is " +
           std::to_string(reinterpret_cast<uintptr_t>(team->part(m)) % 64) +
           " bytes past a 64-byte boundary");
  const int me = team->rank();
  float *in = static_cast<float *>(team->local());
  for (int round = 0; round < 3; ++round) {
#pragma omp parallel for
    for (int64_t i = 0; i < members * kCount; ++i)
      in[i] = valueOf(me, i) + static_cast<float>(round);
    team->barrier();
    // All-gather: member m's first kCount elements.
    for (int m = 0; m < members; ++m)
      for (int64_t i = 0; i < kCount; ++i)
        if (team->peer(m, in)[i] != valueOf(m, i) + static_cast<float>(round)) {
          fail(name + ": member " + std::to_string(m) + "'s element " +
               std::to_string(i) + " read wrong");
          break;
        }
    // Reduce-scatter: this member's block, summed in rank order.
    for (int64_t i = 0; i < kCount; ++i) {
      float sum = 0, expected = 0;
      for (int m = 0; m < members; ++m) {
        sum += team->peer(m, in)[me * kCount + i];
        expected += valueOf(m, me * kCount + i) + static_cast<float>(round);
      }
      if (std::memcmp(&sum, &expected, sizeof sum) != 0) {
        fail(name + ": reduce-scatter element " + std::to_string(i));
        break;
      }
    }
    team->barrier(); // nobody rewrites its part while others read it
  }
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    cpu::Communicator world(MPI_COMM_WORLD);
    std::vector<std::vector<int64_t>> shapes = {{size}};
    if (size % 2 == 0 && size > 2)
      shapes.push_back({2, size / 2});
    for (const auto &shape : shapes) {
      std::unique_ptr<cpu::Mesh> mesh;
      if (!cpu::Mesh::create(world, shape, &mesh).ok()) {
        fail("mesh");
        continue;
      }
      std::string name = "mesh";
      for (int64_t s : shape)
        name += " " + std::to_string(s);
      for (int axis = -1; axis < static_cast<int>(shape.size()); ++axis)
        checkAxis(*mesh, axis, name + ", axis " + std::to_string(axis));
    }
    // A member that does not come: the others' barrier gives up after its
    // time and names it (barrier() then aborts the job); when it comes
    // late, it finds the others already there.
    if (size > 1) {
      std::unique_ptr<cpu::Mesh> mesh;
      std::unique_ptr<cpu::Team> team;
      std::string why;
      if (!cpu::Mesh::create(world, {size}, &mesh).ok() ||
          !cpu::Team::create(*mesh, 0, 64, &team, &why).ok() || !team) {
        fail("a team for the late member: " + why);
      } else {
        const int lateMember = size - 1;
        if (team->rank() != lateMember) {
          int late = -1;
          const double start = MPI_Wtime();
          const bool met = team->barrierWithin(0.3, &late);
          const double waited = MPI_Wtime() - start;
          if (met || late != lateMember || waited < 0.3 || waited > 10)
            fail("a barrier without member " + std::to_string(lateMember) +
                 ": met " + std::to_string(met) + ", late " +
                 std::to_string(late) + ", after " + std::to_string(waited) +
                 " s");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (team->rank() == lateMember) {
          int late = -1;
          if (!team->barrierWithin(10, &late))
            fail("the late member waited for member " + std::to_string(late));
        }
        MPI_Barrier(MPI_COMM_WORLD);
      }
      // The limit comes from COCONET_TEAM_TIMEOUT (600 s without it).
      setenv("COCONET_TEAM_TIMEOUT", "2.5", 1);
      if (cpu::Team::timeLimit() != 2.5)
        fail("COCONET_TEAM_TIMEOUT=2.5 gives " +
             std::to_string(cpu::Team::timeLimit()));
      setenv("COCONET_TEAM_TIMEOUT", "soon", 1);
      if (cpu::Team::timeLimit() != 600)
        fail("COCONET_TEAM_TIMEOUT=soon gives " +
             std::to_string(cpu::Team::timeLimit()));
      unsetenv("COCONET_TEAM_TIMEOUT");
    }
    // No room in /dev/shm for every member's part (64-byte header, 64
    // bytes to align the part, and 4096 bytes): no team, on every member,
    // and why.
    {
      setenv("COCONET_TEAM_SHM_BYTES", "1000", 1);
      std::unique_ptr<cpu::Mesh> mesh;
      std::unique_ptr<cpu::Team> team;
      std::string why;
      const std::string expected =
          "the node's shared memory (/dev/shm) has not room for the team's "
          "window (" +
          std::to_string(size * (64 + 64 + 4096)) + " bytes, 1000 free)";
      if (!cpu::Mesh::create(world, {size}, &mesh).ok() ||
          !cpu::Team::create(*mesh, 0, 4096, &team, &why).ok() || team ||
          why != expected)
        fail("no room in /dev/shm made a team (or said '" + why + "')");
      unsetenv("COCONET_TEAM_SHM_BYTES");
    }
    // The fallback, forced: no team, on every member, and why.
    setenv("COCONET_TEAM", "off", 1);
    std::unique_ptr<cpu::Mesh> mesh;
    if (cpu::Mesh::create(world, {size}, &mesh).ok()) {
      std::unique_ptr<cpu::Team> team;
      std::string why;
      if (!cpu::Team::create(*mesh, 0, 64, &team, &why).ok() || team ||
          why != "COCONET_TEAM=off")
        fail("COCONET_TEAM=off made a team (or said '" + why + "')");
    }
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0)
    std::printf("%s: teams on every axis of %d ranks, 3 rounds: %d "
                "failures\n",
                all ? "FAILED" : "ok", size, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
