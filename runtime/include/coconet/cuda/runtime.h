//===- cuda/runtime.h - what generated CUDA code links -------*- C++ -*-===//
//
// Check macros that turn CUDA, NCCL and cuBLAS failures into a Status
// naming the call; the world communicator (an ncclComm_t the application
// already has, or one bootstrapped here); the mesh (one communicator per
// axis, split with ncclCommSplit); the scratch allocator; and the matmul
// every target shares (row-major, f16/bf16 inputs with f32 accumulation
// through cuBLAS, f64 through cuBLAS, integers in a small kernel).
//
// Nothing here synchronises the host except creating and destroying
// communicators and meshes (collective setup calls), and a dropless
// mixture of experts' AllToAllV::run and groupedMatmul, which need its
// counts on the host.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_RUNTIME_H
#define COCONET_RUNTIME_CUDA_RUNTIME_H

#include "coconet/mesh_shape.h"
#include "coconet/reduce_pieces.h"
#include "coconet/status.h"
#include "coconet/types.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#if defined(COCONET_WITH_MPI)
// Only MPI's C API: its C++ bindings do not compile warning-free.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#endif

#include <cstdint>
#include <memory>
#include <vector>

namespace coconet::rt::cuda {

Status cudaStatus(cudaError_t err, const char *call, const char *file,
                  int line);
Status ncclStatus(ncclResult_t err, const char *call, const char *file,
                  int line);
Status cublasStatus(cublasStatus_t err, const char *call, const char *file,
                    int line);

/// Return a failed Status from the enclosing function when the call fails.
#define COCONET_CUDA_CHECK(call)                                               \
  do {                                                                         \
    cudaError_t coconet_err_ = (call);                                         \
    if (coconet_err_ != cudaSuccess)                                           \
      return ::coconet::rt::cuda::cudaStatus(coconet_err_, #call, __FILE__,    \
                                             __LINE__);                        \
  } while (0)
#define COCONET_NCCL_CHECK(call)                                               \
  do {                                                                         \
    ncclResult_t coconet_err_ = (call);                                        \
    if (coconet_err_ != ncclSuccess)                                           \
      return ::coconet::rt::cuda::ncclStatus(coconet_err_, #call, __FILE__,    \
                                             __LINE__);                        \
  } while (0)
#define COCONET_CUBLAS_CHECK(call)                                             \
  do {                                                                         \
    cublasStatus_t coconet_err_ = (call);                                      \
    if (coconet_err_ != CUBLAS_STATUS_SUCCESS)                                 \
      return ::coconet::rt::cuda::cublasStatus(coconet_err_, #call, __FILE__,  \
                                               __LINE__);                      \
  } while (0)
/// After a kernel launch: cudaGetLastError, without synchronising. Variadic
/// because the commas of `k<<<grid, block>>>(a, b)` split macro arguments.
#define COCONET_CUDA_LAUNCH_CHECK(...)                                         \
  COCONET_CUDA_CHECK((static_cast<void>(__VA_ARGS__), cudaGetLastError()))

ncclDataType_t ncclType(DType dtype);
ncclRedOp_t ncclOp(ReduceOp op);

/// The world communicator: one rank per GPU.
class Communicator {
public:
  /// Wraps a communicator the application created (not destroyed here).
  static Communicator wrap(ncclComm_t comm);
  /// A one-rank communicator on the current device (no MPI needed).
  static Status single(std::unique_ptr<Communicator> *out);
#if defined(COCONET_WITH_MPI)
  /// Bootstraps a communicator over the ranks of `comm` (rank 0 makes the
  /// ncclUniqueId, MPI_Bcast shares it); uses the current device.
  static Status fromMpi(MPI_Comm comm, std::unique_ptr<Communicator> *out);
#endif
  ~Communicator();
  Communicator(Communicator &&other) noexcept;
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  ncclComm_t comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

private:
  Communicator() = default;
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  bool owned_ = false;
};

/// A process mesh over the world: ranks row-major over the axes (the first
/// axis varies slowest), one communicator per axis split with
/// ncclCommSplit (color = coordinates on the other axes, key = coordinate
/// on the axis), owned by the Mesh.
class Mesh : public MeshShape {
public:
  /// Collective over the world; the product of `axisSizes` must be its size.
  static Status create(const Communicator &world,
                       const std::vector<int64_t> &axisSizes,
                       std::unique_ptr<Mesh> *out);
  ~Mesh();
  Mesh(const Mesh &) = delete;
  Mesh &operator=(const Mesh &) = delete;

