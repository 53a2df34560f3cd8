//===- cpu/python.cpp - the CPU target's world for Python -----------------===//

#include "coconet/cpu/python.h"

#include "coconet/python_shim.h"

#include <cstdlib>
#include <string>

namespace coconet::rt::cpu::python {

namespace {

void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

} // namespace

Status commOf(int64_t comm, MPI_Comm *out) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return Status::error(StatusCode::MpiError,
                         "MPI was finalised: create the step before "
                         "MPI_Finalize (mpi4py finalises at exit)");
  if (!initialized) {
    int provided = 0;
    if (int rc =
            MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided))
      return mpiStatus(rc, "MPI_Init_thread", __FILE__, __LINE__);
    std::atexit(finalizeAtExit);
  }
  if (comm == -1) {
    *out = MPI_COMM_WORLD;
    return Status();
  }
  if (comm < INT32_MIN || comm > INT32_MAX)
    return Status::error(StatusCode::InvalidArgument,
                         "the communicator handle " + std::to_string(comm) +
                             " is not an MPI Fortran handle (mpi4py: "
                             "comm.py2f())");
  *out = MPI_Comm_f2c(static_cast<MPI_Fint>(comm));
  if (*out == MPI_COMM_NULL)
    return Status::error(StatusCode::InvalidArgument,
                         "the communicator is MPI_COMM_NULL");
  return Status();
}

Status worldOf(int64_t comm, std::unique_ptr<Communicator> *out) {
  MPI_Comm c = MPI_COMM_NULL;
  COCONET_RETURN_IF_ERROR(commOf(comm, &c));
  *out = std::make_unique<Communicator>(c);
  return Status();
}

int world(int64_t comm, int *rank, int *size, char *err, size_t cap) {
  MPI_Comm c = MPI_COMM_NULL;
  if (int rc = rt::python::report(commOf(comm, &c), err, cap))
    return rc;
  if (int rc = MPI_Comm_rank(c, rank))
    return rt::python::report(
        mpiStatus(rc, "MPI_Comm_rank", __FILE__, __LINE__), err, cap);
  if (int rc = MPI_Comm_size(c, size))
    return rt::python::report(
        mpiStatus(rc, "MPI_Comm_size", __FILE__, __LINE__), err, cap);
  return 0;
}

} // namespace coconet::rt::cpu::python
