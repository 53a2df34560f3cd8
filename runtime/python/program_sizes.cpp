//===- program_sizes.cpp - coconet._core.Program: its sizes ---------------===//
//
// Where a program's sizes come from: given (sizes=) with its tables'
// lengths (tables=), the one mesh axis not given from the number of ranks,
// the rest from the first call's arrays (deduce); then this rank's blocks
// placed and the program created. The check of an array's shape against
// its block, whose message says which sizes made it and where each came
// from (SizeSource); block() and the sizes Python reads.
//
//===----------------------------------------------------------------------===//

#include "program.h"

#include <algorithm>

namespace coconet::py {

int Program::sizeIndex(const std::string &name) const {
  for (int s = 0; s < numSizes_; ++s)
    if (name == desc_->size_names[s])
      return s;
  return -1;
}

std::string Program::sizeList() const {
  if (numSizes_ == 0)
    return "none";
  std::string s;
  for (int k = 0; k < numSizes_; ++k)
    s += (k ? ", " : "") + std::string(desc_->size_names[k]);
  return s;
}

namespace {

/// An integer argument (sizes, tables): an int or anything with __index__,
/// not a bool or a float.
int64_t integer(nb::handle h, const std::string &what, const char *program) {
  if (PyBool_Check(h.ptr()) || isNumpyBool(h.ptr()) || !PyIndex_Check(h.ptr()))
    raise(PyExc_TypeError, std::string(program) + ": " + what +
                               ": expected an integer, got " + typeName(h));
  nb::object v = nb::steal(PyNumber_Index(h.ptr()));
  if (!v.is_valid()) {
    nb::python_error e;
    raise(PyExc_TypeError, std::string(program) + ": " + what +
                               ": expected an integer, got " + typeName(h) +
                               ": " + shownError(e));
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow)
    raise(PyExc_ValueError, std::string(program) + ": " + what + " = " +
                                intText(v) + " does not fit 64 bits");
  return x;
}

} // namespace

void Program::setSizes(nb::handle sizes, nb::handle tables) {
  const int ns = numSizes_;
  sizes_.assign(static_cast<size_t>(ns), 0);
  from_.assign(static_cast<size_t>(ns), SizeSource{});
  if (!sizes.is_none()) {
    if (!PyDict_Check(sizes.ptr()))
      fail(PyExc_TypeError,
           "sizes: expected a dict {size name: int}, got " + typeName(sizes));
    for (auto [k, v] : nb::borrow<nb::dict>(sizes)) {
      if (!PyUnicode_Check(k.ptr()))
        fail(PyExc_TypeError,
             "sizes: a size's name is a str, got " + typeName(k));
      // A str that is not UTF-8 (a lone surrogate) is not a size's name.
      Py_ssize_t length = 0;
      const char *utf8 = PyUnicode_AsUTF8AndSize(k.ptr(), &length);
      if (!utf8)
        PyErr_Clear();
      const std::string name =
          utf8 ? std::string(utf8, static_cast<size_t>(length)) : "";
      const int s = utf8 ? sizeIndex(name) : -1;
      if (s < 0)
        fail(PyExc_ValueError, "sizes: " + shown(k) + " is not a size of " +
                                   desc_->name + "; its sizes are " +
                                   sizeList());
      const int64_t x = integer(v, "size '" + name + "'", desc_->name);
      if (x <= 0)
        fail(PyExc_ValueError, "size '" + name + "' = " + std::to_string(x) +
                                   ": sizes must be positive");
      sizes_[s] = x;
      from_[s] = SizeSource{SizeSource::Given};
    }
  }
  if (!tables.is_none() && !PyDict_Check(tables.ptr()))
    fail(PyExc_TypeError,
         "tables: expected a dict {table name: sequence of ints}, got " +
             typeName(tables));
  nb::dict tdict = tables.is_none() ? nb::dict() : nb::borrow<nb::dict>(tables);
  for (auto [k, v] : tdict) {
    (void)v;
    bool known = false;
    for (int t = 0; t < numTables_; ++t)
      known |=
          PyUnicode_Check(k.ptr()) &&
          PyUnicode_CompareWithASCIIString(k.ptr(), desc_->tables[t].name) == 0;
    if (!known) {
      std::string names;
      for (int t = 0; t < numTables_; ++t)
        names += (t ? ", " : "") + std::string(desc_->tables[t].name);
      fail(PyExc_ValueError, "tables: " + shown(k) + " is not a table of " +
                                 desc_->name + "; its tables are " +
                                 (names.empty() ? "none" : names));
    }
  }
  tables_.assign(static_cast<size_t>(numTables_), {});
  for (int t = 0; t < numTables_; ++t) {
    const cc_table &tb = desc_->tables[t];
    const std::string tname = tb.name;
    PyObject *v = PyDict_GetItemString(tdict.ptr(), tb.name);
    if (!v)
      fail(PyExc_ValueError,
           "the table '" + tname + "' is required: tables={'" + tname +
               "': [...]} (its " +
               desc_->size_names[static_cast<int>(tb.count_size)] +
               " lengths, summing to " +
               (tb.length_name ? tb.length_name : "?") + ")");
    nb::handle hv(v);
    if (PyUnicode_Check(v) || PyBytes_Check(v) || !PySequence_Check(v))
      fail(PyExc_TypeError, "table '" + tname +
                                "': expected a sequence of ints, got " +
                                typeName(hv));
    // An array (NumPy's, anything with a shape) is a table when it has
    // one dimension: a 2-D one is a sequence of rows, which would reach
    // the converter's own TypeError below.
    if (PyObject_HasAttrString(v, "ndim") &&
        PyObject_HasAttrString(v, "shape")) {
      nb::object ndim = nb::steal(PyObject_GetAttrString(v, "ndim"));
      if (!ndim.is_valid())
        throw nb::python_error();
      long nd = PyLong_Check(ndim.ptr()) ? PyLong_AsLong(ndim.ptr()) : -1;
      if (nd != 1) {
        nb::object shape = nb::steal(PyObject_GetAttrString(v, "shape"));
        fail(PyExc_ValueError,
             "table '" + tname + "': expected a 1-D sequence of lengths, got " +
                 typeName(hv) + " of shape " +
                 (shape.is_valid() ? shown(shape, false) : "?"));
      }
    }
    const Py_ssize_t len = PySequence_Size(v);
    if (len < 0)
      throw nb::python_error();
    std::vector<int64_t> &out = tables_[static_cast<size_t>(t)];
    out.reserve(static_cast<size_t>(len));
    for (Py_ssize_t e = 0; e < len; ++e) {
      nb::object item = nb::steal(PySequence_GetItem(v, e));
      if (!item.is_valid())
        throw nb::python_error();
      const std::string what =
          "table '" + tname + "'[" + std::to_string(e) + "]";
      const int64_t length = integer(item, what, desc_->name);
      // Checked here, as every argument is, not first by create().
      if (length < 0)
        fail(PyExc_ValueError, what + " = " + std::to_string(length) +
                                   ": a segment's length is 0 or more");
      out.push_back(length);
    }
    const int c = static_cast<int>(tb.count_size);
    if (from_[c].kind == SizeSource::Given && sizes_[c] != len)
      fail(PyExc_ValueError,
           "the table '" + tname + "' has " + std::to_string(len) +
               " entries, but sizes gives " + desc_->size_names[c] + "=" +
               std::to_string(sizes_[c]));
    if (len <= 0)
      fail(PyExc_ValueError, "the table '" + tname + "' is empty: " +
                                 desc_->size_names[c] + " must be positive");
    sizes_[c] = len;
    from_[c] = SizeSource{SizeSource::Table};
  }
}

void Program::settleAxes() {
  const int na = numAxes_;
  if (na == 0)
    return;
  int missing = -1, nmissing = 0;
  int64_t product = 1;
  for (int a = 0; a < na; ++a) {
    if (sizes_[a] == 0) {
      missing = a;
      ++nmissing;
    } else {
      product *= sizes_[a];
    }
  }
  auto axes = [&] {
    std::string s;
    for (int a = 0; a < na; ++a)
      s += (a ? ", " : "") + std::string(desc_->size_names[a]) + "=" +
           (sizes_[a] ? std::to_string(sizes_[a]) : "?");
    return s;
  };
  if (nmissing > 1)
    fail(PyExc_ValueError,
         "the mesh has " + std::to_string(na) + " axes (" + axes() +
             "): give the sizes of all of them but one, e.g. sizes={'" +
             desc_->size_names[missing] + "': ...}");
  if (nmissing == 1) {
    if (size_ % product != 0)
      fail(PyExc_ValueError, "the mesh axes " + axes() + " do not divide the " +
                                 std::to_string(size_) +
                                 " ranks of the communicator");
    sizes_[missing] = size_ / product;
    from_[missing] = SizeSource{SizeSource::Ranks};
    product *= sizes_[missing];
  }
  if (product != size_)
    fail(PyExc_ValueError,
         "the mesh axes " + axes() + " make " + std::to_string(product) +
             " ranks; the communicator has " + std::to_string(size_));
}

void Program::place(const std::vector<int64_t> &sizes,
                    std::vector<int64_t> &shape,
                    std::vector<int64_t> &offset) const {
  shape.assign(totalDims_ ? totalDims_ : 1, 0);
  offset.assign(totalDims_ ? totalDims_ : 1, 0);
  char err[4096] = "";
  if (d_->place(sizes.data(), rank_, shape.data(), offset.data(), err,
                sizeof err))
    fail(PyExc_ValueError, err);
}

void Program::placeAndCreate(const std::vector<int64_t> &sizes,
                             const std::vector<SizeSource> &from) {
  std::vector<int64_t> shape, offset;
  place(sizes, shape, offset);
  std::vector<const int64_t *> tables;
  for (const auto &t : tables_)
    tables.push_back(t.data());
  char err[4096] = "";
  void *out = nullptr;
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->create(comm_, sizes.data(),
                    tables.empty() ? nullptr : tables.data(), stream_, &out,
                    err, sizeof err);
  }
  if (rc)
    fail(PyExc_RuntimeError, err);
  program_ = out;
  sizes_ = sizes;
  from_ = from;
  shape_ = std::move(shape);
  offset_ = std::move(offset);
}

