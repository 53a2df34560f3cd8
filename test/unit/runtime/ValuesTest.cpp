//===- ValuesTest.cpp - the values a user gives a parameter ---------------===//
//
// coconet/values.h: what --set accepts for each type and what a .npy file's
// elements may be converted to (only exactly), and driver::agree, which
// prints a failure once for every rank that met it.
//
//===----------------------------------------------------------------------===//

#include "coconet/values.h"
#include "coconet/driver.h"

#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

namespace rt = coconet::rt;
using rt::DType;

namespace {

/// The message of a refused --set, or "" when accepted (value in *v).
std::string setError(DType dtype, const std::string &text,
                     rt::ElementValue *v = nullptr) {
  rt::ElementValue ignored;
  rt::Status st = rt::parseSetValue("p", dtype, text, v ? v : &ignored);
  return st.ok() ? "" : st.message();
}

/// A one-dimensional .npy array of `type` holding `values` (as `T`).
template <typename T>
rt::NpyArray array(rt::NpyType type, std::initializer_list<T> values) {
  rt::NpyArray a;
  a.type = type;
  a.shape = {static_cast<int64_t>(values.size())};
  a.data.resize(values.size() * sizeof(T));
  std::memcpy(a.data.data(), values.begin(), a.data.size());
  return a;
}

/// npyElementValue's message for element i, "" when exact.
std::string npyError(const rt::NpyArray &a, int64_t i, DType dtype) {
  rt::ElementValue v;
  rt::Status st = rt::npyElementValue(a, i, dtype, &v);
  return st.ok() ? "" : st.message();
}

} // namespace

TEST_CASE("values given by --set must fit their type", "[runtime][values]") {
  rt::ElementValue v;
  CHECK(setError(DType::F32, "0.1", &v) == "");
  CHECK(v.f == static_cast<double>(0.1f)); // rounded once, to nearest
  CHECK(setError(DType::F16, "65504") == "");
  CHECK(setError(DType::F16, "65520") ==
        "--set p=65520: out of the range of f16 (largest finite value 65504)");
  CHECK(setError(DType::F16, "1e-8") == "--set p=1e-8: rounds to 0 in f16");
  CHECK(setError(DType::BF16, "1e39") == "--set p=1e39: out of the range of "
                                         "bf16 (largest finite value "
                                         "3.3895314e38)");
  CHECK(setError(DType::F64, "1e999") ==
        "--set p=1e999: out of the range of a double");
  CHECK(setError(DType::F64, "-0") == "");
  // Infinities and NaN only by name.
  CHECK(setError(DType::F16, "-inf", &v) == "");
  CHECK(std::isinf(v.f));
  CHECK(setError(DType::F32, "nan", &v) == "");
  CHECK(std::isnan(v.f));
  CHECK(setError(DType::I32, "-2147483648") == "");
  CHECK(setError(DType::I32, "2147483648") ==
        "--set p=2147483648: expected an integer from -2^31 to 2^31-1 for a "
        "parameter of type i32");
  CHECK(setError(DType::U64, "-1") ==
        "--set p=-1: expected an unsigned integer from 0 to 2^64-1 for a "
        "parameter of type u64");
  CHECK(setError(DType::Bool, "yes") ==
        "--set p=yes: expected true or false for a parameter of type bool");
}

TEST_CASE("a value for --set at every type's limits: the limit accepted, "
          "one past it refused",
          "[runtime][values]") {
  // (type, text, accepted). Floats: the largest value that rounds to the
  // largest finite one, and the overflow threshold itself (a tie, which
  // rounds to infinity); half the smallest subnormal (a tie, which rounds
  // to 0) and the next value above it (which rounds to the subnormal).
  struct Edge {
    DType dtype;
    const char *text;
    bool accepted;
  };
  const Edge edges[] = {
      {DType::I32, "2147483647", true},
      {DType::I32, "2147483648", false},
      {DType::I32, "-2147483648", true},
      {DType::I32, "-2147483649", false},
      {DType::I64, "9223372036854775807", true},
      {DType::I64, "9223372036854775808", false},
      {DType::I64, "-9223372036854775808", true},
      {DType::I64, "-9223372036854775809", false},
      {DType::U64, "18446744073709551615", true},
      {DType::U64, "18446744073709551616", false},
      {DType::U64, "0", true},
      {DType::U64, "-1", false},
      {DType::Bool, "true", true},
      {DType::Bool, "false", true},
      {DType::Bool, "2", false},
      {DType::F16, "65519.999999999993", true},
      {DType::F16, "65520", false},
      {DType::F16, "-65519.999999999993", true},
      {DType::F16, "-65520", false},
      {DType::F16, "2.9802322387695319e-08", true},
      {DType::F16, "2.9802322387695312e-08", false},
      {DType::BF16, "3.3961775292304597e+38", true},
      {DType::BF16, "3.3961775292304601e+38", false},
      {DType::BF16, "-3.3961775292304597e+38", true},
      {DType::BF16, "-3.3961775292304601e+38", false},
      {DType::BF16, "4.5917748078995616e-41", true},
      {DType::BF16, "4.5917748078995606e-41", false},
      {DType::F32, "3.4028235677973362e+38", true},
      {DType::F32, "3.4028235677973366e+38", false},
      {DType::F32, "-3.4028235677973362e+38", true},
      {DType::F32, "-3.4028235677973366e+38", false},
      {DType::F32, "7.0064923216240869e-46", true},
      {DType::F32, "7.0064923216240854e-46", false},
      {DType::F64, "1.7976931348623158e308", true},
      {DType::F64, "1.797693134862315808e308", false},
      {DType::F64, "-1.7976931348623158e308", true},
      {DType::F64, "-1.797693134862315808e308", false},
      {DType::F64, "4.9406564584124654e-324", true},
      {DType::F64, "2.4703282292062327e-324", false},
  };
  for (const Edge &e : edges) {
    INFO(rt::dtypeName(e.dtype) << " " << e.text);
    rt::ElementValue v;
    const std::string error = setError(e.dtype, e.text, &v);
    CHECK(error.empty() == e.accepted);
    if (!e.accepted)
      CHECK(error.rfind(std::string("--set p=") + e.text + ": ", 0) == 0);
  }
}

