//===- AllToAllVTest.cpp - the CPU target's dropless mixture of experts ---===//
//
// Run by CTest under mpirun on 1, 2, 3 and 4 processes (run-mpi.sh).
// Mesh::allToAllV on every axis of every mesh of the world (one axis, a
// unit axis in front, two axes where the size factors, and -1), for the
// cases of AllToAllVReference.h (random counts with zeros from some peers,
// every row to one member, outRows that drop rows, inRows short of the
// counts, negative counts, several groups a member, sizes that differ
// between members, rows of no elements) in i32 and f64: `out` (filled
// with garbage first, so a row left unzeroed shows) and `outCounts` must
// equal, bit for bit, what the semantics give, computed in the test from
// every member's input (every element names its member and row). Calls
// every member must refuse. groupedMatmul on every rank: against one
// matmul() a segment (f64, i32) and a naive loop (i32), with an empty
// segment, a negative count, a clipped last segment and rows past the
// segments. Exits 1 (after printing what failed) on a mismatch.
//
//===----------------------------------------------------------------------===//

#include "AllToAllVReference.h"

#include "coconet/cpu/runtime.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace coconet::rt;
namespace ref = coconet::test::alltoallv;

namespace {

int failures = 0;
int worldRank = 0;
int cases = 0;

void fail(const std::string &what) {
  if (++failures <= 20)
    std::fprintf(stderr, "rank %d: FAILED: %s\n", worldRank, what.c_str());
}

std::string describe(const std::vector<int64_t> &sizes, int axis, DType dtype,
                     const std::string &name) {
  std::string mesh = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    mesh += (i ? "," : "") + std::to_string(sizes[i]);
  return "allToAllV " + std::string(dtypeName(dtype)) + " on mesh " + mesh +
         "] axis " + std::to_string(axis) + ": " + name;
}

void testAxis(cpu::Mesh &mesh, const std::vector<int64_t> &sizes, int axis,
              cpu::Mesh::Algorithm algorithm) {
  const int64_t p = axis < 0 ? mesh.size() : mesh.axisSize(axis);
  const int64_t me = axis < 0 ? mesh.rank() : mesh.coord(axis);
  for (DType dtype : {DType::I32, DType::F64})
    for (const ref::Case &c : ref::cases(p)) {
      ++cases;
      const std::string what =
          describe(sizes, axis, dtype, c.name) +
          (algorithm == cpu::Mesh::Algorithm::Library ? "" : " (one shot)");
      const size_t size = dtypeSize(dtype);
      const std::vector<uint8_t> in = ref::input(c, me, size);
      const std::vector<uint8_t> want = ref::expectedOut(c, me, size);
      const std::vector<int32_t> wantCounts = ref::expectedOutCounts(c, me);
      std::vector<uint8_t> out(want.size(), 0xab);
      std::vector<int32_t> outCounts(static_cast<size_t>(c.groups), -7);
      const Status s = mesh.allToAllV(
          in.data(), c.inRows[me], c.counts[me].data(), c.groups, out.data(),
          c.outRows[me], outCounts.data(), c.rowElems, dtype, axis, algorithm);
      if (!s.ok())
        fail(what + ": " + s.toString());
      else if (out != want)
        fail(what + ": wrong rows");
      else if (outCounts != wantCounts)
        fail(what + ": wrong outCounts");
      if (algorithm != cpu::Mesh::Algorithm::Library)
        continue;
      // In parts (an overlap's): 2 parts, and one a group, where they
      // divide the groups a member receives; together they are the call.
      const int64_t perMember = c.groups / p;
      for (int64_t parts : {int64_t(2), perMember}) {
        if (parts < 2 || perMember % parts != 0)
          continue;
        std::fill(out.begin(), out.end(), uint8_t(0xab));
        std::fill(outCounts.begin(), outCounts.end(), -7);
        for (int64_t part = 0; part < parts; ++part) {
          const Status sp = mesh.allToAllVPart(
              in.data(), c.inRows[me], c.counts[me].data(), c.groups,
              out.data(), c.outRows[me], outCounts.data(), c.rowElems, dtype,
              axis, part, parts);
          if (!sp.ok())
            fail(what + ", part " + std::to_string(part) + ": " +
                 sp.toString());
        }
        if (out != want)
          fail(what + ": wrong rows in " + std::to_string(parts) + " parts");
        else if (outCounts != wantCounts)
          fail(what + ": wrong outCounts in " + std::to_string(parts) +
               " parts");
      }
    }
}

/// Calls that every member must refuse alike (none enters MPI).
void testRefusals(cpu::Mesh &mesh) {
  std::vector<uint8_t> buffer(256);
  std::vector<int32_t> counts(64, 1), outCounts(64);
  const int64_t p = mesh.size();
  auto refused = [&](const char *what, const Status &s) {
    if (s.code() != StatusCode::InvalidArgument ||
        s.message().find("allToAllV") == std::string::npos)
      fail(std::string("refusal of ") + what + ": got " + s.toString());
  };
  void *b = buffer.data();
  refused("a bad axis",
          mesh.allToAllV(b, 1, counts.data(), p, b, 1, outCounts.data(), 1,
                         DType::F32, static_cast<int>(mesh.numAxes())));
  refused("no groups", mesh.allToAllV(b, 1, counts.data(), 0, b, 1,
                                      outCounts.data(), 1, DType::F32, -1));
  if (p > 1)
    refused("groups that do not divide",
            mesh.allToAllV(b, 1, counts.data(), p + 1, b, 1, outCounts.data(),
                           1, DType::F32, -1));
  refused("negative inRows",
          mesh.allToAllV(b, -1, counts.data(), p, b, 1, outCounts.data(), 1,
                         DType::F32, -1));
  refused("negative outRows",
          mesh.allToAllV(b, 1, counts.data(), p, b, -1, outCounts.data(), 1,
                         DType::F32, -1));
  refused("negative rowElems",
          mesh.allToAllV(b, 1, counts.data(), p, b, 1, outCounts.data(), -1,
                         DType::F32, -1));
  refused("null counts", mesh.allToAllV(b, 1, nullptr, p, b, 1,
                                        outCounts.data(), 1, DType::F32, -1));
  {
    // A null outCounts: the rows move, no counts are written.
    std::vector<float> from(static_cast<size_t>(p), 7.0f),
        to(static_cast<size_t>(p), 0.0f);
    Status s = mesh.allToAllV(from.data(), p, counts.data(), p, to.data(), p,
                              nullptr, 1, DType::F32, -1);
    if (!s.ok() || to != from)
      fail("a null outCounts: " + s.toString());
  }
  refused("a null in", mesh.allToAllV(nullptr, 1, counts.data(), p, b, 1,
                                      outCounts.data(), 1, DType::F32, -1));
  refused("a null out", mesh.allToAllV(b, 1, counts.data(), p, nullptr, 1,
                                       outCounts.data(), 1, DType::F32, -1));
  refused("rows whose bytes overflow",
          mesh.allToAllV(b, int64_t(1) << 40, counts.data(), p, b, 1,
                         outCounts.data(), int64_t(1) << 30, DType::F64, -1));
  refused("a row whose bytes overflow",
          mesh.allToAllV(b, 1, counts.data(), p, b, 1, outCounts.data(),
                         int64_t(1) << 62, DType::F64, -1));
  refused("a part past the parts",
          mesh.allToAllVPart(b, 1, counts.data(), 2 * p, b, 1, outCounts.data(),
                             1, DType::F32, -1, 2, 2));
  refused("parts that do not divide the groups",
          mesh.allToAllVPart(b, 1, counts.data(), 2 * p, b, 1, outCounts.data(),
                             1, DType::F32, -1, 0, 3));
}

// --- groupedMatmul
// -------------------------------------------------------------

template <typename T> std::vector<T> randomValues(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>)
      // Wide values that wrap, and small ones now and then.
      v[i] = i % 3 == 0 ? static_cast<T>(static_cast<int64_t>(rng() % 9) - 4)
                        : static_cast<T>(rng());
    else
      v[i] = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                        static_cast<int>(rng() % 41) - 20);
  }
  return v;
}

