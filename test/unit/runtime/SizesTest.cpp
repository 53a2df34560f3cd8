//===- SizesTest.cpp - every limit of coconet/sizes.h, at both sides ------===//
//
// Each limit a program object's create() and the drivers check before
// computing from a user's sizes, just inside and just outside: a limit
// moved by one (a mesh of 2^31 ranks accepted: the suite did not see it)
// fails here. And the environment's numbers (coconet/environment.h): the
// team window's bounds, and the text that strtoull took for a number.
//
//===----------------------------------------------------------------------===//

#include "coconet/sizes.h"
#include "coconet/environment.h"

#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace coconet::rt;

namespace {

/// Sets (or, with nullptr, unsets) an environment variable for a scope.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(const char *n, const char *value) : name(n) {
    const char *o = std::getenv(n);
    had = o != nullptr;
    if (had)
      old = o;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

} // namespace

TEST_CASE("checkedProduct overflows exactly past 2^63 - 1", "[sizes]") {
  int64_t out = -1;
  CHECK(checkedProduct({}, &out));
  CHECK(out == 1);
  CHECK(checkedProduct({INT64_MAX, 1}, &out));
  CHECK(out == INT64_MAX);
  CHECK_FALSE(checkedProduct({INT64_MAX, 2}, &out));
  // 3037000499^2 = 9223372030926249001 fits; 3037000500^2 does not.
  CHECK(checkedProduct({3037000499, 3037000499}, &out));
  CHECK(out == 9223372030926249001);
  out = 7;
  CHECK_FALSE(checkedProduct({3037000500, 3037000500}, &out));
  CHECK(out == 7); // unchanged on overflow
  CHECK(checkedProduct({int64_t(1) << 31, int64_t(1) << 31}, &out));
  CHECK_FALSE(checkedProduct({int64_t(1) << 31, int64_t(1) << 32}, &out));
}

TEST_CASE("checkTensorSize: at most 2^63 - 1 bytes, for every element size",
          "[sizes]") {
  const struct {
    DType dtype;
    int64_t bytes;
  } types[] = {
      {DType::Bool, 1}, {DType::F16, 2}, {DType::F32, 4}, {DType::F64, 8}};
  for (const auto &t : types) {
    INFO("element size " << t.bytes);
    const int64_t most = INT64_MAX / t.bytes;
    CHECK(checkTensorSize("p", "x", "T[N]", t.dtype, {most}).ok());
    CHECK(checkTensorSize("p", "x", "T[N]", t.dtype, {most, 1}).ok());
    Status st = checkTensorSize("p", "x", "T[N]", t.dtype, {most + 1});
    if (t.bytes == 1) {
      // One past 2^63 - 1 elements is a count that overflows.
      CHECK(st.ok());
      continue;
    }
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == StatusCode::InvalidArgument);
    CHECK(st.message() == "p: 'x' (T[N]) has " + std::to_string(most + 1) +
                              " elements of " + std::to_string(t.bytes) +
                              " bytes, more than 2^63 - 1 bytes: choose "
                              "smaller sizes");
  }
  Status st = checkTensorSize("p", "x", "f32[N, N]", DType::F32,
                              {int64_t(1) << 32, int64_t(1) << 31});
  CHECK(st.message() == "p: 'x' (f32[N, N]) has 4294967296 x 2147483648 "
                        "elements, a count that overflows 64 bits: choose "
                        "smaller sizes");
  CHECK_FALSE(
      checkTensorSize("p", "x", "bool[N]", DType::Bool, {INT64_MAX, 2}).ok());
}

TEST_CASE("checkMeshSize: at most 2^31 - 1 ranks", "[sizes]") {
  CHECK(checkMeshSize("p", "P", {INT32_MAX}).ok());
  Status st = checkMeshSize("p", "P", {int64_t(INT32_MAX) + 1});
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::InvalidArgument);
  CHECK(st.message() == "p: the mesh has P = 2147483648 ranks, more than any "
                        "communicator has (2^31 - 1)");
  // 46340 x 46341 = 2147441940 fits; 46341 x 46341 = 2147488281 does not.
  CHECK(checkMeshSize("p", "D * T", {46340, 46341}).ok());
  CHECK(checkMeshSize("p", "D * T", {46341, 46341}).message() ==
        "p: the mesh has D * T = 46341 x 46341 ranks, more than any "
        "communicator has (2^31 - 1)");
  // A product that overflows 64 bits is refused, not wrapped.
  CHECK_FALSE(
      checkMeshSize("p", "D * T", {int64_t(1) << 32, int64_t(1) << 32}).ok());
  CHECK(checkMeshSize("p", "", {}).ok()); // no axes: one rank
}

