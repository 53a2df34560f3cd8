//===- status.cpp - status codes and their messages -----------------------===//
//
// The printed forms of Status, and the common wording of failed calls that
// the check macros of the MPI, CUDA, NCCL and cuBLAS parts share.
//
//===----------------------------------------------------------------------===//

#include "coconet/status.h"

#include "call_status.h"

#include <cstring>

namespace coconet::rt {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "ok";
  case StatusCode::InvalidArgument:
    return "invalid argument";
  case StatusCode::CudaError:
    return "CUDA error";
  case StatusCode::NcclError:
    return "NCCL error";
  case StatusCode::CublasError:
    return "cuBLAS error";
  case StatusCode::MpiError:
    return "MPI error";
  case StatusCode::IoError:
    return "I/O error";
  case StatusCode::Internal:
    return "internal error";
  }
  return "unknown error";
}

std::string Status::toString() const {
  if (ok())
    return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

namespace detail {

std::string shortCallName(const char *call) {
  std::string text(call ? call : "");
  // COCONET_CUDA_LAUNCH_CHECK(k<<<g, b>>>(x)) checks
  // "(static_cast<void>(k<<<g, b>>>(x)), cudaGetLastError())".
  static const char kLaunch[] = "(static_cast<void>(";
  if (text.compare(0, sizeof kLaunch - 1, kLaunch) == 0) {
    std::string kernel = text.substr(sizeof kLaunch - 1);
    // The launch may be parenthesised to protect its commas.
    kernel.erase(0, kernel.find_first_not_of("( "));
    const size_t end = kernel.find_first_of("<(");
    return kernel.substr(0, end) + "<<<...>>>(...)";
  }
  const size_t paren = text.find('(');
  if (paren == std::string::npos || paren == 0)
    return text;
  size_t end = paren;
  while (end > 0 && text[end - 1] == ' ')
    --end;
  return text.substr(0, end) + "(...)";
}

Status callFailed(StatusCode code, const char *call, const std::string &reason,
                  const char *file, int line) {
  const char *base = file ? std::strrchr(file, '/') : nullptr;
  base = base ? base + 1 : (file ? file : "?");
  return Status::error(code, shortCallName(call) + " failed: " + reason + " (" +
                                 base + ":" + std::to_string(line) + ")");
}

} // namespace detail

} // namespace coconet::rt