/// What one matmul() a segment gives (C zeroed first).
template <typename T>
std::vector<T> perSegment(DType dtype, int64_t rows, int64_t n, int64_t k,
                          const std::vector<T> &a, const std::vector<T> &b,
                          int64_t localGroups,
                          const std::vector<int32_t> &counts) {
  std::vector<T> c(static_cast<size_t>(rows * n), T(0));
  int64_t start = 0;
  for (size_t j = 0; j < counts.size() && start < rows; ++j) {
    const int64_t len =
        std::min<int64_t>(ref::positive(counts[j]), rows - start);
    if (len > 0)
      cpu::matmul(dtype, 1, len, n, k, a.data() + start * k, 0,
                  b.data() + static_cast<int64_t>(j) % localGroups * k * n, 0,
                  c.data() + start * n, 0);
    start += len;
  }
  return c;
}

template <typename T> void testGroupedMatmul(DType dtype) {
  // n = 21 and k = 37: several of matmul()'s micro-tiles, and a tail.
  const int64_t n = 21, k = 37;
  uint64_t seed = 1;
  for (const ref::MatmulCase &m : ref::matmulCases())
    for (int64_t localGroups : {int64_t(1), int64_t(2), int64_t(3)}) {
      const std::string what = std::string("groupedMatmul ") +
                               dtypeName(dtype) + ": " + m.name +
                               ", localGroups " + std::to_string(localGroups);
      const std::vector<T> a =
          randomValues<T>(static_cast<size_t>(m.rows * k), ++seed);
      const std::vector<T> b =
          randomValues<T>(static_cast<size_t>(localGroups * k * n), ++seed);
      std::vector<T> c(static_cast<size_t>(m.rows * n));
      std::memset(c.data(), 0xab, c.size() * sizeof(T));
      cpu::groupedMatmul(dtype, m.rows, n, k, a.data(), b.data(),
                         static_cast<int64_t>(m.counts.size()), localGroups,
                         m.counts.data(), c.data());
      const std::vector<T> want =
          perSegment(dtype, m.rows, n, k, a, b, localGroups, m.counts);
      if (std::memcmp(c.data(), want.data(), c.size() * sizeof(T)) != 0)
        fail(what + ": not one matmul() a segment");
      // In one part a group: together the same bits.
      std::memset(c.data(), 0xab, c.size() * sizeof(T));
      for (int64_t part = 0; part < localGroups; ++part)
        cpu::groupedMatmulPart(dtype, m.rows, n, k, a.data(), b.data(),
                               static_cast<int64_t>(m.counts.size()),
                               localGroups, m.counts.data(), c.data(), part,
                               localGroups);
      if (std::memcmp(c.data(), want.data(), c.size() * sizeof(T)) != 0)
        fail(what + ": not the same bits in " + std::to_string(localGroups) +
             " parts");
      if constexpr (std::is_integral_v<T>) {
        const std::vector<T> naive = ref::naiveGroupedMatmul<T, uint64_t>(
            m.rows, n, k, a, b, localGroups, m.counts);
        if (c != naive)
          fail(what + ": not the naive loop's");
      }
    }
}

