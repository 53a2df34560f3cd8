//===- mesh.cpp - the CPU target's world, mesh and allocator --------------===//
//
// A Mesh splits the world once per axis with MPI_Comm_split: color = the
// row-major index of the coordinates on the other axes, key = the
// coordinate on the axis, so that rank i of an axis communicator is the
// member at coordinate i.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"

#include "../call_status.h"
#include "../mpi_error.h"

#include <cstdlib>

namespace coconet::rt::cpu {

Status mpiStatus(int rc, const char *call, const char *file, int line) {
  const std::string reason = detail::mpiErrorText(rc);
  return detail::callFailed(StatusCode::MpiError, call, reason, file, line);
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
  int64_t product = 1;
  for (int64_t s : axisSizes) {
    if (s <= 0 || s > world.size())
      return Status::error(StatusCode::InvalidArgument,
                           "a mesh axis has size " + std::to_string(s));
    product *= s;
  }
  if (product != world.size())
    return Status::error(StatusCode::InvalidArgument,
                         "the mesh has " + std::to_string(product) +
                             " ranks, the world " +
                             std::to_string(world.size()));
  std::unique_ptr<Mesh> mesh(new Mesh());
  mesh->world_ = world.comm();
  mesh->rank_ = world.rank();
  mesh->size_ = world.size();
  mesh->sizes_ = axisSizes;
  mesh->coords_.resize(axisSizes.size());
  int64_t rest = world.rank();
  for (size_t a = axisSizes.size(); a-- > 0;) {
    mesh->coords_[a] = rest % axisSizes[a];
    rest /= axisSizes[a];
  }
  for (size_t axis = 0; axis < axisSizes.size(); ++axis) {
    int64_t color = 0;
    for (size_t a = 0; a < axisSizes.size(); ++a)
      if (a != axis)
        color = color * axisSizes[a] + mesh->coords_[a];
    MPI_Comm comm = MPI_COMM_NULL;
    // The Mesh owns the communicators made so far: on failure its
    // destructor frees them.
    COCONET_MPI_CHECK(MPI_Comm_split(world.comm(), static_cast<int>(color),
                                     static_cast<int>(mesh->coords_[axis]),
                                     &comm));
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
  if (finalized)
    return;
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

} // namespace coconet::rt::cpu
