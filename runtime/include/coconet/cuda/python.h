//===- cuda/python.h - the CUDA target's world for Python -------*- C++ -*-===//
//
// What a generated CUDA program's Python entry points (coconet/python_abi.h)
// stand on: the world, an NCCL communicator given as a pointer to a
// cc_py_nccl (the communicator and its device); the program with this
// rank's block sizes (Instance) and its step; and the runtime entry points
// Python makes a world with (nccl_unique_id, nccl_init, nccl_destroy,
// device_count, synchronize: coconet.NcclCommunicator). Header-only: a
// program's Python library needs nothing more of the runtime than it links
// already.
//
// Built for the CPU emulation of CUDA (test/emu: the generated .cu compiled
// by g++ with coconet/emu/prelude.h force-included, a testing aid), the
// library says its target is "cuda-emulated", and a step's arrays are host
// memory (NumPy) that the emulated runtime is told is device memory while
// the step enqueues its work, as a GPU's memory would be.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_PYTHON_H
#define COCONET_RUNTIME_CUDA_PYTHON_H

#include "coconet/cuda/runtime.h"
#include "coconet/python_abi.h"
#include "coconet/python_shim.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

static_assert(sizeof(ncclUniqueId) == CC_PY_NCCL_ID_BYTES,
              "coconet/python_abi.h: CC_PY_NCCL_ID_BYTES is not NCCL's");

#if defined(COCONET_EMU_PRELUDE_H)
namespace coconet::emu {
// The emulated runtime's registry of device memory (test/emu/src/runtime.cpp).
void registerDeviceMemory(void *p, size_t bytes);
void unregisterDeviceMemory(void *p);
} // namespace coconet::emu
#endif

namespace coconet::rt::cuda::python {

/// cc_py_program::target.
#if defined(COCONET_EMU_PRELUDE_H)
inline constexpr const char *kTarget = "cuda-emulated";
#else
inline constexpr const char *kTarget = "cuda";
#endif

/// The communicator of handle `comm` (a cc_py_nccl *), its device made
/// current.
inline Status worldOf(int64_t comm, std::unique_ptr<Communicator> *out) {
  const auto *world = reinterpret_cast<const cc_py_nccl *>(comm);
  if (!world || !world->comm)
    return Status::error(StatusCode::InvalidArgument,
                         "no NCCL communicator was given");
  if (cudaError_t e = cudaSetDevice(world->device); e != cudaSuccess)
    return Status::error(StatusCode::CudaError, std::string("cudaSetDevice: ") +
                                                    cudaGetErrorString(e));
  *out = std::make_unique<Communicator>(
      Communicator::wrap(static_cast<ncclComm_t>(world->comm)));
  return Status();
}

/// cc_py_program::world: this process's rank in `comm` and its size.
inline int world(int64_t comm, int *rank, int *size, char *err, size_t cap) {
  std::unique_ptr<Communicator> c;
  if (int rc = rt::python::report(worldOf(comm, &c), err, cap))
    return rc;
  *rank = c->rank();
  *size = c->size();
  return 0;
}

/// What create() returns: the program, its device, and the bytes of this
/// rank's block of each argument (0 for a scalar).
template <typename Program> struct Instance {
  std::unique_ptr<Program> program;
  int device = 0;
  std::vector<size_t> bytes;
};

/// The end of cc_py_program::create: `program`, made on world `comm` for
/// `sizes`, as an Instance in `*out`, with the blocks `place` gives for
/// this rank (the blocks of `described`).
template <typename Program>
int instance(std::unique_ptr<Program> program, int64_t comm, int rank,
             const int64_t *sizes,
             int (*place)(const int64_t *, int, int64_t *, int64_t *, char *,
                          size_t),
             const cc_description &described, void **out, char *err,
             size_t cap) {
  auto made = std::make_unique<Instance<Program>>();
  made->program = std::move(program);
  made->device = reinterpret_cast<const cc_py_nccl *>(comm)->device;
  const uint32_t n = described.num_blocks;
  size_t dims = 0;
  for (uint32_t i = 0; i < n; ++i)
    dims += described.blocks[i].rank;
  std::vector<int64_t> shape(dims + 1), offset(dims + 1);
  if (int rc = place(sizes, rank, shape.data(), offset.data(), err, cap))
    return rc;
  made->bytes.assign(n, 0);
  size_t at = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const cc_block &b = described.blocks[i];
    if (b.kind == CC_BLOCK_SCALAR)
      continue;
    size_t bytes = dtypeSize(static_cast<DType>(b.dtype));
    for (uint32_t k = 0; k < b.rank; ++k)
      bytes *= static_cast<size_t>(shape[at++]);
    made->bytes[i] = bytes;
  }
  *out = made.release();
  return 0;
}

