//===- team_collectives.cpp - collectives on a team's window, timed -------===//
//
// tools/bench-collectives.sh builds and runs this under mpirun. For message
// sizes from --min to --max bytes (powers of 4), f32 sums, it times:
//
//   allreduce      mpi       MPI_Allreduce called by hand (MPI's own order
//                            of combination: not exact)
//                  library   Mesh::allReduce (exact: MPI_Alltoallv of the
//                            members' blocks, combined locally in member
//                            order, MPI_Allgatherv; the cost model's
//                            "library" algorithm)
//                  one-shot  teamAllReduce, OneShot (cpu/team_collectives.h)
//                  two-shot  teamAllReduce, TwoShot
//   reducescatter  mpi (MPI_Reduce_scatter_block), library
//                  (Mesh::reduceScatter), one-shot (teamReduceScatter)
//   allgather      mpi (MPI_Allgather), library (Mesh::allGather, which is
//                  MPI_Allgather), one-shot (teamAllGather)
//   alltoall       mpi (MPI_Alltoall called by hand), library
//                  (Mesh::allToAll: MPI_Alltoall on the axis's
//                  communicator, in pieces past INT_MAX bytes; no combine,
//                  so MPI's result is exact too and the others are compared
//                  with it), one-shot (teamAllToAll)
//
// A size is the bytes of one rank's whole vector: the allreduce's input and
// output, the reducescatter's input (its output is 1/P of it), the
// allgather's output (its input is 1/P of it), the alltoall's input and
// output. The team's window holds the largest size in one piece; inputs
// and outputs are ordinary memory (the team algorithms copy into the
// window: nothing is zero copy). Each time is the median over iterations
// (after warm-up ones) of the slowest rank's time, every iteration started
// together (MPI_Barrier). The results of the exact algorithms are compared
// once per size, bit for bit: a difference is reported on stderr and makes
// the exit status 1.
//
//   team_collectives [--min BYTES] [--max BYTES] [--iterations N]
//                    [--csv | --csv-file FILE]
//
// prints a table (microseconds, and each algorithm's time over MPI's own);
// with --csv, lines `collective,algorithm,ranks,bytes,seconds` (after that
// header line) instead; --csv-file appends those lines, without the
// header, to FILE and prints the table.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/team_collectives.h"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace coconet::rt;

namespace {

struct Options {
  int64_t minBytes = int64_t(1) << 10;
  int64_t maxBytes = int64_t(1) << 26;
  int iterations = 200; // at most; fewer for large sizes
  bool csv = false;
  std::string csvFile; ///< where the CSV lines are appended besides the table
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "team_collectives: %s\nusage: team_collectives [--min BYTES] "
               "[--max BYTES] [--iterations N] [--csv | --csv-file FILE]\n",
               why);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> long long {
      if (i + 1 >= argc)
        usage((arg + " needs a value").c_str());
      char *end = nullptr;
      const long long v = std::strtoll(argv[++i], &end, 10);
      if (!end || *end != '\0' || v < 1)
        usage((arg + " needs a positive integer").c_str());
      return v;
    };
    if (arg == "--min")
      o.minBytes = value();
    else if (arg == "--max")
      o.maxBytes = value();
    else if (arg == "--iterations")
      o.iterations = static_cast<int>(value());
    else if (arg == "--csv")
      o.csv = true;
    else if (arg == "--csv-file" && i + 1 < argc)
      o.csvFile = argv[++i];
    else
      usage(("unknown option " + arg).c_str());
  }
  if (o.minBytes > o.maxBytes)
    usage("--min is larger than --max");
  return o;
}

