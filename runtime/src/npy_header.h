//===- npy_header.h - the Python literal of a .npy header -------*- C++ -*-===//
//
// Private to the runtime. A .npy header is a Python dict literal, e.g.
//
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// padded with spaces and ended by '\n'. parseNpyHeaderDict parses the small
// subset of Python literal syntax such headers use (strings, integers,
// True, False, None, tuples and lists) with a recursive-descent parser that
// checks every bound, so that no input can crash it; keys may come in any
// order, with any whitespace and an optional trailing comma.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_NPY_HEADER_H
#define COCONET_RUNTIME_SRC_NPY_HEADER_H

#include "coconet/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coconet::rt::detail {

/// A parsed Python literal.
struct PyValue {
  enum class Kind { String, Int, Bool, None, Tuple, List };
  Kind kind = Kind::None;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> items;
};

using PyDict = std::vector<std::pair<std::string, PyValue>>;

/// Parses the whole header: one dict, then only whitespace. Errors are
/// InvalidArgument "malformed .npy header: <why>".
Status parseNpyHeaderDict(std::string_view text, PyDict *out);

} // namespace coconet::rt::detail

#endif // COCONET_RUNTIME_SRC_NPY_HEADER_H
