//===- python_shim.h - what a generated NAME_python file calls --*- C++ -*-===//
//
// The target-independent half of a program's Python entry points
// (coconet/python_abi.h): an error's message into the caller's buffer and
// the placement of every tensor on one rank, read from the program's
// description. The generated shim is the description and one-line
// functions over these; the targets add their world
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

/// 0 for success; else 2 for an invalid argument (a requirement the
/// caller's values break) and 1 for any other error, with the message
/// copied into `err` (at most `cap` bytes, NUL-terminated).
int report(const Status &status, char *err, size_t cap);

/// cc_py_program::place for `program`, its blocks named `names` in
/// messages: the block of each tensor parameter and output on `rank` for
/// `sizes` (ranks row-major over the mesh axes), each one's local shape and
/// offset appended to `shape` and `offset` in turn.
int place(const cc_description &program, const char *const *names,
          const int64_t *sizes, int rank, int64_t *shape, int64_t *offset,
          char *err, size_t cap);

} // namespace coconet::rt::python

#endif // COCONET_RUNTIME_PYTHON_SHIM_H
