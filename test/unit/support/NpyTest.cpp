//===- NpyTest.cpp - reading and writing .npy files -----------------------===//
//
// Byte-exact agreement with np.save (the expected bytes were produced by
// NumPy 1.26.4), round trips of every element type, tolerant header
// parsing, every error path, mutated and truncated inputs, and file I/O.
//
//===----------------------------------------------------------------------===//

#include "support/Npy.h"

#include "support/Half.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

using namespace coconet::support;

namespace {

/// The 10-byte prefix of a version 1.0 file with the given header length.
std::string prefixV1(uint16_t headerLength) {
  std::string s("\x93NUMPY\x01\x00", 8);
  s += char(headerLength & 0xff);
  s += char(headerLength >> 8);
  return s;
}

/// A version 1.0 file around a header dict (padded to 64 like NumPy does
/// unless `pad` is false) and data bytes.
std::string npyFile(const std::string &dict, const std::string &data,
                    bool pad = true) {
  std::string header = dict;
  if (pad)
    while ((10 + header.size() + 1) % 64 != 0)
      header += ' ';
  header += '\n';
  return prefixV1(uint16_t(header.size())) + header + data;
}

template <typename T> std::string leBytes(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) {
    char buf[sizeof(T)];
    llvm::support::endian::write<T, llvm::endianness::little>(buf, v);
    s.append(buf, sizeof(T));
  }
  return s;
}

NpyArray makeArray(NpyType type, std::vector<int64_t> shape,
                   const std::string &data) {
  NpyArray a;
  a.type = type;
  a.shape = std::move(shape);
  a.data.assign(data.begin(), data.end());
  return a;
}

/// The message of a failed parse ("" if it succeeded).
std::string errorOf(llvm::Expected<NpyArray> result) {
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

/// The message of an error ("" for success).
std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

/// Whether a parse succeeded; if not, its message is reported and the
/// error consumed.
bool ok(llvm::Expected<NpyArray> &result) {
  if (result)
    return true;
  UNSCOPED_INFO(llvm::toString(result.takeError()));
  return false;
}

const std::string kF4Dict =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";

} // namespace

TEST_CASE("npy: descr strings and element sizes", "[support][npy]") {
  CHECK(npyDescr(NpyType::F16) == "<f2");
  CHECK(npyDescr(NpyType::F32) == "<f4");
  CHECK(npyDescr(NpyType::F64) == "<f8");
  CHECK(npyDescr(NpyType::I32) == "<i4");
  CHECK(npyDescr(NpyType::I64) == "<i8");
  CHECK(npyDescr(NpyType::U64) == "<u8");
  CHECK(npyDescr(NpyType::Bool) == "|b1");
  CHECK(npyElementSize(NpyType::F16) == 2);
  CHECK(npyElementSize(NpyType::F32) == 4);
  CHECK(npyElementSize(NpyType::F64) == 8);
  CHECK(npyElementSize(NpyType::I32) == 4);
  CHECK(npyElementSize(NpyType::I64) == 8);
  CHECK(npyElementSize(NpyType::U64) == 8);
  CHECK(npyElementSize(NpyType::Bool) == 1);
}