void check(const Status &s, const char *what) {
  if (s.ok())
    return;
  std::fprintf(stderr, "team_collectives: %s: %s\n", what,
               s.toString().c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/// The median over `iterations` (after `warmup`) of the slowest rank's
/// time of `run`, every iteration started together.
double timeIt(const std::function<void()> &run, int iterations, int warmup) {
  for (int i = 0; i < warmup; ++i)
    run();
  std::vector<double> mine(static_cast<size_t>(iterations)),
      slowest(mine.size());
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

struct Row {
  const char *collective;
  int64_t bytes;
  std::vector<std::pair<const char *, double>> seconds; // [0]: mpi
};

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const Options o = parse(argc, argv);
  int failed = 0;
  {
    cpu::Communicator world(MPI_COMM_WORLD);
    const int p = world.size(), me = world.rank();
    std::unique_ptr<cpu::Mesh> mesh;
    check(cpu::Mesh::create(world, {p}, &mesh), "Mesh::create");
    const int64_t maxCount = o.maxBytes / 4;
    const size_t window = std::max(
        cpu::teamAllReduceWindowBytes(cpu::TeamAlgorithm::TwoShot, maxCount,
                                      DType::F32, p),
        cpu::teamReduceScatterWindowBytes(maxCount / p, DType::F32, p));
    std::unique_ptr<cpu::Team> team;
    std::string why;
    check(cpu::Team::create(*mesh, 0, window, &team, &why), "Team::create");
    if (!team) {
      if (me == 0)
        std::fprintf(stderr, "team_collectives: no team: %s\n", why.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    // Values whose sums round: every rank's own, with all 24 bits.
    std::vector<float> in(static_cast<size_t>(maxCount));
    for (size_t i = 0; i < in.size(); ++i)
      in[i] =
          static_cast<float>(
              (i * 2654435761u + static_cast<size_t>(me) * 40503u) % 1000003u) *
          1.37e-3f;
    std::vector<float> out(in.size()), exact(in.size());
    // The window's pages, and the outputs', touched before timing.
    std::memset(team->local(), 0, window);

    std::vector<Row> rows;
    for (int64_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 4) {
      const int64_t count = bytes / 4;
      const int64_t perRank = count / p;
      const int iterations = static_cast<int>(std::max<int64_t>(
          7, std::min<int64_t>(o.iterations, (int64_t(64) << 20) / bytes)));
      const int warmup = std::max(2, iterations / 10);
      const float *x = in.data();
      float *y = out.data();
      auto same = [&](const char *what, int64_t n) {
        if (std::memcmp(y, exact.data(), static_cast<size_t>(n) * 4) != 0) {
          std::fprintf(stderr,
                       "team_collectives: rank %d: %s of %lld bytes differs "
                       "from the library's\n",
                       me, what, static_cast<long long>(bytes));
          failed = 1;
        }
      };

      Row ar{"allreduce", bytes, {}};
      ar.seconds.emplace_back(
          "mpi", timeIt(
                     [&] {
                       MPI_Allreduce(x, y, static_cast<int>(count), MPI_FLOAT,
                                     MPI_SUM, MPI_COMM_WORLD);
                     },
                     iterations, warmup));
      ar.seconds.emplace_back(
          "library", timeIt(
                         [&] {
                           check(mesh->allReduce(x, y, count, DType::F32,
                                                 ReduceOp::Sum, 0),
                                 "allReduce");
                         },
                         iterations, warmup));
      std::copy(out.begin(), out.begin() + count, exact.begin());
      for (auto algorithm :
           {cpu::TeamAlgorithm::OneShot, cpu::TeamAlgorithm::TwoShot}) {
        ar.seconds.emplace_back(
            cpu::teamAlgorithmName(algorithm),
            timeIt(
                [&] {
                  check(cpu::teamAllReduce(*team, algorithm, x, y, count,
                                           DType::F32, ReduceOp::Sum),
                        "teamAllReduce");
                },
                iterations, warmup));
        same(cpu::teamAlgorithmName(algorithm), count);
      }
      rows.push_back(ar);

      Row rs{"reducescatter", bytes, {}};
      rs.seconds.emplace_back("mpi", timeIt(
                                         [&] {
                                           MPI_Reduce_scatter_block(
                                               x, y, static_cast<int>(perRank),
                                               MPI_FLOAT, MPI_SUM,
                                               MPI_COMM_WORLD);
                                         },
                                         iterations, warmup));
      rs.seconds.emplace_back(
          "library", timeIt(
                         [&] {
                           check(mesh->reduceScatter(x, y, perRank, DType::F32,
                                                     ReduceOp::Sum, 0),
                                 "reduceScatter");
                         },
                         iterations, warmup));
      std::copy(out.begin(), out.begin() + perRank, exact.begin());
      rs.seconds.emplace_back(
          "one-shot",
          timeIt(
              [&] {
                check(cpu::teamReduceScatter(*team, x, y, perRank, DType::F32,
                                             ReduceOp::Sum),
                      "teamReduceScatter");
              },
              iterations, warmup));
      same("reducescatter", perRank);
      rows.push_back(rs);

      Row ag{"allgather", bytes, {}};
      ag.seconds.emplace_back(
          "mpi", timeIt(
                     [&] {
                       MPI_Allgather(x, static_cast<int>(perRank), MPI_FLOAT, y,
                                     static_cast<int>(perRank), MPI_FLOAT,
                                     MPI_COMM_WORLD);
                     },
                     iterations, warmup));
      ag.seconds.emplace_back(
          "library", timeIt(
                         [&] {
                           check(mesh->allGather(x, y, perRank, DType::F32, 0),
                                 "allGather");
                         },
                         iterations, warmup));
      std::copy(out.begin(), out.begin() + perRank * p, exact.begin());
      ag.seconds.emplace_back(
          "one-shot",
          timeIt(
              [&] {
                check(cpu::teamAllGather(*team, x, y, perRank, DType::F32),
                      "teamAllGather");
              },
              iterations, warmup));
      same("allgather", perRank * p);
      rows.push_back(ag);

      Row aa{"alltoall", bytes, {}};
      aa.seconds.emplace_back(
          "mpi", timeIt(
                     [&] {
                       MPI_Alltoall(x, static_cast<int>(perRank), MPI_FLOAT, y,
                                    static_cast<int>(perRank), MPI_FLOAT,
                                    MPI_COMM_WORLD);
                     },
                     iterations, warmup));
      std::copy(out.begin(), out.begin() + perRank * p, exact.begin());
      aa.seconds.emplace_back(
          "library", timeIt(
                         [&] {
                           check(mesh->allToAll(x, y, perRank, DType::F32, 0),
                                 "allToAll");
                         },
                         iterations, warmup));
      same("alltoall", perRank * p);
      aa.seconds.emplace_back(
          "one-shot",
          timeIt(
              [&] {
                check(cpu::teamAllToAll(*team, x, y, perRank, DType::F32),
                      "teamAllToAll");
              },
              iterations, warmup));
      same("alltoall one-shot", perRank * p);
      rows.push_back(aa);
    }

    if (me == 0) {
      auto csvLines = [&](std::FILE *to) {
        for (const Row &r : rows)
          for (const auto &[name, s] : r.seconds)
            std::fprintf(to, "%s,%s,%d,%lld,%.9g\n", r.collective, name, p,
                         static_cast<long long>(r.bytes), s);
      };
      if (!o.csvFile.empty()) {
        std::FILE *f = std::fopen(o.csvFile.c_str(), "a");
        if (!f) {
          std::fprintf(stderr, "team_collectives: cannot write %s\n",
                       o.csvFile.c_str());
          failed = 1;
        } else {
          csvLines(f);
          std::fclose(f);
        }
      }
      if (o.csv) {
        std::printf("collective,algorithm,ranks,bytes,seconds\n");
        csvLines(stdout);
      } else {
        std::printf("f32 sum, %d ranks, %d OpenMP threads each; microseconds "
                    "(median, slowest rank) and the ratio to MPI's own\n",
                    p, omp_get_max_threads());
        std::printf("%-14s %10s %10s %10s %10s %10s %9s %9s %9s\n",
                    "collective", "bytes", "mpi", "library", "one-shot",
                    "two-shot", "lib/mpi", "1shot/mpi", "2shot/mpi");
        // Grouped by collective, each in size order.
        auto order = [](const Row &r) {
          return std::string(r.collective) == "allreduce"       ? 0
                 : std::string(r.collective) == "reducescatter" ? 1
                 : std::string(r.collective) == "allgather"     ? 2
                                                                : 3;
        };
        std::stable_sort(
            rows.begin(), rows.end(),
            [&](const Row &a, const Row &b) { return order(a) < order(b); });
        for (const Row &r : rows) {
          std::printf("%-14s %10lld", r.collective,
                      static_cast<long long>(r.bytes));
          for (size_t i = 0; i < 4; ++i)
            if (i < r.seconds.size())
              std::printf(" %10.1f", r.seconds[i].second * 1e6);
            else
              std::printf(" %10s", "-");
          for (size_t i = 1; i < 4; ++i)
            if (i < r.seconds.size())
              std::printf(" %9.2f", r.seconds[i].second / r.seconds[0].second);
            else
              std::printf(" %9s", "-");
          std::printf("\n");
        }
      }
    }
  }
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}
