//===- main.cpp - the Catch2 main of the unit tests -----------------------===//
//
// One executable runs every unit test; CTest sees each test case.
//
//===----------------------------------------------------------------------===//

#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
