//===- TeamCollectivesTest.cpp - collectives on a team's window -----------===//
//
// Run by CTest under mpirun (1, 2, 3, 4 and 8 processes, see run-mpi.sh).
// On a one-axis mesh of the world and teams over it with several windows
// (one that holds every case at once, one of 1 MiB, and ones of 200 and 72
// bytes, so that collectives run in many pieces: `--windows B,...` gives
// others, 0 meaning the large one): for every element type, every
// reduction operator and both
// algorithms, teamAllReduce, teamReduceScatter, teamAllGather and
// teamAllToAll are compared bit for bit (memcmp) with Mesh::allReduce,
// reduceScatter, allGather and allToAll on the same inputs
// (test/runtime/MpiCollectivesTest.cpp checks those against a plain loop): into
// another buffer, in place (in == out, the allgather's block already in `out`)
// and from the input already in the member's part of the window. The inputs
// make the order of the members visible: every member holds a NaN with its own
// payload at the same positions (the first NaN wins, so even two members' order
// shows), and +-2^54 among small values (the sum of 2^54, -2^54 and 3 is 3 or 0
// depending on the order; f16 cannot hold them, and its sums are exact in
// f64 in any order: there only the NaNs and products show it); counts of
// 0 and 1, counts that the member count does not divide, and large ones
// whose combines and copies run on OpenMP's threads (in one piece and in
// pieces of 1 MiB). A case computed by hand: f64, f32 and bf16 sums
// of 2^54, 3 on every middle member and -2^54, written out per member
// count. Then the refusals (every member alike, before any barrier) and
// the window sizes the helpers promise. Exits 1 (after printing what
// failed) on a mismatch.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/team_collectives.h"
#include "coconet/numeric.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace coconet::rt;

namespace {

using Bytes = std::vector<uint8_t>;

int failures = 0;
int worldRank = 0;
int worldSize = 1;

void fail(const std::string &what) {
  if (++failures <= 20)
    std::fprintf(stderr, "rank %d: FAILED: %s\n", worldRank, what.c_str());
}

/// Stores `v` as an element of `dtype` (floats rounded once to nearest
/// even, integers as their 64-bit pattern's low bytes).
void store(DType dtype, uint8_t *p, double v, uint64_t bits) {
  uint16_t h = 0;
  const float f = static_cast<float>(v);
  switch (dtype) {
  case DType::F16:
    h = doubleToHalfBits(v);
    std::memcpy(p, &h, 2);
    return;
  case DType::BF16:
    h = doubleToBFloat16Bits(v);
    std::memcpy(p, &h, 2);
    return;
  case DType::F32:
    std::memcpy(p, &f, 4);
    return;
  case DType::F64:
    std::memcpy(p, &v, 8);
    return;
  case DType::I32:
  case DType::I64:
  case DType::U64:
    std::memcpy(p, &bits, dtypeSize(dtype));
    return;
  case DType::Bool:
    *p = static_cast<uint8_t>(bits & 1);
    return;
  }
}

/// A quiet NaN whose payload names `member`, in the payload's top bits
/// (what every conversion between the float types keeps).
void storeNaN(DType dtype, uint8_t *p, int64_t member) {
  const uint64_t tag = static_cast<uint64_t>(member) + 1; // 1..8
  const uint16_t h = static_cast<uint16_t>(0x7e00u | (tag << 4));
  const uint16_t b = static_cast<uint16_t>(0x7fc0u | tag);
  const uint32_t f = 0x7fc00000u | static_cast<uint32_t>(tag << 16);
  const uint64_t d = 0x7ff8000000000000ull | (tag << 40);
  switch (dtype) {
  case DType::F16:
    std::memcpy(p, &h, 2);
    return;
  case DType::BF16:
    std::memcpy(p, &b, 2);
    return;
  case DType::F32:
    std::memcpy(p, &f, 4);
    return;
  case DType::F64:
    std::memcpy(p, &d, 8);
    return;
  default:
    return;
  }
}

/// The input of `member`: random values with all 53 bits (f16 and f32
/// rounded), +-2^54 now and then (not f16, which cannot hold it), -0,
/// infinities on member 1, and at every 13th position a NaN naming the
/// member on every member; integers random, and small now and then (so
/// that products do not always wrap to zero and max/min see equal values).
Bytes makeInput(DType dtype, int64_t member, int64_t count, uint64_t tag) {
  const size_t size = dtypeSize(dtype);
  Bytes out(static_cast<size_t>(count) * size);
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t bits = uniformInputBits(tag, member, i);
    double v = 4 * uniformInput(tag, static_cast<uint64_t>(member), i) *
               (1 + static_cast<double>(bits >> 12) * 0x1p-52);
    if (dtype != DType::F16 && bits % 3 == 0)
      v = bits & 8 ? -0x1p54 : 0x1p54;
    if (i % 17 == 3)
      v = -0.0;
    else if (i % 23 == 5 && member == 1)
      v = i % 2 ? -1.0 / 0.0 : 1.0 / 0.0;
    uint64_t pattern = bits;
    if (i % 3 == 0)
      pattern = static_cast<uint64_t>(static_cast<int64_t>(bits % 7) - 3);
    uint8_t *p = out.data() + static_cast<size_t>(i) * size;
    store(dtype, p, v, pattern);
    if (i % 13 == 7)
      storeNaN(dtype, p, member);
  }
  return out;
}