void Program::create() {
  if (program_)
    return;
  for (int s = 0; s < numSizes_; ++s)
    if (sizes_[s] == 0)
      fail(PyExc_ValueError,
           std::string("cannot create it before size '") +
               desc_->size_names[s] +
               "' is known: call it with arrays, or give sizes={'" +
               desc_->size_names[s] + "': ...}");
  placeAndCreate(sizes_, from_);
}

// The sizes not yet known, read from the arrays taken (see the class's
// comment in python_abi.h): shape[d] times the sizes of the axes that slice
// dimension d.
void Program::deduce(std::vector<int64_t> &sizes,
                     std::vector<SizeSource> &from) const {
  sizes = sizes_;
  from = from_;
  for (int i : tensors_) {
    const nb::ndarray<> &a = arrays_[i];
    const BlockView &p = *params_[i].p;
    if (!a.is_valid() || static_cast<int>(a.ndim()) != p.rank)
      continue;
    for (int k = 0; k < p.rank; ++k) {
      const int s = p.dims[k];
      if (s < 0 || sizes[s] != 0)
        continue;
      int64_t extent = static_cast<int64_t>(a.shape(static_cast<size_t>(k)));
      for (int ax = 0; ax < numAxes_; ++ax)
        if (p.layout[ax] == k)
          extent *= sizes[ax];
      if (extent <= 0)
        fail(PyExc_ValueError, "size '" + std::string(desc_->size_names[s]) +
                                   "' = " + std::to_string(extent) + " (from " +
                                   q(i) + ", shape " +
                                   tupleText(a.shape_ptr(), a.ndim()) +
                                   "): sizes must be positive");
      sizes[s] = extent;
      from[s] = SizeSource{SizeSource::Param, i};
    }
  }
  for (int s = 0; s < numSizes_; ++s)
    if (sizes[s] == 0)
      fail(PyExc_ValueError,
           std::string("cannot tell size '") + desc_->size_names[s] +
               "' from the arrays: give it when creating the program: "
               "sizes={'" +
               desc_->size_names[s] + "': ...}");
}

