//===- mpi_transport.cpp - ranks of an MPI communicator -------------------===//
//
// Built into coconet_rt_mpi, which defines COCONET_WITH_MPI for itself and
// its users. Blocks are gathered as bytes (MPI_BYTE): the sizes first with
// MPI_Gather, then the data with MPI_Gatherv.
//
//===----------------------------------------------------------------------===//

#include "coconet/driver.h"

#include "../call_status.h"
#include "../mpi_error.h"

#include <climits>

namespace coconet::rt::driver {

namespace {

Status mpiFailed(int rc, const char *call, int line) {
  const std::string reason = rt::detail::mpiErrorText(rc);
  return rt::detail::callFailed(StatusCode::MpiError, call, reason, __FILE__,
                                line);
}

#define COCONET_TRANSPORT_MPI_CHECK(call)                                      \
  do {                                                                         \
    int coconet_rc_ = (call);                                                  \
    if (coconet_rc_ != MPI_SUCCESS)                                            \
      return mpiFailed(coconet_rc_, #call, __LINE__);                          \
  } while (0)

} // namespace

MpiTransport::MpiTransport(MPI_Comm comm) : comm_(comm) {
  if (MPI_Comm_rank(comm, &rank_) != MPI_SUCCESS)
    rank_ = 0;
  if (MPI_Comm_size(comm, &size_) != MPI_SUCCESS)
    size_ = 1;
}

Status MpiTransport::gather(const void *data, size_t bytes,
                            std::vector<uint8_t> *all) {
  unsigned long long mine = bytes;
  std::vector<unsigned long long> sizes(rank_ == 0 ? size_ : 0);
  COCONET_TRANSPORT_MPI_CHECK(MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG,
                                         sizes.data(), 1,
                                         MPI_UNSIGNED_LONG_LONG, 0, comm_));
  // Every rank checks its own count; rank 0 also the displacements.
  bool tooLarge = bytes > static_cast<size_t>(INT_MAX);
  std::vector<int> counts, displs;
  if (rank_ == 0) {
    unsigned long long total = 0;
    for (unsigned long long s : sizes) {
      counts.push_back(static_cast<int>(s));
      displs.push_back(static_cast<int>(total));
      total += s;
      tooLarge |= s > static_cast<unsigned long long>(INT_MAX) ||
                  total > static_cast<unsigned long long>(INT_MAX);
    }
    if (!tooLarge)
      all->resize(total);
  }
  // All ranks must agree on going ahead, or the gather would hang.
  int local = tooLarge ? 1 : 0, any = 0;
  COCONET_TRANSPORT_MPI_CHECK(
      MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm_));
  if (any)
    return Status::error(StatusCode::InvalidArgument,
                         "gathering more than INT_MAX bytes to rank 0 is not "
                         "supported");
  COCONET_TRANSPORT_MPI_CHECK(
      MPI_Gatherv(data, static_cast<int>(bytes), MPI_BYTE,
                  rank_ == 0 ? all->data() : nullptr, counts.data(),
                  displs.data(), MPI_BYTE, 0, comm_));
  return Status::success();
}

int MpiTransport::maxOf(int value) {
  int max = value;
  if (MPI_Allreduce(&value, &max, 1, MPI_INT, MPI_MAX, comm_) != MPI_SUCCESS)
    return value;
  return max;
}

} // namespace coconet::rt::driver
