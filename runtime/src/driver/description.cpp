//===- description.cpp - a program's description, evaluated --------------===//
//
// The extents of a ProgramDescription (coconet/driver.h) for the sizes a
// driver bound: products of sizes, checked for overflow (the printed
// drivers computed them in C++, where an overflow had no defined value).
//
//===----------------------------------------------------------------------===//

#include "run_program.h"

namespace coconet::rt::driver {

Status extentOf(const ExtentDescription &extent, const int64_t *sizes,
                const char *const *sizeNames, const char *what, int64_t *out) {
  int64_t value = extent.coefficient;
  std::string text = extent.coefficient != 1 || extent.numSizes == 0
                         ? std::to_string(extent.coefficient)
                         : std::string();
  bool overflow = false;
  for (uint32_t i = 0; i < extent.numSizes; ++i) {
    const uint32_t s = extent.sizes[i];
    overflow = overflow || __builtin_mul_overflow(value, sizes[s], &value);
    text += (text.empty() ? "" : " * ") + std::string(sizeNames[s]);
  }
  if (overflow)
    return Status::error(StatusCode::InvalidArgument,
                         std::string("'") + what + "': the extent " + text +
                             " does not fit in 64 bits");
  *out = value;
  return Status::success();
}

Status tensorInfoOf(const ProgramDescription &program,
                    const TensorDescription &tensor, const int64_t *sizes,
                    TensorInfo *out) {
  TensorInfo info;
  info.name = tensor.name;
  info.paramIndex = tensor.paramIndex;
  info.dtype = tensor.dtype;
  info.globalShape.resize(tensor.rank);
  for (uint32_t d = 0; d < tensor.rank; ++d)
    COCONET_RETURN_IF_ERROR(extentOf(tensor.shape[d], sizes, program.sizeNames,
                                     tensor.name, &info.globalShape[d]));
  info.layout.assign(tensor.layout, tensor.layout + program.numAxes);
  *out = std::move(info);
  return Status::success();
}

} // namespace coconet::rt::driver
