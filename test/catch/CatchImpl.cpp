//===- CatchImpl.cpp - Catch2's implementation, compiled once -------------===//
//
// Every Catch2 test executable links this one object (coconet_catch,
// test/CMakeLists.txt) instead of compiling Catch2's implementation in a
// file of its own: that took 22-25 s of compile time per executable. A test
// with its own main() (an MPI program: MPI_Init first) calls
// Catch::Session itself; the others link CatchMain.cpp.
//
//===----------------------------------------------------------------------===//

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "CatchSession.h"

int coconet::test::runCatchSession(int argc, char **argv) {
  return Catch::Session().run(argc, argv);
}
