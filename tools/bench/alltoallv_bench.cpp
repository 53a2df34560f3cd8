//===- alltoallv_bench.cpp - the runtime's alltoallv beside MPI by hand ---===//
//
// One MoE dispatch's rows on every rank, moved three ways in the same run
// (tools/bench/bench_moe.py builds it with mpicxx and prints the table):
//
//   ours   cpu::Mesh::allToAllV, what a generated program calls: every
//          member's counts allgathered, then MPI_Alltoallv of whole rows,
//          the rows nothing reaches zeroed;
//   team   the same with Algorithm::OneShot (`algorithm(rows, oneshot)`):
//          the counts and rows through the axis's shared window;
//   hand   what a user writes with MPI alone: MPI_Alltoall of the rows per
//          peer, then MPI_Alltoallv in bytes (no zeroing, no checks);
//   copy   a memcpy of the rows this rank sends: the memory floor of
//          moving them once on this machine.
//
//   alltoallv_bench ROWS WIDTH EXPERTS OUT_ROWS ITERATIONS [skew]
//
// ROWS f32 rows of WIDTH a rank, spread evenly over EXPERTS (skew: every
// row to expert 0); OUT_ROWS the receive bound. Prints, on rank 0, the
// median of ITERATIONS of each, timed between barriers.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

double medianMs(MPI_Comm comm, int iterations,
                const std::function<void()> &step) {
  step();
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(comm);
    auto start = std::chrono::steady_clock::now();
    step();
    MPI_Barrier(comm);
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 6) {
    std::fprintf(stderr, "usage: alltoallv_bench ROWS WIDTH EXPERTS OUT_ROWS "
                         "ITERATIONS [skew]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int64_t rows = std::atoll(argv[1]), width = std::atoll(argv[2]),
                experts = std::atoll(argv[3]), outRows = std::atoll(argv[4]);
  const int iterations = std::atoi(argv[5]);
  const bool skew = argc > 6 && std::strcmp(argv[6], "skew") == 0;
  coconet::rt::cpu::Communicator world(MPI_COMM_WORLD);
  std::unique_ptr<coconet::rt::cpu::Mesh> mesh;
  if (!coconet::rt::cpu::Mesh::create(world, {world.size()}, &mesh).ok())
    MPI_Abort(MPI_COMM_WORLD, 1);
  const int p = world.size(), me = world.rank();
  const int64_t local = experts / p;
  std::vector<int32_t> counts(static_cast<size_t>(experts), 0);
  for (int64_t e = 0; e < experts; ++e)
    counts[e] = static_cast<int32_t>(skew ? (e == 0 ? rows : 0)
                                          : rows / experts +
                                                (e < rows % experts ? 1 : 0));
  std::vector<float> in(static_cast<size_t>(rows * width)),
      out(static_cast<size_t>(outRows * width)),
      copy(static_cast<size_t>(rows * width));
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(me * 1000003 + static_cast<int64_t>(i));

  const double ours = medianMs(MPI_COMM_WORLD, iterations, [&] {
    coconet::rt::Status s =
        mesh->allToAllV(in.data(), rows, counts.data(), experts, out.data(),
                        outRows, nullptr, width, coconet::rt::DType::F32, 0);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.toString().c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  });
  const double team = medianMs(MPI_COMM_WORLD, iterations, [&] {
    coconet::rt::Status s =
        mesh->allToAllV(in.data(), rows, counts.data(), experts, out.data(),
                        outRows, nullptr, width, coconet::rt::DType::F32, 0,
                        coconet::rt::cpu::Mesh::Algorithm::OneShot);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.toString().c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  });
  // By hand: rows per peer, exchanged, then the bytes.
  const int rowBytes = static_cast<int>(width * sizeof(float));
  std::vector<int> send(p), recv(p), sendAt(p), recvAt(p);
  const double hand = medianMs(MPI_COMM_WORLD, iterations, [&] {
    for (int q = 0; q < p; ++q) {
      int64_t n = 0;
      for (int64_t g = 0; g < local; ++g)
        n += counts[q * local + g];
      send[q] = static_cast<int>(n);
    }
    MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT,
                 MPI_COMM_WORLD);
    int s = 0, r = 0;
    for (int q = 0; q < p; ++q) {
      sendAt[q] = s * rowBytes;
      recvAt[q] = r * rowBytes;
      s += send[q];
      r += recv[q];
      send[q] *= rowBytes;
      recv[q] *= rowBytes;
    }
    MPI_Alltoallv(in.data(), send.data(), sendAt.data(), MPI_BYTE, out.data(),
                  recv.data(), recvAt.data(), MPI_BYTE, MPI_COMM_WORLD);
  });
  const double floor = medianMs(MPI_COMM_WORLD, iterations, [&] {
    std::memcpy(copy.data(), in.data(), in.size() * sizeof(float));
  });
  if (me == 0)
    std::printf("alltoallv ours %.3f ms team %.3f ms hand %.3f ms copy %.3f "
                "ms\n",
                ours, team, hand, floor);
  mesh.reset();
  MPI_Finalize();
  return 0;
}
