// The headers generated CPU code includes, precompiled once per test run
// and force-included into every CPU build of test/codegen/run_codegen.py
// (--no-precompiled-prelude turns it off): parsing them was half of each
// generated program's compile (about 1 s of 2 per file, at -O2 or -O0
// alike). It adds nothing a file does not include itself, so a generated
// file that forgets an include still fails where it is compiled without
// it: the CMake and Make rules, the install test and tune-measure
// (drivers). (The vectorized test reads these builds' remarks.)
// COCONET_WITH_MPI as a generated driver defines it (the program's own file
// does not read it).
#define COCONET_WITH_MPI 1
#include "coconet/combine.h"
#include "coconet/cpu/convert.h"
#include "coconet/cpu/driver.h"
#include "coconet/cpu/progress.h"
#include "coconet/cpu/runtime.h"
#include "coconet/cpu/team.h"
#include "coconet/segment_walk.h"
#include "coconet/segments.h"
#include "coconet/sizes.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mpi.h>
#include <string>
#include <vector>