TEST_CASE("npy: serialization is byte-exact with np.save", "[support][npy]") {
  SECTION("np.array([1, 2, 3], dtype='<f4')") {
    // 10 + 57 + 60 spaces + '\n' = 128 bytes of header.
    const std::string expected = prefixV1(118) + kF4Dict +
                                 std::string(60, ' ') + "\n" +
                                 leBytes<float>({1.0f, 2.0f, 3.0f});
    REQUIRE(expected.size() == 140);
    REQUIRE(expected.substr(0, 10) ==
            std::string("\x93NUMPY\x01\x00v\x00", 10));
    const std::string bytes = serializeNpy(
        makeArray(NpyType::F32, {3}, leBytes<float>({1.0f, 2.0f, 3.0f})));
    CHECK(bytes == expected);
  }
  SECTION("np.array(2.5): a scalar has shape ()") {
    const std::string expected =
        prefixV1(118) +
        "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" +
        std::string(62, ' ') + "\n" + leBytes<double>({2.5});
    CHECK(serializeNpy(makeArray(NpyType::F64, {}, leBytes<double>({2.5}))) ==
          expected);
  }
  SECTION("np.zeros((1,) * 20, '<f2'): room for growth decides the length") {
    // NumPy leaves 21 - len("1") = 20 spaces after the dict; with them the
    // header needs 192 bytes rather than 128.
    std::string dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (";
    for (int i = 0; i < 20; ++i)
      dict += i ? ", 1" : "1";
    dict += "), }";
    REQUIRE(dict.size() == 113);
    const std::string expected = prefixV1(0xb6) + dict + std::string(68, ' ') +
                                 "\n" + leBytes<uint16_t>({0});
    NpyArray a = makeArray(NpyType::F16, std::vector<int64_t>(20, 1),
                           leBytes<uint16_t>({0}));
    CHECK(serializeNpy(a) == expected);
  }
  SECTION("an already aligned header still gets 64 bytes of padding") {
    // 10 + 97 + 20 + 1 = 128 is a multiple of 64, yet NumPy pads with 64
    // more spaces (its padding is 1 to 64 bytes, never 0).
    const std::string dict = "{'descr': '|b1', 'fortran_order': False, "
                             "'shape': (0, 1, 1, 1, 10, 10, 10, 10, 10, 10, "
                             "10, 10), }";
    REQUIRE(dict.size() == 97);
    std::vector<int64_t> shape = {0, 1, 1, 1};
    shape.resize(12, 10);
    CHECK(serializeNpy(makeArray(NpyType::Bool, shape, "")) ==
          prefixV1(0xb6) + dict + std::string(84, ' ') + "\n");
  }
  SECTION("other shapes and types") {
    CHECK(serializeNpy(makeArray(NpyType::I64, {0, 4}, "")) ==
          prefixV1(118) +
              "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 4), }" +
              std::string(58, ' ') + "\n");
    CHECK(
        serializeNpy(makeArray(NpyType::Bool, {3}, std::string("\1\0\1", 3))) ==
        prefixV1(118) +
            "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }" +
            std::string(60, ' ') + "\n" + std::string("\1\0\1", 3));
  }
}

TEST_CASE("npy: headers are padded to 64 bytes and end in a newline",
          "[support][npy]") {
  for (size_t ndim = 0; ndim <= 8; ++ndim) {
    for (int64_t extent :
         {int64_t(0), int64_t(1), int64_t(12345), int64_t(1) << 40}) {
      std::vector<int64_t> shape(ndim, 1);
      if (ndim > 0)
        shape[0] = extent;
      NpyArray a;
      a.type = NpyType::Bool;
      a.shape = shape;
      if (a.numElements() > 1000000)
        continue; // keep the data small
      a.data.assign(size_t(a.numElements()), 1);
      const std::string bytes = serializeNpy(a);
      const size_t headerEnd = bytes.size() - a.data.size();
      INFO("ndim " << ndim << ", extent " << extent);
      CHECK(headerEnd % 64 == 0);
      CHECK(bytes[headerEnd - 1] == '\n');
      CHECK(size_t(uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8) ==
            headerEnd - 10);
      auto back = parseNpy(bytes);
      REQUIRE(ok(back));
      CHECK(back->shape == shape);
    }
  }
}

TEST_CASE("npy: every element type round-trips", "[support][npy]") {
  SECTION("f16") {
    std::string data =
        leBytes<uint16_t>({floatToHalfBits(1.0f), floatToHalfBits(-2.5f),
                           0x7bff, 0x7c00, 0x0001, 0x8000});
    auto a = parseNpy(serializeNpy(makeArray(NpyType::F16, {2, 3}, data)));
    REQUIRE(ok(a));
    CHECK(a->type == NpyType::F16);
    CHECK(a->shape == std::vector<int64_t>{2, 3});
    CHECK(a->numElements() == 6);
    CHECK(a->data == std::vector<uint8_t>(data.begin(), data.end()));
    CHECK(a->getAsDouble(0) == 1.0);
    CHECK(a->getAsDouble(1) == -2.5);
    CHECK(a->getAsDouble(2) == 65504.0);
    CHECK(std::isinf(a->getAsDouble(3)));
    CHECK(a->getAsDouble(4) == 0x1p-24);
    CHECK(std::signbit(a->getAsDouble(5)));
  }
  SECTION("f32") {
    auto a = parseNpy(serializeNpy(
        makeArray(NpyType::F32, {2}, leBytes<float>({0.1f, -1e30f}))));
    REQUIRE(ok(a));
    CHECK(a->type == NpyType::F32);
    CHECK(a->getAsDouble(0) == static_cast<double>(0.1f));
    CHECK(a->getAsDouble(1) == static_cast<double>(-1e30f));
  }
  SECTION("f64") {
    auto a = parseNpy(serializeNpy(makeArray(
        NpyType::F64, {1, 1, 2}, leBytes<double>({0.1, -0x1p-1074}))));
    REQUIRE(ok(a));
    CHECK(a->type == NpyType::F64);
    CHECK(a->shape == std::vector<int64_t>{1, 1, 2});
    CHECK(a->getAsDouble(0) == 0.1);
    CHECK(a->getAsDouble(1) == -0x1p-1074);
  }
  SECTION("i32") {
    auto a = parseNpy(serializeNpy(
        makeArray(NpyType::I32, {3},
                  leBytes<int32_t>({-7, 2147483647, -2147483647 - 1}))));
    REQUIRE(ok(a));
    CHECK(a->type == NpyType::I32);
    CHECK(a->getAsInt(0) == -7);
    CHECK(a->getAsInt(1) == 2147483647);
    CHECK(a->getAsInt(2) == -2147483648LL);
    CHECK(a->getAsDouble(0) == -7.0);
  }
  SECTION("i64") {
    auto a = parseNpy(serializeNpy(makeArray(
        NpyType::I64, {2}, leBytes<int64_t>({-(int64_t(1) << 62) - 3, 9}))));
    REQUIRE(ok(a));
    CHECK(a->type == NpyType::I64);
    CHECK(a->getAsInt(0) == -(int64_t(1) << 62) - 3);
    CHECK(a->getAsInt(1) == 9);
    CHECK(a->getAsDouble(1) == 9.0);
  }
  SECTION("u64") {
    auto a = parseNpy(serializeNpy(
        makeArray(NpyType::U64, {2}, leBytes<uint64_t>({~uint64_t(0), 12}))));
    REQUIRE(ok(a));
    CHECK(a->type == NpyType::U64);
    CHECK(a->getAsInt(0) == -1); // the same 64 bits
    CHECK(static_cast<uint64_t>(a->getAsInt(0)) == ~uint64_t(0));
    CHECK(a->getAsDouble(0) == 0x1p64);
    CHECK(a->getAsInt(1) == 12);
  }
  SECTION("bool") {
    auto a = parseNpy(serializeNpy(
        makeArray(NpyType::Bool, {4}, std::string("\1\0\0\1", 4))));
    REQUIRE(ok(a));
    CHECK(a->type == NpyType::Bool);
    CHECK(a->getAsInt(0) == 1);
    CHECK(a->getAsInt(1) == 0);
    CHECK(a->getAsDouble(3) == 1.0);
  }
  SECTION("a scalar and an empty array") {
    auto s = parseNpy(
        serializeNpy(makeArray(NpyType::I32, {}, leBytes<int32_t>({5}))));
    REQUIRE(ok(s));
    CHECK(s->shape.empty());
    CHECK(s->numElements() == 1);
    CHECK(s->getAsInt(0) == 5);
    auto e = parseNpy(serializeNpy(makeArray(NpyType::F64, {3, 0}, "")));
    REQUIRE(ok(e));
    CHECK(e->shape == std::vector<int64_t>{3, 0});
    CHECK(e->numElements() == 0);
  }
}

TEST_CASE("npy: getAsInt of a float array truncates and saturates",
          "[support][npy]") {
  auto a =
      makeArray(NpyType::F64, {4}, leBytes<double>({-2.75, 1e300, NAN, 3.5}));
  CHECK(a.getAsInt(0) == -2);
  CHECK(a.getAsInt(1) == INT64_MAX);
  CHECK(a.getAsInt(2) == 0);
  CHECK(a.getAsInt(3) == 3);
}

TEST_CASE("npy: files written by NumPy are read", "[support][npy]") {
  SECTION("version 1.0 f4") {
    auto a = parseNpy(prefixV1(118) + kF4Dict + std::string(60, ' ') + "\n" +
                      leBytes<float>({1.0f, 2.0f, 3.0f}));
    REQUIRE(ok(a));
    CHECK(a->shape == std::vector<int64_t>{3});
    CHECK(a->getAsDouble(2) == 3.0);
  }
  SECTION("versions 2.0 and 3.0 have a 4-byte header length") {
    for (char major : {'\x02', '\x03'}) {
      std::string bytes = std::string("\x93NUMPY", 6) + major + '\0' +
                          std::string("t\0\0\0", 4) +
                          "{'descr': '<i4', 'fortran_order': False, "
                          "'shape': (2,), }" +
                          std::string(58, ' ') + "\n" +
                          leBytes<int32_t>({1, 2});
      REQUIRE(bytes.size() == 136);
      auto a = parseNpy(bytes);
      REQUIRE(ok(a));
      CHECK(a->type == NpyType::I32);
      CHECK(a->getAsInt(1) == 2);
    }
  }
  SECTION("f2 and bool data") {
    auto h =
        parseNpy(prefixV1(118) +
                 "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }" +
                 std::string(60, ' ') + "\n" +
                 std::string("\x00<\x00\xc0\xff{\x00|", 8));
    REQUIRE(ok(h));
    CHECK(h->getAsDouble(0) == 1.0);
    CHECK(h->getAsDouble(1) == -2.0);
    CHECK(h->getAsDouble(2) == 65504.0);
    CHECK(h->getAsDouble(3) == INFINITY);
  }
}

TEST_CASE("npy: header parsing is tolerant", "[support][npy]") {
  const std::string data = leBytes<float>({1.0f, 2.0f, 3.0f});
  for (const char *dict : {
           "{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}",
           "{ 'fortran_order' : False , 'descr' : '<f4' , 'shape' : ( 3 , ) , "
           "}",
           "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}",
           "{'descr':'<f4','fortran_order':False,'shape':(3L,),}",
           "{'descr': '<f4',\n\t'fortran_order': False,\r\n'shape': (3,)}",
       }) {
    INFO(dict);
    for (bool pad : {true, false}) {
      auto a = parseNpy(npyFile(dict, data, pad));
      REQUIRE(ok(a));
      CHECK(a->type == NpyType::F32);
      CHECK(a->shape == std::vector<int64_t>{3});
      CHECK(a->getAsDouble(1) == 2.0);
    }
  }
}

TEST_CASE("npy: errors say what is wrong", "[support][npy]") {
  const std::string data = leBytes<float>({1.0f, 2.0f, 3.0f});
  const std::string good = npyFile(kF4Dict, data);
  REQUIRE(errorOf(parseNpy(good)) == "");

  // Not .npy at all.
  CHECK(errorOf(parseNpy("")) == "not a .npy file");
  CHECK(errorOf(parseNpy("PK\3\4 a zip file")) == "not a .npy file");
  CHECK(errorOf(parseNpy("\x93NUMPX" + good.substr(6))) == "not a .npy file");
  // Truncated.
  CHECK(errorOf(parseNpy(good.substr(0, 7))) == "truncated .npy header");
  CHECK(errorOf(parseNpy(good.substr(0, 9))) == "truncated .npy header");
  CHECK(errorOf(parseNpy(good.substr(0, 100))) ==
        "truncated .npy header: it should be 118 bytes long, the file has 90");
  // Versions.
  std::string v4 = good;
  v4[6] = 4;
  CHECK(errorOf(parseNpy(v4)) == "unsupported .npy version 4.0");
  std::string v11 = good;
  v11[7] = 1;
  CHECK(errorOf(parseNpy(v11)) == "unsupported .npy version 1.1");
  // Layout and types.
  CHECK(errorOf(parseNpy(
            npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }",
                    data))) == "fortran_order is not supported");
  CHECK(errorOf(parseNpy(
            npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }",
                    data))) == "unsupported dtype '>f4'");
  CHECK(errorOf(parseNpy(
            npyFile("{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }",
                    data))) == "unsupported dtype '<u4'");
  CHECK(errorOf(parseNpy(npyFile("{'descr': [('a', '<f4')], 'fortran_order': "
                                 "False, 'shape': (3,), }",
                                 data)))
            .starts_with("unsupported dtype"));
  // Element counts.
  CHECK(errorOf(parseNpy(npyFile(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }",
            data + data + data.substr(0, 8)))) ==
        "the header says 12 elements but the file holds 8");
  CHECK(errorOf(parseNpy(npyFile(kF4Dict, data + "xy"))) ==
        "the header says 3 elements but the file holds 3 and 2 stray bytes");
  CHECK(errorOf(parseNpy(npyFile(kF4Dict, ""))) ==
        "the header says 3 elements but the file holds 0");
  CHECK(errorOf(parseNpy(
            npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                    "(4294967296, 4294967296), }",
                    data))) ==
        "the header says more than 2^63 elements but the file holds 3");
  CHECK(errorOf(parseNpy(
            npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                    "(4294967296, 4294967296, 0), }",
                    ""))) == "");
}

