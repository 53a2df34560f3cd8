//===- communicator.cpp - the CUDA target's world, mesh and allocator -----===//
//
// A Mesh splits the world once per axis with ncclCommSplit: color = the
// row-major index of the coordinates on the other axes, key = the
// coordinate on the axis, so that rank i of an axis communicator is the
// member at coordinate i. An axis that spans the whole world uses the
// world's communicator (not owned).
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/runtime.h"

namespace coconet::rt::cuda {

Communicator Communicator::wrap(ncclComm_t comm) {
  Communicator c;
  c.comm_ = comm;
  if (ncclCommUserRank(comm, &c.rank_) != ncclSuccess)
    c.rank_ = 0;
  if (ncclCommCount(comm, &c.size_) != ncclSuccess)
    c.size_ = 1;
  return c;
}

Status Communicator::single(std::unique_ptr<Communicator> *out) {
  int device = 0;
  COCONET_CUDA_CHECK(cudaGetDevice(&device));
  ncclComm_t comm = nullptr;
  COCONET_NCCL_CHECK(ncclCommInitAll(&comm, 1, &device));
  std::unique_ptr<Communicator> c(new Communicator());
  c->comm_ = comm;
  c->rank_ = 0;
  c->size_ = 1;
  c->owned_ = true;
  *out = std::move(c);
  return Status::success();
}

Communicator::~Communicator() {
  if (owned_ && comm_)
    ncclCommDestroy(comm_);
}

Communicator::Communicator(Communicator &&other) noexcept
    : comm_(other.comm_), rank_(other.rank_), size_(other.size_),
      owned_(other.owned_) {
  other.comm_ = nullptr;
  other.owned_ = false;
}

Status Mesh::create(const Communicator &world,
                    const std::vector<int64_t> &axisSizes,
                    std::unique_ptr<Mesh> *out) {
  std::unique_ptr<Mesh> mesh(new Mesh());
  COCONET_RETURN_IF_ERROR(
      mesh->initShape(axisSizes, world.size(), world.rank()));
  mesh->world_ = world.comm();
  for (unsigned axis = 0; axis < mesh->numAxes(); ++axis) {
    if (mesh->axisSize(axis) == world.size()) {
      mesh->axes_.push_back(world.comm());
      mesh->ownsAxis_.push_back(false);
      continue;
    }
    ncclComm_t comm = nullptr;
    // The Mesh owns the communicators made so far: on failure its
    // destructor destroys them.
    COCONET_NCCL_CHECK(ncclCommSplit(world.comm(), mesh->splitColor(axis),
                                     mesh->splitKey(axis), &comm, nullptr));
    mesh->axes_.push_back(comm);
    mesh->ownsAxis_.push_back(true);
  }
  *out = std::move(mesh);
  return Status::success();
}

Mesh::~Mesh() {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (ownsAxis_[i] && axes_[i])
      ncclCommDestroy(axes_[i]);
}

ncclComm_t Mesh::axisComm(int axis) const {
  if (axis < 0 || static_cast<size_t>(axis) >= axes_.size())
    return world_;
  return axes_[static_cast<size_t>(axis)];
}

namespace {

class DeviceAllocator final : public Allocator {
public:
  Status allocate(size_t bytes, void **out) override {
    const cudaError_t err = cudaMalloc(out, bytes == 0 ? 1 : bytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError(); // not sticky: cleared
      // As the CPU target's allocator says it, with the bytes.
      return Status::error(StatusCode::InvalidArgument,
                           "cannot allocate " + std::to_string(bytes) +
                               " bytes of device memory");
    }
    COCONET_CUDA_CHECK(err);
    return Status::success();
  }
  void deallocate(void *ptr, size_t) override { cudaFree(ptr); }
};

} // namespace

Allocator &defaultAllocator() {
  static DeviceAllocator allocator;
  return allocator;
}

Status copyToMemory(void *to, const void *from, size_t bytes) {
  if (bytes > 0)
    COCONET_CUDA_CHECK(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice));
  return Status::success();
}

} // namespace coconet::rt::cuda
