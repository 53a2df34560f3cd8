//===- AllToAllVTest.cpp - the CUDA target's dropless MoE, emulated -------===//
//
// An MPI program of Catch2 tests (CTests emu-alltoallv-np1 .. np4): the
// CUDA runtime's AllToAllV and groupedMatmul (coconet/cuda/runtime.h,
// runtime/src/cuda/alltoallv.cpp), unchanged, on the emulation's CUDA
// runtime, NCCL and cuBLAS. AllToAllV on every axis of the meshes {P},
// {1, P} (a group of one member) and {2, 2}, for the cases of
// test/runtime/AllToAllVReference.h in i32 and f64, one AllToAllV a case
// run for both types: `out` (garbage first) and `outCounts` must equal,
// bit for bit, what the semantics give (the CPU target's test checks
// cpu::Mesh::allToAllV against the same reference). groupedMatmul against
// cpu::groupedMatmul (the exact matmul's bits: the emulation's cuBLAS is
// the CPU runtime's matmul) and, for i32, a naive loop.
//
//===----------------------------------------------------------------------===//

// (Catch2's implementation: test/catch/CatchImpl.cpp; main() below.)
#include <catch2/catch.hpp>

#include "CatchSession.h"

#include "../../runtime/AllToAllVReference.h"

#include "coconet/cpu/runtime.h"
#include "coconet/cuda/runtime.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace coconet::rt;
namespace ref = coconet::test::alltoallv;

namespace {

int worldRank = 0, worldSize = 1;
std::unique_ptr<cuda::Communicator> world;

bool everywhere(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

/// Device memory holding `bytes` of `host` (at least one byte).
void *device(const void *host, size_t bytes) {
  void *p = nullptr;
  REQUIRE(cudaMalloc(&p, bytes + (bytes == 0)) == cudaSuccess);
  if (bytes > 0)
    REQUIRE(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  return p;
}

template <typename T> void *device(const std::vector<T> &host) {
  return device(host.data(), host.size() * sizeof(T));
}

template <typename T> std::vector<T> download(const void *p, size_t n) {
  std::vector<T> host(n);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  if (n > 0)
    REQUIRE(cudaMemcpy(host.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) ==
            cudaSuccess);
  return host;
}

/// Every case of the reference on `axis` of `mesh`.
void checkAxis(const cuda::Mesh &mesh, int axis, cudaStream_t stream) {
  const int64_t p = axis < 0 ? mesh.size() : mesh.axisSize(axis);
  const int64_t me = axis < 0 ? mesh.rank() : mesh.coord(axis);
  for (const ref::Case &c : ref::cases(p)) {
    cuda::AllToAllV a2a;
    REQUIRE(everywhere(
        a2a.create(mesh, axis, c.groups, cuda::defaultAllocator()).ok()));
    void *counts = device(c.counts[me]);
    for (DType dtype : {DType::I32, DType::F64}) {
      INFO("axis " << axis << " of " << p << " members, " << dtypeName(dtype)
                   << ": " << c.name);
      const size_t size = dtypeSize(dtype);
      const std::vector<uint8_t> in = ref::input(c, me, size);
      const std::vector<uint8_t> want = ref::expectedOut(c, me, size);
      const std::vector<int32_t> wantCounts = ref::expectedOutCounts(c, me);
      void *din = device(in);
      void *dout = device(std::vector<uint8_t>(want.size(), 0xab));
      void *doutCounts =
          device(std::vector<int32_t>(static_cast<size_t>(c.groups), -7));
      const Status s =
          a2a.run(din, c.inRows[me], static_cast<const int32_t *>(counts), dout,
                  c.outRows[me], static_cast<int32_t *>(doutCounts), c.rowElems,
                  dtype, stream);
      INFO(s.toString());
      REQUIRE(everywhere(s.ok()));
      CHECK(download<uint8_t>(dout, want.size()) == want);
      CHECK(download<int32_t>(doutCounts, wantCounts.size()) == wantCounts);
      // In parts (an overlap's), where they divide the groups a member
      // receives: together the same rows and counts.
      const int64_t perMember = c.groups / p;
      for (int64_t parts : {int64_t(2), perMember}) {
        if (parts < 2 || perMember % parts != 0)
          continue;
        INFO(parts << " parts");
        cudaFree(dout);
        cudaFree(doutCounts);
        dout = device(std::vector<uint8_t>(want.size(), 0xab));
        doutCounts =
            device(std::vector<int32_t>(static_cast<size_t>(c.groups), -7));
        for (int64_t part = 0; part < parts; ++part) {
          const Status sp = a2a.runPart(
              din, c.inRows[me], static_cast<const int32_t *>(counts), dout,
              c.outRows[me], static_cast<int32_t *>(doutCounts), c.rowElems,
              dtype, part, parts, stream);
          INFO(sp.toString());
          REQUIRE(everywhere(sp.ok()));
        }
        CHECK(download<uint8_t>(dout, want.size()) == want);
        CHECK(download<int32_t>(doutCounts, wantCounts.size()) == wantCounts);
      }
      cudaFree(din);
      cudaFree(dout);
      cudaFree(doutCounts);
    }
    cudaFree(counts);
  }
}

template <typename T> std::vector<T> randomValues(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>)
      v[i] = i % 3 == 0 ? static_cast<T>(static_cast<int64_t>(rng() % 9) - 4)
                        : static_cast<T>(rng());
    else
      v[i] = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                        static_cast<int>(rng() % 41) - 20);
  }
  return v;
}