TEST_CASE(".npy elements at every type's limits: the limit converts, one "
          "past it does not",
          "[runtime][values]") {
  // (Integers convert to integer parameters only, floats to floats:
  // npyKindMatches.)
  auto i64 = array<int64_t>(rt::NpyType::I64,
                            {INT32_MAX, int64_t(INT32_MAX) + 1, INT32_MIN,
                             int64_t(INT32_MIN) - 1, 0, -1});
  struct Edge {
    int64_t element;
    DType dtype;
    bool converts;
  };
  const Edge intEdges[] = {
      {0, DType::I32, true},  {1, DType::I32, false}, {2, DType::I32, true},
      {3, DType::I32, false}, {4, DType::U64, true},  {5, DType::U64, false},
  };
  for (const Edge &e : intEdges) {
    INFO("i64 element " << e.element << " to " << rt::dtypeName(e.dtype));
    CHECK(npyError(i64, e.element, e.dtype).empty() == e.converts);
  }
  auto u64 = array<uint64_t>(rt::NpyType::U64,
                             {uint64_t(INT64_MAX), uint64_t(INT64_MAX) + 1});
  CHECK(npyError(u64, 0, DType::I64) == "");
  CHECK(npyError(u64, 1, DType::I64) != "");
  // Floats: the largest finite value of each type converts, the next
  // double above it (not a value of the type) does not.
  auto f64 = array<double>(
      rt::NpyType::F64,
      {65504, std::nextafter(65504.0, 1e9), 3.3895313892515355e38,
       std::nextafter(3.3895313892515355e38, 1e39), 3.4028234663852886e38,
       std::nextafter(3.4028234663852886e38, 1e39), 0x1p-24, 0x1p-25, 0x1p-133,
       0x1p-134, 0x1p-149, 0x1p-150});
  CHECK(npyError(f64, 0, DType::F16) == "");
  CHECK(npyError(f64, 1, DType::F16) != "");
  CHECK(npyError(f64, 2, DType::BF16) == "");
  CHECK(npyError(f64, 3, DType::BF16) != "");
  CHECK(npyError(f64, 4, DType::F32) == "");
  CHECK(npyError(f64, 5, DType::F32) != "");
  // The smallest subnormal of each converts, half of it does not.
  CHECK(npyError(f64, 6, DType::F16) == "");
  CHECK(npyError(f64, 7, DType::F16) != "");
  CHECK(npyError(f64, 8, DType::BF16) == "");
  CHECK(npyError(f64, 9, DType::BF16) != "");
  CHECK(npyError(f64, 10, DType::F32) == "");
  CHECK(npyError(f64, 11, DType::F32) != "");
}

