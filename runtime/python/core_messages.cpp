//===- core_messages.cpp - coconet._core's messages -----------------------===//
//
// Raising from C++, and the text a message shows of a user's values, names,
// types and exceptions (core_messages.h).
//
//===----------------------------------------------------------------------===//

#include "core_messages.h"

#include <cctype>
#include <cstring>

namespace coconet::py {

[[noreturn]] void raise(PyObject *type, const std::string &message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

std::string tupleText(const int64_t *v, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(v[i]);
  }
  return s + (n == 1 ? ",)" : ")");
}

std::string shown(nb::handle h, bool quoted, size_t max) {
  PyObject *a = PyObject_ASCII(h.ptr());
  if (!a) {
    PyErr_Clear();
    return "?";
  }
  Py_ssize_t n = 0;
  const char *c = PyUnicode_AsUTF8AndSize(a, &n);
  std::string s = c ? std::string(c, static_cast<size_t>(n)) : "?";
  Py_DECREF(a);
  if (!c)
    PyErr_Clear();
  if (!quoted && s.size() >= 2 && (s.front() == '\'' || s.front() == '"') &&
      s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  if (s.size() > max)
    s = s.substr(0, max - 3) + "...";
  return s;
}

std::string shownError(const nb::python_error &e) {
  return shown(e.value(), /*quoted=*/false, 4 * kMaxShown);
}

std::string intText(nb::handle n) {
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
  if (!overflow && !PyErr_Occurred())
    return std::to_string(x);
  PyErr_Clear();
  const unsigned long long u = PyLong_AsUnsignedLongLong(n.ptr());
  if (!PyErr_Occurred())
    return std::to_string(u);
  PyErr_Clear();
  nb::object bits =
      nb::steal(PyObject_CallMethod(n.ptr(), "bit_length", nullptr));
  if (!bits.is_valid()) {
    PyErr_Clear();
    return "an integer";
  }
  return std::string(overflow < 0 ? "a negative " : "a ") +
         std::to_string(PyLong_AsLongLong(bits.ptr())) + "-bit integer";
}

std::string shownText(const std::string &text, size_t max) {
  nb::object str = nb::steal(PyUnicode_DecodeUTF8(
      text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
  if (!str.is_valid()) {
    PyErr_Clear();
    return "?";
  }
  return shown(str, /*quoted=*/false, max);
}

std::string typeName(nb::handle h) {
  return shown(nb::type_name(h.type()), /*quoted=*/false);
}

// Python's limited API (Py_LIMITED_API: one extension for every CPython
// from 3.12, as test/gpu/python_bench.py builds it) hides the type objects'
// fields and the unchecked macros; the full API's are faster.

bool isNumpyBool(PyObject *o) {
#if defined(Py_LIMITED_API)
  const std::string n = typeName(nb::handle(o));
  return n == "numpy.bool_" || n == "numpy.bool";
#else
  const char *n = Py_TYPE(o)->tp_name;
  return std::strcmp(n, "numpy.bool_") == 0 ||
         std::strcmp(n, "numpy.bool") == 0;
#endif
}

bool numberLike(PyObject *o) {
#if defined(Py_LIMITED_API)
  PyTypeObject *t = Py_TYPE(o);
  return PyType_GetSlot(t, Py_nb_float) || PyType_GetSlot(t, Py_nb_index);
#else
  const PyNumberMethods *n = Py_TYPE(o)->tp_as_number;
  return n && (n->nb_float || n->nb_index);
#endif
}

std::vector<std::string> identifiers(const std::string &text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c) || c == '_') {
      size_t j = i;
      while (
          j < text.size() &&
          (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      out.push_back(text.substr(i, j - i));
      i = j;
    } else if (std::isdigit(c)) {
      while (i < text.size() &&
             std::isalnum(static_cast<unsigned char>(text[i])))
        ++i;
    } else {
      ++i;
    }
  }
  return out;
}

std::string extentText(const cc_extent &e, const char *const *sizeNames) {
  std::string out;
  if (e.coefficient != 1 || e.num_sizes == 0)
    out = std::to_string(e.coefficient);
  for (uint32_t i = 0; i < e.num_sizes; ++i)
    out += (out.empty() ? "" : "*") + std::string(sizeNames[e.sizes[i]]);
  return out;
}

} // namespace coconet::py
