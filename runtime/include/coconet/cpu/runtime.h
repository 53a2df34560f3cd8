//===- cpu/runtime.h - what generated CPU code links ---------*- C++ -*-===//
//
// The CPU target runs one process per rank (MPI) and computes with OpenMP
// loops. Its collectives follow the simulator's semantics exactly, so
// generated CPU programs agree with the simulator bit for bit: a reduction
// combines the members' blocks in ascending rank order of the axis group,
// in f64 for floats (wrapping 64-bit arithmetic for integers), and rounds
// once to the element type; avg divides the f64 sum by the group size.
// MPI_Allreduce would not do: MPI leaves the order and bracketing of the
// combination unspecified. So reducing collectives move the members' blocks
// with MPI_Alltoall(v) / MPI_Gather and combine them locally; allgather,
// broadcast and sendrecv are MPI_Allgather, MPI_Bcast and MPI_Sendrecv.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_RUNTIME_H
#define COCONET_RUNTIME_CPU_RUNTIME_H

#include "coconet/mesh_shape.h"
#include "coconet/reduce_pieces.h"
#include "coconet/status.h"
#include "coconet/types.h"

// Only MPI's C API: its C++ bindings do not compile warning-free.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "coconet/algorithm.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace coconet::rt::cpu {

/// The Status for a failed MPI call (MPI_Error_string of `rc`).
Status mpiStatus(int rc, const char *call, const char *file, int line);

/// The world: an MPI communicator the application owns (not freed here).
class Communicator {
public:
  explicit Communicator(MPI_Comm comm);
  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

/// A process mesh over the world: its ranks numbered row-major over the
/// axes (the first axis varies slowest), one MPI communicator per axis
/// (MPI_Comm_split: color = the coordinates on the other axes, key = the
/// coordinate on the axis), owned and freed by the Mesh.
///
/// Collectives over `axis` run among the ranks that differ only in that
/// coordinate; axis -1 means every rank (the world, in rank order). Counts
/// are elements of `dtype`; `in` and `out` are this rank's host buffers and
/// may not overlap unless stated. Over a group of one member a collective
/// moves `in` to `out` once (nothing when they are the same).
class Team;

class Mesh : public MeshShape {
public:
  /// Splits `world` into the axes of `axisSizes`, whose product must be
  /// the world's size. Collective over the world.
  static Status create(const Communicator &world,
                       const std::vector<int64_t> &axisSizes,
                       std::unique_ptr<Mesh> *out);
  ~Mesh();
  Mesh(const Mesh &) = delete;
  Mesh &operator=(const Mesh &) = delete;