TEST_CASE(".npy elements convert only when exact", "[runtime][values]") {
  auto f64 = array<double>(rt::NpyType::F64,
                           {0.5, 1e6, 0.1, NAN, -INFINITY, 65504, 1e-8});
  CHECK(npyError(f64, 0, DType::F16) == "");
  CHECK(npyError(f64, 1, DType::F16) ==
        "element 1 (1e+06) is out of the range of f16 (largest finite value "
        "65504); the file's values are converted only when exact");
  CHECK(npyError(f64, 1, DType::F32) == "");
  CHECK(
      npyError(f64, 2, DType::F32) ==
      "element 2 (0.1) is not exact in f32 (nearest 0.10000000149011612); the "
      "file's values are converted only when exact");
  CHECK(npyError(f64, 2, DType::F64) == "");
  CHECK(npyError(f64, 3, DType::BF16) == ""); // NaN stays NaN
  CHECK(npyError(f64, 4, DType::F16) == "");  // an infinity is exact
  CHECK(npyError(f64, 5, DType::F16) == "");
  CHECK(npyError(f64, 6, DType::F16) ==
        "element 6 (1e-08) is not exact in f16 (nearest 0); "
        "the file's values are converted only when exact");

  auto i64 = array<int64_t>(rt::NpyType::I64,
                            {2147483647, 2147483648LL, -1, INT64_MIN});
  CHECK(npyError(i64, 0, DType::I32) == "");
  CHECK(npyError(i64, 1, DType::I32) ==
        "element 1 (2147483648) does not fit in i32; the file's values are "
        "converted only when exact");
  CHECK(npyError(i64, 2, DType::U64) ==
        "element 2 (-1) does not fit in u64; the file's values are "
        "converted only when exact");
  CHECK(npyError(i64, 3, DType::I64) == "");
  auto u64 = array<uint64_t>(rt::NpyType::U64, {1, uint64_t(1) << 63});
  CHECK(npyError(u64, 0, DType::I64) == "");
  CHECK(npyError(u64, 1, DType::I64) ==
        "element 1 (9223372036854775808) does not fit in i64; the file's "
        "values are converted only when exact");
  CHECK(npyError(u64, 1, DType::U64) == "");

  CHECK(rt::npyKindMatches(rt::NpyType::F16, DType::F64));
  CHECK_FALSE(rt::npyKindMatches(rt::NpyType::I32, DType::F32));
  CHECK_FALSE(rt::npyKindMatches(rt::NpyType::F32, DType::I32));
  CHECK_FALSE(rt::npyKindMatches(rt::NpyType::I32, DType::Bool));
  CHECK(rt::npyKindMatches(rt::NpyType::Bool, DType::Bool));
}

namespace {

/// Rank 0 of `messages.size()` ranks, the others' statuses given.
class FakeRanks final : public rt::driver::Transport {
public:
  explicit FakeRanks(std::vector<std::string> others) : others(others) {}
  int rank() const override { return 0; }
  int size() const override { return static_cast<int>(others.size()) + 1; }
  rt::Status gather(const void *data, size_t bytes,
                    std::vector<uint8_t> *all) override {
    const auto *p = static_cast<const uint8_t *>(data);
    all->assign(p, p + bytes);
    // The first gather is the messages, the second their lengths.
    for (const std::string &m : others) {
      if (calls % 2 == 0) {
        all->insert(all->end(), m.begin(), m.end());
      } else {
        const uint64_t n = m.size();
        const auto *q = reinterpret_cast<const uint8_t *>(&n);
        all->insert(all->end(), q, q + sizeof n);
      }
    }
    ++calls;
    return rt::Status::success();
  }
  int maxOf(int value) override {
    for (const std::string &m : others)
      if (!m.empty())
        value = std::max(value, 1);
    return value;
  }
  void barrier() override {}
  void maxOf(double *, size_t) override {}

private:
  std::vector<std::string> others;
  int calls = 0;
};

/// What agree() prints to stderr, and its result in *code.
std::string agreeOutput(rt::driver::Transport &t, const rt::Status &mine,
                        int code, int *result) {
  std::fflush(stderr);
  char path[] = "/tmp/coconet-agree-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved = dup(2);
  dup2(fd, 2);
  *result = rt::driver::agree(t, mine, code, "prog");
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  char buffer[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  return text;
}

} // namespace

TEST_CASE("agree prints each failure once, for every rank",
          "[runtime][driver]") {
  const rt::Status bad =
      rt::Status::error(rt::StatusCode::InvalidArgument, "--size Q: no");
  const std::string text = "--size Q: no";
  int code = -1;
  {
    // Every rank failed the same way: one line, without ranks.
    FakeRanks t({text, text, text});
    CHECK(agreeOutput(t, bad, 2, &code) == "prog: --size Q: no\n");
    CHECK(code == 2);
  }
  {
    // Only some ranks: say which; a runtime failure keeps its code's name.
    FakeRanks t({"", "invalid argument: x", ""});
    CHECK(agreeOutput(t, rt::Status::success(), 1, &code) ==
          "prog: invalid argument: x (rank 2)\n");
    CHECK(code == 1);
  }
  {
    // Two distinct messages, in rank order, each once.
    FakeRanks t({"b", text, "b"});
    CHECK(agreeOutput(t, bad, 2, &code) ==
          "prog: --size Q: no (ranks 0, 2)\nprog: b (ranks 1, 3)\n");
  }
  {
    FakeRanks t({"", ""});
    CHECK(agreeOutput(t, rt::Status::success(), 2, &code) == "");
    CHECK(code == 0);
  }
}