TEST_CASE("npy: malformed headers are rejected", "[support][npy]") {
  const std::string data = leBytes<float>({1.0f, 2.0f, 3.0f});
  auto error = [&](const std::string &dict) {
    return errorOf(parseNpy(npyFile(dict, data)));
  };
  CHECK(error("") == "malformed .npy header: it does not start with '{'");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), ") ==
        "malformed .npy header: missing '}'");
  CHECK(
      error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,) ") ==
      "malformed .npy header: expected ',' or '}' after the value of 'shape'");
  CHECK(error("{'descr': '<f4', 'fortran_order': False}") ==
        "the .npy header has no 'shape'");
  CHECK(error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
              "'shape': (3,)}") == "duplicate key 'descr' in the .npy header");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), "
              "'extra': 1}") == "unexpected key 'extra' in the .npy header");
  CHECK(error("{descr: '<f4'}") ==
        "malformed .npy header: expected a quoted key");
  CHECK(error("{'descr' '<f4'}") ==
        "malformed .npy header: expected ':' after 'descr'");
  CHECK(error("{'descr': '<f4}") ==
        "malformed .npy header: unterminated string");
  CHECK(error("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,)}") ==
        "malformed .npy header: unexpected character 'M'");
  CHECK(error("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}") ==
        "'fortran_order' is not True or False");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}") ==
        "'shape' is not a tuple");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}") ==
        "'shape' is not a tuple of non-negative integers");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': ('3',)}") ==
        "'shape' is not a tuple of non-negative integers");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}") ==
        "malformed .npy header: expected ',' or ')'");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': "
              "(99999999999999999999,)}") ==
        "malformed .npy header: integer out of range");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (-,)}") ==
        "malformed .npy header: expected digits after a sign");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x") ==
        "malformed .npy header: unexpected text after the dict");
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': " +
              std::string(1000, '(')) ==
        "malformed .npy header: nested too deeply");
  CHECK(error("{'descr': ") ==
        "malformed .npy header: it ends where a value should be");
}

