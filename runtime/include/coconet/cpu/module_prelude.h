//===- module_prelude.h - headers a CPU module includes ---------*- C++ -*-===//
//
// The headers a CPU program's Python module (coconetc --emit=python:
// NAME.cpp and NAME_python.cpp) includes, force-included first by
// `python3 -m coconet build` (coconet.build), which precompiles this file
// once per compiler, flags and runtime headers and keeps it in the module
// cache (docs/python.md, "One command"). Parsing these headers was 40%
// of a module's compile. It adds only what generated code may include, and
// is included as text where the precompiled header cannot be used, so a
// module means the same either way.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_MODULE_PRELUDE_H
#define COCONET_RUNTIME_CPU_MODULE_PRELUDE_H

#include "coconet/combine.h"
#include "coconet/cpu/convert.h"
#include "coconet/cpu/progress.h"
#include "coconet/cpu/python.h"
#include "coconet/cpu/runtime.h"
#include "coconet/cpu/team.h"
#include "coconet/float_range.h"
#include "coconet/python_shim.h"
#include "coconet/segment_walk.h"
#include "coconet/segments.h"
#include "coconet/sizes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#endif // COCONET_RUNTIME_CPU_MODULE_PRELUDE_H
