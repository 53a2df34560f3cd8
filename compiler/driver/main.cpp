//===- main.cpp - the coconetc executable ---------------------------------===//
//
// Everything happens in driver/Driver.cpp.
//
//===----------------------------------------------------------------------===//

#include "driver/Driver.h"

int main(int argc, char **argv) {
  return coconet::driver::runDriver(argc, argv);
}
