//===- grouped_matmul.cpp - the experts' matmul of a dropless MoE ---------===//
//
// groupedMatmul (cpu/runtime.h): one matmul() a nonempty segment of rows,
// with that segment's group's B, so every segment's rows have the exact
// matmul's bits; the rows past the segments are zeroed. groupedMatmulPart:
// the segments of some of the groups (an overlap's part).
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"

#include <algorithm>
#include <cstring>

namespace coconet::rt::cpu {

void groupedMatmul(DType dtype, int64_t rows, int64_t n, int64_t k,
                   const void *a, const void *b, int64_t groups,
                   int64_t localGroups, const int32_t *counts, void *c) {
  groupedMatmulPart(dtype, rows, n, k, a, b, groups, localGroups, counts, c, 0,
                    1);
}

void groupedMatmulPart(DType dtype, int64_t rows, int64_t n, int64_t k,
                       const void *a, const void *b, int64_t groups,
                       int64_t localGroups, const int32_t *counts, void *c,
                       int64_t part, int64_t parts) {
  if (rows < 0 || n < 1 || k < 0 || groups < 0 || localGroups < 1 ||
      parts < 1 || part < 0 || part >= parts || localGroups % parts != 0)
    return;
  const int64_t per = localGroups / parts, first = part * per;
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  const auto *as = static_cast<const uint8_t *>(a);
  const auto *bs = static_cast<const uint8_t *>(b);
  auto *cs = static_cast<uint8_t *>(c);
  int64_t start = 0;
  for (int64_t j = 0; j < groups && start < rows; ++j) {
    const int64_t len = std::min<int64_t>(std::max(counts[j], 0), rows - start);
    const int64_t g = j % localGroups;
    if (len > 0 && g >= first && g < first + per)
      matmul(dtype, 1, len, n, k, as + start * k * size, 0,
             bs + g * k * n * size, 0, cs + start * n * size, 0);
    start += len;
  }
  if (start < rows && part == 0)
    std::memset(cs + start * n * size, 0,
                static_cast<size_t>((rows - start) * n * size));
}

} // namespace coconet::rt::cpu