std::string caseName(const char *collective, const char *how, DType dtype,
                     const char *op, int64_t count, size_t window) {
  return std::string(collective) + " " + how + " " + dtypeName(dtype) + " " +
         op + " count " + std::to_string(count) + " window " +
         std::to_string(window);
}

void expect(const std::string &what, const Status &status, const Bytes &got,
            const Bytes &want) {
  if (!status.ok())
    fail(what + ": " + status.toString());
  else if (got.size() != want.size() ||
           (!got.empty() && std::memcmp(got.data(), want.data(), got.size())))
    fail(what + ": not the bits of the Mesh collective");
}

/// Copies `in` into this member's part of the window, after the barrier of
/// the last collective (nobody reads the window now).
void *placeInWindow(cpu::Team &team, const Bytes &in) {
  if (!in.empty())
    std::memcpy(team.local(), in.data(), in.size());
  return team.local();
}

/// Every allreduce case of `dtype` and `op` on `team`.
void checkAllReduce(cpu::Mesh &mesh, cpu::Team &team, DType dtype, ReduceOp op,
                    const std::vector<int64_t> &counts, uint64_t &tag) {
  const int64_t p = team.size();
  for (int64_t count : counts) {
    ++tag;
    const Bytes in = makeInput(dtype, team.rank(), count, tag);
    Bytes want(in.size(), 0xcd);
    const Status ref =
        mesh.allReduce(in.data(), want.data(), count, dtype, op, 0);
    if (!ref.ok()) {
      fail("Mesh::allReduce: " + ref.toString());
      continue;
    }
    for (auto algorithm :
         {cpu::TeamAlgorithm::OneShot, cpu::TeamAlgorithm::TwoShot}) {
      const char *name = cpu::teamAlgorithmName(algorithm);
      auto what = [&](const char *how) {
        return caseName("teamAllReduce", how, dtype, reduceOpName(op), count,
                        team.bytes()) +
               " " + name;
      };
      // In place first: the window still holds the last case's inputs, so
      // a copy wrongly skipped shows.
      Bytes same = in;
      expect(what("in place"),
             cpu::teamAllReduce(team, algorithm, same.data(), same.data(),
                                count, dtype, op),
             same, want);
      Bytes out(in.size(), 0xab);
      expect(what("into another buffer"),
             cpu::teamAllReduce(team, algorithm, in.data(), out.data(), count,
                                dtype, op),
             out, want);
      // The input already in the window, where it fits in one piece.
      if (cpu::teamAllReduceWindowBytes(algorithm, count, dtype, p) <=
          team.bytes()) {
        Bytes fromWindow(in.size(), 0xab);
        expect(what("from the window"),
               cpu::teamAllReduce(team, algorithm, placeInWindow(team, in),
                                  fromWindow.data(), count, dtype, op),
               fromWindow, want);
      }
    }
  }
}