  /// Every member gets the combination of all members' `count` elements.
  /// `in == out` is allowed.
  Status allReduce(const void *in, void *out, int64_t count, DType dtype,
                   ReduceOp op, int axis);
  /// Member i gets block i (`countPerRank` elements, contiguous) of the
  /// combination of all members' `countPerRank * P` elements.
  Status reduceScatter(const void *in, void *out, int64_t countPerRank,
                       DType dtype, ReduceOp op, int axis);
  /// Every member gets the members' `countPerRank`-element blocks
  /// concatenated in coordinate order. `in` may be this member's block of
  /// `out` (in place).
  Status allGather(const void *in, void *out, int64_t countPerRank, DType dtype,
                   int axis);
  /// Every member gets the `count` elements of the member at coordinate
  /// `root`. `in == out` is allowed.
  Status broadcast(const void *in, void *out, int64_t count, DType dtype,
                   int64_t root, int axis);
  /// The member at `root` gets the combination; the others get zeros.
  Status reduce(const void *in, void *out, int64_t count, DType dtype,
                ReduceOp op, int64_t root, int axis);
  /// The member at coordinate c gets the elements of the member at
  /// c - offset, or zeros where there is none.
  Status sendRecv(const void *in, void *out, int64_t count, DType dtype,
                  int64_t offset, int axis);
  /// Member i sends block j (`countPerRank` elements, contiguous) of its
  /// `countPerRank * P` elements to member j, and gets the blocks sent to
  /// it concatenated in coordinate order (its own in place i).
  Status allToAll(const void *in, void *out, int64_t countPerRank, DType dtype,
                  int axis);
  /// The same with the blocks `stride` elements apart (stride >=
  /// countPerRank) in `in` and in `out`: member i's block j starts at
  /// in + j * stride and lands at out + i * stride on member j (one part of
  /// every block, for an overlap in parts).
  Status allToAll(const void *in, void *out, int64_t countPerRank, DType dtype,
                  int axis, int64_t stride);
  /// A dropless mixture-of-experts dispatch: rows of `rowElems` elements,
  /// in `groups` (E) groups, G = E / P of them per member (E % P == 0).
  /// Member i's `in` holds `inRows` rows cut by its `counts` (E int32; a
  /// negative count is 0) into E consecutive segments: segment e, c_i[e]
  /// rows starting at row sum_{e' < e} c_i[e'], goes to member e / G.
  /// Member q gets, from each member p in ascending order, p's segments
  /// q*G .. q*G+G-1 packed one after another into `out` (`outRows` rows):
  /// p's block starts at the sum of the earlier members' blocks for q. A
  /// row past a sender's `inRows` is a row of zeros; a row that lands at or
  /// past `outRows` is dropped; every row of `out` nothing lands in is zero.
  /// outCounts[p*G + g] = c_p[q*G + g] (negatives as 0; not clipped), or
  /// nothing where outCounts is null (a generated program exchanges the
  /// counts it names with an alltoall of its own).
  /// MPI_Allgather of every member's counts (with its inRows and outRows,
  /// which may differ between members), then MPI_Alltoallv of whole rows
  /// (at most INT_MAX rows, INT_MAX bytes a row); over a group of one
  /// member a local copy with the same clipping and zeroing. `in` and `out`
  /// may not overlap. Refused (InvalidArgument, before any message):
  /// negative inRows, outRows or rowElems, groups <= 0 or not a multiple
  /// of P, byte counts that overflow, null pointers for nonempty buffers.
  Status allToAllV(const void *in, int64_t inRows, const int32_t *counts,
                   int64_t groups, void *out, int64_t outRows,
                   int32_t *outCounts, int64_t rowElems, DType dtype, int axis);
  /// Part `part` of `parts` of allToAllV (an overlap's part, so that the
  /// experts' matmul can start on what has arrived): of every block, the
  /// segments of the receiver's groups g in [part G / parts, (part + 1) G /
  /// parts), each to where allToAllV puts it. Part 0 also zeroes the rows
  /// nothing lands in and writes outCounts. Running parts 0 .. parts - 1
  /// (in order, with the same arguments) is allToAllV. Also refused:
  /// part outside [0, parts), parts not dividing G.
  Status allToAllVPart(const void *in, int64_t inRows, const int32_t *counts,
                       int64_t groups, void *out, int64_t outRows,
                       int32_t *outCounts, int64_t rowElems, DType dtype,
                       int axis, int64_t part, int64_t parts);

  /// How allReduce, reduceScatter, allGather and allToAll move their data (a
  /// schedule's `algorithm`): Library, the exact collectives above on MPI;
  /// OneShot and TwoShot (allreduce only), over a team of the axis's
  /// members sharing memory (cpu/team_collectives.h), made at the axis's
  /// first such call with a window of COCONET_TEAM_ALGORITHM_BYTES bytes
  /// (default 32 MiB; larger calls run in pieces). Where the members cannot
  /// form a team (several nodes, COCONET_TEAM=off, no room in /dev/shm) the
  /// library's collective runs instead. Every algorithm combines members
  /// in ascending order: the same bits. Collective over the axis, like the
  /// call it replaces.
  enum class Algorithm {
    Library,
#define TEAM_ALGORITHM(Name, Printed) Name,
#include "coconet/team_algorithms.def"
  };
  Status allReduce(const void *in, void *out, int64_t count, DType dtype,
                   ReduceOp op, int axis, Algorithm algorithm);
  Status reduceScatter(const void *in, void *out, int64_t countPerRank,
                       DType dtype, ReduceOp op, int axis, Algorithm algorithm);
  Status allGather(const void *in, void *out, int64_t countPerRank, DType dtype,
                   int axis, Algorithm algorithm);
  /// OneShot: the blocks through the team's window (TwoShot is OneShot).
  Status allToAll(const void *in, void *out, int64_t countPerRank, DType dtype,
                  int axis, Algorithm algorithm);
  /// OneShot (TwoShot is OneShot): the records and the rows through the
  /// team's window, in pieces as large as it holds, with barriers instead
  /// of messages (cpu/alltoallv_team.cpp); the library's path where there
  /// is no team or the window cannot hold a record and a row.
  Status allToAllV(const void *in, int64_t inRows, const int32_t *counts,
                   int64_t groups, void *out, int64_t outRows,
                   int32_t *outCounts, int64_t rowElems, DType dtype, int axis,
                   Algorithm algorithm);

