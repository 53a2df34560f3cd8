//===- AlgorithmTest.cpp - synthesised algorithms run over MPI -----------===//
//
// Run by CTest under mpirun (2, 3, 4 and 8 processes, run-mpi.sh). Every
// algorithm table compiled in (the build synthesises them with `coconetc
// synth --emit=cpp`: test/runtime/algorithms.cmake) whose ranks are the
// world size runs through coconet::rt::cpu::runAlgorithm for several
// element types and chunk sizes, and each rank's output is compared bit
// for bit with:
//
//   - an interpretation of the table, all ranks in one process
//     (AlgorithmInterpreter.h: every transfer's value read before its step,
//     the step's copies and reductions in its order, the receiver's value
//     first, by combine.h's rule element by element);
//   - for AllGather and AllToAll, MPI_Allgather's and MPI_Alltoall's
//     results (the same bytes);
//   - for a reduction of integers, the plain sum of every rank's input.
//
// The float inputs make the order of a reduction visible (2^54 and -2^54
// among small values, where the sum of 2^54, -2^54 and 3 is 3 or 0 by
// order), so an executor that combines in another order than its table
// fails. Exits 1 after printing what failed; 0 with a line per table.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/algorithm.h"
#include "coconet/cpu/runtime.h"
#include "coconet/cpu/team.h"

#include "AlgorithmInterpreter.h"
#include "RelayTable.h"
#include "coconet_test_algorithms.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace coconet::rt;
using algorithm::Collective;
using algorithm::Table;