void checkReduceScatter(cpu::Mesh &mesh, cpu::Team &team, DType dtype,
                        ReduceOp op, const std::vector<int64_t> &counts,
                        uint64_t &tag) {
  const int64_t p = team.size();
  const size_t size = dtypeSize(dtype);
  for (int64_t perRank : counts) {
    ++tag;
    const Bytes in = makeInput(dtype, team.rank(), perRank * p, tag);
    Bytes want(static_cast<size_t>(perRank) * size, 0xcd);
    const Status ref =
        mesh.reduceScatter(in.data(), want.data(), perRank, dtype, op, 0);
    if (!ref.ok()) {
      fail("Mesh::reduceScatter: " + ref.toString());
      continue;
    }
    auto what = [&](const char *how) {
      return caseName("teamReduceScatter", how, dtype, reduceOpName(op),
                      perRank, team.bytes());
    };
    Bytes out(want.size(), 0xab);
    expect(
        what("into another buffer"),
        cpu::teamReduceScatter(team, in.data(), out.data(), perRank, dtype, op),
        out, want);
    if (cpu::teamReduceScatterWindowBytes(perRank, dtype, p) <= team.bytes()) {
      Bytes fromWindow(want.size(), 0xab);
      expect(what("from the window"),
             cpu::teamReduceScatter(team, placeInWindow(team, in),
                                    fromWindow.data(), perRank, dtype, op),
             fromWindow, want);
    }
  }
}

void checkAllGather(cpu::Mesh &mesh, cpu::Team &team, DType dtype,
                    const std::vector<int64_t> &counts, uint64_t &tag) {
  const int64_t p = team.size();
  const size_t size = dtypeSize(dtype);
  for (int64_t perRank : counts) {
    ++tag;
    const Bytes in = makeInput(dtype, team.rank(), perRank, tag);
    Bytes want(static_cast<size_t>(perRank * p) * size, 0xcd);
    const Status ref =
        mesh.allGather(in.data(), want.data(), perRank, dtype, 0);
    if (!ref.ok()) {
      fail("Mesh::allGather: " + ref.toString());
      continue;
    }
    auto what = [&](const char *how) {
      return caseName("teamAllGather", how, dtype, "", perRank, team.bytes());
    };
    Bytes out(want.size(), 0xab);
    expect(what("into another buffer"),
           cpu::teamAllGather(team, in.data(), out.data(), perRank, dtype), out,
           want);
    // In place: this member's block already at its position in `out`.
    Bytes place(want.size(), 0xab);
    const size_t at = static_cast<size_t>(team.rank() * perRank) * size;
    std::copy(in.begin(), in.end(), place.begin() + static_cast<long>(at));
    expect(what("in place"),
           cpu::teamAllGather(team, place.data() + at, place.data(), perRank,
                              dtype),
           place, want);
    if (cpu::teamAllGatherWindowBytes(perRank, dtype) <= team.bytes()) {
      Bytes fromWindow(want.size(), 0xab);
      expect(what("from the window"),
             cpu::teamAllGather(team, placeInWindow(team, in),
                                fromWindow.data(), perRank, dtype),
             fromWindow, want);
    }
  }
}

/// Each member's blocks differ from every other member's (makeInput by
/// rank and tag), so a block from the wrong member or to the wrong place
/// shows.
void checkAllToAll(cpu::Mesh &mesh, cpu::Team &team, DType dtype,
                   const std::vector<int64_t> &counts, uint64_t &tag) {
  const int64_t p = team.size();
  const size_t size = dtypeSize(dtype);
  for (int64_t perRank : counts) {
    ++tag;
    const Bytes in = makeInput(dtype, team.rank(), perRank * p, tag);
    Bytes want(static_cast<size_t>(perRank * p) * size, 0xcd);
    const Status ref = mesh.allToAll(in.data(), want.data(), perRank, dtype, 0);
    if (!ref.ok()) {
      fail("Mesh::allToAll: " + ref.toString());
      continue;
    }
    auto what = [&](const char *how) {
      return caseName("teamAllToAll", how, dtype, "", perRank, team.bytes());
    };
    Bytes out(want.size(), 0xab);
    expect(what("into another buffer"),
           cpu::teamAllToAll(team, in.data(), out.data(), perRank, dtype), out,
           want);
    if (cpu::teamAllToAllWindowBytes(perRank, dtype, p) <= team.bytes()) {
      Bytes fromWindow(want.size(), 0xab);
      expect(what("from the window"),
             cpu::teamAllToAll(team, placeInWindow(team, in), fromWindow.data(),
                               perRank, dtype),
             fromWindow, want);
    }
    // Through the mesh with the one-shot algorithm (its team, or MPI's).
    Bytes viaMesh(want.size(), 0xab);
    expect(what("Mesh::allToAll one-shot"),
           mesh.allToAll(in.data(), viaMesh.data(), perRank, dtype, 0,
                         cpu::Mesh::Algorithm::OneShot),
           viaMesh, want);
  }
}

