//===- CatchMain.cpp - the main() of the Catch2 executables without one ---===//
//
// The unit tests and the emulation's tests (coconet_catch_main,
// test/CMakeLists.txt): Catch2's session, its own command line.
//
//===----------------------------------------------------------------------===//

#include "CatchSession.h"

int main(int argc, char **argv) {
  return coconet::test::runCatchSession(argc, argv);
}
