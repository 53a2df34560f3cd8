//===- MpiCollectivesTest.cpp - the CPU mesh's collectives under MPI -----===//
//
// Run by CTest under mpirun (3 and 4 processes, see run-mpi.sh). For every
// mesh whose product is the world size (one axis, with a unit axis in
// front or behind, two axes where the size factors), every axis (and -1,
// the world), every element type and every reduction operator, each
// collective's output is compared bit for bit with what this rank expects:
// every rank can compute every member's input, so the expected value is
// the members' blocks combined in coordinate order (by a halving tree here,
// not by the runtime's combineBlocks, which a collective calls), a
// member's block, or zeros. The float inputs make the order visible: f64
// values with all 53 bits, and +-2^54 among values below 4 (the sum of
// 2^54, -2^54 and 3 is 3 or 0 depending on the order), so a collective
// that combines its members in another order fails. Exits 1 (after
// printing what failed) on a mismatch. Also checks the progress thread
// overlaps post tasks to (testProgress).
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/progress.h"
#include "coconet/cpu/runtime.h"
#include "coconet/numeric.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace coconet::rt;

namespace {

using Bytes = std::vector<uint8_t>;

int failures = 0;
int worldRank = 0;

void fail(const std::string &what) {
  if (++failures <= 20)
    std::fprintf(stderr, "rank %d: FAILED: %s\n", worldRank, what.c_str());
}

/// The input block of the member with world rank `member`: random values
/// with some -0, infinities and NaNs among the floats, and values whose
/// sums and products depend on the order (f64: all 53 bits; +-2^54 in
/// every type but f16, which cannot hold it).
Bytes makeBlock(DType dtype, int64_t member, int64_t count, uint64_t tag) {
  Bytes out(static_cast<size_t>(count) * dtypeSize(dtype));
  for (int64_t i = 0; i < count; ++i) {
    // 4u with all 53 bits: u times 1 + 52 random bits, rounded.
    const uint64_t bits = uniformInputBits(tag, member, i);
    double v = 4 * uniformInput(tag, static_cast<uint64_t>(member), i) *
               (1 + static_cast<double>(bits >> 12) * 0x1p-52);
    if (dtype != DType::F16 && bits % 3 == 0)
      v = bits & 8 ? -0x1p54 : 0x1p54;
    if (i % 17 == 3)
      v = -0.0;
    else if (i % 23 == 5 && member == 1)
      v = i % 2 ? -1.0 / 0.0 : 1.0 / 0.0;
    else if (i % 29 == 6 && member == 2)
      v = doubleFromBits(0x7ff8000000000123ull); // a NaN
    uint8_t *p = out.data() + i * dtypeSize(dtype);
    uint16_t h = 0;
    float f = static_cast<float>(v);
    switch (dtype) {
    case DType::F16:
      h = doubleToHalfBits(v);
      std::memcpy(p, &h, 2);
      break;
    case DType::BF16:
      h = doubleToBFloat16Bits(v);
      std::memcpy(p, &h, 2);
      break;
    case DType::F32:
      std::memcpy(p, &f, 4);
      break;
    case DType::F64:
      std::memcpy(p, &v, 8);
      break;
    case DType::I32:
    case DType::I64:
    case DType::U64:
      // Small values now and then, so that products do not always wrap
      // to zero and max/min see equal values.
      std::memcpy(p, &bits, dtypeSize(dtype));
      if (i % 3 == 0) {
        const int64_t small = static_cast<int64_t>(bits % 7) - 3;
        std::memcpy(p, &small, dtypeSize(dtype));
      }
      break;
    case DType::Bool:
      *p = static_cast<uint8_t>(bits & 1);
      break;
    }
  }
  return out;
}

/// The world ranks of the group of `axis` (-1: all) that this rank is in,
/// in coordinate order.
std::vector<int64_t> groupOf(const cpu::Mesh &mesh, int axis) {
  std::vector<int64_t> members;
  if (axis < 0) {
    for (int r = 0; r < mesh.size(); ++r)
      members.push_back(r);
    return members;
  }
  std::vector<int64_t> coords(mesh.numAxes());
  for (unsigned a = 0; a < mesh.numAxes(); ++a)
    coords[a] = mesh.coord(a);
  for (int64_t c = 0; c < mesh.axisSize(static_cast<unsigned>(axis)); ++c) {
    coords[static_cast<size_t>(axis)] = c;
    int64_t rank = 0;
    for (unsigned a = 0; a < mesh.numAxes(); ++a)
      rank = rank * mesh.axisSize(a) + coords[a];
    members.push_back(rank);
  }
  return members;
}

/// Every member's block, concatenated in member order.
Bytes allBlocks(DType dtype, const std::vector<int64_t> &members, int64_t count,
                uint64_t tag) {
  Bytes all;
  for (int64_t m : members) {
    Bytes b = makeBlock(dtype, m, count, tag);
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

/// Element i of a block: a float widened to double, an integer as its
/// wrapping 64-bit pattern (i32 sign-extended), a bool as 0 or 1.
double loadFloat(DType dtype, const uint8_t *p) {
  uint16_t h = 0;
  float f = 0;
  double d = 0;
  switch (dtype) {
  case DType::F16:
    std::memcpy(&h, p, 2);
    return halfBitsToFloat(h);
  case DType::BF16:
    std::memcpy(&h, p, 2);
    return bfloat16BitsToFloat(h);
  case DType::F32:
    std::memcpy(&f, p, 4);
    return f;
  default:
    std::memcpy(&d, p, 8);
    return d;
  }
}
uint64_t loadInt(DType dtype, const uint8_t *p) {
  int32_t i32 = 0;
  uint64_t u = 0;
  switch (dtype) {
  case DType::I32:
    std::memcpy(&i32, p, 4);
    return static_cast<uint64_t>(static_cast<int64_t>(i32));
  case DType::Bool:
    return *p != 0;
  default:
    std::memcpy(&u, p, 8);
    return u;
  }
}

/// The members' blocks combined element by element in the members' order,
/// as the simulator combines them (compiler/sim/Collectives.cpp): floats
/// in f64 by the halving tree M(lo, n) = M(lo, ceil(n/2)) + M(lo +
/// ceil(n/2), floor(n/2)), rounded once (avg: the sum divided by the
/// members), integers in wrapping 64-bit arithmetic (any order gives the
/// same), bools as 0 or 1 (any nonzero result is true). Written out here
/// so that a collective is not checked against the combination it calls.
Bytes combined(DType dtype, ReduceOp op, const Bytes &blocks, int64_t members,
               int64_t count) {
  const size_t size = dtypeSize(dtype);
  Bytes out(static_cast<size_t>(count) * size);
  for (int64_t i = 0; i < count; ++i) {
    auto at = [&](int64_t m) {
      return blocks.data() + (static_cast<size_t>(m * count + i)) * size;
    };
    uint8_t *p = out.data() + static_cast<size_t>(i) * size;
    if (isFloat(dtype)) {
      std::function<double(int64_t, int64_t)> tree = [&](int64_t lo,
                                                         int64_t n) {
        if (n == 1)
          return loadFloat(dtype, at(lo));
        const int64_t left = n - n / 2;
        const double a = tree(lo, left), b = tree(lo + left, n - left);
        return op == ReduceOp::Prod  ? combineMul(a, b)
               : op == ReduceOp::Max ? maxNumber(a, b)
               : op == ReduceOp::Min ? minNumber(a, b)
                                     : combineAdd(a, b);
      };
      double acc = tree(0, members);
      if (op == ReduceOp::Avg)
        acc /= static_cast<double>(members);
      const float f = static_cast<float>(acc);
      uint16_t h = dtype == DType::F16    ? doubleToHalfBits(acc)
                   : dtype == DType::BF16 ? doubleToBFloat16Bits(acc)
                                          : 0;
      std::memcpy(p,
                  size == 2   ? static_cast<const void *>(&h)
                  : size == 4 ? static_cast<const void *>(&f)
                              : static_cast<const void *>(&acc),
                  size);
      continue;
    }
    const bool isUnsigned = dtype == DType::U64 || dtype == DType::Bool;
    uint64_t acc = loadInt(dtype, at(0));
    for (int64_t m = 1; m < members; ++m) {
      const uint64_t v = loadInt(dtype, at(m));
      const bool less =
          isUnsigned ? acc < v
                     : static_cast<int64_t>(acc) < static_cast<int64_t>(v);
      acc = op == ReduceOp::Prod  ? acc * v
            : op == ReduceOp::Max ? (less ? v : acc)
            : op == ReduceOp::Min ? (less ? acc : v)
                                  : acc + v;
    }
    if (dtype == DType::Bool)
      *p = acc != 0;
    else
      std::memcpy(p, &acc, size); // little-endian: the low bytes
  }
  return out;
}

void expect(const std::string &what, const Status &status, const Bytes &got,
            const Bytes &want) {
  if (!status.ok())
    fail(what + ": " + status.toString());
  else if (got != want)
    fail(what + ": wrong values");
}

std::string describe(const std::vector<int64_t> &sizes, int axis, DType dtype,
                     const char *collective) {
  std::string mesh = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    mesh += (i ? "," : "") + std::to_string(sizes[i]);
  return std::string(collective) + " " + dtypeName(dtype) + " on mesh " + mesh +
         "] axis " + std::to_string(axis);
}

void testAxis(cpu::Mesh &mesh, const std::vector<int64_t> &sizes, int axis,
              DType dtype, uint64_t &tag) {
  const std::vector<int64_t> members = groupOf(mesh, axis);
  const int64_t p = static_cast<int64_t>(members.size());
  const int64_t me = axis < 0 ? mesh.rank() : mesh.coord(axis);
  const size_t size = dtypeSize(dtype);
  std::vector<ReduceOp> ops = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max,
                               ReduceOp::Min};
  if (isFloat(dtype))
    ops.push_back(ReduceOp::Avg);

  for (ReduceOp op : ops) {
    const std::string opName = std::string(" ") + reduceOpName(op);
    // allReduce, with counts below, at and above the group size.
    for (int64_t count :
         {int64_t(0), int64_t(1), p - 1, int64_t(5), 3 * p + 2}) {
      if (count < 0)
        continue;
      ++tag;
      Bytes in = makeBlock(dtype, mesh.rank(), count, tag);
      Bytes want =
          combined(dtype, op, allBlocks(dtype, members, count, tag), p, count);
      Bytes out(in.size());
      const std::string what = describe(sizes, axis, dtype, "allReduce") +
                               opName + " count " + std::to_string(count);
      expect(what,
             mesh.allReduce(in.data(), out.data(), count, dtype, op, axis), out,
             want);
      expect(what + " in place",
             mesh.allReduce(in.data(), in.data(), count, dtype, op, axis), in,
             want);
    }
    // reduceScatter: block `me` of the combination.
    {
      ++tag;
      const int64_t perRank = 3;
      Bytes in = makeBlock(dtype, mesh.rank(), perRank * p, tag);
      Bytes all =
          combined(dtype, op, allBlocks(dtype, members, perRank * p, tag), p,
                   perRank * p);
      Bytes want(all.begin() + me * perRank * size,
                 all.begin() + (me + 1) * perRank * size);
      Bytes out(perRank * size);
      expect(
          describe(sizes, axis, dtype, "reduceScatter") + opName,
          mesh.reduceScatter(in.data(), out.data(), perRank, dtype, op, axis),
          out, want);
    }
    // reduce to every root: the combination there, zeros elsewhere.
    for (int64_t root = 0; root < p; ++root) {
      ++tag;
      const int64_t count = 7;
      Bytes in = makeBlock(dtype, mesh.rank(), count, tag);
      Bytes want(count * size, 0);
      if (me == root)
        want = combined(dtype, op, allBlocks(dtype, members, count, tag), p,
                        count);
      Bytes out(count * size, 0xab);
      expect(describe(sizes, axis, dtype, "reduce") + opName + " root " +
                 std::to_string(root),
             mesh.reduce(in.data(), out.data(), count, dtype, op, root, axis),
             out, want);
    }
  }

  // allGather: the members' blocks in coordinate order.
  {
    ++tag;
    const int64_t perRank = 4;
    Bytes in = makeBlock(dtype, mesh.rank(), perRank, tag);
    Bytes want = allBlocks(dtype, members, perRank, tag);
    Bytes out(want.size());
    expect(describe(sizes, axis, dtype, "allGather"),
           mesh.allGather(in.data(), out.data(), perRank, dtype, axis), out,
           want);
    // In place: this member's block already at its position in `out`.
    Bytes place(want.size(), 0xcd);
    const size_t at = static_cast<size_t>(me * perRank) * size;
    std::copy(in.begin(), in.end(), place.begin() + at);
    expect(
        describe(sizes, axis, dtype, "allGather in place"),
        mesh.allGather(place.data() + at, place.data(), perRank, dtype, axis),
        place, want);
  }
  // broadcast from every root, also in place.
  for (int64_t root = 0; root < p; ++root) {
    ++tag;
    const int64_t count = 6;
    Bytes in = makeBlock(dtype, mesh.rank(), count, tag);
    Bytes want = makeBlock(dtype, members[root], count, tag);
    Bytes out(in.size());
    const std::string what = describe(sizes, axis, dtype, "broadcast") +
                             " root " + std::to_string(root);
    expect(what,
           mesh.broadcast(in.data(), out.data(), count, dtype, root, axis), out,
           want);
    expect(what + " in place",
           mesh.broadcast(in.data(), in.data(), count, dtype, root, axis), in,
           want);
  }
  // sendRecv: member c gets member c - offset's block, or zeros.
  for (int64_t offset :
       {-p, int64_t(-1), int64_t(0), int64_t(1), int64_t(2), p}) {
    ++tag;
    const int64_t count = 5;
    Bytes in = makeBlock(dtype, mesh.rank(), count, tag);
    const int64_t from = me - offset;
    Bytes want = from >= 0 && from < p
                     ? makeBlock(dtype, members[from], count, tag)
                     : Bytes(count * size, 0);
    Bytes out(in.size(), 0xcd);
    expect(describe(sizes, axis, dtype, "sendRecv") + " offset " +
               std::to_string(offset),
           mesh.sendRecv(in.data(), out.data(), count, dtype, offset, axis),
           out, want);
  }
  // allToAll: block `me` of every member's input, in coordinate order.
  for (int64_t perRank : {int64_t(1), int64_t(5)}) {
    ++tag;
    Bytes in = makeBlock(dtype, mesh.rank(), perRank * p, tag);
    Bytes want;
    for (int64_t m : members) {
      Bytes theirs = makeBlock(dtype, m, perRank * p, tag);
      want.insert(want.end(), theirs.begin() + me * perRank * size,
                  theirs.begin() + (me + 1) * perRank * size);
    }
    Bytes out(want.size(), 0xcd);
    expect(describe(sizes, axis, dtype, "allToAll") + " count " +
               std::to_string(perRank),
           mesh.allToAll(in.data(), out.data(), perRank, dtype, axis), out,
           want);
  }
  // allToAll with blocks 5 elements apart: the gaps stay as they were.
  {
    ++tag;
    const int64_t perRank = 2, stride = 5;
    Bytes in = makeBlock(dtype, mesh.rank(), stride * p, tag);
    Bytes want(static_cast<size_t>(stride * p) * size, 0xcd);
    for (int64_t i = 0; i < p; ++i) {
      Bytes theirs = makeBlock(dtype, members[i], stride * p, tag);
      std::copy(theirs.begin() + me * stride * size,
                theirs.begin() + (me * stride + perRank) * size,
                want.begin() + i * stride * size);
    }
    Bytes out(want.size(), 0xcd);
    expect(describe(sizes, axis, dtype, "allToAll") + " stride 5",
           mesh.allToAll(in.data(), out.data(), perRank, dtype, axis, stride),
           out, want);
  }
}

/// Calls that every rank must refuse alike (no rank may enter MPI).
void testRefusals(cpu::Mesh &mesh) {
  Bytes buffer(64);
  const int p = mesh.size();
  auto refused = [&](const char *what, const Status &s) {
    if (s.code() != StatusCode::InvalidArgument)
      fail(std::string("refusal of ") + what + ": got " + s.toString());
  };
  refused("a bad axis",
          mesh.allReduce(buffer.data(), buffer.data(), 1, DType::F32,
                         ReduceOp::Sum, static_cast<int>(mesh.numAxes())));
  refused("axis -2",
          mesh.allGather(buffer.data(), buffer.data(), 1, DType::F32, -2));
  refused("avg of integers", mesh.allReduce(buffer.data(), buffer.data(), 1,
                                            DType::I32, ReduceOp::Avg, -1));
  refused("a negative count",
          mesh.broadcast(buffer.data(), buffer.data(), -1, DType::F64, 0, -1));
  refused("a root out of range", mesh.reduce(buffer.data(), buffer.data(), 1,
                                             DType::F64, ReduceOp::Sum, p, -1));
  // (A count over INT_MAX bytes runs in pieces; one whose bytes overflow
  // 64 bits is refused.)
  refused("a huge count", mesh.allGather(buffer.data(), buffer.data(),
                                         int64_t(1) << 62, DType::F64, -1));
  refused(
      "blocks closer than their size",
      mesh.allToAll(buffer.data(), buffer.data() + 32, 2, DType::F32, -1, 1));
}

/// Progress::waitFor(ticket) returns once that task (and those before it)
/// has run, while later tasks may still run: what an overlap's dispatch
/// needs to compute on a part as soon as it has arrived. The tasks sleep,
/// so a waitFor that does not wait sees them unfinished.
void testProgress() {
  std::unique_ptr<cpu::Progress> progress;
  Status s = cpu::Progress::create(&progress);
  if (!s.ok()) {
    fail("Progress::create: " + s.toString());
    return;
  }
  if (!progress->why().empty()) {
    fail("Progress has no thread: " + progress->why());
    return;
  }
  std::atomic<int> ran[3] = {0, 0, 0};
  uint64_t tickets[3];
  for (int i = 0; i < 3; ++i)
    tickets[i] = progress->post([&ran, i]() -> Status {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ran[i] = 1;
      return Status::success();
    });
  if (!progress->waitFor(tickets[1]).ok() || !ran[0] || !ran[1])
    fail("Progress::waitFor returned before its task ran");
  if (!progress->wait().ok() || !ran[2])
    fail("Progress::wait returned before every task ran");
  // A failure reaches waitFor and then wait; the tasks after it are
  // skipped.
  uint64_t bad = progress->post([]() -> Status {
    return Status::error(StatusCode::Internal, "planted");
  });
  progress->post([&ran]() -> Status {
    ran[0] = 2;
    return Status::success();
  });
  if (progress->waitFor(bad).ok())
    fail("Progress::waitFor did not return the task's failure");
  if (progress->wait().ok() || ran[0] == 2)
    fail("Progress::wait did not return the failure, or ran a task after "
         "it");
  if (!progress->wait().ok())
    fail("Progress::wait kept a failure it had returned");
  // Parts: waitForPart(c) waits for the task postPart(c) posted (a second
  // overlap's parts reuse the numbers once the first has been waited for).
  for (int round = 0; round < 2; ++round) {
    std::atomic<int> part[3] = {0, 0, 0};
    for (int c = 0; c < 3; ++c)
      progress->postPart(c, [&part, c]() -> Status {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        part[c] = 1;
        return Status::success();
      });
    if (!progress->waitForPart(1).ok() || !part[0] || !part[1])
      fail("Progress::waitForPart returned before its part ran");
    if (!progress->wait().ok() || !part[2])
      fail("Progress::wait returned before every part ran");
  }
}

std::vector<std::vector<int64_t>> meshesFor(int64_t p) {
  std::vector<std::vector<int64_t>> meshes = {{p}, {1, p}, {p, 1}};
  for (int64_t a = 2; a < p; ++a)
    if (p % a == 0) {
      meshes.push_back({a, p / a});
      if (p / a != a)
        meshes.push_back({p / a, a});
    }
  return meshes;
}

} // namespace

int main(int argc, char **argv) {
  // Serialized, as the generated drivers ask: Progress then has a thread.
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  cpu::Communicator world(MPI_COMM_WORLD);
  worldRank = world.rank();

  const std::vector<DType> dtypes = {DType::F16, DType::BF16, DType::F32,
                                     DType::F64, DType::I32,  DType::I64,
                                     DType::U64, DType::Bool};
  uint64_t tag = 0;
  int meshes = 0;
  for (const std::vector<int64_t> &sizes : meshesFor(world.size())) {
    std::unique_ptr<cpu::Mesh> mesh;
    Status s = cpu::Mesh::create(world, sizes, &mesh);
    if (!s.ok()) {
      fail("Mesh::create: " + s.toString());
      continue;
    }
    ++meshes;
    for (unsigned a = 0; a < mesh->numAxes(); ++a)
      if (mesh->axisSize(a) < 1 || mesh->coord(a) >= mesh->axisSize(a))
        fail("mesh coordinates");
    for (int axis = -1; axis < static_cast<int>(mesh->numAxes()); ++axis)
      for (DType dtype : dtypes)
        testAxis(*mesh, sizes, axis, dtype, tag);
    testRefusals(*mesh);
  }
  {
    std::unique_ptr<cpu::Mesh> mesh;
    if (cpu::Mesh::create(world, {world.size() + 1}, &mesh).code() !=
        StatusCode::InvalidArgument)
      fail("Mesh::create accepted a mesh larger than the world");
  }

  if (provided >= MPI_THREAD_SERIALIZED)
    testProgress();

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0)
    std::printf("%d ranks, %d meshes, %llu cases: %s (%d failures)\n",
                world.size(), meshes, static_cast<unsigned long long>(tag),
                total == 0 ? "all passed" : "FAILED", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
