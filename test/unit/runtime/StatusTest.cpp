//===- StatusTest.cpp - Status, its wording of failed calls, element types ===//

#include "coconet/status.h"
#include "coconet/types.h"

#include "../../../runtime/src/call_status.h"
#if defined(COCONET_HAVE_RT_CPU)
#include "../../../runtime/src/mpi_error.h"
#endif

#if defined(COCONET_HAVE_RT_CPU)
#include "coconet/cpu/runtime.h"
#endif

#include <catch2/catch.hpp>

#include <string>

using namespace coconet::rt;

namespace {

Status failsWhenNegative(int x) {
  if (x < 0)
    return Status::error(StatusCode::InvalidArgument, "x is negative");
  return Status::success();
}

Status twice(int x, int *calls) {
  ++*calls;
  COCONET_RETURN_IF_ERROR(failsWhenNegative(x));
  ++*calls;
  COCONET_RETURN_IF_ERROR(failsWhenNegative(x - 10));
  ++*calls;
  return Status::success();
}

} // namespace

TEST_CASE("a default Status is ok and prints as ok", "[runtime][status]") {
  Status s;
  CHECK(s.ok());
  CHECK(s.code() == StatusCode::Ok);
  CHECK(s.message().empty());
  CHECK(s.toString() == "ok");
  CHECK(Status::success().ok());
}

TEST_CASE("a failed Status prints its code's name and its message",
          "[runtime][status]") {
  Status s = Status::error(StatusCode::CudaError,
                           "cudaMemcpyAsync(...) failed: invalid argument "
                           "(x.cu:10)");
  CHECK_FALSE(s.ok());
  CHECK(s.code() == StatusCode::CudaError);
  CHECK(s.toString() ==
        "CUDA error: cudaMemcpyAsync(...) failed: invalid argument (x.cu:10)");
  CHECK(std::string(statusCodeName(StatusCode::Ok)) == "ok");
  CHECK(std::string(statusCodeName(StatusCode::InvalidArgument)) ==
        "invalid argument");
  CHECK(std::string(statusCodeName(StatusCode::NcclError)) == "NCCL error");
  CHECK(std::string(statusCodeName(StatusCode::CublasError)) == "cuBLAS error");
  CHECK(std::string(statusCodeName(StatusCode::MpiError)) == "MPI error");
  CHECK(std::string(statusCodeName(StatusCode::IoError)) == "I/O error");
  CHECK(std::string(statusCodeName(StatusCode::Internal)) == "internal error");
}

TEST_CASE("COCONET_RETURN_IF_ERROR returns the first failure",
          "[runtime][status]") {
  int calls = 0;
  CHECK(twice(20, &calls).ok());
  CHECK(calls == 3);
  calls = 0;
  Status s = twice(5, &calls);
  CHECK(s.code() == StatusCode::InvalidArgument);
  CHECK(s.message() == "x is negative");
  CHECK(calls == 2);
  calls = 0;
  CHECK_FALSE(twice(-1, &calls).ok());
  CHECK(calls == 1);
}

TEST_CASE("failed calls are named by their function, file and line",
          "[runtime][status]") {
  using detail::shortCallName;
  CHECK(shortCallName("ncclAllReduce(a, b, n, ncclFloat, ncclSum, c, s)") ==
        "ncclAllReduce(...)");
  CHECK(shortCallName("cudaGetLastError()") == "cudaGetLastError(...)");
  CHECK(shortCallName("plain") == "plain");
  CHECK(shortCallName("(x)") == "(x)");
  // What COCONET_CUDA_LAUNCH_CHECK(k<<<g, b>>>(x)) hands to the check.
  CHECK(shortCallName("(static_cast<void>(scale<float><<<g, b, 0, s>>>(x, "
                      "n)), cudaGetLastError())") == "scale<<<...>>>(...)");
  CHECK(shortCallName("(static_cast<void>((k<<<g, b>>>(x))), "
                      "cudaGetLastError())") == "k<<<...>>>(...)");
  Status s = detail::callFailed(StatusCode::NcclError, "ncclAllReduce(x, y)",
                                "unhandled cuda error",
                                "/build/out/adam_rs_c_ag.cu", 212);
  CHECK(s.toString() == "NCCL error: ncclAllReduce(...) failed: unhandled "
                        "cuda error (adam_rs_c_ag.cu:212)");
}

