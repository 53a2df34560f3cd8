//===- CatchSession.h - run Catch2's session from any main() --------------===//
//
// Catch2 (v2) declares Catch::Session only where its implementation is
// compiled (CATCH_CONFIG_RUNNER), which is CatchImpl.cpp alone: a test
// with a main() of its own (an MPI program) calls this instead.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_CATCH_CATCHSESSION_H
#define COCONET_TEST_CATCH_CATCHSESSION_H

namespace coconet::test {

/// Catch2's session on this command line: its exit status (the number of
/// failed assertions, at most 255).
int runCatchSession(int argc, char **argv);

} // namespace coconet::test

#endif
