//===- Driver.h - the coconetc command line ---------------------*- C++ -*-===//
//
// `coconetc FILE` checks a program and emits what --emit asks for;
// `coconetc sim FILE` runs it on the reference simulator. Exit status: 0 on
// success, 1 when the input has errors, 2 when the command line or a file
// the compiler needs is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_DRIVER_DRIVER_H
#define COCONET_DRIVER_DRIVER_H

namespace coconet::driver {

/// Runs the command line; returns the process exit status.
int runDriver(int argc, char **argv);

} // namespace coconet::driver

#endif // COCONET_DRIVER_DRIVER_H