TEST_CASE("addAligned rounds to 256 and refuses a total past size_t",
          "[sizes]") {
  size_t total = 0;
  CHECK(addAligned(&total, 0));
  CHECK(total == 0);
  CHECK(addAligned(&total, 1));
  CHECK(total == 256);
  CHECK(addAligned(&total, 256));
  CHECK(total == 512);
  CHECK(addAligned(&total, 257));
  CHECK(total == 1024);
  // The last 256 bytes below SIZE_MAX + 1 fit exactly; one more does not.
  total = SIZE_MAX - 511;
  CHECK(addAligned(&total, 256));
  CHECK(total == SIZE_MAX - 255);
  total = SIZE_MAX - 511;
  CHECK_FALSE(addAligned(&total, 257)); // 512 more: past SIZE_MAX
  CHECK(total == SIZE_MAX - 511);       // unchanged
  total = 0;
  CHECK_FALSE(addAligned(&total, SIZE_MAX)); // rounding up overflows
  CHECK_FALSE(addAligned(&total, SIZE_MAX - 254));
  CHECK(total == 0);
  CHECK(addAligned(&total, SIZE_MAX - 255)); // a multiple of 256 already
  CHECK(total == SIZE_MAX - 255);
}

TEST_CASE("the team window: COCONET_TEAM_ALGORITHM_BYTES from 64 to 2^40",
          "[sizes][environment]") {
  const size_t fallback = size_t(32) << 20;
  struct Case {
    const char *value;
    size_t bytes;
  };
  const Case cases[] = {
      {nullptr, fallback},
      {"", fallback},
      {"64", 64},
      {"63", fallback},
      {"1099511627776", size_t(1) << 40},
      {"1099511627777", fallback},
      {"-64", fallback}, // strtoull: 2^64 - 64
      {" 64", fallback}, // strtoull skips blanks
      {"+64", fallback}, // and takes a sign
      {"64k", fallback},
      {"0x40", fallback},
      {"18446744073709551616", fallback}, // 2^64: strtoull gave 2^64 - 1
      {"99999999999999999999999", fallback},
  };
  for (const Case &c : cases) {
    INFO("COCONET_TEAM_ALGORITHM_BYTES=" << (c.value ? c.value : "(unset)"));
    ScopedEnv env("COCONET_TEAM_ALGORITHM_BYTES", c.value);
    CHECK(teamAlgorithmWindowBytes() == c.bytes);
  }
}

TEST_CASE("whole numbers from the environment: digits only, in range",
          "[environment]") {
  uint64_t n = 0;
  std::string why;
  CHECK(parseWholeNumber("0", 0, 10, &n));
  CHECK(n == 0);
  CHECK(parseWholeNumber("18446744073709551615", 0, UINT64_MAX, &n));
  CHECK(n == UINT64_MAX);
  CHECK_FALSE(
      parseWholeNumber("18446744073709551616", 0, UINT64_MAX, &n, &why));
  CHECK(why == "more than 2^64 - 1; it must be a whole number from 0 to "
               "18446744073709551615");
  CHECK_FALSE(parseWholeNumber("11", 1, 10, &n, &why));
  CHECK(why == "outside the range 1 to 10");
  CHECK_FALSE(parseWholeNumber("0", 1, 10, &n, &why));
  CHECK(parseWholeNumber("10", 1, 10, &n));
  CHECK(parseWholeNumber("1", 1, 10, &n));
  CHECK_FALSE(parseWholeNumber("1.5", 1, 10, &n, &why));
  CHECK(why == "not a whole number from 1 to 10");
  CHECK_FALSE(parseWholeNumber("", 1, 10, &n, &why));
  CHECK_FALSE(parseWholeNumber(nullptr, 1, 10, &n, &why));

  // The reason names the variable and its value, made printable and cut.
  ScopedEnv env("COCONET_TEST_NUMBER", "\x1b[2J-1");
  CHECK(wholeNumberFromEnv("COCONET_TEST_NUMBER", 1, 10, 5, &why) == 5);
  CHECK(why == "COCONET_TEST_NUMBER='?[2J-1' is not a whole number from 1 to "
               "10; the default 5 is used");
  ScopedEnv unset("COCONET_TEST_NUMBER", nullptr);
  why.clear();
  CHECK(wholeNumberFromEnv("COCONET_TEST_NUMBER", 1, 10, 5, &why) == 5);
  CHECK(why.empty());
}
