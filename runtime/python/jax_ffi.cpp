//===- jax_ffi.cpp - A program's step as an XLA FFI handler ---------------===//
//
// coconet.jax calls a created program's step from inside jax.jit through
// XLA's FFI (jax.ffi.ffi_call, the CPU platform): one handler for every
// program, told which by the attribute `call`, the address of the
// program's FfiCall (ffi_call.h). The call's operands are the program's
// parameters that are not outputs, in order (a scalar as a 0-d array);
// its results are the parameters it writes, in order: each tensor updated
// in place aliased to its operand (input_output_aliases, so that with
// donated buffers it is updated where it lies, zero-copy), then the
// outputs. Every buffer is checked against the program's description
// (element type, this rank's block's number of elements) before the step
// runs; a refused call is an FFI error naming the parameter, which JAX
// raises, and changes nothing. The address is looked up among the live
// programs' (addFfiCall) before it is followed: a stale one is refused.
//
// Built only where JAX's FFI headers were found (COCONET_JAX_FFI, from
// jaxlib's include directory: runtime/python/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "ffi_call.h"

#include "coconet/description.h"

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

namespace {
std::mutex liveMutex;
std::unordered_set<const coconet::py::FfiCall *> &live() {
  static auto *calls = new std::unordered_set<const coconet::py::FfiCall *>;
  return *calls;
}
} // namespace

void coconet::py::addFfiCall(const FfiCall *c) {
  std::lock_guard<std::mutex> lock(liveMutex);
  live().insert(c);
}

void coconet::py::removeFfiCall(const FfiCall *c) {
  std::lock_guard<std::mutex> lock(liveMutex);
  live().erase(c);
}

bool coconet::py::isLiveFfiCall(const FfiCall *c) {
  std::lock_guard<std::mutex> lock(liveMutex);
  return live().count(c) != 0;
}

