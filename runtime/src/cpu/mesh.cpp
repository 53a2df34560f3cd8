//===- mesh.cpp - the CPU target's world, mesh and allocator --------------===//
//
// A Mesh splits the world once per axis with MPI_Comm_split, as its
// MeshShape says (coconet/mesh_shape.h).
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"
#include "coconet/cpu/team.h"

#include "../call_status.h"
#include "../mpi_error.h"

#include <cstdlib>
#include <cstring>

namespace coconet::rt::cpu {

Status mpiStatus(int rc, const char *call, const char *file, int line) {
  return detail::mpiFailed(rc, call, file, line);
}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  if (MPI_Comm_rank(comm, &rank_) != MPI_SUCCESS)
    rank_ = 0;
  if (MPI_Comm_size(comm, &size_) != MPI_SUCCESS)
    size_ = 1;
}

Status Mesh::create(const Communicator &world,
                    const std::vector<int64_t> &axisSizes,
                    std::unique_ptr<Mesh> *out) {
  std::unique_ptr<Mesh> mesh(new Mesh());
  COCONET_RETURN_IF_ERROR(
      mesh->initShape(axisSizes, world.size(), world.rank()));
  mesh->world_ = world.comm();
  for (unsigned axis = 0; axis < mesh->numAxes(); ++axis) {
    MPI_Comm comm = MPI_COMM_NULL;
    // The Mesh owns the communicators made so far: on failure its
    // destructor frees them.
    COCONET_MPI_CHECK(MPI_Comm_split(world.comm(), mesh->splitColor(axis),
                                     mesh->splitKey(axis), &comm));
    mesh->axes_.push_back(comm);
    // Errors on the Mesh's own communicators come back as a Status.
    COCONET_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  }
  *out = std::move(mesh);
  return Status::success();
}

Mesh::~Mesh() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    // Too late to free the windows: leave them to the process's end.
    for (auto &team : teams_)
      (void)team.release();
    return;
  }
  teams_.clear(); // collective (MPI_Win_free), before the communicators
  for (MPI_Comm &comm : axes_)
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
}

MPI_Comm Mesh::axisComm(int axis) const {
  return axis < 0 ? world_ : axes_[static_cast<size_t>(axis)];
}

uint8_t *Mesh::scratch(int which, size_t bytes) {
  std::vector<uint8_t> &s = scratch_[which];
  if (s.size() < bytes)
    s.resize(bytes);
  return s.data();
}

namespace {

class AlignedAllocator final : public Allocator {
public:
  Status allocate(size_t bytes, void **out) override {
    // aligned_alloc wants a multiple of the alignment, and not 0.
    const size_t rounded = (bytes + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!p)
      return Status::error(StatusCode::InvalidArgument,
                           "cannot allocate " + std::to_string(bytes) +
                               " bytes of host memory");
    *out = p;
    return Status::success();
  }
  void deallocate(void *ptr, size_t) override { std::free(ptr); }
};

} // namespace

Allocator &defaultAllocator() {
  static AlignedAllocator allocator;
  return allocator;
}

Status copyToMemory(void *to, const void *from, size_t bytes) {
  if (bytes > 0)
    std::memcpy(to, from, bytes);
  return Status::success();
}

} // namespace coconet::rt::cpu