/// Sums worked out by hand: member 0 holds 2^54, the last member -2^54,
/// every member between them 3, combined in f64 by the members' tree
/// (coconet/combine.h). Above 2^54 neighbours are 4 apart, below it 2:
/// 3 members (2^54 + 3) - 2^54 = 4; 4 members (2^54 + 3) + (3 - 2^54) =
/// (2^54 + 4) - (2^54 - 4) = 8 (a tie, to even); 8 members ((2^54 + 3) +
/// (3 + 3)) + ((3 + 3) + (3 - 2^54)) = (2^54 + 8) - (2^54 - 10) = 18,
/// where ascending order gives 24 and the exact sum is 18. One element,
/// and five (in pieces where the window is small), each the same.
void checkByHand(cpu::Team &team) {
  const std::map<int, double> sums = {
      {1, 0x1p54}, {2, 0.0}, {3, 4.0}, {4, 8.0}, {8, 18.0}};
  const auto found = sums.find(team.size());
  if (found == sums.end())
    return;
  const int p = team.size(), me = team.rank();
  const double mine = me == 0 ? 0x1p54 : me == p - 1 ? -0x1p54 : 3.0;
  for (DType dtype : {DType::F64, DType::F32, DType::BF16}) {
    const size_t size = dtypeSize(dtype);
    for (int64_t count : {int64_t(1), int64_t(5)}) {
      Bytes in(static_cast<size_t>(count) * size);
      Bytes want(in.size()), wantAvg(in.size());
      for (int64_t i = 0; i < count; ++i) {
        store(dtype, in.data() + i * size, mine, 0);
        store(dtype, want.data() + i * size, found->second, 0);
        store(dtype, wantAvg.data() + i * size, found->second / p, 0);
      }
      for (auto algorithm :
           {cpu::TeamAlgorithm::OneShot, cpu::TeamAlgorithm::TwoShot}) {
        const std::string what = caseName("by hand: teamAllReduce", "", dtype,
                                          "sum", count, team.bytes()) +
                                 " " + cpu::teamAlgorithmName(algorithm);
        Bytes out(in.size(), 0xab);
        expect(what,
               cpu::teamAllReduce(team, algorithm, in.data(), out.data(), count,
                                  dtype, ReduceOp::Sum),
               out, want);
        expect(what + " avg",
               cpu::teamAllReduce(team, algorithm, in.data(), out.data(), count,
                                  dtype, ReduceOp::Avg),
               out, wantAvg);
      }
      // Every block of a reducescatter is that sum too.
      Bytes all;
      for (int m = 0; m < p; ++m)
        all.insert(all.end(), in.begin(), in.end());
      Bytes out(in.size(), 0xab);
      expect(caseName("by hand: teamReduceScatter", "", dtype, "sum", count,
                      team.bytes()),
             cpu::teamReduceScatter(team, all.data(), out.data(), count, dtype,
                                    ReduceOp::Sum),
             out, want);
    }
  }
}