template <typename T>
void checkGroupedMatmul(DType dtype, cublasHandle_t handle,
                        cudaStream_t stream) {
  const int64_t n = 21, k = 37;
  uint64_t seed = 100;
  for (const ref::MatmulCase &m : ref::matmulCases())
    for (int64_t localGroups : {int64_t(1), int64_t(2), int64_t(3)}) {
      INFO(dtypeName(dtype)
           << ": " << m.name << ", localGroups " << localGroups);
      const std::vector<T> a =
          randomValues<T>(static_cast<size_t>(m.rows * k), ++seed);
      const std::vector<T> b =
          randomValues<T>(static_cast<size_t>(localGroups * k * n), ++seed);
      const int64_t groups = static_cast<int64_t>(m.counts.size());
      std::vector<T> want(static_cast<size_t>(m.rows * n));
      cpu::groupedMatmul(dtype, m.rows, n, k, a.data(), b.data(), groups,
                         localGroups, m.counts.data(), want.data());
      if constexpr (std::is_integral_v<T>)
        CHECK(want == ref::naiveGroupedMatmul<T, uint64_t>(
                          m.rows, n, k, a, b, localGroups, m.counts));
      std::vector<T> garbage(want.size());
      std::memset(garbage.data(), 0xab, garbage.size() * sizeof(T));
      void *da = device(a), *db = device(b), *dc = device(garbage);
      void *dcounts = device(m.counts);
      std::vector<int32_t> hostCounts(m.counts.size() + 1, -99);
      const Status s = cuda::groupedMatmul(
          handle, stream, dtype, m.rows, n, k, da, db, groups, localGroups,
          static_cast<const int32_t *>(dcounts), hostCounts.data(), dc);
      INFO(s.toString());
      REQUIRE(s.ok());
      const std::vector<T> got = download<T>(dc, want.size());
      CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0);
      CHECK(std::equal(m.counts.begin(), m.counts.end(), hostCounts.begin()));
      // In one part a group: together the same bits.
      cudaFree(dc);
      dc = device(garbage);
      for (int64_t part = 0; part < localGroups; ++part) {
        const Status sp = cuda::groupedMatmulPart(
            handle, stream, dtype, m.rows, n, k, da, db, groups, localGroups,
            static_cast<const int32_t *>(dcounts), hostCounts.data(), dc, part,
            localGroups);
        INFO(sp.toString());
        REQUIRE(sp.ok());
      }
      const std::vector<T> parts = download<T>(dc, want.size());
      CHECK(std::memcmp(parts.data(), want.data(), parts.size() * sizeof(T)) ==
            0);
      cudaFree(da);
      cudaFree(db);
      cudaFree(dc);
      cudaFree(dcounts);
    }
}

} // namespace

