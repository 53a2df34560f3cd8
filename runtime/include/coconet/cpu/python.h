//===- cpu/python.h - the CPU target's world for Python ---------*- C++ -*-===//
//
// The communicator a generated CPU program's Python entry points
// (coconet/python_abi.h) run on: an MPI communicator given as its Fortran
// handle (mpi4py's Comm.py2f()), or -1 for MPI_COMM_WORLD. Where nothing
// initialised MPI (no mpi4py), the first use initialises it
// (MPI_THREAD_SERIALIZED, as overlaps need) and finalises it at exit.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_PYTHON_H
#define COCONET_RUNTIME_CPU_PYTHON_H

#include "coconet/cpu/runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace coconet::rt::cpu::python {

/// The MPI communicator of handle `comm`.
Status commOf(int64_t comm, MPI_Comm *out);
/// The world of handle `comm`, for a program's create().
Status worldOf(int64_t comm, std::unique_ptr<Communicator> *out);

/// cc_py_program::world: this process's rank in `comm` and its size.
int world(int64_t comm, int *rank, int *size, char *err, size_t cap);

} // namespace coconet::rt::cpu::python

#endif // COCONET_RUNTIME_CPU_PYTHON_H