  /// Runs `table` (a schedule's algorithm file; coconet/algorithm.h) over
  /// `axis`: `count` elements of this member's input, cut into
  /// algorithm::inputChunks(table) chunks, and room for
  /// algorithm::outputChunks(table) in `out`; reductions in the
  /// algorithm's order. On the axis's team (one node: its shared window,
  /// cpu::runAlgorithmOnTeam, made at the axis's first team call), else
  /// over MPI point-to-point (cpu::runAlgorithm): the same bits. An
  /// AllToAll always over MPI (faster here: docs/bench/synth.md). `in` and
  /// `out` may overlap (the input is copied first). Refused (InvalidArgument)
  /// as algorithm::checkCall refuses, before any message.
  Status runAlgorithm(const algorithm::Table &table, const void *in, void *out,
                      int64_t count, DType dtype, ReduceOp op, int axis);

  /// The MPI communicator of `axis` (-1: the world), for what builds on
  /// the mesh (cpu/team.h).
  MPI_Comm communicator(int axis) const { return axisComm(axis); }

private:
  Mesh() = default;
  MPI_Comm axisComm(int axis) const;
  /// Host scratch `which` (0 or 1) of at least `bytes`, kept between calls
  /// so that a step's collectives do not allocate once they have run.
  uint8_t *scratch(int which, size_t bytes);

  MPI_Comm world_ = MPI_COMM_NULL;
  std::vector<MPI_Comm> axes_; ///< owned
  std::vector<uint8_t> scratch_[2];
  /// The team of each axis (the world's last) for Algorithm::OneShot and
  /// TwoShot, made at its first use; null where it cannot be made.
  Status team(int axis, Team **out);
  std::vector<std::unique_ptr<Team>> teams_;
  std::vector<bool> teamTried_;
};

/// Combines `members` blocks of `count` elements each (block m at
/// `blocks + m * count * dtypeSize(dtype)`) in ascending order, as the
/// simulator does, into `out`. Exposed for tests.
void combineBlocks(const void *blocks, int64_t members, void *out,
                   int64_t count, DType dtype, ReduceOp op);
/// The same over members' blocks anywhere: block m at `members[m]`
/// (`count` elements each), e.g. the parts of a cpu::Team's window, read
/// where they are.
void combineMembers(const void *const *members, int64_t numMembers, void *out,
                    int64_t count, DType dtype, ReduceOp op);
/// The same for elements [offset, offset + count) of every member's block,
/// into out[0, count), on the calling thread and without allocating: one
/// tile (count at most kTile, coconet/tile.h) of a fused collective kernel,
/// which reads its block of every member's memory where it is (combineMembers's
/// order and rounding).
void combineTile(const void *const *members, int64_t numMembers, int64_t offset,
                 void *out, int64_t count, DType dtype, ReduceOp op);

/// A reduction step of a generated program: its pieces
/// (coconet/reduce_pieces.h), made once by create(), and room (from
/// `allocator`, which must outlive it) for the partial values of their
/// blocks. run() gives out[s] (`outType`) for each piece s: its terms
/// reduced in the order of coconet/reduce_order.h, the simulator's (floats
/// in f64, a NaN result the canonical quiet NaN; integers wrapping; an
/// empty piece the identity: 0, or NaN / the type's least or greatest
/// value for max / min; a norm's square root and one rounding at the end).
/// OpenMP-parallel over blocks of terms, then over pieces; the results do
/// not depend on the number of threads.
class Allocator;
class Reducer {
public:
  Reducer() = default;
  ~Reducer();
  Reducer(const Reducer &) = delete;
  Reducer &operator=(const Reducer &) = delete;

