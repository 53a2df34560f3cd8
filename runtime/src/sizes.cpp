//===- sizes.cpp - checked size arithmetic for program objects ------------===//

#include "coconet/sizes.h"

#include "coconet/environment.h"

#include <string>

namespace coconet::rt {

bool checkedProduct(std::initializer_list<int64_t> factors, int64_t *out) {
  int64_t n = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(n, f, &n))
      return false;
  *out = n;
  return true;
}

Status checkTensorSize(const char *program, const char *tensor,
                       const char *type, DType dtype,
                       std::initializer_list<int64_t> factors) {
  const std::string what =
      std::string(program) + ": '" + tensor + "' (" + type + ") has ";
  int64_t elements = 0;
  if (!checkedProduct(factors, &elements)) {
    std::string product;
    for (int64_t f : factors)
      product += (product.empty() ? "" : " x ") + std::to_string(f);
    return Status::error(StatusCode::InvalidArgument,
                         what + product +
                             " elements, a count that overflows 64 bits: "
                             "choose smaller sizes");
  }
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (elements > kMaxTensorBytes / size)
    return Status::error(StatusCode::InvalidArgument,
                         what + std::to_string(elements) + " elements of " +
                             std::to_string(size) + " byte" +
                             (size == 1 ? "" : "s") +
                             ", more than 2^63 - 1 bytes: choose smaller "
                             "sizes");
  return Status::success();
}

Status checkMeshSize(const char *program, const char *names,
                     std::initializer_list<int64_t> axisSizes) {
  int64_t ranks = 0;
  if (!checkedProduct(axisSizes, &ranks) || ranks > INT32_MAX) {
    std::string product;
    for (int64_t s : axisSizes)
      product += (product.empty() ? "" : " x ") + std::to_string(s);
    return Status::error(StatusCode::InvalidArgument,
                         std::string(program) + ": the mesh has " + names +
                             " = " + product +
                             " ranks, more than any communicator has "
                             "(2^31 - 1)");
  }
  return Status::success();
}

bool addAligned(size_t *total, size_t bytes) {
  const size_t rounded = (bytes / 256 + (bytes % 256 != 0)) * 256;
  if (rounded < bytes || *total > SIZE_MAX - rounded)
    return false;
  *total += rounded;
  return true;
}

size_t teamAlgorithmWindowBytes() {
  return static_cast<size_t>(
      wholeNumberFromEnv("COCONET_TEAM_ALGORITHM_BYTES", kMinTeamWindowBytes,
                         kMaxTeamWindowBytes, kDefaultTeamWindowBytes));
}

} // namespace coconet::rt