TEST_CASE("npy: truncated and mutated files never crash", "[support][npy]") {
  const std::string good = serializeNpy(
      makeArray(NpyType::I64, {2, 2}, leBytes<int64_t>({1, 2, 3, 4})));
  int failures = 0;
  for (size_t n = 0; n < good.size(); ++n)
    failures += errorOf(parseNpy(good.substr(0, n))) != "";
  CHECK(failures == int(good.size())); // every proper prefix is an error

  // Replace each header byte with a few troublesome characters; each parse
  // must either succeed or fail cleanly.
  static const char kReplacements[] = "\0\xff{}()[],:'\" \nTF0-L";
  const std::string replacements(kReplacements, sizeof(kReplacements) - 1);
  REQUIRE(replacements.size() == 19);
  for (size_t i = 0; i < 128; ++i)
    for (char c : replacements) {
      std::string mutated = good;
      mutated[i] = c;
      auto result = parseNpy(mutated);
      if (result)
        CHECK(result->data.size() ==
              size_t(result->numElements()) * npyElementSize(result->type));
      else
        llvm::consumeError(result.takeError());
    }
}

TEST_CASE("npy: files are written and read back", "[support][npy]") {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("coconet-npy", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "a.npy");

  const NpyArray array =
      makeArray(NpyType::F32, {3}, leBytes<float>({1.0f, 2.0f, 3.0f}));
  REQUIRE(errorOf(writeNpyFile(path, array)) == "");
  auto back = readNpyFile(path);
  REQUIRE(ok(back));
  CHECK(back->type == array.type);
  CHECK(back->shape == array.shape);
  CHECK(back->data == array.data);

  // Errors name the path.
  llvm::SmallString<128> missing(dir);
  llvm::sys::path::append(missing, "missing.npy");
  std::string message = errorOf(readNpyFile(missing));
  CHECK(message.find("cannot read '" + std::string(missing) + "'") == 0);

  llvm::SmallString<128> unwritable(dir);
  llvm::sys::path::append(unwritable, "no-such-dir", "b.npy");
  CHECK(errorOf(writeNpyFile(unwritable, array))
            .find("cannot write '" + std::string(unwritable) + "'") == 0);

  llvm::SmallString<128> bad(dir);
  llvm::sys::path::append(bad, "bad.npy");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(bad, ec);
    REQUIRE_FALSE(ec);
    os << "not numpy";
  }
  CHECK(errorOf(readNpyFile(bad)) == std::string(bad) + ": not a .npy file");

  for (const auto &p : {path, bad})
    llvm::sys::fs::remove(p);
  llvm::sys::fs::remove(dir);
}