TEST_CASE("AllToAllV gives the semantics' rows on every axis") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  std::vector<std::vector<int64_t>> meshes = {{worldSize}, {1, worldSize}};
  if (worldSize == 4)
    meshes.push_back({2, 2});
  for (const std::vector<int64_t> &sizes : meshes) {
    std::unique_ptr<cuda::Mesh> mesh;
    REQUIRE(everywhere(cuda::Mesh::create(*world, sizes, &mesh).ok()));
    for (int axis = -1; axis < static_cast<int>(mesh->numAxes()); ++axis)
      checkAxis(*mesh, axis, stream);
  }
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("AllToAllV refuses bad calls before any message") {
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  cuda::AllToAllV a2a;
  int32_t word = 0;
  CHECK(a2a.run(&word, 0, &word, &word, 0, &word, 1, DType::I32, nullptr)
            .code() == StatusCode::Internal);
  CHECK(a2a.create(*mesh, 0, 0, cuda::defaultAllocator()).code() ==
        StatusCode::InvalidArgument);
  if (worldSize > 1)
    CHECK(
        a2a.create(*mesh, 0, worldSize + 1, cuda::defaultAllocator()).code() ==
        StatusCode::InvalidArgument);
  CHECK(a2a.create(*mesh, 1, worldSize, cuda::defaultAllocator()).code() ==
        StatusCode::InvalidArgument);
  REQUIRE(a2a.create(*mesh, 0, worldSize, cuda::defaultAllocator()).ok());
  const Status negative =
      a2a.run(&word, -1, &word, &word, 0, &word, 1, DType::I32, nullptr);
  CHECK(negative.code() == StatusCode::InvalidArgument);
  CHECK(negative.message().find("AllToAllV::run") != std::string::npos);
  CHECK(a2a.run(&word, 0, nullptr, &word, 0, &word, 1, DType::I32, nullptr)
            .code() == StatusCode::InvalidArgument);
  CHECK(a2a.run(nullptr, 1, &word, &word, 0, &word, 1, DType::I32, nullptr)
            .code() == StatusCode::InvalidArgument);
  // Parts: 2 do not divide the one group a member receives; of 2 groups,
  // part 1 before part 0 is out of order.
  CHECK(a2a.runPart(&word, 0, &word, &word, 0, &word, 1, DType::I32, 0, 2,
                    nullptr)
            .code() == StatusCode::InvalidArgument);
  cuda::AllToAllV two;
  REQUIRE(two.create(*mesh, 0, 2 * worldSize, cuda::defaultAllocator()).ok());
  const Status early = two.runPart(&word, 0, &word, &word, 0, &word, 1,
                                   DType::I32, 1, 2, nullptr);
  CHECK(early.code() == StatusCode::InvalidArgument);
  CHECK(early.message().find("in order") != std::string::npos);
  CHECK(cuda::groupedMatmulPart(nullptr, nullptr, DType::I32, 1, 1, 1, &word,
                                &word, 2, 2, &word, &word, &word, 1, 3)
            .code() == StatusCode::InvalidArgument);
  CHECK(cuda::groupedMatmul(nullptr, nullptr, DType::I32, 1, 1, 1, &word, &word,
                            1, 0, &word, &word, &word)
            .code() == StatusCode::InvalidArgument);
  CHECK(cuda::groupedMatmul(nullptr, nullptr, DType::I32, -1, 1, 1, &word,
                            &word, 1, 1, &word, &word, &word)
            .code() == StatusCode::InvalidArgument);
}

TEST_CASE("groupedMatmul is one exact matmul a segment") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  cublasHandle_t handle = nullptr;
  REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasSetStream(handle, stream) == CUBLAS_STATUS_SUCCESS);
  checkGroupedMatmul<int32_t>(DType::I32, handle, stream);
  checkGroupedMatmul<double>(DType::F64, handle, stream);
  REQUIRE(cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  int result = 0;
  const Status s = cuda::Communicator::fromMpi(MPI_COMM_WORLD, &world);
  if (!s.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", worldRank, s.message().c_str());
    result = 1;
  } else {
    result = coconet::test::runCatchSession(argc, argv);
  }
  world.reset();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
