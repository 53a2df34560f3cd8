//===- python_shim.h - what a generated NAME_python file calls --*- C++ -*-===//
//
// The target-independent half of a program's Python entry points
// (coconet/python_abi.h): an error's message into the caller's buffer and
// the placement of every tensor on one rank. The generated shim is a table
// and one-line functions over these; the targets add their world
// (coconet/cpu/python.h, coconet/cuda/python.h).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_PYTHON_SHIM_H
#define COCONET_RUNTIME_PYTHON_SHIM_H

#include "coconet/driver.h"
#include "coconet/python_abi.h"
#include "coconet/status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace coconet::rt::python {

/// 0 for success; else 1, with the message copied into `err` (at most
/// `cap` bytes, NUL-terminated).
int report(const Status &status, char *err, size_t cap);

/// The block of each of `tensors` on `rank` of a mesh of `axisSizes`
/// (ranks row-major over the axes): each tensor's local shape and offset
/// appended to `shape` and `offset` in turn.
int place(const std::vector<driver::TensorInfo> &tensors,
          const std::vector<int64_t> &axisSizes, int rank, int64_t *shape,
          int64_t *offset, char *err, size_t cap);

} // namespace coconet::rt::python

#endif // COCONET_RUNTIME_PYTHON_SHIM_H
