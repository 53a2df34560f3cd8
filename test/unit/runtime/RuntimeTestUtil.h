//===- RuntimeTestUtil.h - simulated values as runtime storage -*- C++ -*-===//
//
// Converts between the simulator's blocks (sim::Tensor: doubles and 64-bit
// patterns) and the runtime's storage (f16/bf16 bits, float, int32_t, one
// byte per bool), and describes an IR value as the driver sees it.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_RUNTIME_RUNTIMETESTUTIL_H
#define COCONET_TEST_UNIT_RUNTIME_RUNTIMETESTUTIL_H

#include "coconet/driver.h"
#include "coconet/numeric.h"
#include "coconet/types.h"

#include "ir/Program.h"
#include "sim/Tensor.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace coconet::test {

inline rt::DType toRuntime(ir::DType dtype) {
  return static_cast<rt::DType>(dtype);
}

/// The runtime's storage bytes of a simulator block.
inline std::vector<uint8_t> storageOf(const sim::Tensor &t) {
  const rt::DType dtype = toRuntime(t.dtype());
  const size_t size = rt::dtypeSize(dtype);
  std::vector<uint8_t> out(static_cast<size_t>(t.size()) * size);
  for (int64_t i = 0; i < t.size(); ++i) {
    uint8_t *p = out.data() + static_cast<size_t>(i) * size;
    const sim::Scalar s = t.getScalar(i);
    uint16_t h = 0;
    float f = static_cast<float>(s.f);
    switch (dtype) {
    case rt::DType::F16:
      h = rt::doubleToHalfBits(s.f);
      std::memcpy(p, &h, 2);
      break;
    case rt::DType::BF16:
      h = rt::doubleToBFloat16Bits(s.f);
      std::memcpy(p, &h, 2);
      break;
    case rt::DType::F32:
      std::memcpy(p, &f, 4);
      break;
    case rt::DType::F64:
      std::memcpy(p, &s.f, 8);
      break;
    case rt::DType::I32:
    case rt::DType::I64:
    case rt::DType::U64:
      std::memcpy(p, &s.i, size); // little-endian: the low bytes
      break;
    case rt::DType::Bool:
      *p = s.i != 0;
      break;
    }
  }
  return out;
}

/// A value of `program` as the driver sees it, with sizes from `sizes`.
inline rt::driver::TensorInfo infoOf(const ir::Stage &stage,
                                     llvm::ArrayRef<int64_t> globalShape) {
  rt::driver::TensorInfo info;
  info.name = stage.name;
  info.paramIndex = stage.isParam() ? stage.paramIndex : 0;
  info.dtype = toRuntime(stage.type.dtype);
  info.globalShape.assign(globalShape.begin(), globalShape.end());
  for (const ir::AxisLayout &a : stage.type.layout.getAxes()) {
    rt::driver::AxisLayout l;
    l.state = static_cast<rt::driver::AxisState>(a.state);
    l.dim = a.dim;
    info.layout.push_back(l);
  }
  return info;
}

} // namespace coconet::test

#endif // COCONET_TEST_UNIT_RUNTIME_RUNTIMETESTUTIL_H
