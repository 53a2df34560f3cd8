//===- shim.cpp - the target-independent half of the Python entry points --===//

#include "coconet/python_shim.h"

#include <algorithm>
#include <cstring>

namespace coconet::rt::python {

int report(const Status &status, char *err, size_t cap) {
  if (status.ok())
    return 0;
  if (err && cap > 0) {
    const std::string &m = status.message();
    const size_t n = std::min(m.size(), cap - 1);
    std::memcpy(err, m.data(), n);
    err[n] = '\0';
  }
  return status.code() == StatusCode::InvalidArgument ? 2 : 1;
}

int place(const cc_description &program, const char *const *names,
          const int64_t *sizes, int rank, int64_t *shape, int64_t *offset,
          char *err, size_t cap) {
  std::vector<int64_t> axisSizes;
  for (uint32_t a = 0; a < program.num_axes; ++a)
    axisSizes.push_back(sizes[program.axis_sizes[a]]);
  for (int64_t s : axisSizes)
    if (s <= 0)
      return report(Status::error(StatusCode::InvalidArgument,
                                  "a mesh axis has size " + std::to_string(s) +
                                      ": sizes must be positive"),
                    err, cap);
  const std::vector<int64_t> coords = driver::coordinatesOf(axisSizes, rank);
  for (uint32_t i = 0; i < program.num_blocks; ++i) {
    const cc_block &b = program.blocks[i];
    if (b.kind == CC_BLOCK_SCALAR)
      continue;
    driver::TensorInfo t;
    if (int rc = report(driver::tensorInfoOf(program, b, names[i], sizes, &t),
                        err, cap))
      return rc;
    for (size_t d = 0; d < t.globalShape.size(); ++d)
      if (t.globalShape[d] <= 0)
        return report(Status::error(StatusCode::InvalidArgument,
                                    "dimension " + std::to_string(d) + " of '" +
                                        t.name + "' has size " +
                                        std::to_string(t.globalShape[d]) +
                                        ": sizes must be positive"),
                      err, cap);
    driver::Placement p;
    if (int rc = report(driver::place(t, axisSizes, coords, &p), err, cap))
      return rc;
    for (size_t d = 0; d < p.localShape.size(); ++d) {
      *shape++ = p.localShape[d];
      *offset++ = p.offset[d];
    }
  }
  return 0;
}

} // namespace coconet::rt::python
