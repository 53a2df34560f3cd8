//===- core_types.h - coconet._core's element types, devices ----*- C++ -*-===//
//
// Private to coconet._core (runtime/python/): our element types
// (coconet/dtypes.def) as DLPack and NumPy name them and as a scalar
// parameter of each is passed (the C types python_abi.h names); DLPack's
// devices as messages name them.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_PYTHON_CORE_TYPES_H
#define COCONET_RUNTIME_PYTHON_CORE_TYPES_H

#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>

namespace coconet::py {

namespace nb = nanobind;

// --- Element types -----------------------------------------------------------

struct DTypeInfo {
  const char *name; // our spelling: "f32"
  int bytes;
  char kind; // 'F'loat, 'I'nteger, 'B'ool
};

inline constexpr DTypeInfo kDTypes[] = {
#define DTYPE(Name, Printed, Bytes, Kind) {Printed, Bytes, #Kind[0]},
#include "coconet/dtypes.def"
};
constexpr int kNumDTypes = sizeof(kDTypes) / sizeof(kDTypes[0]);

/// NumPy's spelling of our element type ("float32", "bfloat16", "bool").
std::string numpyName(int dtype);

/// The DLPack element type an array of our element type has.
nb::dlpack::dtype dlpackOf(int dtype);

/// NumPy's spelling of a DLPack element type, for messages.
std::string dlpackName(nb::dlpack::dtype t);

// How a scalar parameter is passed: the C type python_abi.h names.
enum class ScalarKind { Float, Double, I32, I64, U64, Bool };

/// How a scalar parameter of element type `dtype` is passed.
ScalarKind scalarKind(int dtype);

/// Why `x` cannot be a scalar of float type `dtype` (empty: it can): the
/// rule of `--set` (coconet/float_range.h).
std::string floatRangeProblem(int dtype, double x);

/// A scalar argument, as the step is passed it (ScalarKind's member).
union ScalarValue {
  float f;
  double d;
  int32_t i32;
  int64_t i64;
  uint64_t u64;
  bool b;
};

// --- Devices -----------------------------------------------------------------

constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

/// A DLPack device as messages name it ("cpu", "cuda:1").
std::string deviceName(int type, int id);

} // namespace coconet::py

#endif // COCONET_RUNTIME_PYTHON_CORE_TYPES_H
