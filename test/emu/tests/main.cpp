//===- main.cpp - the Catch2 main of the emulation tests ------------------===//
//
// The CPU emulation of CUDA, tested (test/emu/README.md).
//
//===----------------------------------------------------------------------===//

#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
