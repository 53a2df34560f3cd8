//===- core_messages.h - coconet._core's messages ---------------*- C++ -*-===//
//
// Private to coconet._core (runtime/python/): raising a Python exception
// from C++, and what a message shows of what a user gave (a value, a name,
// a type, an exception's message, a path), escaped and cut (shown()), so
// that no message prints a terminal's control characters or a megabyte.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_PYTHON_CORE_MESSAGES_H
#define COCONET_RUNTIME_PYTHON_CORE_MESSAGES_H

#include "coconet/python_abi.h"

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace coconet::py {

namespace nb = nanobind;

/// Raises `type` with `message` (PyErr_SetString, then nb::python_error).
[[noreturn]] void raise(PyObject *type, const std::string &message);

/// A shape or strides as Python prints a tuple: "(2, 3)", "(4,)".
std::string tupleText(const int64_t *v, size_t n);

/// The most characters of a user's value a message shows.
constexpr size_t kMaxShown = 64;

/// What a user gave (a name, a key, an exception's message), as a message
/// may show it: Python's ascii() (a control character, a format character
/// such as U+202E or any other non-ASCII one escaped: \x1b, \u202e, which a
/// terminal shows as text), without the quotes when `quoted` is false, cut
/// to `max` characters with "...". Never raises.
std::string shown(nb::handle h, bool quoted = true, size_t max = kMaxShown);

/// An exception's message, as shown() shows it (a user's __float__ may
/// raise anything).
std::string shownError(const nb::python_error &e);

/// A Python int as a message shows it: its digits while it fits 64 bits,
/// else its size ("a 1329-bit integer"): str() of an int of a million
/// digits is a megabyte, and Python refuses it past 4300 digits.
std::string intText(nb::handle n);

/// A C++ string from the user (a path), as shown() shows it, unquoted.
std::string shownText(const std::string &text, size_t max = 4 * kMaxShown);

/// The name of `h`'s type, as shown() shows it, unquoted.
std::string typeName(nb::handle h);

/// Whether `o` is a NumPy bool (numpy.bool_, numpy.bool).
bool isNumpyBool(PyObject *o);

/// Whether `o`'s type converts to a float (nb_float) or an integer
/// (nb_index).
bool numberLike(PyObject *o);

/// The identifiers of `text` ("4*H + K" → H, K).
std::vector<std::string> identifiers(const std::string &text);

/// An extent as the program declares it ("4*H", "N", "3"): its
/// coefficient unless 1, then its sizes, joined by '*' (ir::Dim::str).
std::string extentText(const cc_extent &e, const char *const *sizeNames);

} // namespace coconet::py

#endif // COCONET_RUNTIME_PYTHON_CORE_MESSAGES_H