/// Calls every member refuses alike, before any barrier (a member that
/// went on would wait for the others at the barrier, and time out).
void checkRefusals(cpu::Mesh &mesh) {
  const int p = mesh.size();
  std::unique_ptr<cpu::Team> team;
  std::string why;
  // A window of 12 bytes: one f64 element (one-shot), not a two-shot one.
  if (!cpu::Team::create(mesh, 0, 12, &team, &why).ok() || !team) {
    fail("a team with a window of 12 bytes: " + why);
    return;
  }
  Bytes buffer(256), other(256);
  const auto oneShot = cpu::TeamAlgorithm::OneShot;
  const auto twoShot = cpu::TeamAlgorithm::TwoShot;
  auto refused = [&](const char *what, const Status &s,
                     const std::string &words) {
    if (s.code() != StatusCode::InvalidArgument ||
        s.message().find(words) == std::string::npos)
      fail(std::string("refusal of ") + what + ": got " + s.toString());
  };
  refused("an unknown algorithm",
          cpu::teamAllReduce(*team, static_cast<cpu::TeamAlgorithm>(7),
                             buffer.data(), other.data(), 1, DType::F32,
                             ReduceOp::Sum),
          "teamAllReduce: unknown algorithm 7");
  refused("avg of integers",
          cpu::teamAllReduce(*team, oneShot, buffer.data(), other.data(), 1,
                             DType::I32, ReduceOp::Avg),
          "teamAllReduce: avg needs a float type, not i32");
  refused("avg of integers (reduceScatter)",
          cpu::teamReduceScatter(*team, buffer.data(), other.data(), 1,
                                 DType::I64, ReduceOp::Avg),
          "teamReduceScatter: avg needs a float type");
  refused(
      "a negative count",
      cpu::teamAllGather(*team, buffer.data(), other.data(), -1, DType::F64),
      "teamAllGather: negative count -1");
  refused("an unknown type",
          cpu::teamAllGather(*team, buffer.data(), other.data(), 1,
                             static_cast<DType>(99)),
          "teamAllGather: unknown element type");
  refused("a huge count",
          cpu::teamReduceScatter(*team, buffer.data(), other.data(),
                                 int64_t(1) << 60, DType::F64, ReduceOp::Sum),
          "overflow a 64-bit byte count");
  if (p == 1)
    return; // a team of one member moves its input, its window unused
  refused("a null buffer",
          cpu::teamAllReduce(*team, oneShot, nullptr, other.data(), 1,
                             DType::F32, ReduceOp::Sum),
          "teamAllReduce: a null buffer");
  refused("a window too small for one element",
          cpu::teamAllReduce(*team, twoShot, buffer.data(), other.data(), 1,
                             DType::F64, ReduceOp::Sum),
          "teamAllReduce: the team's window of 12 bytes holds no element; it "
          "needs at least 16");
  refused("a window too small for one reducescatter position",
          cpu::teamReduceScatter(*team, buffer.data(), other.data(), 1,
                                 DType::F64, ReduceOp::Max),
          "holds no element; it needs at least " + std::to_string(8 * p));
  refused(
      "the output in the window",
      cpu::teamAllGather(*team, buffer.data(), team->local(), 1, DType::F32),
      "teamAllGather: the output lies in the team's window");
  refused("the output in a peer's part",
          cpu::teamAllReduce(*team, oneShot, buffer.data(),
                             team->part((team->rank() + 1) % p), 1, DType::F32,
                             ReduceOp::Sum),
          "the output lies in the team's window");
  refused("the input inside the window",
          cpu::teamAllReduce(*team, oneShot,
                             static_cast<char *>(team->local()) + 4,
                             other.data(), 1, DType::F32, ReduceOp::Sum),
          "the input lies in the team's window but not at the start");
  refused("the input in the window, in pieces",
          cpu::teamAllReduce(*team, oneShot, team->local(), other.data(), 2,
                             DType::F64, ReduceOp::Sum),
          "the input is this member's part of the window, but the collective "
          "does not fit the window's 12 bytes in one piece");
}

/// What the window helpers promise: the bytes of one piece, and that a
/// window of exactly that many runs a collective from the window (one
/// piece) while one byte less refuses to.
void checkWindowBytes(cpu::Mesh &mesh) {
  const auto oneShot = cpu::TeamAlgorithm::OneShot;
  const auto twoShot = cpu::TeamAlgorithm::TwoShot;
  auto same = [](const char *what, size_t got, size_t want) {
    if (got != want)
      fail(std::string(what) + ": " + std::to_string(got) + " bytes, not " +
           std::to_string(want));
  };
  same("one-shot f32 x 10 on 4",
       cpu::teamAllReduceWindowBytes(oneShot, 10, DType::F32, 4), 40);
  // 40 bytes, and a block of ceil(10 / 4) = 3 elements.
  same("two-shot f32 x 10 on 4",
       cpu::teamAllReduceWindowBytes(twoShot, 10, DType::F32, 4), 52);
  same("two-shot f64 x 0",
       cpu::teamAllReduceWindowBytes(twoShot, 0, DType::F64, 4), 0);
  same("reducescatter f32 x 10 on 4",
       cpu::teamReduceScatterWindowBytes(10, DType::F32, 4), 160);
  same("allgather bf16 x 10", cpu::teamAllGatherWindowBytes(10, DType::BF16),
       20);
  same("alltoall f32 x 10 on 4",
       cpu::teamAllToAllWindowBytes(10, DType::F32, 4), 160);
  same("a negative count", cpu::teamAllGatherWindowBytes(-1, DType::F32), 0);
  same("an overflow",
       cpu::teamReduceScatterWindowBytes(int64_t(1) << 61, DType::F64, 8),
       SIZE_MAX);
  const int p = mesh.size();
  if (p == 1)
    return;
  const int64_t count = 37;
  const DType dtype = DType::F32;
  Bytes in(count * 4, 0), out(count * 4);
  for (auto algorithm : {oneShot, twoShot}) {
    const size_t exact =
        cpu::teamAllReduceWindowBytes(algorithm, count, dtype, p);
    for (size_t bytes : {exact, exact - 1}) {
      std::unique_ptr<cpu::Team> team;
      std::string why;
      if (!cpu::Team::create(mesh, 0, bytes, &team, &why).ok() || !team) {
        fail("a team: " + why);
        continue;
      }
      const Status s =
          cpu::teamAllReduce(*team, algorithm, placeInWindow(*team, in),
                             out.data(), count, dtype, ReduceOp::Sum);
      if (s.ok() != (bytes == exact))
        fail(std::string(cpu::teamAlgorithmName(algorithm)) +
             " from a window of " + std::to_string(bytes) + " bytes (" +
             std::to_string(exact) + " promised): " + s.toString());
    }
  }
}

