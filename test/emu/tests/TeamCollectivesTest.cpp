//===- TeamCollectivesTest.cpp - one- and two-shot collectives, emulated --===//
//
// An MPI program of Catch2 tests (CTests emu-team-collectives-np1 .. np8):
// the CUDA runtime's TeamCollectives (coconet/cuda/team_collectives.h,
// runtime/src/cuda/team_collectives.cu), unchanged, on the emulation's
// NCCL symmetric memory and device API. Every result must equal, bit for
// bit, what the CPU runtime's combineBlocks (the simulator's rule: members
// combined by their halving tree) makes of every rank's input, for every
// element type and operator, with wide inputs (floats of exponents -20 to
// 20, -14 to 14 for f16, and both signs, whose sums depend on the order of
// addition; integers over their whole range), counts that do not divide by the
// members, in place, and calls larger than the window (several pieces);
// allToAll's blocks, each a member's own, against where they must land.
//
//===----------------------------------------------------------------------===//

// (Catch2's implementation: test/catch/CatchImpl.cpp; main() below.)
#include <catch2/catch.hpp>

#include "CatchSession.h"

#include "coconet/cpu/runtime.h"
#include "coconet/cuda/team_collectives.h"
#include "coconet/numeric.h"

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace coconet::rt;
using cuda::TeamCollectives;
using Algorithm = cuda::TeamCollectives::Algorithm;

namespace {

int worldRank = 0, worldSize = 1;
std::unique_ptr<cuda::Communicator> world;

bool everywhere(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

/// `count` wide elements of `dtype` for `rank` (bytes).
std::vector<uint8_t> wideInput(DType dtype, int64_t count, int rank, int salt) {
  std::mt19937_64 rng(static_cast<uint64_t>(rank * 7919 + salt * 104729 + 1));
  const size_t size = dtypeSize(dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * size);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  // Finite in every type (f16 ends at 65504): inf - inf would make NaNs,
  // whose payloads are not part of the promise.
  const int range = dtype == DType::F16 ? 14 : 20;
  std::uniform_int_distribution<int> exponent(-range, range);
  for (int64_t i = 0; i < count; ++i) {
    uint8_t *at = bytes.data() + i * size;
    double v =
        std::ldexp(mantissa(rng), exponent(rng)) * ((rng() & 1) ? -1.0 : 1.0);
    uint64_t bits = rng();
    switch (dtype) {
    case DType::F16: {
      const uint16_t h = doubleToHalfBits(v);
      std::memcpy(at, &h, 2);
      break;
    }
    case DType::BF16: {
      const uint16_t h = doubleToBFloat16Bits(v);
      std::memcpy(at, &h, 2);
      break;
    }
    case DType::F32: {
      const float f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
      break;
    }
    case DType::F64:
      std::memcpy(at, &v, 8);
      break;
    case DType::I32:
    case DType::I64:
    case DType::U64:
    case DType::Bool:
      std::memcpy(at, &bits, size);
      break;
    }
  }
  return bytes;
}

/// Every rank's `bytes`, in rank order.
std::vector<uint8_t> gatherAll(const std::vector<uint8_t> &mine) {
  std::vector<uint8_t> all(mine.size() * static_cast<size_t>(worldSize));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE,
                all.data(), static_cast<int>(mine.size()), MPI_BYTE,
                MPI_COMM_WORLD);
  return all;
}

void *device(const std::vector<uint8_t> &host, size_t extra = 0) {
  void *p = nullptr;
  REQUIRE(cudaMalloc(&p, host.size() + extra + 1) == cudaSuccess);
  REQUIRE(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  return p;
}

std::vector<uint8_t> download(const void *p, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(host.data(), p, bytes, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  return host;
}

struct Case {
  DType dtype;
  ReduceOp op;
};

/// Every type and operator on 1 and 2 ranks; on more (8 emulated ranks
/// share the test machine's cores), one case of each type and of each
/// operator, and an f64 sum: the one whose bits show the members' order
/// (a narrower sum of wide values is mostly exact in f64, or rounds the
/// difference away; a team kernel adding its members in ascending order
/// passed every other case on 4 and 8 ranks).
std::vector<Case> cases() {
  if (worldSize > 2)
    return {{DType::F16, ReduceOp::Sum}, {DType::BF16, ReduceOp::Avg},
            {DType::F32, ReduceOp::Sum}, {DType::F64, ReduceOp::Max},
            {DType::F64, ReduceOp::Sum}, {DType::I32, ReduceOp::Prod},
            {DType::I64, ReduceOp::Sum}, {DType::U64, ReduceOp::Min}};
  std::vector<Case> out;
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I32,
                  DType::I64, DType::U64})
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max,
                        ReduceOp::Min, ReduceOp::Avg})
      if (op != ReduceOp::Avg || isFloat(d))
        out.push_back({d, op});
  return out;
}

