//===- ffi_call.h - A created program's step for a foreign caller -*- C++
//-*-===//
//
// Private to coconet._core (runtime/python/). FfiCall: what a caller that
// holds raw buffers and no Python objects (XLA's FFI, jax_ffi.cpp) needs to
// run a created program's step: the step and the program, and per
// parameter its kind, element type and the number of elements of this
// rank's block, so that every buffer is checked before the step runs.
// Program::ffiCall (program_call.cpp) makes it once the program is
// created; the Program owns it, so it lives as long as the Program.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_PYTHON_FFI_CALL_H
#define COCONET_RUNTIME_PYTHON_FFI_CALL_H

#include "core_types.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace coconet::py {

struct FfiParam {
  std::string name; // Python's name
  int kind;         // CC_BLOCK_*
  int dtype;        // an index into kDTypes
  bool written;     // updated in place (a tensor) or written (an output)
  ScalarKind scalar;
  int64_t count;     // tensors: the elements of this rank's block
  std::string shape; // tensors: this rank's block shape, "(4, 8)"
};

struct FfiCall {
  std::string name; // the program's, for messages
  int (*step)(void *program, void *const *args, char *err,
              size_t cap) = nullptr;
  void *program = nullptr;
  std::vector<FfiParam> params;
  // Per call, reused: one call at a time (busy).
  std::vector<void *> args;
  std::vector<ScalarValue> scalars;
  std::atomic<bool> busy{false};
  // What the handler saw: the steps run, and the tensors it copied into a
  // result that was not its operand's buffer (XLA did not alias them).
  std::atomic<uint64_t> calls{0}, copies{0};
};

/// The FfiCalls alive: the handler runs only an address listed here, so
/// that a stale or foreign address is refused, never followed
/// (jax_ffi.cpp). Program::ffiCall adds its own; ~Program removes it.
void addFfiCall(const FfiCall *c);
void removeFfiCall(const FfiCall *c);
bool isLiveFfiCall(const FfiCall *c);

/// The address of XLA's FFI handler of a program's step (jax_ffi.cpp), for
/// jax.ffi.register_ffi_target; 0 where _core was built without JAX's
/// headers (COCONET_JAX_FFI undefined).
uintptr_t jaxFfiHandler();

} // namespace coconet::py

#endif // COCONET_RUNTIME_PYTHON_FFI_CALL_H