  /// The communicator of `axis`; -1: the world's.
  ncclComm_t axisComm(int axis) const;

private:
  Mesh() = default;
  ncclComm_t world_ = nullptr;
  std::vector<ncclComm_t>
      axes_; ///< owned; the world's when an axis is all of it
  std::vector<bool> ownsAxis_;
};

/// Device memory for a generated program's scratch, allocated when the
/// program object is created and freed when it is destroyed (never inside
/// a step).
class Allocator {
public:
  virtual ~Allocator() = default;
  virtual Status allocate(size_t bytes, void **out) = 0;
  virtual void deallocate(void *ptr, size_t bytes) = 0;
};
/// cudaMalloc / cudaFree.
Allocator &defaultAllocator();

/// Copies `bytes` of host memory into device memory an Allocator gave
/// (create()'s segment tables): cudaMemcpy, which returns when it is done.
Status copyToMemory(void *to, const void *from, size_t bytes);

/// A reduction step of a generated program: its pieces
/// (coconet/reduce_pieces.h) in device memory, made once by create() (which
/// copies them there and waits), and room for the partial values of their
/// blocks. run() gives out[s] (`outType`: the input's type, f64, or f32
/// for floats) for
/// each piece s, its terms reduced in the order of coconet/reduce_order.h,
/// the simulator's bits (floats in f64, a NaN result the canonical quiet
/// NaN; integers wrapping; an empty piece the identity; a norm's square
/// root and one rounding at the end): two kernels on `stream`, every block
/// of the grid on the terms, then one block per piece on its tree. Nothing
/// waits for them.
class Reducer {
public:
  Reducer() = default;
  ~Reducer();
  Reducer(const Reducer &) = delete;
  Reducer &operator=(const Reducer &) = delete;

  /// `allocator` must outlive the Reducer.
  Status create(const ReductionPieces &pieces, Allocator &allocator);
  Status run(ReductionKind kind, DType dtype, const void *in, DType outType,
             void *out, cudaStream_t stream) const;

private:
  Allocator *allocator_ = nullptr;
  void *memory_ = nullptr;
  size_t bytes_ = 0;
  int64_t *begin_ = nullptr, *length_ = nullptr, *first_ = nullptr;
  void *partials_ = nullptr;
  int64_t pieces_ = 0, blocks_ = 0, stride_ = 1;
};

/// C = A x B, row-major, on `stream`: A is [batch, M, K], B is [K, N]
/// (strideB == 0) or [batch, K, N], C is [batch, M, N]; strides in
/// elements. f16/bf16 accumulate in f32, f32 in f32, f64 in f64 (cuBLAS);
/// i32/i64/u64 wrap (a kernel of the runtime). `handle` must be bound to
/// `stream`.
Status matmul(cublasHandle_t handle, cudaStream_t stream, DType dtype,
              int64_t batch, int64_t m, int64_t n, int64_t k, const void *a,
              int64_t strideA, const void *b, int64_t strideB, void *c,
              int64_t strideC);

/// A dropless mixture-of-experts dispatch over a mesh axis of P members:
/// the semantics of cpu::Mesh::allToAllV (coconet/cpu/runtime.h), bit for
/// bit. create() (once; no message) takes the axis's communicator and
/// allocates, from `allocator` (which must outlive the AllToAllV), room
/// for every member's counts (E = `groups`, a multiple of P); run() per
/// step, on `stream`, with device pointers `in`, `counts` (E int32),
/// `out` and `outCounts` (E int32): ncclAllGather of every member's counts
/// (with its inRows and outRows, which may differ between members), a
/// copy of them to the host and cudaStreamSynchronize(stream) -- the one
/// place a step waits for the host: NCCL's sends and receives need their
/// counts on the host, as Megatron's all-to-all dispatcher does -- then,
/// from the whole table (int64 arithmetic), outCounts unless null (copied from
/// a host buffer kept in the object, so at most one run() at a time), zeros for
/// the rows of `out` that nothing lands in, and one ncclGroupStart/End of
/// whole rows per peer (this member's own rows: a device-to-device copy).
/// Over a group of one member: a local copy, no NCCL. `in` and `out` may
/// not overlap. Refused (InvalidArgument, before any call): what
/// cpu::Mesh::allToAllV refuses; a run() before create(): Internal.
/// runPart() is cpu::Mesh::allToAllVPart (an overlap's part): part 0
/// gathers the counts (and waits for the host) and zeroes, every part
/// moves its segments; parts 0 .. parts - 1 must run in that order, with
/// the same arguments (a part out of order is refused: InvalidArgument).
class AllToAllV {
public:
  AllToAllV() = default;
  ~AllToAllV();
  AllToAllV(const AllToAllV &) = delete;
  AllToAllV &operator=(const AllToAllV &) = delete;