/// The elements of every case, with a window of `window` bytes (small:
/// several pieces), checked on every rank.
void checkAll(TeamCollectives &c, int64_t count, bool inPlace) {
  int salt = 0;
  for (const Case &k : cases()) {
    INFO(dtypeName(k.dtype) << " op " << static_cast<int>(k.op) << " count "
                            << count << (inPlace ? " in place" : ""));
    const size_t size = dtypeSize(k.dtype);
    ++salt;
    // allReduce, one and two shot.
    for (Algorithm a : {Algorithm::OneShot, Algorithm::TwoShot}) {
      const std::vector<uint8_t> in =
          wideInput(k.dtype, count, worldRank, salt);
      std::vector<uint8_t> expected(in.size());
      cpu::combineBlocks(gatherAll(in).data(), worldSize, expected.data(),
                         count, k.dtype, k.op);
      void *src = device(in);
      void *dst = inPlace ? src : device(std::vector<uint8_t>(in.size()));
      REQUIRE(c.allReduce(src, dst, count, k.dtype, k.op, 0, a, nullptr).ok());
      CHECK(everywhere(download(dst, in.size()) == expected));
      cudaFree(src);
      if (!inPlace)
        cudaFree(dst);
    }
    // reduceScatter: block j of the combination to member j.
    {
      const std::vector<uint8_t> in =
          wideInput(k.dtype, count * worldSize, worldRank, salt + 1000);
      std::vector<uint8_t> whole(in.size());
      cpu::combineBlocks(gatherAll(in).data(), worldSize, whole.data(),
                         count * worldSize, k.dtype, k.op);
      const std::vector<uint8_t> expected(
          whole.begin() + worldRank * count * size,
          whole.begin() + (worldRank + 1) * count * size);
      void *src = device(in);
      void *dst = device(std::vector<uint8_t>(count * size));
      REQUIRE(c.reduceScatter(src, dst, count, k.dtype, k.op, 0,
                              Algorithm::OneShot, nullptr)
                  .ok());
      CHECK(everywhere(download(dst, count * size) == expected));
      cudaFree(src);
      cudaFree(dst);
    }
    // allGather: every member's block in member order (operators do not
    // matter: once per type).
    if (k.op == ReduceOp::Sum) {
      const std::vector<uint8_t> in =
          wideInput(k.dtype, count, worldRank, salt + 2000);
      const std::vector<uint8_t> expected = gatherAll(in);
      void *dst = device(std::vector<uint8_t>(expected.size()));
      void *src = inPlace
                      ? static_cast<uint8_t *>(dst) + worldRank * count * size
                      : device(in);
      if (inPlace)
        REQUIRE(cudaMemcpy(src, in.data(), in.size(), cudaMemcpyHostToDevice) ==
                cudaSuccess);
      REQUIRE(
          c.allGather(src, dst, count, k.dtype, 0, Algorithm::OneShot, nullptr)
              .ok());
      CHECK(everywhere(download(dst, expected.size()) == expected));
      if (!inPlace)
        cudaFree(src);
      cudaFree(dst);
    }
    // allToAll: block r of every member's blocks, in member order, to
    // member r (once per type; not in place).
    if (k.op == ReduceOp::Sum && !inPlace) {
      const std::vector<uint8_t> in =
          wideInput(k.dtype, count * worldSize, worldRank, salt + 3000);
      const std::vector<uint8_t> all = gatherAll(in);
      std::vector<uint8_t> expected;
      const size_t block = count * size;
      for (int q = 0; q < worldSize; ++q) {
        const auto from = all.begin() + (q * worldSize + worldRank) * block;
        expected.insert(expected.end(), from, from + block);
      }
      void *src = device(in);
      void *dst = device(std::vector<uint8_t>(in.size()));
      REQUIRE(
          c.allToAll(src, dst, count, k.dtype, 0, Algorithm::OneShot, nullptr)
              .ok());
      CHECK(everywhere(download(dst, in.size()) == expected));
      cudaFree(src);
      cudaFree(dst);
    }
  }
}

} // namespace

TEST_CASE("one- and two-shot collectives equal the simulator's rule") {
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  // A window of 96 bytes: a call of 37 f64 elements runs in 4 pieces (and
  // a reduceScatter of 4 members in pieces of 3 elements).
  for (size_t window : {size_t(1) << 20, size_t(96)}) {
    std::unique_ptr<TeamCollectives> c;
    REQUIRE(everywhere(TeamCollectives::create(*mesh, {0}, window, &c).ok()));
    CHECK(c->path(0) == "a team of " + std::to_string(worldSize) +
                            (worldSize == 1 ? " member" : " members"));
    // Every count with the large window; the pieces with 37 elements.
    for (int64_t count : {int64_t(0), int64_t(1), int64_t(37)})
      for (bool inPlace : {false, true})
        if (count == 37 || (window > 96 && !inPlace)) {
          INFO("window " << window);
          checkAll(*c, count, inPlace);
        }
  }
}

TEST_CASE("without a team the collectives are NCCL's, and path() says why") {
  std::unique_ptr<cuda::Mesh> mesh;
  REQUIRE(everywhere(cuda::Mesh::create(*world, {worldSize}, &mesh).ok()));
  setenv("COCONET_TEAM", "off", 1);
  std::unique_ptr<TeamCollectives> c;
  REQUIRE(everywhere(TeamCollectives::create(*mesh, {0}, 0, &c).ok()));
  unsetenv("COCONET_TEAM");
  CHECK(c->path(0) == "NCCL's collectives (COCONET_TEAM=off)");
  CHECK(c->path(-1) == "NCCL's collectives (no team was made for this axis)");
  // Integers: NCCL's sum is exact whatever its order.
  const std::vector<uint8_t> in = wideInput(DType::I64, 5, worldRank, 1);
  std::vector<uint8_t> expected(in.size());
  cpu::combineBlocks(gatherAll(in).data(), worldSize, expected.data(), 5,
                     DType::I64, ReduceOp::Sum);
  void *src = device(in);
  REQUIRE(c->allReduce(src, src, 5, DType::I64, ReduceOp::Sum, 0,
                       Algorithm::OneShot, nullptr)
              .ok());
  CHECK(everywhere(download(src, in.size()) == expected));
  cudaFree(src);
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
