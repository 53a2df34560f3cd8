//===- CudaLinkCheck.cpp - coconet_rt_cuda links into a program -----------===//
//
// Built (not run by the tests: this machine has no GPU) against
// coconet_rt_cuda and, where MPI is, coconet_rt_cuda_mpi: every function
// of coconet/cuda/runtime.h is referenced, so a declaration without a
// definition fails the link. Run with an argument on a machine with a GPU
// it makes a one-rank communicator, a mesh and a small matmul.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/runtime.h"

#include <cstdio>
#include <vector>

using namespace coconet::rt;

namespace {

Status smoke() {
  std::unique_ptr<cuda::Communicator> world;
  COCONET_RETURN_IF_ERROR(cuda::Communicator::single(&world));
  std::unique_ptr<cuda::Mesh> mesh;
  COCONET_RETURN_IF_ERROR(cuda::Mesh::create(*world, {1, 1}, &mesh));
  cudaStream_t stream = nullptr;
  COCONET_CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t handle = nullptr;
  COCONET_CUBLAS_CHECK(cublasCreate(&handle));
  COCONET_CUBLAS_CHECK(cublasSetStream(handle, stream));
  void *a = nullptr, *b = nullptr, *c = nullptr;
  cuda::Allocator &allocator = cuda::defaultAllocator();
  COCONET_RETURN_IF_ERROR(allocator.allocate(64, &a));
  COCONET_RETURN_IF_ERROR(allocator.allocate(64, &b));
  COCONET_RETURN_IF_ERROR(allocator.allocate(64, &c));
  COCONET_CUDA_CHECK(cudaMemsetAsync(a, 0, 64, stream));
  COCONET_CUDA_CHECK(cudaMemsetAsync(b, 0, 64, stream));
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64,
                      DType::I32, DType::I64, DType::U64, DType::Bool})
    COCONET_RETURN_IF_ERROR(
        cuda::matmul(handle, stream, dtype, 2, 2, 2, 2, a, 4, b, 0, c, 4));
  COCONET_NCCL_CHECK(ncclAllReduce(a, c, 4, cuda::ncclType(DType::F32),
                                   cuda::ncclOp(ReduceOp::Sum),
                                   mesh->axisComm(0), stream));
  // A dropless all-to-all of one member (counts: b's zeros, so `c` is
  // zeroed) and a grouped matmul of two empty groups.
  void *d = nullptr;
  COCONET_RETURN_IF_ERROR(allocator.allocate(64, &d));
  {
    cuda::AllToAllV a2a;
    COCONET_RETURN_IF_ERROR(a2a.create(*mesh, 0, 2, allocator));
    COCONET_RETURN_IF_ERROR(a2a.run(a, 4, static_cast<const int32_t *>(b), c, 4,
                                    static_cast<int32_t *>(d), 4, DType::F32,
                                    stream));
    std::vector<int32_t> hostCounts(2);
    COCONET_RETURN_IF_ERROR(cuda::groupedMatmul(
        handle, stream, DType::F32, 4, 2, 2, a, b, 2, 1,
        static_cast<const int32_t *>(b), hostCounts.data(), c));
  }
  COCONET_CUDA_CHECK(cudaStreamSynchronize(stream));
  allocator.deallocate(d, 64);
  allocator.deallocate(a, 64);
  allocator.deallocate(b, 64);
  allocator.deallocate(c, 64);
  COCONET_CUBLAS_CHECK(cublasDestroy(handle));
  COCONET_CUDA_CHECK(cudaStreamDestroy(stream));
  return Status::success();
}

} // namespace

int main(int argc, char **argv) {
  (void)argv;
  if (argc < 2)
    return 0; // linking was the check
  cuda::Communicator wrapped = cuda::Communicator::wrap(nullptr);
  (void)wrapped;
  std::printf(
      "%s %s %s\n",
      cuda::cudaStatus(cudaErrorInvalidValue, "f(x)", __FILE__, __LINE__)
          .toString()
          .c_str(),
      cuda::ncclStatus(ncclInvalidArgument, "g(x)", __FILE__, __LINE__)
          .toString()
          .c_str(),
      cuda::cublasStatus(CUBLAS_STATUS_NOT_INITIALIZED, "h(x)", __FILE__,
                         __LINE__)
          .toString()
          .c_str());
#if defined(COCONET_WITH_MPI)
  (void)&cuda::Communicator::fromMpi;
#endif
  Status s = smoke();
  std::printf("%s\n", s.toString().c_str());
  return s.ok() ? 0 : 1;
}
