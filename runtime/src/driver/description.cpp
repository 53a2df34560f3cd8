//===- description.cpp - a program's description, evaluated --------------===//
//
// The extents of a program's description (coconet/description.h) for the
// sizes a driver bound: products of sizes, checked for overflow (the
// printed drivers computed them in C++, where an overflow had no defined
// value).
//
//===----------------------------------------------------------------------===//

#include "run_program.h"

namespace coconet::rt::driver {

Status extentOf(const cc_extent &extent, const int64_t *sizes,
                const char *const *sizeNames, const char *what, int64_t *out) {
  int64_t value = extent.coefficient;
  std::string text = extent.coefficient != 1 || extent.num_sizes == 0
                         ? std::to_string(extent.coefficient)
                         : std::string();
  bool overflow = false;
  for (uint32_t i = 0; i < extent.num_sizes; ++i) {
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

static_assert(static_cast<int>(AxisState::Replicated) == CC_AXIS_REPLICATED &&
                  static_cast<int>(AxisState::Local) == CC_AXIS_LOCAL &&
                  static_cast<int>(AxisState::Sliced) == CC_AXIS_SLICED,
              "the description's axis states are the driver's");

Status tensorInfoOf(const cc_description &program, const cc_block &block,
                    const char *name, const int64_t *sizes, TensorInfo *out) {
  TensorInfo info;
  info.name = name;
  info.paramIndex = block.kind == CC_BLOCK_OUTPUT ? 0 : block.param_index;
  info.dtype = static_cast<DType>(block.dtype);
  info.globalShape.resize(block.rank);
  for (uint32_t d = 0; d < block.rank; ++d)
    COCONET_RETURN_IF_ERROR(extentOf(block.shape[d], sizes, program.size_names,
                                     name, &info.globalShape[d]));
  for (uint32_t a = 0; a < program.num_axes; ++a)
    info.layout.push_back(
        {static_cast<AxisState>(block.layout[a].state), block.layout[a].dim});
  *out = std::move(info);
  return Status::success();
}

} // namespace coconet::rt::driver
