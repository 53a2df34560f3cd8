//===- mpi_bootstrap.cpp - an NCCL world over the ranks of MPI ------------===//
//
// Built into coconet_rt_cuda_mpi, which defines COCONET_WITH_MPI for itself
// and its users. Rank 0 makes the ncclUniqueId and MPI_Bcast shares it,
// together with whether making it worked, so that a failure on rank 0 is a
// failure everywhere instead of a hang.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/runtime.h"

#include "../call_status.h"
#include "../mpi_error.h"

namespace coconet::rt::cuda {

namespace {

struct SharedId {
  int ok;
  ncclUniqueId id;
};

} // namespace

Status Communicator::fromMpi(MPI_Comm comm,
                             std::unique_ptr<Communicator> *out) {
  int rank = 0, size = 1;
  COCONET_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COCONET_MPI_CHECK(MPI_Comm_size(comm, &size));
  SharedId shared{};
  Status made;
  if (rank == 0) {
    made = [&]() -> Status {
      COCONET_NCCL_CHECK(ncclGetUniqueId(&shared.id));
      return Status::success();
    }();
    shared.ok = made.ok() ? 1 : 0;
  }
  COCONET_MPI_CHECK(
      MPI_Bcast(&shared, static_cast<int>(sizeof shared), MPI_BYTE, 0, comm));
  if (!made.ok())
    return made;
  if (!shared.ok)
    return Status::error(StatusCode::NcclError,
                         "ncclGetUniqueId(...) failed on rank 0");
  ncclComm_t nccl = nullptr;
  COCONET_NCCL_CHECK(ncclCommInitRank(&nccl, size, shared.id, rank));
  std::unique_ptr<Communicator> c(new Communicator());
  c->comm_ = nccl;
  c->rank_ = rank;
  c->size_ = size;
  c->owned_ = true;
  *out = std::move(c);
  return Status::success();
}

} // namespace coconet::rt::cuda
