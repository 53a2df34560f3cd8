//===- mpi_error.h - MPI's words for an error code --------------*- C++ -*-===//
//
// Private to the runtime; header-only, so that every library that talks to
// MPI (coconet_rt_cpu, coconet_rt_mpi, coconet_rt_cuda_mpi) can use it
// without linking another. MPI_Error_string may only be called between
// MPI_Init and MPI_Finalize (OpenMPI aborts otherwise), so outside that
// window the code is given as a number. The MPI check of every runtime
// library (COCONET_MPI_CHECK), and the largest MPI message.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_MPI_ERROR_H
#define COCONET_RUNTIME_SRC_MPI_ERROR_H

#include "call_status.h"

#include "coconet/environment.h"

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace coconet::rt::detail {

inline std::string mpiErrorText(int rc) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(rc, text, &length) == MPI_SUCCESS && length > 0)
      return std::string(text, static_cast<size_t>(length));
  }
  return "MPI error " + std::to_string(rc);
}

/// The Status of a failed MPI call: the call, MPI's words for `rc`, the
/// file and the line.
inline Status mpiFailed(int rc, const char *call, const char *file, int line) {
  return callFailed(StatusCode::MpiError, call, mpiErrorText(rc), file, line);
}

/// Returns a failed Status from the enclosing function when an MPI call
/// fails (the runtime's one MPI check: the CPU collectives and team, the
/// driver's transport, the CUDA runtime's bootstrap).
#define COCONET_MPI_CHECK(call)                                                \
  do {                                                                         \
    int coconet_mpi_rc_ = (call);                                              \
    if (coconet_mpi_rc_ != MPI_SUCCESS)                                        \
      return ::coconet::rt::detail::mpiFailed(coconet_mpi_rc_, #call,          \
                                              __FILE__, __LINE__);             \
  } while (0)

/// The most bytes one MPI call moves: INT_MAX (MPI's counts and
/// displacements are ints), or COCONET_MPI_PIECE_BYTES when it is set to a
/// smaller positive number (tests lower it to run many pieces on small
/// data). Collectives larger than this run in pieces.
inline int64_t mpiPieceBytes() {
  static const int64_t limit = [] {
    return static_cast<int64_t>(
        wholeNumberFromEnv("COCONET_MPI_PIECE_BYTES", 1, INT_MAX, INT_MAX));
  }();
  return limit;
}

} // namespace coconet::rt::detail

#endif // COCONET_RUNTIME_SRC_MPI_ERROR_H
