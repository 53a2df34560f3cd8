//===- cuda/driver.h - the CUDA target's part of a generated driver -*- C++
//-*-===//
//
// What a generated driver (coconetc --emit=driver) does that depends on the
// target, so that the driver's text is the same for every target but the
// namespace it takes these from: a block's device memory (the program's
// symmetric memory where it is bound, else cudaMalloc'd) and the copies to
// and from it, and the communicator and stream the program runs on: under
// MPI (built with COCONET_WITH_MPI) one GPU per rank, rank modulo the
// devices there are; else one rank. Header-only: the driver includes it
// after the program's header.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CUDA_DRIVER_H
#define COCONET_RUNTIME_CUDA_DRIVER_H

#include "coconet/cuda/runtime.h"
#include "coconet/driver.h"

#include <memory>

namespace coconet::rt::cuda::driver {

/// This rank's block of one tensor: its host copy and its device memory.
struct Block : rt::driver::HostBlock {
  void *device = nullptr;

  Block() = default;
  Block(const Block &) = delete;
  Block &operator=(const Block &) = delete;
  ~Block() {
    if (device && device != bound)
      cudaFree(device);
  }
  Status make(rt::driver::TensorInfo tensor,
              const std::vector<int64_t> &axisSizes,
              const std::vector<int64_t> &coords, void *symmetric) {
    COCONET_RETURN_IF_ERROR(
        makeHost(std::move(tensor), axisSizes, coords, symmetric));
    if (bound) {
      device = bound;
      return Status();
    }
    const cudaError_t err = cudaMalloc(&device, host.size());
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError(); // not sticky: cleared
      device = nullptr;
      return rt::driver::cannotAllocate(info, placement.elements(), host.size(),
                                        "device memory");
    }
    if (err != cudaSuccess)
      return cudaStatus(err, "cudaMalloc(...)", __FILE__, __LINE__);
    return Status();
  }
  /// The host copy's data to the device.
  Status upload() {
    COCONET_CUDA_CHECK(
        cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice));
    return Status();
  }
  void *pointer() { return device; }
  /// The device's data back to the host copy.
  Status download() {
    COCONET_CUDA_CHECK(
        cudaMemcpy(host.data(), device, host.size(), cudaMemcpyDeviceToHost));
    return Status();
  }
};

/// The communicator and the stream the program runs on.
class Session {
public:
  Session() = default;
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() {
    if (stream_)
      cudaStreamDestroy(stream_);
  }
  /// How the world communicator is made: Communicator::fromMpi on MPI's
  /// world, or Communicator::single.
  using OpenWorld = Status (*)(std::unique_ptr<Communicator> *);
  /// This rank's GPU (its rank modulo the devices there are) and the world
  /// communicator `openWorld` makes; then the stream.
  Status open(rt::driver::Transport &transport, OpenWorld openWorld) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
      cudaSetDevice(transport.rank() % devices);
    COCONET_RETURN_IF_ERROR(openWorld(&world_));
    COCONET_CUDA_CHECK(cudaStreamCreate(&stream_));
    return Status();
  }
  /// The program object, `Program::create(world, sizes, stream, out)`.
  template <class Program>
  Status create(const typename Program::Sizes &sizes,
                std::unique_ptr<Program> *out) {
    return Program::create(*world_, sizes, stream_, out);
  }
  /// The same for a program with segment tables (create()'s `tables`).
  template <class Program>
  Status create(const typename Program::Sizes &sizes,
                const typename Program::Tables &tables,
                std::unique_ptr<Program> *out) {
    return Program::create(*world_, sizes, tables, stream_, out);
  }
  /// Waits for the steps enqueued so far.
  Status synchronize() {
    COCONET_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return Status();
  }

private:
  std::unique_ptr<Communicator> world_;
  cudaStream_t stream_ = nullptr;
};

/// The driver of `program` (src/driver/run_program.h: what --help lists) on
/// the transport's ranks, the world made by `openWorld`: its exit status.
int run(const rt::driver::ProgramDescription &program,
        rt::driver::Transport &transport, Session::OpenWorld openWorld,
        int argc, char **argv);

/// A generated driver's main(): under MPI (built with COCONET_WITH_MPI) one
/// GPU per rank on MPI's world (serialised threads: overlaps call MPI from
/// a progress thread too, never at the same time); else one rank.
inline int main(const rt::driver::ProgramDescription &program, int argc,
                char **argv) {
#if defined(COCONET_WITH_MPI)
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int status = 0;
  {
    rt::driver::MpiTransport transport(MPI_COMM_WORLD);
    status = run(
        program, transport,
        [](std::unique_ptr<Communicator> *out) {
          return Communicator::fromMpi(MPI_COMM_WORLD, out);
        },
        argc, argv);
  }
  MPI_Finalize();
  return status;
#else
  return run(program, rt::driver::singleProcess(), &Communicator::single, argc,
             argv);
#endif
}

} // namespace coconet::rt::cuda::driver

#endif // COCONET_RUNTIME_CUDA_DRIVER_H
