//===- ffi_call.h - A created program's step for a foreign caller -*- C++
//-*-===//
//
// Private to coconet._core (runtime/python/). FfiCall: what a caller that
// holds raw buffers and no Python objects (XLA's FFI, jax_ffi.cpp) needs to
// run a created program's step: the step and the program, and per
// parameter its kind, element type and the number of elements of this
// rank's block, so that every buffer is checked before the step runs; a
// tensor may be passed as pieces (a pytree's leaves), which the handler
// copies into a staging block and back. Program::ffiCall (program_ffi.cpp)
// makes one per configuration once the program is created; the Program
// owns them, so they live as long as the Program.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_PYTHON_FFI_CALL_H
#define COCONET_RUNTIME_PYTHON_FFI_CALL_H

#include "core_types.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
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
  // Passed as pieces (a pytree's leaves): operands, and results where it is
  // written, one per piece, each at its offset (in elements) into the
  // block, which is staged in `staging` (made once, zero where no piece
  // lies). Empty: one buffer, the block.
  std::vector<int64_t> pieceOffset, pieceCount;
  bool delta = false; // pieces written: each result is new - old
  std::shared_ptr<void> staging;
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
