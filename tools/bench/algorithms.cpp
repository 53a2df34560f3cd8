//===- algorithms.cpp - synthesised algorithms against MPI's collectives -===//
//
// Built and run by tools/bench-algorithms.sh under mpirun. For every
// algorithm table compiled in (bench_algorithms.h, written by the script
// from `coconetc synth --emit=cpp`) whose ranks are the world size, and
// every size from --min to --max bytes of output a rank (powers of 4), the
// median over iterations of the slowest rank's time of
// coconet::rt::cpu::runAlgorithm (MPI point-to-point) and of
// runAlgorithmOnTeam (the team's shared window, what a generated program's
// Mesh::runAlgorithm takes on one node) on f32 sums, beside MPI's own
// collective on the same buffers (MPI_Allgather, MPI_Alltoall,
// MPI_Reduce_scatter_block, MPI_Allreduce: not exact, any order) in the
// same run. One line a table and size.
//
//   algorithms [--min BYTES] [--max BYTES] [--iterations N]
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/algorithm.h"
#include "coconet/cpu/team.h"
#include "coconet/sizes.h"

#include "bench_algorithms.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace coconet::rt;
using algorithm::Collective;
using algorithm::Table;

namespace {

/// The median over `iterations` (after `warmup`) of the slowest rank's time.
double timeIt(const std::function<void()> &run, int iterations, int warmup) {
  for (int i = 0; i < warmup; ++i)
    run();
  std::vector<double> mine(static_cast<size_t>(iterations)),
      slowest(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    run();
    mine[static_cast<size_t>(i)] = MPI_Wtime() - start;
  }
  MPI_Allreduce(mine.data(), slowest.data(), iterations, MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  std::sort(slowest.begin(), slowest.end());
  return slowest[slowest.size() / 2];
}

const char *mpiName(Collective c) {
  switch (c) {
  case Collective::AllGather:
    return "MPI_Allgather";
  case Collective::AllToAll:
    return "MPI_Alltoall";
  case Collective::ReduceScatter:
    return "MPI_Reduce_scatter_block";
  case Collective::AllReduce:
    return "MPI_Allreduce";
  }
  return "?";
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t minBytes = 4096, maxBytes = int64_t{16} << 20;
  int maxIterations = 100;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc ||
        (arg != "--min" && arg != "--max" && arg != "--iterations")) {
      if (rank == 0)
        std::fprintf(stderr, "usage: algorithms [--min BYTES] [--max BYTES] "
                             "[--iterations N]\n");
      MPI_Finalize();
      return 2;
    }
    const long long v = std::atoll(argv[++i]);
    if (v < 1 || v > (int64_t{1} << 32)) {
      if (rank == 0)
        std::fprintf(stderr, "algorithms: %s %s: from 1 to 2^32\n", arg.c_str(),
                     argv[i]);
      MPI_Finalize();
      return 2;
    }
    if (arg == "--min")
      minBytes = v;
    else if (arg == "--max")
      maxBytes = v;
    else
      maxIterations = static_cast<int>(std::min<long long>(v, 1000000));
  }
  // The team a generated program's mesh makes (its default window).
  std::unique_ptr<cpu::Mesh> mesh;
  std::unique_ptr<cpu::Team> team;
  std::string why;
  if (!cpu::Mesh::create(cpu::Communicator(MPI_COMM_WORLD), {size}, &mesh)
           .ok() ||
      !cpu::Team::create(*mesh, -1, teamAlgorithmWindowBytes(), &team, &why)
           .ok())
    team.reset();
  if (rank == 0)
    std::printf("%-40s %5s %10s %10s %10s %10s %8s %8s  %s\n", "algorithm",
                "ranks", "out bytes", "p2p us", "team us", "MPI us", "p2p/MPI",
                "team/MPI", "MPI's");
  for (const Table *t : coconet_bench::algorithms) {
    if (static_cast<int>(t->ranks) != size)
      continue;
    const int64_t outChunks = static_cast<int64_t>(algorithm::outputChunks(*t));
    for (int64_t bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
      const int64_t chunkElements = std::max<int64_t>(1, bytes / 4 / outChunks);
      const int64_t outElems = chunkElements * outChunks;
      const int64_t inElems =
          chunkElements * static_cast<int64_t>(algorithm::inputChunks(*t));
      std::vector<float> in(static_cast<size_t>(inElems), 1.0f + rank),
          out(static_cast<size_t>(outElems));
      const int iterations = static_cast<int>(std::max<int64_t>(
          5, std::min<int64_t>(maxIterations, (int64_t(64) << 20) / bytes)));
      const int warmup = std::max(2, iterations / 10);
      bool failed = false;
      const double ours = timeIt(
          [&] {
            Status st =
                cpu::runAlgorithm(*t, MPI_COMM_WORLD, in.data(), out.data(),
                                  chunkElements, DType::F32, ReduceOp::Sum);
            failed = failed || !st.ok();
          },
          iterations, warmup);
      double onTeam = 0;
      if (team && cpu::algorithmTeamPieceElements(*t, *team, chunkElements,
                                                  DType::F32) > 0) {
        std::vector<char> staging(cpu::algorithmTeamStagingBytes(
            *t, team->rank(),
            cpu::algorithmTeamPieceElements(*t, *team, chunkElements,
                                            DType::F32),
            DType::F32));
        onTeam = timeIt(
            [&] {
              Status st = cpu::runAlgorithmOnTeam(
                  *t, *team, in.data(), out.data(), chunkElements, DType::F32,
                  ReduceOp::Sum, staging.data());
              failed = failed || !st.ok();
            },
            iterations, warmup);
      }
      const int count = static_cast<int>(chunkElements * t->chunksPerRank);
      const double mpi = timeIt(
          [&] {
            switch (t->collective) {
            case Collective::AllGather:
              MPI_Allgather(in.data(), count, MPI_FLOAT, out.data(), count,
                            MPI_FLOAT, MPI_COMM_WORLD);
              break;
            case Collective::AllToAll:
              MPI_Alltoall(in.data(), count, MPI_FLOAT, out.data(), count,
                           MPI_FLOAT, MPI_COMM_WORLD);
              break;
            case Collective::ReduceScatter:
              MPI_Reduce_scatter_block(in.data(), out.data(), count, MPI_FLOAT,
                                       MPI_SUM, MPI_COMM_WORLD);
              break;
            case Collective::AllReduce:
              MPI_Allreduce(in.data(), out.data(), static_cast<int>(outElems),
                            MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
              break;
            }
          },
          iterations, warmup);
      if (failed && rank == 0)
        std::printf("FAILED: %s\n", t->name);
      if (rank == 0)
        std::printf("%-40s %5d %10lld %10.1f %10.1f %10.1f %8.2f %8.2f  %s\n",
                    t->name, size, static_cast<long long>(outElems * 4),
                    ours * 1e6, onTeam * 1e6, mpi * 1e6, ours / mpi,
                    onTeam / mpi, mpiName(t->collective));
    }
  }
  team.reset();
  mesh.reset();
  MPI_Finalize();
  return 0;
}
