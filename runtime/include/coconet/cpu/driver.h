//===- cpu/driver.h - the CPU target's part of a generated driver -*- C++
//-*-===//
//
// What a generated driver (coconetc --emit=driver) does that depends on the
// target, so that the driver's text is the same for every target but the
// namespace it takes these from: where the program reads a block (its host
// copy, or the program's symmetric memory where it is bound, into which
// the data is copied) and the communicator the program runs on (MPI's
// world: the CPU target always runs under MPI). Header-only: the driver
// includes it after the program's header.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_DRIVER_H
#define COCONET_RUNTIME_CPU_DRIVER_H

#include "coconet/cpu/runtime.h"
#include "coconet/driver.h"

#include <cstring>
#include <memory>

namespace coconet::rt::cpu::driver {

/// This rank's block of one tensor: its host copy, read by the program
/// there, or copied to and from the program's symmetric memory (bound).
struct Block : rt::driver::HostBlock {
  Status make(rt::driver::TensorInfo tensor,
              const std::vector<int64_t> &axisSizes,
              const std::vector<int64_t> &coords, void *symmetric) {
    return makeHost(std::move(tensor), axisSizes, coords, symmetric);
  }
  /// The host copy's data to where the program reads it.
  Status upload() {
    if (bound)
      std::memcpy(bound, host.data(), host.size());
    return Status();
  }
  void *pointer() { return bound ? bound : static_cast<void *>(host.data()); }
  /// The program's data back to the host copy.
  Status download() {
    if (bound)
      std::memcpy(host.data(), bound, host.size());
    return Status();
  }
};

/// The communicator the program runs on: MPI's world.
class Session {
public:
  Status open(rt::driver::Transport &) { return Status(); }
  /// The program object, `Program::create(world, sizes, out)`.
  template <class Program>
  Status create(const typename Program::Sizes &sizes,
                std::unique_ptr<Program> *out) {
    return Program::create(world_, sizes, out);
  }
  /// The same for a program with segment tables (create()'s `tables`).
  template <class Program>
  Status create(const typename Program::Sizes &sizes,
                const typename Program::Tables &tables,
                std::unique_ptr<Program> *out) {
    return Program::create(world_, sizes, tables, out);
  }
  /// A step's work is done when operator() returns.
  Status synchronize() { return Status(); }

private:
  Communicator world_{MPI_COMM_WORLD};
};

/// The driver of `program` (src/driver/run_program.h: what --help lists) on
/// the transport's ranks: its exit status.
int run(const rt::driver::ProgramDescription &program,
        rt::driver::Transport &transport, int argc, char **argv);

#if defined(COCONET_WITH_MPI)
/// A generated driver's main(): MPI (serialised threads: overlaps call it
/// from a progress thread too, never at the same time), then run(). (The
/// generated driver defines COCONET_WITH_MPI: the CPU target always runs
/// under MPI.)
inline int main(const rt::driver::ProgramDescription &program, int argc,
                char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int status = 0;
  {
    rt::driver::MpiTransport transport(MPI_COMM_WORLD);
    status = run(program, transport, argc, argv);
  }
  MPI_Finalize();
  return status;
}
#endif

} // namespace coconet::rt::cpu::driver

#endif // COCONET_RUNTIME_CPU_DRIVER_H