std::vector<std::vector<int64_t>> meshesFor(int64_t p) {
  std::vector<std::vector<int64_t>> meshes = {{p}, {1, p}};
  for (int64_t a = 2; a < p; ++a)
    if (p % a == 0)
      meshes.push_back({a, p / a});
  return meshes;
}

} // namespace

int main(int argc, char **argv) {
  // The one-shot path's window (cpu/alltoallv_team.cpp): small, so that
  // its rows move in several pieces.
  setenv("COCONET_TEAM_ALGORITHM_BYTES", "256", 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  cpu::Communicator world(MPI_COMM_WORLD);
  worldRank = world.rank();

  for (const std::vector<int64_t> &sizes : meshesFor(world.size())) {
    std::unique_ptr<cpu::Mesh> mesh;
    Status s = cpu::Mesh::create(world, sizes, &mesh);
    if (!s.ok()) {
      fail("Mesh::create: " + s.toString());
      continue;
    }
    for (int axis = -1; axis < static_cast<int>(mesh->numAxes()); ++axis)
      for (auto algorithm :
           {cpu::Mesh::Algorithm::Library, cpu::Mesh::Algorithm::OneShot})
        testAxis(*mesh, sizes, axis, algorithm);
    testRefusals(*mesh);
  }
  testGroupedMatmul<int32_t>(DType::I32);
  testGroupedMatmul<double>(DType::F64);

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0)
    std::printf("%d ranks, %d allToAllV cases: %s (%d failures)\n",
                world.size(), cases, total == 0 ? "all passed" : "FAILED",
                total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