  Status create(ReductionPieces pieces, Allocator &allocator);
  Status run(ReductionKind kind, DType dtype, const void *in, DType outType,
             void *out);
  const ReductionPieces &pieces() const { return pieces_; }

private:
  ReductionPieces pieces_;
  Allocator *allocator_ = nullptr;
  void *partials_ = nullptr;
  size_t bytes_ = 0;
};
/// One reduction without keeping a Reducer: per segment of a flat tensor
/// (ReductionPieces::ofSegments) or along a dimension.
Status reduce(ReductionKind kind, DType dtype, const void *in, int64_t count,
              const int64_t *ends, int64_t segments, int64_t offset,
              DType outType, void *out);
Status reduceAlong(ReductionKind kind, DType dtype, const void *in,
                   int64_t outer, int64_t reduced, int64_t inner, DType outType,
                   void *out);

/// C = A x B, row-major, as the simulator computes it: A is [batch, M, K],
/// B is [K, N] (strideB == 0) or [batch, K, N], C is [batch, M, N]; strides
/// in elements. Every element of C sums its K products in ascending order
/// in f64 (wrapping 64-bit integers) and rounds once. OpenMP-parallel over
/// the elements of C.
void matmul(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
            const void *a, int64_t strideA, const void *b, int64_t strideB,
            void *c, int64_t strideC);
/// The experts' matmul of a dropless mixture of experts: A is [rows, K],
/// B is [localGroups, K, N], C is [rows, N], row-major. The rows are in
/// `groups` consecutive segments, segment j of counts[j] rows (a negative
/// count is 0) starting at the sum of the earlier ones; segment j's rows
/// of C are its rows of A times B[j % localGroups], exactly as matmul()
/// computes them (one matmul() call a nonempty segment). A segment's rows
/// at or past `rows` are dropped; the rows of C past the segments are
/// zero. Does nothing unless rows >= 0, n >= 1, k >= 0, groups >= 0 and
/// localGroups >= 1.
void groupedMatmul(DType dtype, int64_t rows, int64_t n, int64_t k,
                   const void *a, const void *b, int64_t groups,
                   int64_t localGroups, const int32_t *counts, void *c);
/// Part `part` of `parts` of groupedMatmul (an overlap's part): only the
/// segments j with j % localGroups in [part L / parts, (part + 1) L /
/// parts) (L = localGroups), at the same rows; part 0 also zeroes the rows
/// past the segments. Parts 0 .. parts - 1 together are groupedMatmul.
/// Does nothing unless parts divides localGroups and 0 <= part < parts.
void groupedMatmulPart(DType dtype, int64_t rows, int64_t n, int64_t k,
                       const void *a, const void *b, int64_t groups,
                       int64_t localGroups, const int32_t *counts, void *c,
                       int64_t part, int64_t parts);
/// How many blocks of rows matmul() cuts one batch of C into on `threads`
/// OpenMP threads; each block's tasks pack the batch's B again (all of its
/// columns between them), which coconetc's cost model prices
/// (tune::matmulRowBlocks mirrors this).
int64_t matmulRowBlocks(int64_t batch, int64_t m, int64_t n, int64_t threads);

/// Host memory for a generated program's scratch (64-byte aligned).
class Allocator {
public:
  virtual ~Allocator() = default;
  virtual Status allocate(size_t bytes, void **out) = 0;
  virtual void deallocate(void *ptr, size_t bytes) = 0;
};
/// std::aligned_alloc / std::free.
Allocator &defaultAllocator();

/// Copies `bytes` of host memory into memory an Allocator gave (create()'s
/// segment tables); for the CPU target both are host memory.
Status copyToMemory(void *to, const void *from, size_t bytes);

} // namespace coconet::rt::cpu

#endif // COCONET_RUNTIME_CPU_RUNTIME_H
