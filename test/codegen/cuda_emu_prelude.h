// The CUDA emulation's prelude (coconet/emu/prelude.h) and the headers
// generated CUDA code includes, precompiled once per test run and
// force-included into every cuda-emu build of test/codegen/run_codegen.py:
// the runtime's CUDA headers (kernels, teams) took 0.8 s of the parsing of
// each sanitized program. It adds nothing a generated file does not include
// itself; nvcc compiles the same files without it (codegen-cuda:*).
#include "coconet/emu/prelude.h"

#include "coconet/combine.h"
#include "coconet/cuda/driver.h"
#include "coconet/cuda/kernels.h"
#include "coconet/cuda/runtime.h"
#include "coconet/cuda/team.h"
#include "coconet/cuda/team_collectives.h"
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
