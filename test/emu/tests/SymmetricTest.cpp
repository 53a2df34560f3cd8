//===- SymmetricTest.cpp - kernels that talk to their peers ---------------===//
//
// An MPI program (CTests emu-symmetric-np2, -np4): an all-gather and a
// reduce-scatter written as kernels against the emulation's device-side
// communication (coconet/emu/symmetric.h). Every rank writes its own part
// of a symmetric buffer inside the kernel, the blocks meet their peers'
// at a team barrier, and then read the peers' parts by plain loads. Three
// blocks of 128 threads over 1000 elements: several blocks, a grid-stride
// loop that wraps. The reduce-scatter adds in rank order values whose
// float sum depends on the order. Exit status 0 when every element on
// every rank is as computed here on the host.
//
//===----------------------------------------------------------------------===//

#include "coconet/emu/symmetric.h"
#include "coconet/cuda/kernels.h"

#include <cstdio>
#include <cstring>
#include <vector>

using coconet::emu::peerPointer;
using coconet::emu::Team;
using coconet::rt::cuda::kernels::cc_launch;

namespace {

constexpr int64_t kCount = 1000;

/// A value whose float sum over ranks depends on the order of addition.
__host__ __device__ float valueOf(int rank, int64_t i) {
  return rank == 0 ? 1e8f : 0.75f + static_cast<float>((i + rank) % 5);
}

/// Both sides of a barrier: every thread of the block, one of them
/// meeting the other members.
__device__ void barrier(const Team &team) {
  __syncthreads();
  if (threadIdx.x == 0)
    coconet::emu::teamBarrier(team);
  __syncthreads();
}

/// out[p * kCount + i] = member p's in[i].
__global__ void allGather(Team team, float *in, float *out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < kCount; i += stride)
    in[i] = valueOf(team.rank, i);
  barrier(team);
  for (int64_t i = first; i < kCount; i += stride)
    for (int p = 0; p < team.size; ++p)
      out[p * kCount + i] = peerPointer(team, p, in)[i];
  barrier(team); // nobody rewrites `in` while a peer still reads it
}

/// out[i] = the sum over members p, in rank order, of p's
/// in[rank * kCount + i].
__global__ void reduceScatter(Team team, float *in, float *out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Each block writes the elements its peers' blocks of the same index
  // read: a barrier orders a block after the same block on the peers.
  for (int64_t i = first; i < kCount; i += stride)
    for (int q = 0; q < team.size; ++q)
      in[q * kCount + i] = valueOf(team.rank, q * kCount + i);
  barrier(team);
  for (int64_t i = first; i < kCount; i += stride) {
    float sum = 0;
    for (int p = 0; p < team.size; ++p)
      sum = __fadd_rn(sum, peerPointer(team, p, in)[team.rank * kCount + i]);
    out[i] = sum;
  }
  barrier(team);
}

int failures = 0;

void expect(bool good, int rank, const char *what, int64_t i) {
  if (!good && failures++ < 5)
    std::fprintf(stderr, "rank %d: %s: element %lld is wrong\n", rank, what,
                 static_cast<long long>(i));
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int rank = 0, size = 1;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  {
    // One window: in (size * kCount floats, for the reduce-scatter), then
    // the results' halves are plain device memory.
    std::unique_ptr<coconet::emu::SymmetricWindow> window;
    if (coconet::emu::SymmetricWindow::create(
            node, size * kCount * sizeof(float), &window) != cudaSuccess)
      return 1;
    float *in = static_cast<float *>(window->local());
    float *gathered = nullptr, *scattered = nullptr;
    cudaMalloc(&gathered, size * kCount * sizeof(float));
    cudaMalloc(&scattered, kCount * sizeof(float));
    for (int round = 0; round < 3; ++round) {
      if (cc_launch(allGather, 3, 128, 0, nullptr, window->team(), in,
                    gathered) != cudaSuccess ||
          cc_launch(reduceScatter, 3, 128, 0, nullptr, window->team(), in,
                    scattered) != cudaSuccess ||
          cudaDeviceSynchronize() != cudaSuccess)
        return 1;
      std::vector<float> g(size * kCount), s(kCount);
      cudaMemcpy(g.data(), gathered, g.size() * sizeof(float),
                 cudaMemcpyDeviceToHost);
      cudaMemcpy(s.data(), scattered, s.size() * sizeof(float),
                 cudaMemcpyDeviceToHost);
      for (int p = 0; p < size; ++p)
        for (int64_t i = 0; i < kCount; ++i)
          expect(g[p * kCount + i] == valueOf(p, i), rank, "all-gather",
                 p * kCount + i);
      for (int64_t i = 0; i < kCount; ++i) {
        float sum = 0;
        for (int p = 0; p < size; ++p)
          sum += valueOf(p, rank * kCount + i);
        expect(std::memcmp(&s[i], &sum, sizeof sum) == 0, rank,
               "reduce-scatter", i);
      }
    }
    cudaFree(gathered);
    cudaFree(scattered);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: all-gather and reduce-scatter kernels on %d ranks, "
                "3 rounds: %d wrong elements\n",
                all ? "FAILED" : "ok", size, all);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return all ? 1 : 0;
}
