//===- AlgorithmTest.cpp - synthesised algorithms on the emulated NCCL ----===//
//
// CTests emu-algorithms-np{2,3,4,8}: the CUDA runtime's AlgorithmRunner
// (coconet/cuda/algorithm.h, runtime/src/cuda/algorithm.cu), unchanged, on
// the emulation's NCCL send/receive groups and device memory. Every table
// the build synthesised (test/CMakeLists.txt: the same as the CPU
// runtime's runtime-algorithms-np*) whose ranks are the world size runs
// for f64, f32, f16 and i64 with 1, 5 and 1031 elements a chunk, and each
// rank's output must equal bit for bit the table's interpretation
// (test/runtime/AlgorithmInterpreter.h), so the CPU target's results too.
// Exits 1 after printing what failed.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/algorithm.h"

#include "AlgorithmInterpreter.h"
#include "coconet_test_algorithms.h"

#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace coconet::rt;
using algorithm::Table;
using coconet_test::Bytes;

namespace {

int failures = 0;
int worldRank = 0;

void fail(const std::string &what) {
  if (++failures <= 20)
    std::fprintf(stderr, "rank %d: FAILED: %s\n", worldRank, what.c_str());
}

void runCase(const cuda::Communicator &world, const Table &t, int64_t elements,
             DType dtype, cudaStream_t stream) {
  const ReduceOp op = ReduceOp::Sum;
  const std::string what = std::string(t.name) + " (" + dtypeName(dtype) +
                           ", " + std::to_string(elements) +
                           " elements a chunk)";
  const uint32_t me = static_cast<uint32_t>(worldRank);
  const size_t bytes = elements * dtypeSize(dtype);
  const Bytes in = coconet_test::algorithmInput(t, me, elements, dtype);
  Bytes out(algorithm::outputChunks(t) * bytes, 0xEE);
  void *dIn = nullptr, *dOut = nullptr;
  std::unique_ptr<cuda::AlgorithmRunner> runner;
  Status st = cuda::AlgorithmRunner::create(t, world.comm(), elements, dtype,
                                            op, &runner);
  if (st.ok() && (cudaMalloc(&dIn, in.size()) != cudaSuccess ||
                  cudaMalloc(&dOut, out.size()) != cudaSuccess ||
                  cudaMemcpy(dIn, in.data(), in.size(),
                             cudaMemcpyHostToDevice) != cudaSuccess ||
                  cudaMemcpy(dOut, out.data(), out.size(),
                             cudaMemcpyHostToDevice) != cudaSuccess))
    st = Status::error(StatusCode::CudaError, "device memory");
  if (st.ok())
    st = runner->run(dIn, dOut, stream);
  if (st.ok() && (cudaStreamSynchronize(stream) != cudaSuccess ||
                  cudaMemcpy(out.data(), dOut, out.size(),
                             cudaMemcpyDeviceToHost) != cudaSuccess))
    st = Status::error(StatusCode::CudaError, "the run or its copy back");
  cudaFree(dIn);
  cudaFree(dOut);
  if (!st.ok()) {
    fail(what + ": " + st.toString());
    return;
  }
  const std::string wrong =
      coconet_test::compareWithInterpretation(t, elements, dtype, op, me, out);
  if (!wrong.empty())
    fail(what + ": " + wrong);
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<cuda::Communicator> world;
  Status s = cuda::Communicator::fromMpi(MPI_COMM_WORLD, &world);
  cudaStream_t stream = nullptr;
  if (s.ok() && cudaStreamCreate(&stream) != cudaSuccess)
    s = Status::error(StatusCode::CudaError, "cudaStreamCreate");
  int ran = 0;
  if (!s.ok()) {
    fail(s.toString());
  } else {
    for (const Table *t : coconet_test::algorithms) {
      if (static_cast<int>(t->ranks) != size)
        continue;
      ++ran;
      for (DType dtype : {DType::F64, DType::F32, DType::F16, DType::I64})
        for (int64_t elements : {1, 5, 1031})
          runCase(*world, *t, elements, dtype, stream);
      if (worldRank == 0)
        std::printf("ok: %s on %d emulated GPUs: f64, f32, f16, i64; 1, 5 "
                    "and 1031 elements a chunk\n",
                    t->name, size);
    }
    // create() refuses avg in a reduction.
    for (const Table *t : coconet_test::algorithms) {
      if (static_cast<int>(t->ranks) != size || !algorithm::reduces(*t))
        continue;
      std::unique_ptr<cuda::AlgorithmRunner> runner;
      Status st = cuda::AlgorithmRunner::create(
          *t, world->comm(), 1, DType::F32, ReduceOp::Avg, &runner);
      if (st.ok() || st.message().find("avg") == std::string::npos)
        fail(std::string(t->name) + ": avg not refused: " + st.toString());
      break;
    }
    // A table for other ranks is refused by create().
    for (const Table *t : coconet_test::algorithms) {
      if (static_cast<int>(t->ranks) == size)
        continue;
      std::unique_ptr<cuda::AlgorithmRunner> runner;
      Status st = cuda::AlgorithmRunner::create(
          *t, world->comm(), 1, DType::F32, ReduceOp::Sum, &runner);
      if (st.ok() || st.message().find("ranks") == std::string::npos)
        fail(std::string(t->name) + ": not refused on " + std::to_string(size) +
             " ranks: " + st.toString());
      break;
    }
  }
  if (stream)
    cudaStreamDestroy(stream);
  world.reset();
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0 && ran == 0)
    std::printf("FAILED: no algorithm for %d ranks\n", size);
  MPI_Finalize();
  return all == 0 && ran > 0 ? 0 : 1;
}