std::vector<size_t> parseWindows(int argc, char **argv) {
  std::vector<size_t> windows = {0, 1 << 20, 200, 72};
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--windows") {
      windows.clear();
      const std::string list = argv[i + 1];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        windows.push_back(
            std::strtoull(list.substr(at, comma - at).c_str(), nullptr, 10));
        at = comma + 1;
      }
    }
  return windows;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const std::vector<size_t> windows = parseWindows(argc, argv);
  uint64_t tag = 0;
  {
    cpu::Communicator world(MPI_COMM_WORLD);
    worldRank = world.rank();
    worldSize = world.size();
    const int64_t p = world.size();
    std::unique_ptr<cpu::Mesh> mesh;
    if (!cpu::Mesh::create(world, {p}, &mesh).ok()) {
      std::fprintf(stderr, "no mesh\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const std::vector<DType> dtypes = {DType::F16, DType::BF16, DType::F32,
                                       DType::F64, DType::I32,  DType::I64,
                                       DType::U64, DType::Bool};
    // Counts below, at and above the member count, that it does not
    // divide, more than the small windows hold at once (pieces, on any
    // member count), and one of more than a parallel combine's threshold
    // (2^15 elements), for some float types.
    const std::vector<int64_t> counts = {0, 1, p + 1, 3 * p + 2, 11 * p + 27};
    const std::vector<int64_t> perRank = {0, 1, 7, 29};
    const std::vector<int64_t> gathered = {0, 1, 5, 37};
    const int64_t large = 40000 * p + 3;
    // The large window holds every case in one piece: the large count's
    // allreduce, two-shot (f64), and its reducescatter.
    const size_t roomy = 2 * static_cast<size_t>(large) * 8 + 4096;
    for (size_t window : windows) {
      std::unique_ptr<cpu::Team> team;
      std::string why;
      const size_t bytes = window == 0 ? roomy : window;
      if (!cpu::Team::create(*mesh, 0, bytes, &team, &why).ok() || !team) {
        fail("a team with a window of " + std::to_string(bytes) + ": " + why);
        continue;
      }
      for (DType dtype : dtypes) {
        std::vector<ReduceOp> ops = {ReduceOp::Sum, ReduceOp::Prod,
                                     ReduceOp::Max, ReduceOp::Min};
        if (isFloat(dtype))
          ops.push_back(ReduceOp::Avg);
        for (ReduceOp op : ops) {
          checkAllReduce(*mesh, *team, dtype, op, counts, tag);
          checkReduceScatter(*mesh, *team, dtype, op, perRank, tag);
        }
        checkAllGather(*mesh, *team, dtype, gathered, tag);
        checkAllToAll(*mesh, *team, dtype, perRank, tag);
      }
      // Large counts: combines and copies on OpenMP's threads, in one piece
      // or in pieces of 1 MiB (not in the small windows' pieces of a few
      // elements: thousands of barriers each).
      if (bytes >= 4096)
        for (DType dtype : {DType::F32, DType::BF16, DType::F64}) {
          checkAllReduce(*mesh, *team, dtype, ReduceOp::Sum, {large}, tag);
          checkReduceScatter(*mesh, *team, dtype, ReduceOp::Sum, {large / p},
                             tag);
          checkAllGather(*mesh, *team, dtype, {large / p}, tag);
          checkAllToAll(*mesh, *team, dtype, {large / p}, tag);
        }
      checkByHand(*team);
    }
    checkRefusals(*mesh);
    checkWindowBytes(*mesh);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0)
    std::printf("%d ranks, %zu windows, %llu cases: %s (%d failures)\n",
                worldSize, windows.size(), static_cast<unsigned long long>(tag),
                total == 0 ? "all passed" : "FAILED", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