// "N=1024 from 'g'" for each size named in `text`, those read from another
// parameter than i saying which.
std::string Program::sizeNote(const std::string &text, int i,
                              const std::vector<int64_t> &sizes,
                              const std::vector<SizeSource> &from) const {
  std::string note;
  std::vector<int> seen;
  for (const std::string &id : identifiers(text)) {
    const int s = sizeIndex(id);
    if (s < 0 || std::find(seen.begin(), seen.end(), s) != seen.end())
      continue;
    seen.push_back(s);
    note += (note.empty() ? "" : ", ") + id + "=" + std::to_string(sizes[s]) +
            sourceNote(from[s], i);
  }
  return note;
}

std::string Program::sourceNote(const SizeSource &source, int i) const {
  switch (source.kind) {
  case SizeSource::Param:
    return source.param == i ? "" : " from " + q(source.param);
  case SizeSource::Ranks:
    return " (the number of ranks)";
  case SizeSource::Table:
    return " (the table's length)";
  case SizeSource::Unknown:
  case SizeSource::Given:
    break;
  }
  return "";
}

void Program::checkShape(int i, const int64_t *shape, const int64_t *offset,
                         const std::vector<int64_t> &sizes,
                         const std::vector<SizeSource> &from) const {
  const Param &p = params_[i];
  const nb::ndarray<> &a = arrays_[i];
  const int r = p.p->rank;
  bool same = true;
  for (int k = 0; k < r; ++k)
    same &= static_cast<int64_t>(a.shape(static_cast<size_t>(k))) == shape[k];
  if (same)
    return;
  // What the block is, the sizes in effect and where they came from.
  auto dimText = [&](int k) {
    return p.dims.empty() ? "dimension " + std::to_string(k)
                          : p.dims[static_cast<size_t>(k)];
  };
  auto global = [&](int k) {
    int64_t g = shape[k];
    for (int ax = 0; ax < numAxes_; ++ax)
      if (p.p->layout[ax] == k)
        g *= sizes[ax];
    return g;
  };
  auto sliced = [&](int k) {
    for (int ax = 0; ax < numAxes_; ++ax)
      if (p.p->layout[ax] == k)
        return true;
    return false;
  };
  std::vector<std::string> ranges, notes;
  for (int k = 0; k < r; ++k) {
    const std::string text = dimText(k);
    std::string named = text + "=" + std::to_string(global(k));
    if (p.p->dims[k] >= 0) {
      named += sourceNote(from[p.p->dims[k]], i);
    } else {
      const std::string inner = sizeNote(text, i, sizes, from);
      if (!inner.empty())
        named += " (" + inner + ")";
    }
    if (sliced(k))
      ranges.push_back("[" + std::to_string(offset[k]) + ", " +
                       std::to_string(offset[k] + shape[k]) + ") of " + named);
    else if (static_cast<int64_t>(a.shape(static_cast<size_t>(k))) !=
                 shape[k] ||
             r == 1)
      notes.push_back(named);
  }
  std::string m = q(i) + ": " + p.p->type + ": ";
  if (!ranges.empty()) {
    m += "this rank (" + std::to_string(rank_) + " of " +
         std::to_string(size_) + ") holds elements ";
    for (size_t k = 0; k < ranges.size(); ++k)
      m += (k ? " and " : "") + ranges[k];
    m += ", a block of shape " + tupleText(shape, static_cast<size_t>(r));
  } else {
    m += "expected shape " + tupleText(shape, static_cast<size_t>(r));
  }
  if (!notes.empty()) {
    m += " (";
    for (size_t k = 0; k < notes.size(); ++k)
      m += (k ? ", " : "") + notes[k];
    m += ")";
  }
  m += "; got shape " + tupleText(a.shape_ptr(), a.ndim());
  fail(PyExc_ValueError, m);
}

nb::dict Program::sizes() const {
  nb::dict out;
  for (int s = 0; s < numSizes_; ++s)
    if (sizes_[s] > 0)
      out[desc_->size_names[s]] = sizes_[s];
  return out;
}

nb::tuple Program::block(const std::string &name) const {
  int found = -1;
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].name == name)
      found = static_cast<int>(i);
  if (found < 0 || !params_[found].tensor()) {
    std::string names;
    for (int i : tensors_)
      names += (names.empty() ? "" : ", ") + params_[i].name;
    fail(PyExc_ValueError, "block(): '" + name +
                               "' is not a tensor parameter or output; "
                               "those are " +
                               (names.empty() ? "none" : names));
  }
  if (!program_)
    fail(PyExc_ValueError,
         "block(): not created yet (its sizes are not all known): "
         "call it once, or give every size and create()");
  const Param &p = params_[found];
  nb::list off, shp;
  for (int k = 0; k < p.p->rank; ++k) {
    off.append(offset_[p.dimOffset + static_cast<size_t>(k)]);
    shp.append(shape_[p.dimOffset + static_cast<size_t>(k)]);
  }
  return nb::make_tuple(nb::tuple(off), nb::tuple(shp));
}

} // namespace coconet::py