/// Under the emulation: the caller's arrays (host memory) are device
/// memory while a step enqueues its work, where the emulated runtime
/// checks every pointer (kernel arguments, copies, collectives); those
/// already device memory are left alone. Nothing on a GPU.
class ArraysAsDeviceMemory {
public:
#if defined(COCONET_EMU_PRELUDE_H)
  ArraysAsDeviceMemory(void *const *args, const std::vector<size_t> &bytes) {
    for (size_t i = 0; i < bytes.size(); ++i) {
      void *p = args[i];
      if (!bytes[i] || !p || emu::isDevicePointer(p))
        continue;
      emu::registerDeviceMemory(p, bytes[i]);
      registered_.push_back(p);
    }
  }
  ~ArraysAsDeviceMemory() {
    for (void *p : registered_)
      emu::unregisterDeviceMemory(p);
  }

private:
  std::vector<void *> registered_;
#else
  ArraysAsDeviceMemory(void *const *, const std::vector<size_t> &) {}
#endif
public:
  ArraysAsDeviceMemory(const ArraysAsDeviceMemory &) = delete;
  ArraysAsDeviceMemory &operator=(const ArraysAsDeviceMemory &) = delete;
};

/// cc_py_program::step around `call` (the program's operator() on `args`):
/// on the world's device, the arrays device memory under the emulation.
template <typename Program, typename Call>
int step(const Instance<Program> &instance, void *const *args, char *err,
         size_t cap, Call &&call) {
  if (cudaError_t e = cudaSetDevice(instance.device); e != cudaSuccess)
    return rt::python::report(
        cudaStatus(e, "cudaSetDevice(device)", __FILE__, __LINE__), err, cap);
  const ArraysAsDeviceMemory arrays(args, instance.bytes);
  return rt::python::report(call(), err, cap);
}

/// cc_py_program::device_count.
inline int deviceCount(int *count, char *err, size_t cap) {
  return rt::python::report(
      [&]() -> Status {
        int n = 0;
        COCONET_CUDA_CHECK(cudaGetDeviceCount(&n));
        *count = n;
        return Status();
      }(),
      err, cap);
}

/// cc_py_program::nccl_unique_id.
inline int uniqueId(char *id, char *err, size_t cap) {
  return rt::python::report(
      [&]() -> Status {
        ncclUniqueId made;
        COCONET_NCCL_CHECK(ncclGetUniqueId(&made));
        std::memcpy(id, &made, sizeof made);
        return Status();
      }(),
      err, cap);
}

/// cc_py_program::nccl_init.
inline int initWorld(const char *id, int rank, int size, int device,
                     cc_py_nccl **out, char *err, size_t cap) {
  return rt::python::report(
      [&]() -> Status {
        if (size < 1 || rank < 0 || rank >= size)
          return Status::error(StatusCode::InvalidArgument,
                               "nccl_init: rank " + std::to_string(rank) +
                                   " of " + std::to_string(size) +
                                   ": a rank is in [0, size)");
        int count = 0;
        COCONET_CUDA_CHECK(cudaGetDeviceCount(&count));
        if (device < 0 || device >= count)
          return Status::error(
              StatusCode::InvalidArgument,
              "nccl_init: device " + std::to_string(device) +
                  " does not exist: this process sees " +
                  std::to_string(count) +
                  (count == 1 ? " CUDA device" : " CUDA devices"));
        COCONET_CUDA_CHECK(cudaSetDevice(device));
        ncclUniqueId shared;
        std::memcpy(&shared, id, sizeof shared);
        ncclComm_t comm = nullptr;
        COCONET_NCCL_CHECK(ncclCommInitRank(&comm, size, shared, rank));
        *out = new cc_py_nccl{comm, device};
        return Status();
      }(),
      err, cap);
}

/// cc_py_program::nccl_destroy.
inline void destroyWorld(cc_py_nccl *world) {
  if (!world)
    return;
  if (world->comm) {
    cudaSetDevice(world->device);
    ncclCommDestroy(static_cast<ncclComm_t>(world->comm));
  }
  delete world;
}

/// cc_py_program::synchronize.
inline int synchronize(void *stream, char *err, size_t cap) {
  return rt::python::report(
      [&]() -> Status {
        COCONET_CUDA_CHECK(
            cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
        return Status();
      }(),
      err, cap);
}

} // namespace coconet::rt::cuda::python

#endif // COCONET_RUNTIME_CUDA_PYTHON_H