  Status create(const Mesh &mesh, int axis, int64_t groups,
                Allocator &allocator);
  Status run(const void *in, int64_t inRows, const int32_t *counts, void *out,
             int64_t outRows, int32_t *outCounts, int64_t rowElems, DType dtype,
             cudaStream_t stream);
  Status runPart(const void *in, int64_t inRows, const int32_t *counts,
                 void *out, int64_t outRows, int32_t *outCounts,
                 int64_t rowElems, DType dtype, int64_t part, int64_t parts,
                 cudaStream_t stream);

private:
  Allocator *allocator_ = nullptr;
  void *memory_ = nullptr;
  size_t bytes_ = 0;
  ncclComm_t comm_ = nullptr;
  int64_t members_ = 1, position_ = 0, groups_ = 0;
  int32_t *record_ = nullptr;      ///< device: this member's record
  int32_t *gathered_ = nullptr;    ///< device: every member's record
  std::vector<int32_t> extra_;     ///< host: inRows and outRows (copied in)
  std::vector<int32_t> records_;   ///< host: every member's record
  std::vector<int32_t> outCounts_; ///< host: this member's outCounts
  int64_t nextPart_ = 0;           ///< the part runPart expects next
};

/// The experts' matmul of a dropless mixture of experts, on `stream`: the
/// semantics of cpu::groupedMatmul (coconet/cpu/runtime.h): A is [rows, K],
/// B is [localGroups, K, N], C is [rows, N], row-major, device memory;
/// segment j (counts[j] rows, negative as 0) of C is its rows of A times
/// B[j % localGroups], clipped at `rows`; C's rows past the segments are
/// zero. `counts` (device, `groups` int32) is copied to `hostCounts`
/// (caller-owned host memory of `groups` entries) and the stream is
/// synchronised (the host needs the counts); then one matmul() (above) a
/// nonempty segment. `handle` must be bound to `stream`. Refused
/// (InvalidArgument): negative sizes, localGroups < 1, null pointers.
Status groupedMatmul(cublasHandle_t handle, cudaStream_t stream, DType dtype,
                     int64_t rows, int64_t n, int64_t k, const void *a,
                     const void *b, int64_t groups, int64_t localGroups,
                     const int32_t *counts, int32_t *hostCounts, void *c);
/// Part `part` of `parts` of groupedMatmul (cpu::groupedMatmulPart's
/// segments): part 0 copies the counts to `hostCounts` (the stream waits)
/// and zeroes the rows past the segments; the later parts read
/// `hostCounts` as part 0 left it, so parts run in order, from the same
/// counts. Also refused (InvalidArgument): part outside [0, parts), parts
/// not dividing localGroups.
Status groupedMatmulPart(cublasHandle_t handle, cudaStream_t stream,
                         DType dtype, int64_t rows, int64_t n, int64_t k,
                         const void *a, const void *b, int64_t groups,
                         int64_t localGroups, const int32_t *counts,
                         int32_t *hostCounts, void *c, int64_t part,
                         int64_t parts);

} // namespace coconet::rt::cuda

#endif // COCONET_RUNTIME_CUDA_RUNTIME_H
