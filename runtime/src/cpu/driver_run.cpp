//===- driver_run.cpp - the CPU target's generated drivers ---------------===//
//
// run() of coconet/cpu/driver.h: the driver (src/driver/run_program.h) on
// the CPU target's blocks and MPI's world.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/driver.h"

#include "../driver/run_program.h"

namespace coconet::rt::cpu::driver {

int run(const rt::driver::ProgramDescription &program,
        rt::driver::Transport &transport, int argc, char **argv) {
  Session session;
  return rt::driver::runProgram<Block>(
      program, session, [&] { return session.open(transport); }, transport,
      argc, argv);
}

} // namespace coconet::rt::cpu::driver
