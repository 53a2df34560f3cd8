//===- mpi_transport.cpp - ranks of an MPI communicator -------------------===//
//
// Built into coconet_rt_mpi, which defines COCONET_WITH_MPI for itself and
// its users. Blocks are gathered as bytes (MPI_BYTE): the sizes first with
// MPI_Allgather, rank 0 says whether it has room (MPI_Bcast), then the data
// with MPI_Gatherv.
//
//===----------------------------------------------------------------------===//

#include "coconet/driver.h"

#include "../call_status.h"
#include "../mpi_error.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>

namespace coconet::rt::driver {

namespace {} // namespace

MpiTransport::MpiTransport(MPI_Comm comm) : comm_(comm) {
  if (MPI_Comm_rank(comm, &rank_) != MPI_SUCCESS)
    rank_ = 0;
  if (MPI_Comm_size(comm, &size_) != MPI_SUCCESS)
    size_ = 1;
}

Status MpiTransport::gather(const void *data, size_t bytes,
                            std::vector<uint8_t> *all) {
  unsigned long long mine = bytes;
  std::vector<unsigned long long> sizes(size_);
  // Every rank learns every size (all ranks choose the same way below).
  COCONET_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG,
                                  sizes.data(), 1, MPI_UNSIGNED_LONG_LONG,
                                  comm_));
  const auto limit =
      static_cast<unsigned long long>(rt::detail::mpiPieceBytes());
  unsigned long long total = 0;
  std::vector<int> counts, displs;
  for (unsigned long long s : sizes) {
    counts.push_back(static_cast<int>(std::min(s, limit)));
    displs.push_back(static_cast<int>(std::min(total, limit)));
    total += s;
  }
  // Rank 0 makes room first and tells every rank whether it could: a rank
  // that sent while rank 0 gave up would wait for ever.
  int room = 1;
  if (rank_ == 0) {
    try {
      all->resize(total);
    } catch (const std::exception &) { // bad_alloc, length_error
      room = 0;
    }
  }
  COCONET_MPI_CHECK(MPI_Bcast(&room, 1, MPI_INT, 0, comm_));
  if (!room)
    return Status::error(StatusCode::InvalidArgument,
                         "cannot allocate " + std::to_string(total) +
                             " bytes on rank 0 to gather a result");
  if (total <= limit) {
    COCONET_MPI_CHECK(MPI_Gatherv(data, static_cast<int>(bytes), MPI_BYTE,
                                  rank_ == 0 ? all->data() : nullptr,
                                  counts.data(), displs.data(), MPI_BYTE, 0,
                                  comm_));
    return Status::success();
  }
  // Too large for one MPI call's int counts and displacements: each rank's
  // bytes in pieces of at most the limit, rank by rank, to rank 0.
  const auto *mineBytes = static_cast<const uint8_t *>(data);
  unsigned long long at = 0;
  for (int r = 0; r < size_; ++r) {
    for (unsigned long long off = 0; off < sizes[r]; off += limit) {
      const int n = static_cast<int>(std::min(limit, sizes[r] - off));
      if (r == 0 && rank_ == 0)
        std::memcpy(all->data() + at + off, mineBytes + off, n);
      else if (rank_ == 0)
        COCONET_MPI_CHECK(MPI_Recv(all->data() + at + off, n, MPI_BYTE, r, 0,
                                   comm_, MPI_STATUS_IGNORE));
      else if (rank_ == r)
        COCONET_MPI_CHECK(MPI_Send(mineBytes + off, n, MPI_BYTE, 0, 0, comm_));
    }
    at += sizes[r];
  }
  return Status::success();
}

int MpiTransport::maxOf(int value) {
  int max = value;
  if (MPI_Allreduce(&value, &max, 1, MPI_INT, MPI_MAX, comm_) != MPI_SUCCESS)
    return value;
  return max;
}

void MpiTransport::barrier() { MPI_Barrier(comm_); }

void MpiTransport::maxOf(double *values, size_t count) {
  if (count > 0)
    MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE,
                  MPI_MAX, comm_);
}

} // namespace coconet::rt::driver