#if defined(COCONET_JAX_FFI)
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace coconet::py {
namespace {

// Our element type (an index into kDTypes) of an XLA one; -1 for any other.
int dtypeOf(ffi::DataType t) {
  switch (t) {
  case ffi::DataType::F16:
    return 0;
  case ffi::DataType::BF16:
    return 1;
  case ffi::DataType::F32:
    return 2;
  case ffi::DataType::F64:
    return 3;
  case ffi::DataType::S32:
    return 4;
  case ffi::DataType::S64:
    return 5;
  case ffi::DataType::U64:
    return 6;
  case ffi::DataType::PRED:
    return 7;
  default:
    return -1;
  }
}

std::string typeText(const ffi::AnyBuffer &b) {
  const int t = dtypeOf(b.element_type());
  std::string s =
      t >= 0 ? kDTypes[t].name
             : "XLA type " + std::to_string(static_cast<int>(b.element_type()));
  s += "[";
  bool first = true;
  for (int64_t d : b.dimensions()) {
    s += (first ? "" : ", ") + std::to_string(d);
    first = false;
  }
  return s + "]";
}

// Reads a 0-d (or one-element) buffer of the parameter's own type.
void readScalar(const FfiParam &p, const void *data, ScalarValue &v) {
  switch (p.scalar) {
  case ScalarKind::Float:
    std::memcpy(&v.f, data, sizeof v.f);
    return;
  case ScalarKind::Double:
    std::memcpy(&v.d, data, sizeof v.d);
    return;
  case ScalarKind::I32:
    std::memcpy(&v.i32, data, sizeof v.i32);
    return;
  case ScalarKind::I64:
    std::memcpy(&v.i64, data, sizeof v.i64);
    return;
  case ScalarKind::U64:
    std::memcpy(&v.u64, data, sizeof v.u64);
    return;
  case ScalarKind::Bool:
    v.b = *static_cast<const unsigned char *>(data) != 0;
    return;
  }
}

// out[j] = a[j] - b[j]: a pieced result's new - old.
template <typename T>
void subtract(void *out, const void *a, const void *b, int64_t n) {
  T *o = static_cast<T *>(out);
  const T *x = static_cast<const T *>(a);
  const T *y = static_cast<const T *>(b);
  for (int64_t j = 0; j < n; ++j)
    o[j] = x[j] - y[j];
}

ffi::Error runStep(FfiCall &c, const ffi::RemainingArgs &args,
                   const ffi::RemainingRets &rets) {
  const std::string who = "coconet: " + c.name + ": ";
  size_t numArgs = 0, numRets = 0;
  for (const FfiParam &p : c.params) {
    const size_t n = p.pieceCount.empty() ? 1 : p.pieceCount.size();
    numArgs += p.kind != CC_BLOCK_OUTPUT ? n : 0;
    numRets += p.kind != CC_BLOCK_SCALAR && p.written ? n : 0;
  }
  if (args.size() != numArgs || rets.size() != numRets)
    return ffi::Error::InvalidArgument(
        who + "the call has " + std::to_string(args.size()) + " operands and " +
        std::to_string(rets.size()) + " results; the program takes " +
        std::to_string(numArgs) + " and writes " + std::to_string(numRets));
  // Every buffer checked (and pieces staged) before the step runs.
  size_t a = 0, r = 0;
  for (size_t i = 0; i < c.params.size(); ++i) {
    const FfiParam &p = c.params[i];
    const std::string q = "'" + p.name + "'";
    const size_t bytes = static_cast<size_t>(kDTypes[p.dtype].bytes);
    if (p.kind == CC_BLOCK_OUTPUT) {
      auto out = rets.get<ffi::AnyBuffer>(r++);
      if (out.has_error())
        return out.error();
      const ffi::AnyBuffer &o = **out;
      if (dtypeOf(o.element_type()) != p.dtype ||
          static_cast<int64_t>(o.element_count()) != p.count)
        return ffi::Error::InvalidArgument(
            who + "result " + q + ": expected " + kDTypes[p.dtype].name +
            " of shape " + p.shape + ", got " + typeText(o));
      c.args[i] = o.untyped_data();
      continue;
    }
    if (!p.pieceCount.empty()) {
      // Each piece checked and copied to its place in the staging block.
      char *block = static_cast<char *>(p.staging.get());
      for (size_t j = 0; j < p.pieceCount.size(); ++j) {
        auto in = args.get<ffi::AnyBuffer>(a + j);
        if (in.has_error())
          return in.error();
        const ffi::AnyBuffer &b = *in;
        if (dtypeOf(b.element_type()) != p.dtype ||
            static_cast<int64_t>(b.element_count()) != p.pieceCount[j])
          return ffi::Error::InvalidArgument(
              who + q + ", piece " + std::to_string(j) + ": expected " +
              kDTypes[p.dtype].name + " of " + std::to_string(p.pieceCount[j]) +
              " elements, got " + typeText(b));
        if (p.pieceCount[j] > 0)
          std::memcpy(block + static_cast<size_t>(p.pieceOffset[j]) * bytes,
                      b.untyped_data(),
                      static_cast<size_t>(p.pieceCount[j]) * bytes);
      }
      a += p.pieceCount.size();
      if (p.written)
        r += p.pieceCount.size();
      c.args[i] = block;
      continue;
    }
    auto in = args.get<ffi::AnyBuffer>(a++);
    if (in.has_error())
      return in.error();
    const ffi::AnyBuffer &b = *in;
    const bool typeOk = dtypeOf(b.element_type()) == p.dtype;
    if (p.kind == CC_BLOCK_SCALAR) {
      if (!typeOk || b.element_count() != 1)
        return ffi::Error::InvalidArgument(
            who + q + ": expected a " + kDTypes[p.dtype].name +
            " scalar (a 0-d array), got " + typeText(b));
      readScalar(p, b.untyped_data(), c.scalars[i]);
      c.args[i] = &c.scalars[i];
      continue;
    }
    if (!typeOk || static_cast<int64_t>(b.element_count()) != p.count)
      return ffi::Error::InvalidArgument(
          who + q + ": expected " + kDTypes[p.dtype].name + " of shape " +
          p.shape + " (this rank's block), got " + typeText(b));
    void *data = b.untyped_data();
    if (p.written) {
      auto out = rets.get<ffi::AnyBuffer>(r++);
      if (out.has_error())
        return out.error();
      void *into = (*out)->untyped_data();
      // Aliased, the result is the operand's buffer; where XLA did not
      // alias them, the step updates the result, from the operand's values.
      if (into != data && p.count > 0) {
        std::memcpy(into, data, static_cast<size_t>(p.count) * bytes);
        ++c.copies;
      }
      data = into;
    }
    c.args[i] = data;
  }
  // The pieced results' shapes, before the step (a refused call runs
  // nothing).
  r = 0;
  for (const FfiParam &p : c.params) {
    if (p.kind == CC_BLOCK_SCALAR || !p.written)
      continue;
    if (p.pieceCount.empty()) {
      ++r;
      continue;
    }
    for (size_t j = 0; j < p.pieceCount.size(); ++j) {
      auto out = rets.get<ffi::AnyBuffer>(r + j);
      if (out.has_error())
        return out.error();
      if (dtypeOf((*out)->element_type()) != p.dtype ||
          static_cast<int64_t>((*out)->element_count()) != p.pieceCount[j])
        return ffi::Error::InvalidArgument(
            who + "result '" + p.name + "', piece " + std::to_string(j) +
            ": expected " + kDTypes[p.dtype].name + " of " +
            std::to_string(p.pieceCount[j]) + " elements, got " +
            typeText(**out));
    }
    r += p.pieceCount.size();
  }

  ++c.calls;
  char err[4096];
  err[0] = '\0';
  if (int rc = c.step(c.program, c.args.data(), err, sizeof err)) {
    std::string m = err[0] ? std::string(err) : who + "the step failed";
    // 2: the values were refused before anything ran (a requirement).
    return rc == 2 ? ffi::Error::InvalidArgument(m) : ffi::Error::Internal(m);
  }

  // Pieced results: the staged block's new values, or new - old.
  a = 0;
  r = 0;
  for (const FfiParam &p : c.params) {
    const size_t n = p.pieceCount.empty() ? 1 : p.pieceCount.size();
    const size_t operands = p.kind != CC_BLOCK_OUTPUT ? n : 0;
    const size_t results = p.kind != CC_BLOCK_SCALAR && p.written ? n : 0;
    if (!p.pieceCount.empty() && p.written) {
      const size_t bytes = static_cast<size_t>(kDTypes[p.dtype].bytes);
      const char *block = static_cast<const char *>(p.staging.get());
      for (size_t j = 0; j < n; ++j) {
        void *out = (*rets.get<ffi::AnyBuffer>(r + j))->untyped_data();
        const char *now = block + static_cast<size_t>(p.pieceOffset[j]) * bytes;
        const int64_t k = p.pieceCount[j];
        if (!p.delta) {
          std::memcpy(out, now, static_cast<size_t>(k) * bytes);
          continue;
        }
        const void *old = args.get<ffi::AnyBuffer>(a + j)->untyped_data();
        if (kDTypes[p.dtype].bytes == 8)
          subtract<double>(out, now, old, k);
        else if (kDTypes[p.dtype].bytes == 4)
          subtract<float>(out, now, old, k);
        else
          return ffi::Error::Internal(who + "a delta of a 16-bit tensor");
      }
    }
    a += operands;
    r += results;
  }
  return ffi::Error::Success();
}

ffi::Error stepHandler(ffi::RemainingArgs args, ffi::RemainingRets rets,
                       int64_t call) {
  auto *c = reinterpret_cast<FfiCall *>(static_cast<uintptr_t>(call));
  if (!isLiveFfiCall(c))
    return ffi::Error::InvalidArgument(
        "coconet: the FFI call's attribute 'call' is not a live program's "
        "(coconet.jax makes it: call the step through coconet.jax)");
  bool idle = false;
  if (!c->busy.compare_exchange_strong(idle, true))
    return ffi::Error::Internal("coconet: " + c->name +
                                ": called while it runs: a program runs one "
                                "step at a time");
  ffi::Error e = runStep(*c, args, rets);
  c->busy = false;
  return e;
}

} // namespace
} // namespace coconet::py

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    coconet_jax_step, coconet::py::stepHandler,
    xla::ffi::Ffi::Bind().RemainingArgs().RemainingRets().Attr<int64_t>(
        "call"));

uintptr_t coconet::py::jaxFfiHandler() {
  return reinterpret_cast<uintptr_t>(&coconet_jax_step);
}

#else

uintptr_t coconet::py::jaxFfiHandler() { return 0; }

#endif
