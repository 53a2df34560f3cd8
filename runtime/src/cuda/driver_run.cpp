//===- driver_run.cpp - the CUDA target's generated drivers --------------===//
//
// run() of coconet/cuda/driver.h: the driver (src/driver/run_program.h) on
// the CUDA target's blocks (device memory) and the world `openWorld` makes.
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/driver.h"

#include "../driver/run_program.h"

namespace coconet::rt::cuda::driver {

int run(const rt::driver::ProgramDescription &program,
        rt::driver::Transport &transport, Session::OpenWorld openWorld,
        int argc, char **argv) {
  Session session;
  return rt::driver::runProgram<Block>(
      program, session, [&] { return session.open(transport, openWorld); },
      transport, argc, argv);
}

} // namespace coconet::rt::cuda::driver
