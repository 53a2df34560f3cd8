//===- status.h - what runtime and generated calls return ----*- C++ -*-===//
//
// Generated code and the runtime never throw and never abort: every call
// that can fail returns a Status. A failed status carries a code and a
// message that names the failing call and where it was made, e.g.
//   "ncclAllReduce(...) failed: unhandled cuda error (adam_rs_c_ag.cu:212)".
// Host-only; plain C++17.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_STATUS_H
#define COCONET_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace coconet::rt {

/// What went wrong.
enum class StatusCode {
  Ok = 0,
  InvalidArgument, ///< a size, pointer or option the caller gave
  CudaError,       ///< a CUDA runtime call failed
  NcclError,       ///< an NCCL call failed
  CublasError,     ///< a cuBLAS / cuBLASLt call failed
  MpiError,        ///< an MPI call failed
  IoError,         ///< reading or writing a file
  Internal,        ///< a broken invariant: a bug in coconetc or the runtime
};

/// The printed name of a code ("invalid argument", "CUDA error", ...).
const char *statusCodeName(StatusCode code);

// nvcc's front end warns on `status = call();` when Status is [[nodiscard]]
// (it looks at the assignment's result), so the attribute is left to host
// compilers.
#if defined(__CUDACC__)
#define COCONET_NODISCARD
#else
#define COCONET_NODISCARD [[nodiscard]]
#endif

/// Success, or an error with a message.
class COCONET_NODISCARD Status {
public:
  /// Success.
  Status() = default;
  static Status success() { return Status(); }
  static Status error(StatusCode code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return code_ == StatusCode::Ok; }
  StatusCode code() const { return code_; }
  /// Empty on success.
  const std::string &message() const { return message_; }
  /// "CUDA error: cudaMemcpyAsync(...) failed: invalid argument (x.cu:10)",
  /// or "ok".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

/// Returns from the enclosing function if `expr` (a Status) failed.
#define COCONET_RETURN_IF_ERROR(expr)                                          \
  do {                                                                         \
    ::coconet::rt::Status coconet_status_ = (expr);                            \
    if (!coconet_status_.ok())                                                 \
      return coconet_status_;                                                  \
  } while (0)

} // namespace coconet::rt

#endif // COCONET_RUNTIME_STATUS_H
