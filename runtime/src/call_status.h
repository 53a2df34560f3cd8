//===- call_status.h - the Status of a failed library call ------*- C++ -*-===//
//
// Private to the runtime: how every check macro (MPI, CUDA, NCCL, cuBLAS)
// words the failure of a call, e.g.
//   "ncclAllReduce(...) failed: unhandled cuda error (adam_rs_c_ag.cu:212)".
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_CALL_STATUS_H
#define COCONET_RUNTIME_SRC_CALL_STATUS_H

#include "coconet/status.h"

#include <string>

namespace coconet::rt::detail {

/// The call's text shortened to its function: "f(a, b)" -> "f(...)", and a
/// kernel launch checked by COCONET_CUDA_LAUNCH_CHECK -> "k<<<...>>>(...)".
std::string shortCallName(const char *call);

/// `code` with "<call> failed: <reason> (<file's base name>:<line>)".
Status callFailed(StatusCode code, const char *call, const std::string &reason,
                  const char *file, int line);

} // namespace coconet::rt::detail

#endif // COCONET_RUNTIME_SRC_CALL_STATUS_H
