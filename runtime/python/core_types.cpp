//===- core_types.cpp - coconet._core's element types, devices ------------===//
//
// NumPy's and DLPack's names of our element types, how a scalar of each is
// passed and the range a float scalar must fit (coconet/float_range.h, the
// rule of `--set`), and DLPack's devices as messages name them
// (core_types.h).
//
//===----------------------------------------------------------------------===//

#include "core_types.h"

#include "coconet/float_range.h"

namespace coconet::py {

// --- Element types -----------------------------------------------------------

std::string numpyName(int dtype) {
  const DTypeInfo &t = kDTypes[dtype];
  const std::string name = t.name;
  const std::string bits = std::to_string(8 * t.bytes);
  if (t.kind == 'B')
    return "bool";
  if (name[0] == 'b')
    return "bfloat" + bits;
  if (t.kind == 'F')
    return "float" + bits;
  return (name[0] == 'u' ? "uint" : "int") + bits;
}

nb::dlpack::dtype dlpackOf(int dtype) {
  const DTypeInfo &t = kDTypes[dtype];
  using Code = nb::dlpack::dtype_code;
  Code code = Code::Bool;
  if (t.kind == 'F')
    code = t.name[0] == 'b' ? Code::Bfloat : Code::Float;
  else if (t.kind == 'I')
    code = t.name[0] == 'u' ? Code::UInt : Code::Int;
  return {static_cast<uint8_t>(code), static_cast<uint8_t>(8 * t.bytes), 1};
}

std::string dlpackName(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  std::string bits = std::to_string(t.bits), name;
  switch (static_cast<Code>(t.code)) {
  case Code::Int:
    name = "int" + bits;
    break;
  case Code::UInt:
    name = "uint" + bits;
    break;
  case Code::Float:
    name = "float" + bits;
    break;
  case Code::Bfloat:
    name = "bfloat" + bits;
    break;
  case Code::Complex:
    name = "complex" + bits;
    break;
  case Code::Bool:
    name = "bool";
    break;
  default:
    name =
        "DLPack type code " + std::to_string(t.code) + " of " + bits + " bits";
  }
  if (t.lanes != 1)
    name += " x" + std::to_string(t.lanes);
  return name;
}

ScalarKind scalarKind(int dtype) {
  const DTypeInfo &t = kDTypes[dtype];
  if (t.kind == 'F')
    return t.bytes == 8 ? ScalarKind::Double : ScalarKind::Float;
  if (t.kind == 'B')
    return ScalarKind::Bool;
  if (t.name[0] == 'u')
    return ScalarKind::U64;
  return t.bytes == 4 ? ScalarKind::I32 : ScalarKind::I64;
}

std::string floatRangeProblem(int dtype, double x) {
  return coconet::rt::floatRangeProblem(static_cast<coconet::rt::DType>(dtype),
                                        kDTypes[dtype].name, x);
}

// --- Devices -----------------------------------------------------------------

std::string deviceName(int type, int id) {
  switch (type) {
  case kDLCPU:
    return "cpu";
  case kDLCUDA:
    return "cuda:" + std::to_string(id);
  case kDLCUDAHost:
    return "cuda_host";
  case kDLCUDAManaged:
    return "cuda_managed:" + std::to_string(id);
  case 10:
    return "rocm:" + std::to_string(id);
  default:
    return "DLPack device " + std::to_string(type) + ":" + std::to_string(id);
  }
}

} // namespace coconet::py