#if defined(COCONET_HAVE_RT_CPU)
namespace {
int failingMpiCall(int rc) { return rc; }
Status checked(int rc) {
  COCONET_MPI_CHECK(failingMpiCall(rc));
  return Status::success();
}
} // namespace

TEST_CASE("COCONET_MPI_CHECK names the call and MPI's reason",
          "[runtime][status]") {
  CHECK(checked(MPI_SUCCESS).ok());
  Status s = checked(MPI_ERR_COUNT);
  CHECK(s.code() == StatusCode::MpiError);
  INFO(s.message());
  CHECK(s.message().rfind("failingMpiCall(...) failed: ", 0) == 0);
  // Before MPI_Init MPI cannot word the code: it is given as a number.
  CHECK(s.message().find("failed: MPI error " +
                         std::to_string(MPI_ERR_COUNT)) != std::string::npos);
  CHECK(s.message().find("(StatusTest.cpp:") != std::string::npos);
}
#endif

TEST_CASE("element types: sizes, names, kinds", "[runtime][types]") {
  struct Row {
    DType dtype;
    size_t size;
    const char *name;
    bool isFloat;
  };
  const Row rows[] = {
      {DType::F16, 2, "f16", true},  {DType::BF16, 2, "bf16", true},
      {DType::F32, 4, "f32", true},  {DType::F64, 8, "f64", true},
      {DType::I32, 4, "i32", false}, {DType::I64, 8, "i64", false},
      {DType::U64, 8, "u64", false}, {DType::Bool, 1, "bool", false}};
  for (const Row &r : rows) {
    CHECK(dtypeSize(r.dtype) == r.size);
    CHECK(std::string(dtypeName(r.dtype)) == r.name);
    CHECK(isFloat(r.dtype) == r.isFloat);
  }
  CHECK(std::string(reduceOpName(ReduceOp::Sum)) == "sum");
  CHECK(std::string(reduceOpName(ReduceOp::Prod)) == "prod");
  CHECK(std::string(reduceOpName(ReduceOp::Max)) == "max");
  CHECK(std::string(reduceOpName(ReduceOp::Min)) == "min");
  CHECK(std::string(reduceOpName(ReduceOp::Avg)) == "avg");
}

TEST_CASE("the 16-bit storage types round to nearest even",
          "[runtime][types]") {
  CHECK(toHalf(1.0f).bits == 0x3c00);
  CHECK(toFloat(Half{0x3c00}) == 1.0f);
  CHECK(toHalf(65504.0f).bits == 0x7bff);
  CHECK(toHalf(65520.0f).bits == 0x7c00); // rounds up to infinity
  // 1 + 2^-11 is halfway between 1 and the next f16: ties to even (1).
  CHECK(toHalf(1.0 + 0x1p-11).bits == 0x3c00);
  CHECK(toHalf(1.0 + 0x1p-11 + 0x1p-40).bits == 0x3c01);
  CHECK(toBFloat16(1.0f).bits == 0x3f80);
  CHECK(toFloat(BFloat16{0x3f80}) == 1.0f);
  CHECK(toBFloat16(1.0 + 0x1p-8).bits == 0x3f80);     // tie: even
  CHECK(toBFloat16(1.0 + 3 * 0x1p-8).bits == 0x3f82); // tie: even, up
  // Double rounding would differ: rounding to float first gives the tie.
  const double justAbove = 1.0 + 0x1p-8 + 0x1p-30;
  CHECK(toBFloat16(justAbove).bits == 0x3f81);
  CHECK(toBFloat16(static_cast<float>(justAbove)).bits == 0x3f80);
}