namespace {

using coconet_test::Bytes;

int failures = 0;
int worldRank = 0;

void fail(const std::string &what) {
  if (++failures <= 20)
    std::fprintf(stderr, "rank %d: FAILED: %s\n", worldRank, what.c_str());
}

/// One run of `t` over MPI point-to-point, or (`team`) through the team's
/// window (cpu::runAlgorithmOnTeam), checked.
void runCase(const Table &t, int64_t elements, DType dtype,
             cpu::Team *team = nullptr) {
  const ReduceOp op = ReduceOp::Sum;
  const std::string what = std::string(t.name) + " (" + dtypeName(dtype) +
                           ", " + std::to_string(elements) +
                           " elements a chunk" + (team ? ", team" : "") + ")";
  const uint32_t me = static_cast<uint32_t>(worldRank);
  const size_t bytes = elements * dtypeSize(dtype);
  const Bytes in = coconet_test::algorithmInput(t, me, elements, dtype);
  Bytes out(algorithm::outputChunks(t) * bytes, 0xEE);
  Status st;
  if (team) {
    const int64_t piece =
        cpu::algorithmTeamPieceElements(t, *team, elements, dtype);
    Bytes staging(
        cpu::algorithmTeamStagingBytes(t, team->rank(), piece, dtype) + 1);
    st = cpu::runAlgorithmOnTeam(t, *team, in.data(), out.data(), elements,
                                 dtype, op, staging.data());
  } else {
    st = cpu::runAlgorithm(t, MPI_COMM_WORLD, in.data(), out.data(), elements,
                           dtype, op);
  }
  if (!st.ok()) {
    fail(what + ": " + st.toString());
    return;
  }
  const std::string wrong =
      coconet_test::compareWithInterpretation(t, elements, dtype, op, me, out);
  if (!wrong.empty())
    fail(what + ": " + wrong);
  // Independent references.
  const uint64_t k = t.chunksPerRank;
  if (t.collective == Collective::AllGather) {
    Bytes ref(out.size());
    MPI_Allgather(in.data(), static_cast<int>(k * bytes), MPI_BYTE, ref.data(),
                  static_cast<int>(k * bytes), MPI_BYTE, MPI_COMM_WORLD);
    if (out != ref)
      fail(what + ": differs from MPI_Allgather");
  } else if (t.collective == Collective::AllToAll) {
    Bytes ref(out.size());
    MPI_Alltoall(in.data(), static_cast<int>(k * bytes), MPI_BYTE, ref.data(),
                 static_cast<int>(k * bytes), MPI_BYTE, MPI_COMM_WORLD);
    if (out != ref)
      fail(what + ": differs from MPI_Alltoall");
  } else if (dtype == DType::I64) {
    const std::vector<int64_t> sum = coconet_test::integerSum(t, elements, me);
    if (std::memcmp(out.data(), sum.data(), out.size()) != 0)
      fail(what + ": differs from the sum of every rank's input");
  }
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ran = 0;
  for (const Table *t : coconet_test::algorithms) {
    if (static_cast<int>(t->ranks) != size)
      continue;
    ++ran;
    for (DType dtype : {DType::F64, DType::F32, DType::F16, DType::I64})
      for (int64_t elements : {1, 5, 1031})
        runCase(*t, elements, dtype);
    if (worldRank == 0)
      std::printf("ok: %s on %d ranks: f64, f32, f16, i64; 1, 5 and 1031 "
                  "elements a chunk\n",
                  t->name, size);
  }
  // A hand-written table that relays a copy the same step changes: over
  // MPI and through the team, every type.
  if (size == 3) {
    ++ran;
    for (DType dtype : {DType::F64, DType::F32, DType::F16, DType::I64})
      for (int64_t elements : {1, 5, 1031})
        runCase(coconet_test::relayTable(), elements, dtype);
    if (worldRank == 0)
      std::printf("ok: %s on 3 ranks over MPI\n",
                  coconet_test::relayTable().name);
  }
  // The same through a team's window (cpu::runAlgorithmOnTeam), a window
  // with room for 2 f64 elements of every chunk: chunks of 5 and 1031
  // elements run in pieces (2 and 1 elements of f64, 4 and 1 of f32).
  std::unique_ptr<cpu::Mesh> world;
  if (Status st =
          cpu::Mesh::create(cpu::Communicator(MPI_COMM_WORLD), {size}, &world);
      !st.ok())
    fail("Mesh::create: " + st.toString());
  std::vector<const Table *> tables(std::begin(coconet_test::algorithms),
                                    std::end(coconet_test::algorithms));
  tables.push_back(&coconet_test::relayTable());
  for (const Table *t : tables) {
    if (!world || static_cast<int>(t->ranks) != size)
      continue;
    std::unique_ptr<cpu::Team> team;
    std::string why;
    if (Status st = cpu::Team::create(
            *world, -1, algorithm::numChunks(*t) * 8 * 2, &team, &why);
        !st.ok() || !team) {
      fail(std::string(t->name) + ": no team: " + st.toString() + " " + why);
      continue;
    }
    for (DType dtype : {DType::F64, DType::F32, DType::F16, DType::I64})
      for (int64_t elements : {1, 5, 1031})
        runCase(*t, elements, dtype, team.get());
    if (worldRank == 0)
      std::printf("ok: %s on %d ranks through a team's window, in pieces\n",
                  t->name, size);
  }
  // What a run refuses before any message: avg in a reduction, a negative
  // chunk size.
  for (const Table *t : coconet_test::algorithms) {
    if (static_cast<int>(t->ranks) != size || !algorithm::reduces(*t))
      continue;
    Bytes in(1 << 16), out(1 << 16);
    Status avg = cpu::runAlgorithm(*t, MPI_COMM_WORLD, in.data(), out.data(), 1,
                                   DType::F32, ReduceOp::Avg);
    if (avg.ok() || avg.message().find("avg") == std::string::npos)
      fail(std::string(t->name) + ": avg not refused: " + avg.toString());
    Status negative =
        cpu::runAlgorithm(*t, MPI_COMM_WORLD, in.data(), out.data(), -1,
                          DType::F32, ReduceOp::Sum);
    if (negative.ok() ||
        negative.message().find("negative") == std::string::npos)
      fail(std::string(t->name) +
           ": a negative chunk size not refused: " + negative.toString());
    break;
  }
  // A table for other ranks is refused before any message.
  for (const Table *t : coconet_test::algorithms) {
    if (static_cast<int>(t->ranks) == size)
      continue;
    Bytes in(1 << 16), out(1 << 16);
    Status st = cpu::runAlgorithm(*t, MPI_COMM_WORLD, in.data(), out.data(), 1,
                                  DType::F32, ReduceOp::Sum);
    if (st.ok() || st.message().find("ranks") == std::string::npos)
      fail(std::string(t->name) + ": not refused on " + std::to_string(size) +
           " ranks: " + st.toString());
    break;
  }
  // What a generated program calls: Mesh::runAlgorithm over the world's
  // axis, in place (the input copied first: an AllToAll sends its input's
  // chunks while others land in its output), and checkCall's refusal of a
  // count the chunks do not divide.
  std::unique_ptr<cpu::Mesh> mesh;
  if (Status st =
          cpu::Mesh::create(cpu::Communicator(MPI_COMM_WORLD), {size}, &mesh);
      !st.ok())
    fail("Mesh::create: " + st.toString());
  for (const Table *t : coconet_test::algorithms) {
    if (!mesh || static_cast<int>(t->ranks) != size ||
        (t->collective != Collective::AllReduce &&
         t->collective != Collective::AllToAll))
      continue;
    const int64_t elements = 5;
    Bytes buffer = coconet_test::algorithmInput(
        *t, static_cast<uint32_t>(worldRank), elements, DType::F32);
    const int64_t count = static_cast<int64_t>(buffer.size() / 4);
    Status st = mesh->runAlgorithm(*t, buffer.data(), buffer.data(), count,
                                   DType::F32, ReduceOp::Sum, 0);
    if (!st.ok())
      fail(std::string(t->name) + " in place: " + st.toString());
    else if (std::string why = coconet_test::compareWithInterpretation(
                 *t, elements, DType::F32, ReduceOp::Sum,
                 static_cast<uint32_t>(worldRank), buffer);
             !why.empty())
      fail(std::string(t->name) + " in place: " + why);
    Status odd = mesh->runAlgorithm(*t, buffer.data(), buffer.data(), count + 1,
                                    DType::F32, ReduceOp::Sum, 0);
    if (odd.ok() || odd.message().find("not a multiple") == std::string::npos)
      fail(std::string(t->name) +
           ": a count the chunks do not divide was "
           "not refused: " +
           odd.toString());
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0 && ran == 0)
    std::printf("FAILED: no algorithm for %d ranks\n", size);
  MPI_Finalize();
  return all == 0 && ran > 0 ? 0 : 1;
}
