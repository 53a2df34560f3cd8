//===- cuda/python.h - the CUDA target's world for Python -------*- C++ -*-===//
//
// The communicator a generated CUDA program's Python entry points
// (coconet/python_abi.h) run on: an NCCL communicator the caller owns,
// given as a pointer to a cc_py_nccl (the communicator and its device).
// Header-only: a program's Python library needs nothing more of the
// runtime than it links already.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_PYTHON_H
#define COCONET_RUNTIME_CUDA_PYTHON_H

#include "coconet/cuda/runtime.h"
#include "coconet/python_abi.h"
#include "coconet/python_shim.h"

#include <cstdint>
#include <memory>

namespace coconet::rt::cuda::python {

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

} // namespace coconet::rt::cuda::python

#endif // COCONET_RUNTIME_CUDA_PYTHON_H
