//===- program_call.cpp - coconet._core.Program: a call -------------------===//
//
// A call of the program's step with the caller's arrays and scalars: each
// argument taken (an array through DLPack, zero-copy; a scalar converted
// to its C type) and checked before the step runs (element type, number of
// dimensions, device, layout in memory, this rank's block shape, no written
// array sharing memory with another), so that a refused call changes
// nothing; outputs passed as None allocated; the outputs returned. Then
// synchronize(), which waits for the steps enqueued on the stream.
//
//===----------------------------------------------------------------------===//

#include "program.h"

#include "coconet/float_range.h"

#include <cstdint>

namespace coconet::py {

// Takes argument i (a tensor or an output) as an array: arrays_[i].
void Program::take(int i, nb::handle h) {
  const Param &p = params_[i];
  viaView_[i] = 0;
  if (p.p->written) {
    if (nb::try_cast(h, arrays_[i], false))
      return;
    nb::ndarray<nb::ro> ro;
    if (nb::try_cast(h, ro, false))
      fail(PyExc_ValueError,
           q(i) + " is updated in place, but the array is read-only");
  } else {
    nb::ndarray<nb::ro> ro;
    if (nb::try_cast(h, ro, false)) {
      arrays_[i] = nb::ndarray<>(ro);
      return;
    }
  }
  // PyTorch before 2.x exports no bool tensor through DLPack: its bytes are
  // taken as uint8 (the same memory).
  bool torchBool = false;
  if (kDTypes[p.p->dtype].kind == 'B' && nb::hasattr(h, "dtype")) {
    try {
      torchBool = shown(h.attr("dtype"), false) == "torch.bool";
    } catch (nb::python_error &) { // a dtype that raises is not torch's
    }
  }
  if (torchBool) {
    nb::object view =
        h.attr("view")(nb::module_::import_("torch").attr("uint8"));
    if (nb::try_cast(view, arrays_[i], false)) {
      viaView_[i] = 1;
      return;
    }
  }
  // Why not: what the object's own __dlpack__ says, where it has one.
  if (nb::hasattr(h, "__dlpack__")) {
    std::string why;
    try {
      h.attr("__dlpack__")();
    } catch (nb::python_error &e) {
      why = shownError(e);
    }
    if (!why.empty())
      fail(PyExc_TypeError, q(i) + ": its " + typeName(h) +
                                " cannot be taken through DLPack: " + why);
  }
  fail(PyExc_TypeError,
       q(i) +
           ": expected an array (anything with __dlpack__ or the "
           "buffer protocol: NumPy, PyTorch, ...), got " +
           typeName(h));
}

// The checks of an array that need no sizes: element type, number of
// dimensions, device, layout in memory.
void Program::check(int i) const {
  const Param &p = params_[i];
  const nb::ndarray<> &a = arrays_[i];
  const nb::dlpack::dtype dt = a.dtype();
  const bool boolAsBytes =
      viaView_[i] &&
      dt == nb::dlpack::dtype{
                static_cast<uint8_t>(nb::dlpack::dtype_code::UInt), 8, 1};
  if (dt != p.dl && !boolAsBytes)
    fail(PyExc_TypeError,
         "parameter " + q(i) + ": expected " + kDTypes[p.p->dtype].name + " (" +
             numpyName(p.p->dtype) + "), got " + dlpackName(dt));
  if (static_cast<int>(a.ndim()) != p.p->rank)
    fail(PyExc_ValueError,
         q(i) + ": " + p.p->type + " has " + std::to_string(p.p->rank) +
             (p.p->rank == 1 ? " dimension" : " dimensions") +
             "; got an array of shape " + tupleText(a.shape_ptr(), a.ndim()));
  const int dev = a.device_type();
  bool deviceOk = dev == deviceType_ || (hostAlsoPinned_ && dev == kDLCUDAHost);
  if (deviceOk && dev == kDLCUDA && device_ >= 0 && a.device_id() != device_)
    deviceOk = false;
  if (!deviceOk) {
    std::string want;
    if (deviceType_ == kDLCUDA)
      want = "the cuda target takes arrays on " +
             (device_ >= 0 ? deviceName(kDLCUDA, device_) +
                                 " (the communicator's device)"
                           : std::string("a CUDA device"));
    else if (hostAlsoPinned_)
      want = std::string("the ") + d_->target + " target takes host arrays";
    else
      want =
          std::string("the ") + d_->target + " target takes host (cpu) arrays";
    fail(PyExc_ValueError,
         q(i) + " is on " + deviceName(dev, a.device_id()) + "; " + want);
  }
  const int64_t *strides = a.stride_ptr();
  if (strides) {
    int64_t expect = 1;
    bool contiguous = true;
    for (size_t k = a.ndim(); k-- > 0;) {
      const int64_t extent = static_cast<int64_t>(a.shape(k));
      if (extent > 1 && strides[k] != expect)
        contiguous = false;
      expect *= extent;
    }
    if (!contiguous)
      fail(PyExc_ValueError, q(i) + " is not contiguous (strides " +
                                 tupleText(strides, a.ndim()) +
                                 "): pass a contiguous array (e.g. "
                                 ".contiguous() / np.ascontiguousarray)");
  }
  const size_t bytes = static_cast<size_t>(kDTypes[p.p->dtype].bytes);
  if (reinterpret_cast<uintptr_t>(a.data()) % bytes != 0 && a.size() > 0)
    fail(PyExc_ValueError, q(i) + " is not aligned to its element size (" +
                               std::to_string(bytes) +
                               " bytes): pass an aligned copy");
}

void Program::scalar(int i, nb::handle h) {
  const Param &p = params_[i];
  PyObject *o = h.ptr();
  ScalarValue &v = scalars_[i];
  const char *dt = kDTypes[p.p->dtype].name;
  const bool isBool = PyBool_Check(o) || isNumpyBool(o);
  switch (p.scalar) {
  case ScalarKind::Float:
  case ScalarKind::Double: {
    double x;
    if (PyFloat_Check(o)) {
#if defined(Py_LIMITED_API)
      x = PyFloat_AsDouble(o);
#else
      x = PyFloat_AS_DOUBLE(o);
#endif
    } else if (isBool || PyUnicode_Check(o) || PyBytes_Check(o) ||
               !numberLike(o)) {
      fail(PyExc_TypeError,
           q(i) + ": expected a number (" + dt + "), got " + typeName(h));
    } else {
      x = PyFloat_AsDouble(o);
      if (x == -1.0 && PyErr_Occurred()) {
        // An int past a double's range is a value out of range; anything
        // else that would not convert is not a number (the converter's
        // own message, e.g. torch's, after ours).
        const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
        nb::python_error e;
        if (overflow)
          fail(PyExc_ValueError,
               q(i) + " = " + (PyLong_Check(o) ? intText(h) : "it") +
                   " is out of the range of " + dt + " (largest finite value " +
                   coconet::rt::largestFinite(
                       static_cast<coconet::rt::DType>(p.p->dtype)) +
                   ")");
        fail(PyExc_TypeError, q(i) + ": expected a number (" + dt + "), got " +
                                  typeName(h) + ": " + shownError(e));
      }
    }
    // The rule of `--set` (coconet/values.h): a finite number that
    // overflows the declared type, or a non-zero one that rounds to 0 in
    // it, is refused; infinities and NaN given as such pass.
    if (const std::string why = floatRangeProblem(p.p->dtype, x); !why.empty())
      fail(PyExc_ValueError,
           q(i) + " = " + coconet::rt::numberText(x) + " " + why);
    if (p.scalar == ScalarKind::Float)
      v.f = static_cast<float>(x);
    else
      v.d = x;
    return;
  }
  case ScalarKind::Bool:
    if (!isBool)
      fail(PyExc_TypeError, q(i) + ": expected a bool, got " + typeName(h));
    v.b = PyObject_IsTrue(o) == 1;
    return;
  default:
    break;
  }
  // Integers: int, or anything with __index__ (NumPy's and PyTorch's
  // integers), not a bool or a float.
  if (isBool || !PyIndex_Check(o))
    fail(PyExc_TypeError,
         q(i) + ": expected an integer (" + dt + "), got " + typeName(h));
  nb::object n = nb::steal(PyLong_Check(o) ? nb::handle(o).inc_ref().ptr()
                                           : PyNumber_Index(o));
  if (!n.is_valid()) {
    // __index__ refused (torch.tensor(1.5), a NumPy array of several
    // elements): our TypeError naming the parameter, the converter's
    // message after it.
    nb::python_error e;
    fail(PyExc_TypeError, q(i) + ": expected an integer (" + dt + "), got " +
                              typeName(h) + ": " + shownError(e));
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
  bool fits = overflow == 0;
  switch (p.scalar) {
  case ScalarKind::I32:
    fits = fits && x >= INT32_MIN && x <= INT32_MAX;
    v.i32 = static_cast<int32_t>(x);
    break;
  case ScalarKind::I64:
    v.i64 = x;
    break;
  default: // U64
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(n.ptr());
      fits = !(u == static_cast<unsigned long long>(-1) && PyErr_Occurred());
      PyErr_Clear();
      v.u64 = u;
    } else {
      fits = fits && x >= 0;
      v.u64 = static_cast<uint64_t>(x);
    }
  }
  if (!fits)
    fail(PyExc_ValueError, q(i) + " = " + intText(n) + " does not fit " + dt);
}

nb::object Program::call(nb::args args) {
  const size_t n = params_.size();
  if (args.size() != n) {
    std::string names;
    for (size_t i = 0; i < n; ++i)
      names += (i ? ", " : "") + params_[i].name;
    raise(PyExc_TypeError, std::string(desc_->name) + "() takes " +
                               std::to_string(n) +
                               (n == 1 ? " argument (" : " arguments (") +
                               names + "), got " + std::to_string(args.size()));
  }
  if (busy_)
    fail(PyExc_RuntimeError,
         "called while it runs (from another thread, or from "
         "its allocate function): a program runs one step at a time");
  busy_ = true;
  struct Reset {
    Program &p;
    ~Reset() {
      for (int i : p.tensors_) {
        p.arrays_[i] = nb::ndarray<>();
        p.outputs_[i] = nb::object();
      }
      p.busy_ = false;
    }
  } reset{*this};

  // Every argument taken and checked (all but the shapes); nothing runs
  // until all are.
  bool missingOutput = false;
  PyObject *like = nullptr;
  for (size_t i = 0; i < n; ++i) {
    const int ii = static_cast<int>(i);
    nb::handle h = args[i];
    const int kind = params_[i].p->kind;
    if (kind == CC_BLOCK_SCALAR) {
      scalar(ii, h);
      args_[i] = &scalars_[i];
      continue;
    }
    if (kind == CC_BLOCK_OUTPUT && h.is_none()) {
      missingOutput = true;
      continue;
    }
    if (kind == CC_BLOCK_TENSOR && !like)
      like = h.ptr();
    take(ii, h);
    check(ii);
  }

  // The sizes, at the first call: those not given read from the arrays.
  const int64_t *shape = shape_.data();
  const int64_t *offset = offset_.data();
  const std::vector<int64_t> *sizes = &sizes_;
  const std::vector<SizeSource> *from = &from_;
  if (!program_) {
    deduce(trySizes_, tryFrom_);
    place(trySizes_, tryShape_, tryOffset_);
    shape = tryShape_.data();
    offset = tryOffset_.data();
    sizes = &trySizes_;
    from = &tryFrom_;
  }
  for (int i : tensors_)
    if (arrays_[i].is_valid())
      checkShape(i, shape + params_[i].dimOffset, offset + params_[i].dimOffset,
                 *sizes, *from);

  // Outputs passed as None: allocated like the first tensor argument.
  if (missingOutput) {
    if (!allocate_.is_valid() || allocate_.is_none())
      allocate_ = nb::module_::import_("coconet.runtime").attr("allocate");
    for (int i : tensors_) {
      if (params_[i].p->kind != CC_BLOCK_OUTPUT || !args[i].is_none())
        continue;
      const Param &p = params_[i];
      nb::list dims;
      for (int k = 0; k < p.p->rank; ++k)
        dims.append(shape[p.dimOffset + static_cast<size_t>(k)]);
      nb::object made = allocate_(nb::tuple(dims), numpyName(p.p->dtype),
                                  nb::handle(like ? like : Py_None));
      take(i, made);
      check(i);
      checkShape(i, shape + p.dimOffset, offset + p.dimOffset, *sizes, *from);
      outputs_[i] = std::move(made);
    }
  }

  // No written array shares memory with another argument.
  for (size_t x = 0; x < tensors_.size(); ++x) {
    const int i = tensors_[x];
    const nb::ndarray<> &a = arrays_[i];
    const size_t an = a.nbytes();
    if (!an)
      continue;
    const auto a0 = reinterpret_cast<uintptr_t>(a.data());
    for (size_t y = x + 1; y < tensors_.size(); ++y) {
      const int j = tensors_[y];
      if (!params_[i].p->written && !params_[j].p->written)
        continue;
      const nb::ndarray<> &b = arrays_[j];
      const size_t bn = b.nbytes();
      const auto b0 = reinterpret_cast<uintptr_t>(b.data());
      if (!bn || a0 >= b0 + bn || b0 >= a0 + an)
        continue;
      const int w = params_[i].p->written ? i : j;
      fail(PyExc_ValueError, q(i) + " and " + q(j) + " share memory, and " +
                                 q(w) +
                                 (params_[w].p->kind == CC_BLOCK_OUTPUT
                                      ? " is written"
                                      : " is updated in place") +
                                 ": pass distinct arrays");
    }
  }

  if (!program_)
    placeAndCreate(trySizes_, tryFrom_);

  for (int i : tensors_)
    args_[i] = arrays_[i].data();
  char err[4096];
  err[0] = '\0';
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->step(program_, args_.data(), err, sizeof err);
  }
  if (rc)
    fail(rc == 2 ? PyExc_ValueError : PyExc_RuntimeError, err);

  size_t nout = 0;
  for (int i : tensors_)
    nout += params_[i].p->kind == CC_BLOCK_OUTPUT;
  nb::object result = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(nout)));
  if (!result.is_valid())
    throw nb::python_error();
  Py_ssize_t k = 0;
  for (int i : tensors_) {
    if (params_[i].p->kind != CC_BLOCK_OUTPUT)
      continue;
    nb::handle out = outputs_[i].is_valid() ? nb::handle(outputs_[i])
                                            : args[static_cast<size_t>(i)];
#if defined(Py_LIMITED_API)
    PyTuple_SetItem(result.ptr(), k++, out.inc_ref().ptr());
#else
    PyTuple_SET_ITEM(result.ptr(), k++, out.inc_ref().ptr());
#endif
  }
  return result;
}

void Program::synchronize() {
  if (!d_->synchronize) // the CPU target: a step has run when it returns
    return;
  char err[4096] = "";
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->synchronize(stream_, err, sizeof err);
  }
  if (rc)
    fail(PyExc_RuntimeError, err);
}

} // namespace coconet::py
